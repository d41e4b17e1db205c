"""How the platform answers: JSON written one way, the success envelope
`{"code": 0, "msg": "success", "data": …}`, the error envelope of `basedb.protocol`
for an `ApiFailure`, Starlette's routing errors (404, 405) as envelopes, and the safe 500
(or 503 when SQLite was busy) for what a handler did not expect, whose traceback goes to
the platform log and never to the caller.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.types import Send

from basedb import protocol
from basedb.platform.storage import platform_log
from basedb.platform.storage.store import is_busy_error
from basedb.protocol import ApiFailure
from basedb.protocol.wire import WireModel, encode

JSON = "application/json"



def _wire(value: object) -> Any:
    """A handler's wire model (basedb.protocol.wire) as the builtins it stands for."""
    if isinstance(value, WireModel):
        return encode(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# What `json.dumps(…, ensure_ascii=False, separators=(",", ":"), allow_nan=False)` uses,
# made once: dumps with options builds its encoder anew on every call. A handler may
# answer a wire model, written as its builtins.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                            default=_wire)


def json_bytes(body: Any) -> bytes:
    """A JSON answer's body as the platform writes every one."""
    return _ENCODER.encode(body).encode("utf-8")


def json_response(body: Any, status: int = 200,
                  headers: Mapping[str, str] | None = None) -> Response:
    return Response(json_bytes(body), status_code=status, headers=headers, media_type=JSON)


def envelope_bytes(data: Any) -> bytes:
    """The success envelope `{"code": 0, "msg": "success", "data": …}` as bytes."""
    return json_bytes(protocol.success_body(data))


def envelope(data: Any) -> Response:
    return json_response(protocol.success_body(data))


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


def report_unexpected(exc: BaseException, log_id: str, method: str, path: str) -> None:
    """Log a bug's traceback to the platform log; the caller only ever sees the log id."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    platform_log.write(f"basedb platform: unexpected error (log_id {log_id}) on "
                       f"{method} {path}\n{text}")


def unexpected_response(exc: Exception, log_id: str, method: str, path: str) -> Response:
    """The answer to an exception a handler did not expect (503 when SQLite was busy)."""
    if is_busy_error(exc):
        busy = ApiFailure(protocol.Code.PLATFORM_BUSY, protocol.BUSY_MSG, status=503)
        return failure_response(busy, log_id)
    report_unexpected(exc, log_id, method, path)
    return failure_response(ApiFailure(protocol.Code.INTERNAL_ERROR, protocol.INTERNAL_ERROR_MSG,
                                       status=500), log_id)
