"""The request layer: endpoint metadata (`Endpoint`, which the OpenAPI document is built
from), the call object handlers receive (`Call`), and the Starlette endpoint function
that runs a handler (`asgi_handler`).

A handler is a plain function `handler(call: Call) -> data`; the layer authenticates
(on the event loop: one read by a unique key), then (and only then) reads and parses
the JSON body within the endpoint's size limit (`bodies`), runs sync handlers in the
thread pool (SQLite calls block; an `async` handler keeps to what cannot), wraps the
result as `{"code": 0, "msg": "success", "data": …}` and turns an `ApiFailure` (or
anything unexpected) into the error envelope of `basedb.protocol` (`responses`). A
handler may also return a Starlette `Response` (files, pages, the OpenAPI document) or
be `async`. Before any of this, every request passed the gate (`gate.RequestGate`: log
id, host and body guards, access log).

A request body is never read before the caller is known, never buffered past its
endpoint's limit, and must keep arriving (`RequestGate`): a body that stalls
is answered 408, and a response sent before the whole body was read closes the
connection rather than reading on.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from basedb.core.frozen import frozen_dataclass
from basedb.core.paths import API_PREFIX
from basedb.platform.domain import identity
from basedb.platform.domain.caches import DomainCaches
from basedb.platform.storage import platform_log
from basedb.platform.storage.ids import new_log_id
from basedb.platform.storage.read_only import read_only_pool
from basedb.platform.storage.store import Store
from basedb.platform.web.bodies import parse_json_body as parse_json_body  # route modules
from basedb.platform.web.bodies import parsed_json_body, read_body
from basedb.platform.web.context import AppContext
from basedb.platform.web.gate import LOG_ID_KEY, USER_ID_KEY
from basedb.platform.web.origins import request_host
from basedb.platform.web.responses import (
    JSON,
    envelope,
    failure_response,
    http_failure,
    unexpected_response,
)
from basedb.platform.web.sessions import page_session_user
from basedb.protocol import ApiFailure, bad_request, quote
from basedb.protocol.wire import WireModel

_DECIMAL_RE = re.compile(r"-?[0-9]+")
HostScope = Literal["api", "page", "any"]

KIB = 1024
MIB = 1024 * KIB
DEFAULT_BODY_LIMIT = 1 * MIB
NO_QUERY = QueryParams()  # immutable: shared by every request without a query string


@frozen_dataclass
class QueryParam:
    name: str
    schema: Mapping[str, Any]
    description: str
    required: bool = False


@frozen_dataclass
class Endpoint:
    """One route and everything the OpenAPI document says about it."""

    method: str
    path: str  # below API_PREFIX unless `absolute`; `{name}` marks a path parameter
    handler: Callable[[Call], Any]
    summary: str
    tag: str
    description: str = ""
    auth: bool = True
    query: tuple[QueryParam, ...] = ()
    headers: tuple[QueryParam, ...] = ()  # request headers the handler reads
    # The request body: its wire model (basedb.protocol.wire), or a JSON Schema for a
    # route not yet converted to one.
    body: type[WireModel] | Mapping[str, Any] | None = None
    body_media_type: str = JSON  # other types are left for the handler to read
    body_required: bool = True
    # The envelope's `data`: its wire model, or a JSON Schema (not yet converted).
    response: type[WireModel] | Mapping[str, Any] | None = None
    response_media_type: str | None = None  # set when the handler returns a raw Response
    # Set when some failures answer a page for a browser in this media type (sign-in,
    # not found) rather than the JSON error envelope.
    error_page_media_type: str | None = None
    # Set when failures answer a JSON body of the endpoint's own (Lark's OAuth and auth/v3
    # formats) besides the error envelope: its JSON Schema.
    error_schema: Mapping[str, Any] | None = None
    # Error statuses beyond those the document derives from the endpoint's shape
    # (basedb.platform.web.openapi.error_statuses), e.g. 409 for a conflict.
    errors: tuple[int, ...] = ()
    absolute: bool = False
    # Also accept the page sign-in cookie, with the CSRF header (basedb.platform.web.sessions).
    page_session: bool = False
    # Which hosts serve it (basedb.platform.web.origins): the API hosts, the sites' page
    # hosts, or both. Elsewhere the route does not exist.
    hosts: HostScope = "api"
    # Set when some requests are answered with a redirect: what it says.
    redirect: str | None = None
    # The largest request body accepted, in bytes (refused with 413 as it streams in).
    body_limit: int = DEFAULT_BODY_LIMIT
    # Matched ahead of the router (basedb.platform.web.app.DirectRoutes): for the few
    # routes that carry most of a site's traffic. Optionally with a handler of its own
    # for the common case, which must answer as `handler` behind the request layer does
    # (`DirectHandler`).
    direct: bool = False
    direct_handler: Callable[[AppContext, Endpoint], DirectHandler] | None = None

    @property
    def full_path(self) -> str:
        return self.path if self.absolute else API_PREFIX + self.path


DirectHandler = Callable[[Scope, Receive, Send, dict[str, str]], Awaitable[bool]]
"""An endpoint's own ASGI handler for the requests it takes whole (it answers them and
says True), given the path parameters; for any other it says False before it has read
or sent anything, and the request goes to the endpoint's handler as usual."""


@dataclass(slots=True, eq=False)
class Call:
    """One request as a handler sees it."""

    request: Request
    context: AppContext
    log_id: str
    path: dict[str, str]
    query: QueryParams
    body: Any = None
    # Whether the request carried a body at all (`null` is a body; nothing is not).
    body_sent: bool = False
    body_size: int = 0  # in bytes
    user: identity.User | None = None
    # Signed in through a page session (the sign-in cookie with the page header), i.e.
    # called by a deployed page's runtime rather than with a bearer token.
    from_page: bool = False

    @property
    def store(self) -> Store:
        return self.context.store

    @property
    def caches(self) -> DomainCaches:
        return self.context.caches

    @property
    def caller(self) -> identity.User:
        """The authenticated user (every endpoint with auth=True has one)."""
        if self.user is None:
            raise RuntimeError("endpoint declared auth=False but asked for the caller")
        return self.user

    def body_object(self, allowed: Collection[str] | None = None) -> dict[str, Any]:
        """The JSON body, which must be an object (with only `allowed` keys, if given)."""
        return body_object(self.body, self.body_sent, allowed)

    def optional_body_object(self, allowed: Collection[str] | None = None) -> dict[str, Any]:
        """The JSON body when one was sent (then it must be an object), else {}."""
        return self.body_object(allowed) if self.body_sent else {}

    def query_int(self, name: str, *, default: int, minimum: int, maximum: int) -> int:
        raw = self.query.get(name)
        if raw is None:
            return default
        # Digits only, as the document's integer reads: not "", " 5", "1_0" or "٣",
        # which int() would take.
        value = int(raw) if _DECIMAL_RE.fullmatch(raw) else minimum - 1
        if not minimum <= value <= maximum:
            raise bad_request(f"Query parameter {name} must be an integer from {minimum} "
                              f"to {maximum}", parameter=f"?{name}", received=raw,
                              fix=f"send {name}={default}")
        return value


def body_object(body: Any, body_sent: bool,
                allowed: Collection[str] | None = None) -> dict[str, Any]:
    """`Call.body_object` of a parsed body (`body_sent`: whether there was one at all)."""
    if not isinstance(body, dict):
        what = "must be a JSON object" if body_sent else "is missing"
        raise bad_request(f"The request body {what}", parameter="/", received=body,
                          fix="send a JSON object such as {\"name\": …}")
    if allowed is not None:
        for key in body:
            if key not in allowed:
                raise bad_request(f"Unknown property {quote(key)}", parameter=f"/{key}",
                                  received=body[key], fix="remove it",
                                  candidates=sorted(allowed))
    return body


def _authenticate(call: Call, page_session: bool = False) -> None:
    authorization = call.request.headers.get("authorization")
    user = None
    if page_session and not authorization:
        user = page_session_user(call.store.connection(), call.request,
                                 call.path.get("app_token"))
        call.from_page = user is not None
    if user is None:
        # A read-only connection, so that a known token is looked up again only once
        # the database changed (basedb.platform.domain.resolved).
        user = identity.authenticate(read_only_pool(call.store).connection(), authorization,
                                     memo=call.caches.tokens)
    call.user = user
    call.request.scope[USER_ID_KEY] = user.user_id
    scope = platform_log.current_scope()
    if scope is not None:
        scope.user_id = user.user_id


def asgi_handler(endpoint: Endpoint,
                 context: AppContext) -> Callable[[Request], Awaitable[Response]]:
    """The Starlette endpoint function for one Endpoint."""
    is_async = inspect.iscoroutinefunction(endpoint.handler)
    reads_json = endpoint.body is not None and endpoint.body_media_type == JSON

    async def handle(request: Request) -> Response:
        log_id = request.scope.get(LOG_ID_KEY) or new_log_id()
        call = Call(request=request, context=context, log_id=log_id,
                    path=request.path_params,
                    query=request.query_params if request.scope["query_string"] else NO_QUERY)
        if not serves_host(endpoint, request):
            return failure_response(http_failure(request.method, request.url.path,
                                                 HTTPException(404)), log_id)
        scope = platform_log.current_scope()
        if scope is not None:
            scope.app_token = request.path_params.get("app_token")
        try:
            if endpoint.auth:
                # On the loop: a lookup by a unique key, cheaper than a hop to a thread.
                _authenticate(call, endpoint.page_session)
            if reads_json:
                raw = await read_body(request, endpoint.body_limit)
                call.body_sent, call.body_size = bool(raw), len(raw)
                call.body = await parsed_json_body(raw)
            if is_async:
                result = await endpoint.handler(call)
            else:
                result = await run_in_threadpool(endpoint.handler, call)
            return result if isinstance(result, Response) else envelope(result)
        except ApiFailure as failure:
            return failure_response(failure, log_id)
        except Exception as exc:
            return unexpected_response(exc, log_id, request.method, request.url.path)

    handle.__name__ = getattr(endpoint.handler, "__name__", "handle")
    return handle


def serves_host(endpoint: Endpoint, request: Request) -> bool:
    """Whether the endpoint exists on the request's host (API or a site's page host)."""
    host = request_host(request)
    if host is None or host.kind == "api":
        return endpoint.hosts != "page"
    if endpoint.hosts == "api":
        return False
    # A page host serves its own site only.
    app_token = request.path_params.get("app_token")
    return app_token is None or str(app_token).lower() == host.site


