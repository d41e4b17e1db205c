"""The platform's ASGI application (Starlette), built from the route groups."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain.quotas import OwnerQuotas
from basedb.platform.domain.runtimes.faas import FaasRuntime
from basedb.platform.storage.store import Store
from basedb.platform.web.context import AppContext
from basedb.platform.web.gate import BodyTimeouts, RequestGate
from basedb.platform.web.http import DirectHandler, asgi_handler
from basedb.platform.web.routes import LazyDirectHandler, LazyHandler, all_endpoints
from basedb.platform.web.routes.index import ROUTE_INDEX

Handler = Callable[[Request], Awaitable[Response]]


def build_app(store: Store, *, data_dir: Path, access_log: bool = False,
              private_hosts: frozenset[str] = frozenset(),
              body_timeouts: BodyTimeouts | None = None,
              faas: FaasRuntime | None = None, lazy_routes: bool = False,
              direct_routes: bool = True, quotas: OwnerQuotas | None = None) -> Starlette:
    """The ASGI app over `store`; `access_log` writes one JSON line per request.
    `private_hosts` are host names it answers besides its public ones (the name the
    in-process client uses; never a name a network can send); `body_timeouts` bound
    how long a request body may take to arrive; `faas` runs its FaaS calls (default:
    the process's shared runtime); `lazy_routes` routes by the checked-in route index
    and imports a route group on its first request (for a platform embedded in a
    command), instead of every group now; `direct_routes` off sends every request
    through the router (`DirectRoutes` must answer exactly as it does); `quotas` are what
    one owner's sites may hold (default: `OwnerQuotas()`)."""
    context = (AppContext(store=store, data_dir=data_dir, quotas=quotas or OwnerQuotas())
               if faas is None else AppContext(store=store, data_dir=data_dir, faas=faas,
                                               quotas=quotas or OwnerQuotas()))
    # (method, path, handler, whether it is a direct route, the endpoint's own handler)
    handlers: list[tuple[str, str, Handler, bool, DirectHandler | None]] = []
    if lazy_routes:
        for method, path, module, is_direct in ROUTE_INDEX:
            lazy = LazyHandler(module, method, path, context)
            handlers.append((method, path, lazy, is_direct, LazyDirectHandler(lazy)))
    else:
        handlers = [(endpoint.method, endpoint.full_path, asgi_handler(endpoint, context),
                     endpoint.direct, None if endpoint.direct_handler is None
                     else endpoint.direct_handler(context, endpoint))
                    for endpoint in all_endpoints()]
    by_path: dict[str, dict[str, Handler]] = {}
    for method, path, handler, _, _ in handlers:
        methods = by_path.setdefault(path, {})
        if method in methods:
            raise ValueError(f"{method} {path} is defined twice")
        methods[method] = handler
    # One route per path, dispatching on the method, so that a 405 lists every method;
    # literal paths first, so that a 405 on …/records/batch_create lists that route's
    # methods rather than those of …/records/{record_id}, which its path also matches.
    routes = [Route(path, _Dispatcher(by_path[path]), methods=list(by_path[path]))
              for path in sorted(by_path, key=_specificity)]
    direct = [DirectRoute(method, path, handler, direct_handler)
              for method, path, handler, is_direct, direct_handler in handlers
              if is_direct and direct_routes]
    gate = partial(RequestGate, context=context, access_log=access_log,
                   private_names=private_hosts, timeouts=body_timeouts)
    app = PlatformApp(gate, IndexedRouter(routes=routes), direct)
    app.state.context = context
    return app


class PlatformApp(Starlette):
    """Starlette with one layer in front of the router (`RequestGate`) instead of its
    default stack of error and exception middlewares around the user's."""

    # The in-process client may run it on each calling thread's own event loop
    # (basedb.client.transport.RUNS_ON_CALLER_LOOP): its background work (the platform
    # log's writer, WAL checkpoints) runs in threads of its own, what it keeps per loop
    # is kept per running loop (the body guard's timer), and it has no lifespan.
    runs_on_caller_loop = True

    def __init__(self, gate: Callable[[ASGIApp], ASGIApp], router: Router,
                 direct: list[DirectRoute] | None = None) -> None:
        super().__init__(routes=router.routes)
        self.router = router
        self._gate = gate
        self._direct = direct or []

    def build_middleware_stack(self) -> ASGIApp:
        if not self._direct:
            return self._gate(self.router)
        return self._gate(DirectRoutes(self.router, self._direct))


@frozen_dataclass
class DirectRoute:
    method: str
    path: str
    handler: Handler  # what the router would call
    direct_handler: DirectHandler | None = None  # the endpoint's own, tried first


class DirectRoutes:
    """The hot routes (`Endpoint.direct`: a function invoke) matched by one regular
    expression each, ahead of the router; everything else goes to the router.

    Only a request the router would give the same handler is taken: the method is the
    route's, the app has no root path, and no other route can match the route's paths
    (checked when the app is built: a path that fills each parameter of the route with
    a segment no route names must match no other route). It goes to the endpoint's own
    handler (`Endpoint.direct_handler`) when it has one that takes the request, else to
    the handler the router would call."""

    def __init__(self, router: Router, direct: list[DirectRoute]) -> None:
        self.router = router
        self._routes: dict[str, list[tuple[re.Pattern[str], DirectRoute]]] = {}
        for route in direct:
            _require_only_match(router, route.path)
            self._routes.setdefault(route.method, []).append((_path_pattern(route.path),
                                                              route))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope.get("root_path"):
            for pattern, route in self._routes.get(scope["method"], ()):
                match = pattern.fullmatch(scope["path"])
                if match is not None:
                    params = match.groupdict()
                    if route.direct_handler is not None and await route.direct_handler(
                            scope, receive, send, params):
                        return
                    scope["path_params"] = params
                    response = await route.handler(Request(scope, receive, send))
                    await response(scope, receive, send)
                    return
        await self.router(scope, receive, send)


_PARAM_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PROBE_SEGMENT = "\ufffe-probe"


def _path_pattern(path: str) -> re.Pattern[str]:
    """What a route path matches, as Starlette's string parameters do: any non-empty
    segment without a slash."""
    parts = _PARAM_RE.split(path)
    return re.compile("".join(re.escape(part) if number % 2 == 0 else f"(?P<{part}>[^/]+)"
                              for number, part in enumerate(parts)))


def _require_only_match(router: Router, path: str) -> None:
    if ":" in path:
        raise ValueError(f"{path}: a direct route takes string parameters only")
    probe = _PARAM_RE.sub(_PROBE_SEGMENT, path)
    scope = {"type": "http", "method": "GET", "path": probe, "root_path": ""}
    matching = [route for route in router.routes
                if isinstance(route, Route) and route.matches(scope)[0] is not Match.NONE]
    if [route.path for route in matching] != [path]:
        raise ValueError(f"{path}: a direct route whose paths other routes match too "
                         f"({', '.join(route.path for route in matching)})")


class IndexedRouter(Router):
    """Starlette's router, which tries every route in turn, with a shortcut: a request is
    first matched against the routes that can match its path in full, in the same order:
    those whose paths have as many segments as its own and whose last segment is the
    request's or a parameter (and those ending in a `{name:path}` parameter, which span
    segments). A full match there is the one the whole list would find, since no other
    route can match the path fully; anything else (405, a redirect, 404) takes the full
    walk."""

    def __init__(self, routes: list[Route]) -> None:
        super().__init__(routes=routes)
        spanning = [r for r in routes if ":path}" in r.path]
        shapes = {_shape(r.path) for r in routes if r not in spanning}
        self._candidates = {
            shape: [r for r in routes if _may_match(r, shape, spanning)]
            for shape in shapes | {(count, "") for count, _ in shapes}}
        self._spanning = spanning

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for route in self.candidates(_route_path(scope)):
                match, child_scope = route.matches(scope)
                if match is Match.FULL:
                    scope.setdefault("router", self)
                    scope["route"] = route
                    scope.update(child_scope)
                    await route.handle(scope, receive, send)
                    return
        await super().app(scope, receive, send)

    def candidates(self, path: str) -> list[Route]:
        """The routes that may match `path` in full, in the router's order."""
        count = path.count("/")
        found = self._candidates.get((count, path[path.rfind("/") + 1:]))
        return found if found is not None else self._candidates.get((count, ""),
                                                                    self._spanning)


def _shape(path: str) -> tuple[int, str]:
    """A route path's segment count and its last segment ("" for a parameter)."""
    last = path[path.rfind("/") + 1:]
    return path.count("/"), "" if last.startswith("{") else last


def _may_match(route: Route, shape: tuple[int, str], spanning: list[Route]) -> bool:
    """Whether `route` may match a path of `shape` (`""`: a last segment no route names)."""
    if route in spanning:
        return route.path.count("/") <= shape[0]
    count, last = _shape(route.path)
    return count == shape[0] and last in ("", shape[1])


def _specificity(path: str) -> tuple[int, ...]:
    """Sorts a path before those whose segment at the same place is a parameter (and a
    parameter before a `{name:path}` one that spans segments); otherwise stable."""
    return tuple(2 if segment.endswith(":path}") else 1 if segment.startswith("{") else 0
                 for segment in path.split("/"))


class _Dispatcher:
    """The ASGI app of one path: the handler of the request's method (HEAD is GET).
    Plain ASGI rather than a Starlette endpoint function: every handler answers its
    own errors, so Starlette's per-request exception wrapper would only cost time."""

    def __init__(self, methods: dict[str, Handler]) -> None:
        self.methods = methods

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"]
        handler = self.methods["GET" if method == "HEAD" else method]
        response = await handler(Request(scope, receive, send))
        await response(scope, receive, send)


def _route_path(scope: Scope) -> str:
    """The request path below the app's root path, which routes match."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root):] if root and path.startswith(root) else path
