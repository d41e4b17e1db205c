"""The platform's ASGI application (Starlette), built from the route groups."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from basedb.platform.domain.runtimes.faas import FaasRuntime
from basedb.platform.storage.store import Store
from basedb.platform.web.http import (
    AppContext,
    BodyGuardMiddleware,
    BodyTimeouts,
    HostGuardMiddleware,
    RequestLogMiddleware,
    asgi_handler,
    http_exception_handler,
)
from basedb.platform.web.routes import all_endpoints

Handler = Callable[[Request], Awaitable[Response]]


def build_app(store: Store, *, data_dir: Path, access_log: bool = False,
              private_hosts: frozenset[str] = frozenset(),
              body_timeouts: BodyTimeouts | None = None,
              faas: FaasRuntime | None = None) -> Starlette:
    """The ASGI app over `store`; `access_log` writes one JSON line per request.
    `private_hosts` are host names it answers besides its public ones (the name the
    in-process client uses; never a name a network can send); `body_timeouts` bound
    how long a request body may take to arrive; `faas` runs its FaaS calls (default:
    the process's shared runtime)."""
    context = (AppContext(store=store, data_dir=data_dir) if faas is None
               else AppContext(store=store, data_dir=data_dir, faas=faas))
    by_path: dict[str, dict[str, Handler]] = {}
    for endpoint in all_endpoints():
        methods = by_path.setdefault(endpoint.full_path, {})
        if endpoint.method in methods:
            raise ValueError(f"{endpoint.method} {endpoint.full_path} is defined twice")
        methods[endpoint.method] = asgi_handler(endpoint, context)
    # One route per path, dispatching on the method, so that a 405 lists every method;
    # literal paths first, so that a 405 on …/records/batch_create lists that route's
    # methods rather than those of …/records/{record_id}, which its path also matches.
    routes = [Route(path, _dispatcher(by_path[path]), methods=list(by_path[path]))
              for path in sorted(by_path, key=_specificity)]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(RequestLogMiddleware, access_log=access_log,
                               context=context),
                    Middleware(BodyGuardMiddleware, timeouts=body_timeouts),
                    Middleware(HostGuardMiddleware, private_names=private_hosts)],
        exception_handlers={HTTPException: http_exception_handler},
    )
    app.state.context = context
    return app


def _specificity(path: str) -> tuple[int, ...]:
    """Sorts a path before those whose segment at the same place is a parameter (and a
    parameter before a `{name:path}` one that spans segments); otherwise stable."""
    return tuple(2 if segment.endswith(":path}") else 1 if segment.startswith("{") else 0
                 for segment in path.split("/"))


def _dispatcher(methods: dict[str, Handler]) -> Handler:
    async def dispatch(request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        return await methods[method](request)

    return dispatch
