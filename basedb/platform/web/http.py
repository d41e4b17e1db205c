"""The request layer: endpoint metadata, the call object handlers receive, envelopes,
error handling, and the gate every request passes first (`RequestGate`: log id, host
and body guards, access log).

A handler is a plain function `handler(call: Call) -> data`; the layer authenticates
(on the event loop: one read by a unique key), then (and only then) reads and parses
the JSON body within the endpoint's size limit, runs sync handlers in the thread pool
(SQLite calls block; an `async` handler keeps to what cannot), wraps the result as
`{"code": 0, "msg": "success", "data": …}` and turns an `ApiFailure` (or anything
unexpected) into the error envelope of `basedb.core.protocol`. A handler may also return
a Starlette `Response` (files, pages, the OpenAPI document) or be `async`.

A request body is never read before the caller is known, never buffered past its
endpoint's limit, and must keep arriving (`RequestGate`): a body that stalls
is answered 408, and a response sent before the whole body was read closes the
connection rather than reading on.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import sys
import threading
import time
import traceback
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any, Literal

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from basedb.core import protocol
from basedb.core.frozen import frozen_dataclass
from basedb.core.paths import API_PREFIX
from basedb.core.protocol import ApiFailure, bad_request, quote
from basedb.platform.domain import identity
from basedb.platform.domain.caches import DomainCaches
from basedb.platform.domain.quotas import OwnerQuotas
from basedb.platform.domain.runtimes.faas import FaasRuntime, shared_runtime
from basedb.platform.storage import platform_log
from basedb.platform.storage.ids import new_log_id
from basedb.platform.storage.read_only import read_only_pool
from basedb.platform.storage.store import Store, is_busy_error
from basedb.platform.web.origins import HOST_KEY, classify_host, request_host
from basedb.platform.web.pages import SITES_KEPT, SiteFilesMemo
from basedb.platform.web.sessions import page_session_user

_DECIMAL_RE = re.compile(r"-?[0-9]+")
HostScope = Literal["api", "page", "any"]

LOG_ID_KEY = "basedb.log_id"
USER_ID_KEY = "basedb.user_id"
JSON = "application/json"
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
    body: Mapping[str, Any] | None = None  # JSON Schema of the request body
    body_media_type: str = JSON  # other types are left for the handler to read
    body_required: bool = True
    response: Mapping[str, Any] | None = None  # JSON Schema of the envelope's `data`
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


@dataclass(slots=True)
class AppContext:
    """What every handler may use; shared by all requests of one app. Mutable only so
    that an embedded platform can send its log to a file (`LocalPlatform.log_to_file`)."""

    store: Store
    data_dir: Path
    # What this app keeps in memory, derived from rows that never change under its keys.
    caches: DomainCaches = field(default_factory=DomainCaches)
    site_files: SiteFilesMemo = field(default_factory=lambda: SiteFilesMemo(SITES_KEPT))
    # Where the platform log goes (basedb.platform.storage.platform_log); None: stderr.
    log_file: Path | None = None
    # FaaS workers, caps and sandbox: by default the process's, shared by its apps.
    faas: FaasRuntime = field(default_factory=shared_runtime)
    # What one owner's sites may hold of the platform (basedb serve's options).
    quotas: OwnerQuotas = field(default_factory=OwnerQuotas)
    # Saves the requests' platform log entries off the request path.
    log_writer: platform_log.LogWriter = field(init=False)

    def __post_init__(self) -> None:
        self.log_writer = platform_log.LogWriter(self.store.write)


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


# ------------------------------------------------------------------------- responses


# What `json.dumps(…, ensure_ascii=False, separators=(",", ":"), allow_nan=False)` uses,
# made once: dumps with options builds its encoder anew on every call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def json_bytes(body: Any) -> bytes:
    """A JSON answer's body as the platform writes every one."""
    return _ENCODER.encode(body).encode("utf-8")


def json_response(body: Any, status: int = 200,
                  headers: Mapping[str, str] | None = None) -> Response:
    return Response(json_bytes(body), status_code=status, headers=headers, media_type=JSON)


def envelope_bytes(data: Any) -> bytes:
    """The success envelope `{"code": 0, "msg": "success", "data": …}` as bytes."""
    return json_bytes({"code": protocol.Code.SUCCESS, "msg": "success", "data": data})


def envelope(data: Any) -> Response:
    return json_response({"code": protocol.Code.SUCCESS, "msg": "success", "data": data})


async def send_json_200(send: Send, content: bytes) -> None:
    """What `await json_response(…)(scope, receive, send)` sends for a 200, in the
    same messages and headers, without building the Response."""
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", str(len(content)).encode("latin-1")),
                            (b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": content})


def failure_response(failure: ApiFailure, log_id: str) -> Response:
    return json_response(protocol.error_body(failure.code, failure.msg, log_id, failure.data),
                         failure.status, failure.headers)


def http_failure(method: str, path: str, exc: HTTPException) -> ApiFailure:
    """Starlette's routing errors (404, 405, 413) as envelopes."""
    if exc.status_code == 404:
        return ApiFailure(protocol.Code.ROUTE_NOT_FOUND, f"No route {method} {path}. Fix: see "
                          "/openapi.json for the routes this platform serves. Executed: no. "
                          "Retry: retry after fixing.", status=404)
    if exc.status_code == 405:
        allowed = ", ".join(sorted(m.strip() for m in (exc.headers or {}).get("Allow", "")
                                   .split(",") if m.strip()))
        return ApiFailure(protocol.Code.METHOD_NOT_ALLOWED, f"Method {method} is not allowed on "
                          f"{path}. Fix: use {allowed or 'another method'}. Executed: no. "
                          "Retry: retry after fixing.", status=405,
                          headers=dict(exc.headers or {}))
    return ApiFailure(exc.status_code, f"{exc.detail}. Executed: no.", status=exc.status_code)


async def http_exception_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    log_id = request.scope.get(LOG_ID_KEY) or new_log_id()
    return failure_response(http_failure(request.method, request.url.path, exc), log_id)


def report_unexpected(exc: BaseException, log_id: str, method: str, path: str) -> None:
    """Log a bug's traceback to the platform log; the caller only ever sees the log id."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    platform_log.write(f"basedb platform: unexpected error (log_id {log_id}) on "
                       f"{method} {path}\n{text}")


def unexpected_response(exc: Exception, log_id: str, method: str, path: str) -> Response:
    """The answer to an exception a handler did not expect (503 when SQLite was busy)."""
    return _unexpected_response(exc, log_id, method, path)


def _unexpected_response(exc: Exception, log_id: str, method: str, path: str) -> Response:
    if is_busy_error(exc):
        busy = ApiFailure(protocol.Code.PLATFORM_BUSY, protocol.BUSY_MSG, status=503)
        return failure_response(busy, log_id)
    report_unexpected(exc, log_id, method, path)
    return failure_response(ApiFailure(protocol.Code.INTERNAL_ERROR, protocol.INTERNAL_ERROR_MSG,
                                       status=500), log_id)


# -------------------------------------------------------------------------- handlers


def too_large(limit: int) -> ApiFailure:
    return ApiFailure(protocol.Code.BODY_TOO_LARGE, f"The request body is larger than {limit} "
                      "bytes. Fix: send a smaller body. Executed: no. Retry: retry after "
                      "fixing.", status=413, headers={"Connection": "close"})


def _refuse_declared_over(request: Request, limit: int) -> None:
    """HTTP 413 for a body whose Content-Length is over `limit` bytes, before reading it."""
    refuse_declared_over(request.headers.get("content-length", ""), limit)


def refuse_declared_over(declared: str, limit: int) -> None:
    """`_refuse_declared_over` of a Content-Length header's value ("" if none)."""
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise too_large(limit)


async def body_chunks(request: Request, limit: int) -> AsyncGenerator[bytes, None]:
    """The request body as it arrives, refused with HTTP 413 once it grows past `limit`
    bytes (or declares more up front)."""
    _refuse_declared_over(request, limit)
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        yield chunk


async def read_body(request: Request, limit: int) -> bytes:
    """The whole request body (at most `limit` bytes): `body_chunks` joined, reading the
    messages straight from `receive` (most bodies are one message)."""
    _refuse_declared_over(request, limit)
    return await receive_body(request.receive, limit)


async def receive_body(receive: Receive, limit: int) -> bytes:
    """`read_body` once the declared length has been checked."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def parse_json_body(raw: bytes) -> Any:
    """The JSON document of a body; None when there is none (no bytes at all: a body of
    only whitespace is not a JSON document, and is refused like any other)."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        raise bad_request("The request body is not UTF-8 text", parameter="/",
                          fix="send a UTF-8 encoded JSON document") from None
    except json.JSONDecodeError as exc:
        raise bad_request(f"The request body is not valid JSON: {exc.msg} at line {exc.lineno} "
                          f"column {exc.colno}", parameter="/",
                          fix="send one JSON document (check quotes, commas and brackets)"
                          ) from None
    except RecursionError:
        raise bad_request("The request body nests arrays or objects too deeply", parameter="/",
                          fix="send a flatter JSON document") from None


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
                call.body = parse_json_body(raw)
            if is_async:
                result = await endpoint.handler(call)
            else:
                result = await run_in_threadpool(endpoint.handler, call)
            return result if isinstance(result, Response) else envelope(result)
        except ApiFailure as failure:
            return failure_response(failure, log_id)
        except Exception as exc:
            return _unexpected_response(exc, log_id, request.method, request.url.path)

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


# ------------------------------------------------------------------------ the gate


@frozen_dataclass
class BodyTimeouts:
    """How long a request body may take: `idle_s` between two chunks, `total_s` in all."""

    idle_s: float = 10.0
    total_s: float = 120.0


_HOST_NOT_ALLOWED = (
    "This platform does not answer to the host name the request was sent to. Fix: use the "
    "address `basedb serve` printed (127.0.0.1 or localhost), a site's page address "
    "(<app>.localhost), or set BASEDB_PUBLIC_URL to the name it is reached by. Executed: "
    "no. Retry: retry after fixing.")
_BODY_STALLED = (
    "The request body stopped arriving before it was complete. Fix: send the whole body "
    "without pauses. Executed: no. Retry: retry after fixing.")


class RequestGate:
    """The one layer every HTTP request passes before routing, in this order:

    - a log id (header `X-Tt-Logid`) and the app's platform log for the request;
    - the host guard: only the platform's own host names (basedb.platform.web.origins)
      are answered; any other `Host` (a DNS-rebinding page's, say) gets 421 before
      routing. The classified host is left in the scope for the routes;
    - the body guard (slowloris): a body that stalls for `idle_s`, or is still arriving
      after `total_s`, fails the read with 408. A response that starts before the whole
      body was read says `Connection: close`, so the server closes the connection
      instead of reading (or waiting for) the rest;
    - routing errors (404, 405) as envelopes, and the last line of defence: anything
      that escapes becomes the safe 500 envelope;
    - one JSON access-log line per request on stderr, when enabled.

    One layer rather than a stack of middlewares: each layer costs every request a
    coroutine, a `send` wrapper and a look through the headers."""

    def __init__(self, app: ASGIApp, *, context: AppContext | None = None,
                 access_log: bool = False, private_names: frozenset[str] = frozenset(),
                 timeouts: BodyTimeouts | None = None) -> None:
        self.app = app
        self.context = context
        self.access_log = access_log
        self.private_names = private_names
        self.timeouts = timeouts or BodyTimeouts()
        self._stalls = _StallWatches(self.timeouts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        log_id = new_log_id()
        scope[LOG_ID_KEY] = log_id
        started = time.perf_counter()
        host_header = length = None
        chunked = False
        for name, value in scope["headers"]:
            if name == b"host":
                host_header = value if host_header is None else host_header
            elif name == b"content-length":
                length = value
            elif name == b"transfer-encoding":
                chunked = True
        exchange = _Exchange(complete=not chunked and length in (None, b"", b"0"))
        host = None if host_header is None else classify_host(
            host_header.decode("latin-1"), private_names=self.private_names)
        if host is None:
            failure = ApiFailure(protocol.Code.HOST_NOT_ALLOWED, _HOST_NOT_ALLOWED, status=421)
            await self._answer(failure_response(failure, log_id), scope, receive, send,
                               exchange, log_id, started)
            return
        scope[HOST_KEY] = host
        log_scope = platform_log.LogScope(log_id)
        log_header = (b"x-tt-logid", log_id.encode("ascii"))
        writer = self.context.log_writer if self.context is not None else None

        async def gated_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                # Handed to the log writer before the answer leaves; readers of the log
                # wait for it, so `basedb logs LOGID` finds what a failed call's message
                # points at.
                if writer is not None:
                    writer.submit(log_scope)
                exchange.status = message["status"]
                exchange.started = True
                headers = [*message.get("headers", ()), log_header]
                if not exchange.complete and not any(
                        name.lower() == b"connection" for name, _ in headers):
                    headers.append((b"connection", b"close"))
                message["headers"] = headers
            await send(message)

        gated_receive = receive if exchange.complete else self._guarded(receive, exchange)
        log_file = self.context.log_file if self.context is not None else None
        try:
            with platform_log.request_logging(log_scope, log_file):
                try:
                    await self.app(scope, gated_receive, gated_send)
                except Exception as exc:
                    if exchange.started:
                        report_unexpected(exc, log_id, scope["method"], scope["path"])
                        if writer is not None:
                            writer.submit(log_scope)
                    elif isinstance(exc, HTTPException):  # routing: 404, 405
                        response = await http_exception_handler(Request(scope), exc)
                        await response(scope, receive, gated_send)
                    else:
                        response = _unexpected_response(exc, log_id, scope["method"],
                                                        scope["path"])
                        await response(scope, receive, gated_send)
        finally:
            if self.access_log:
                write_access_line(scope, log_id, exchange.status,
                                  (time.perf_counter() - started) * 1000)

    def _guarded(self, receive: Receive, exchange: _Exchange) -> Receive:
        """`receive`, failing with 408 once the body stalls or takes too long in all."""
        timeouts = self.timeouts
        watch = self._stalls.of_running_loop()
        started = watch.loop.time()

        async def guarded_receive() -> Message:
            if exchange.complete:
                return await receive()
            deadline = min(watch.loop.time() + timeouts.idle_s, started + timeouts.total_s)
            task = asyncio.current_task()
            assert task is not None
            entry = watch.add(task, deadline)
            try:
                message = await receive()
            except asyncio.CancelledError:
                if entry.expired and task.uncancel() <= entry.cancelling:
                    raise ApiFailure(protocol.Code.REQUEST_TIMEOUT, _BODY_STALLED, status=408,
                                     headers={"Connection": "close"}) from None
                raise
            finally:
                watch.discard(task, entry)
            if message["type"] != "http.request" or not message.get("more_body", False):
                exchange.complete = True
            return message

        return guarded_receive

    async def _answer(self, response: Response, scope: Scope, receive: Receive, send: Send,
                      exchange: _Exchange, log_id: str, started: float) -> None:
        """Send an answer made before routing (with the log id header)."""
        response.headers["x-tt-logid"] = log_id
        if not exchange.complete:
            response.headers["connection"] = "close"
        try:
            await response(scope, receive, send)
        finally:
            if self.access_log:
                write_access_line(scope, log_id, response.status_code,
                                  (time.perf_counter() - started) * 1000)


@dataclass(slots=True)
class _Waiting:
    deadline: float  # on the loop's clock
    cancelling: int  # the task's cancel requests when it started waiting
    expired: bool = False


class _StallWatch:
    """The body reads waiting on one event loop, and one timer that fails those past
    their deadline (by cancelling the task, which the read turns into 408). One timer
    for all rather than one per read: a read's timer, armed and cancelled around every
    body, cost a request more than the rest of the gate. A stalled read fails at most
    `interval_s` after its deadline."""

    def __init__(self, loop: asyncio.AbstractEventLoop, interval_s: float) -> None:
        self.loop = loop
        self._interval_s = interval_s
        self._waiting: dict[asyncio.Task[Any], _Waiting] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add(self, task: asyncio.Task[Any], deadline: float) -> _Waiting:
        entry = _Waiting(deadline, task.cancelling())
        self._waiting[task] = entry
        if self._timer is None:
            self._timer = self.loop.call_later(self._interval_s, self._check)
        return entry

    def discard(self, task: asyncio.Task[Any], entry: _Waiting) -> None:
        if self._waiting.get(task) is entry:
            del self._waiting[task]

    def _check(self) -> None:
        self._timer = None
        now = self.loop.time()
        for task, entry in list(self._waiting.items()):
            if not entry.expired and now >= entry.deadline:
                entry.expired = True
                task.cancel()
        if self._waiting:
            self._timer = self.loop.call_later(self._interval_s, self._check)


class _StallWatches:
    """An app's `_StallWatch` for each event loop it runs on (an embedded app may serve
    on several, one per thread)."""

    def __init__(self, timeouts: BodyTimeouts) -> None:
        self._interval_s = min(1.0, max(0.01, timeouts.idle_s / 10))
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _StallWatch] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()

    def of_running_loop(self) -> _StallWatch:
        loop = asyncio.get_running_loop()
        watch = self._by_loop.get(loop)
        if watch is None:
            with self._lock:
                watch = self._by_loop.setdefault(loop, _StallWatch(loop, self._interval_s))
        return watch


@dataclass(slots=True)
class _Exchange:
    complete: bool  # the whole request body has been received
    status: int = 500
    started: bool = False


def write_access_line(scope: Scope, log_id: str, status: int, ms: float) -> None:
    """One structured line per request; never headers (they carry the token). The line
    `json.dumps` makes of {"ts", "log_id", "method", "path", "status", "ms", "user_id"},
    written out field by field: a dict and the encoder's walk over it cost a request
    more than the write."""
    user_id = scope.get(USER_ID_KEY)
    sys.stderr.write(
        f'{{"ts": {_string(_timestamp(int(time.time())))}, "log_id": {_string(log_id)}, '
        f'"method": {_string(scope["method"])}, "path": {_string(scope["path"])}, '
        f'"status": {int(status)!r}, "ms": {float(round(ms, 2))!r}, '
        f'"user_id": {"null" if user_id is None else _string(user_id)}}}\n')
    sys.stderr.flush()


_string: Callable[[str], str] = encode_basestring  # a JSON string, as json.dumps writes it


@lru_cache(maxsize=4)
def _timestamp(second: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(second))
