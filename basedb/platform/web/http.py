"""The request layer: endpoint metadata, the call object handlers receive, envelopes,
error handling, and the log-id / access-log middleware.

A handler is a plain function `handler(call: Call) -> data`; the layer authenticates,
parses the JSON body, runs sync handlers in the thread pool (SQLite calls block), wraps
the result as `{"code": 0, "msg": "success", "data": …}` and turns an `ApiFailure` (or
anything unexpected) into the error envelope of `basedb.core.protocol`. A handler may
also return a Starlette `Response` (files, pages, the OpenAPI document) or be `async`.
"""

from __future__ import annotations

import inspect
import json
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from basedb.core import protocol
from basedb.core.paths import API_PREFIX
from basedb.core.protocol import ApiFailure, bad_request, quote
from basedb.platform.domain import identity
from basedb.platform.domain.caches import DomainCaches
from basedb.platform.domain.runtimes.faas import FaasRuntime, shared_runtime
from basedb.platform.storage import platform_log
from basedb.platform.storage.ids import new_log_id
from basedb.platform.storage.store import Store, is_busy_error
from basedb.platform.web.pages import SITES_KEPT, SiteFilesMemo
from basedb.platform.web.sessions import page_session_user

LOG_ID_KEY = "basedb.log_id"
USER_ID_KEY = "basedb.user_id"
JSON = "application/json"


@dataclass(frozen=True, slots=True)
class QueryParam:
    name: str
    schema: Mapping[str, Any]
    description: str
    required: bool = False


@dataclass(frozen=True, slots=True)
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
    absolute: bool = False
    # Also accept the page sign-in cookie, with the CSRF header (basedb.platform.web.sessions).
    page_session: bool = False

    @property
    def full_path(self) -> str:
        return self.path if self.absolute else API_PREFIX + self.path


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


@dataclass(slots=True, eq=False)
class Call:
    """One request as a handler sees it."""

    request: Request
    context: AppContext
    log_id: str
    path: dict[str, str]
    query: QueryParams
    body: Any = None
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
        if not isinstance(self.body, dict):
            what = "is missing" if self.body is None else "must be a JSON object"
            raise bad_request(f"The request body {what}", parameter="/", received=self.body,
                              fix="send a JSON object such as {\"name\": …}")
        if allowed is not None:
            for key in self.body:
                if key not in allowed:
                    raise bad_request(f"Unknown property {quote(key)}", parameter=f"/{key}",
                                      received=self.body[key], fix="remove it",
                                      candidates=sorted(allowed))
        return self.body

    def query_int(self, name: str, *, default: int, minimum: int, maximum: int) -> int:
        raw = self.query.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            value = minimum - 1
        if not minimum <= value <= maximum:
            raise bad_request(f"Query parameter {name} must be an integer from {minimum} "
                              f"to {maximum}", parameter=f"?{name}", received=raw,
                              fix=f"send {name}={default}")
        return value


# ------------------------------------------------------------------------- responses


def json_response(body: Any, status: int = 200,
                  headers: Mapping[str, str] | None = None) -> Response:
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Response(content.encode("utf-8"), status_code=status, headers=headers,
                    media_type=JSON)


def envelope(data: Any) -> Response:
    return json_response({"code": protocol.Code.SUCCESS, "msg": "success", "data": data})


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


def _unexpected_response(exc: Exception, log_id: str, method: str, path: str) -> Response:
    if is_busy_error(exc):
        busy = ApiFailure(protocol.Code.PLATFORM_BUSY, protocol.BUSY_MSG, status=503)
        return failure_response(busy, log_id)
    report_unexpected(exc, log_id, method, path)
    return failure_response(ApiFailure(protocol.Code.INTERNAL_ERROR, protocol.INTERNAL_ERROR_MSG,
                                       status=500), log_id)


# -------------------------------------------------------------------------- handlers


MAX_BODY_BYTES = 64 * 1024 * 1024  # room for a site.zip upload


async def read_body(request: Request, limit: int | None = None) -> bytes:
    """The request body, refused with HTTP 413 once it grows past `limit` bytes."""
    limit = MAX_BODY_BYTES if limit is None else limit
    too_large = ApiFailure(protocol.Code.BODY_TOO_LARGE, f"The request body is larger than {limit} "
                           "bytes. Fix: send a smaller body. Executed: no. Retry: retry after "
                           "fixing.", status=413)
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json_body(raw: bytes) -> Any:
    if not raw.strip():
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
    conn = call.store.connection()
    authorization = call.request.headers.get("authorization")
    user = None
    if page_session and not authorization:
        user = page_session_user(conn, call.request)
        call.from_page = user is not None
    if user is None:
        user = identity.authenticate(conn, authorization)
    call.user = user
    call.request.scope[USER_ID_KEY] = user.user_id


def _run_sync(endpoint: Endpoint, call: Call) -> Any:
    if endpoint.auth:
        _authenticate(call, endpoint.page_session)
    return endpoint.handler(call)


def asgi_handler(endpoint: Endpoint,
                 context: AppContext) -> Callable[[Request], Awaitable[Response]]:
    """The Starlette endpoint function for one Endpoint."""
    is_async = inspect.iscoroutinefunction(endpoint.handler)
    reads_json = endpoint.body is not None and endpoint.body_media_type == JSON

    async def handle(request: Request) -> Response:
        log_id = request.scope.get(LOG_ID_KEY) or new_log_id()
        call = Call(request=request, context=context, log_id=log_id,
                    path=request.path_params, query=request.query_params)
        try:
            if reads_json:
                call.body = parse_json_body(await read_body(request))
            if is_async:
                if endpoint.auth:
                    await run_in_threadpool(_authenticate, call, endpoint.page_session)
                result = await endpoint.handler(call)
            else:
                result = await run_in_threadpool(_run_sync, endpoint, call)
            return result if isinstance(result, Response) else envelope(result)
        except ApiFailure as failure:
            return failure_response(failure, log_id)
        except Exception as exc:
            return _unexpected_response(exc, log_id, request.method, request.url.path)

    handle.__name__ = getattr(endpoint.handler, "__name__", "handle")
    return handle


# ------------------------------------------------------------------------ middleware


@dataclass(slots=True)
class _Exchange:
    status: int = 500
    started: bool = False


class RequestLogMiddleware:
    """Gives every request a log id (header `X-Tt-Logid`) and the app's platform log,
    writes one JSON access-log line per request to stderr when enabled, and is the last
    line of defence: anything that escapes becomes the safe 500 envelope."""

    def __init__(self, app: ASGIApp, *, access_log: bool = False,
                 context: AppContext | None = None) -> None:
        self.app = app
        self.access_log = access_log
        self.context = context

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        log_id = new_log_id()
        scope[LOG_ID_KEY] = log_id
        started = time.perf_counter()
        exchange = _Exchange()
        log_header = (b"x-tt-logid", log_id.encode("ascii"))

        async def send_with_log_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                exchange.status = message["status"]
                exchange.started = True
                message["headers"] = [*message.get("headers", ()), log_header]
            await send(message)

        log_file = self.context.log_file if self.context is not None else None
        try:
            with platform_log.logging_to(log_file):
                try:
                    await self.app(scope, receive, send_with_log_id)
                except Exception as exc:
                    if not exchange.started:
                        response = _unexpected_response(exc, log_id, scope["method"],
                                                        scope["path"])
                        await response(scope, receive, send_with_log_id)
                    else:
                        report_unexpected(exc, log_id, scope["method"], scope["path"])
        finally:
            if self.access_log:
                write_access_line(scope, log_id, exchange.status,
                                  (time.perf_counter() - started) * 1000)


def write_access_line(scope: Scope, log_id: str, status: int, ms: float) -> None:
    """One structured line per request; never headers (they carry the token)."""
    line = json.dumps({
        "ts": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "log_id": log_id,
        "method": scope["method"],
        "path": scope["path"],
        "status": status,
        "ms": round(ms, 2),
        "user_id": scope.get(USER_ID_KEY),
    }, ensure_ascii=False)
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
