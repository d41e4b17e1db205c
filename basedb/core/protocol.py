"""Business codes, and the one place that builds error bodies and messages.

Every failure a handler wants to report is an `ApiFailure`; the request layer turns it
into the envelope built by `error_body`:

    {"code": <int>, "msg": "<≤ 500 chars>", "error": {"log_id": "..."}, "data"?: {...}}

Messages never contain SQL or a stack. A call that was refused before doing anything
says so in upstream's fixed English template (see `unexecuted_message`), so that a
caller (often an AI agent) can locate the parameter, fix it and know nothing ran.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from basedb.core.redact import redact

SUCCESS = 0
BAD_REQUEST = 9499
TOKEN_MISSING = 99991661
TOKEN_INVALID = 99991663
PERMISSION_DENIED = 99991672
FUNCTION_NOT_FOUND = 800004001
PARAMETER_INVALID = 800004002
FUNCTION_BUSINESS_ERROR = 800004003
SCHEMA_NOT_READY = 800004004
EXECUTION_FAILED = 800004005
AI_FUNCTION_NOT_ENABLED = 800004011
DEPLOYMENT_CONFLICT = 800004020
AI_FUNCTION_MISSING_LOCALLY = 800004021
AGENT_TOOLS_POLICY_INVALID = 800004030
# Transport-level failures reuse their HTTP status as the code, as Lark's gateway does.
ROUTE_NOT_FOUND = 404
METHOD_NOT_ALLOWED = 405
BODY_TOO_LARGE = 413
INTERNAL_ERROR = 500
PLATFORM_BUSY = 503

MAX_MSG_CHARS = 500
MAX_RECEIVED_CHARS = 64
MAX_CANDIDATES = 3

INTERNAL_ERROR_MSG = (
    "The platform hit an unexpected error and did not finish the request. "
    "Retry: retry later; if it persists, report it with the LogID."
)
BUSY_MSG = (
    "The platform database is busy with other writes. Executed: no. Retry: retry later."
)

_MISSING = object()


class ApiFailure(Exception):
    """A request the platform refuses or cannot complete; becomes an error envelope."""

    def __init__(
        self,
        code: int,
        msg: str,
        *,
        status: int = 400,
        data: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(msg)
        self.code = code
        self.msg = msg
        self.status = status
        self.data = data
        self.headers = headers or {}


def quote(text: object) -> str:
    """A name as it appears in messages: JSON-quoted, so any quote inside stays readable."""
    return json.dumps(text, ensure_ascii=False)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_body(code: int, msg: str, log_id: str, data: Any = None) -> dict[str, Any]:
    """The envelope of every error response.

    The message ends with `LogID: <id>` (upstream: callers that only see `msg`, such as
    an agent reading lark-cli's stderr, can still quote it), within the 500-character cap.
    """
    if "LogID:" not in msg:
        suffix = f" LogID: {log_id}"
        msg = clip(msg, MAX_MSG_CHARS - len(suffix)) + suffix
    body: dict[str, Any] = {"code": code, "msg": clip(msg, MAX_MSG_CHARS),
                            "error": {"log_id": log_id}}
    if data is not None:
        body["data"] = data
    return body


def render_received(value: Any) -> str:
    """A caller-supplied value as JSON, redacted and clipped to 64 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(value)
    return clip(redact(text), MAX_RECEIVED_CHARS)


def unexecuted_message(
    reason: str,
    *,
    parameter: str,
    fix: str,
    received: Any = _MISSING,
    candidates: Iterable[Any] = (),
    retry: str = "retry after fixing",
) -> str:
    """`<Reason>. Parameter: <pointer> (received <v>). Fix: <…>; Candidates: <≤3>.
    Executed: no. Retry: <…>.` — clipped to 500 characters, the tail always kept."""
    shown = [render_received(c) if not isinstance(c, str) else clip(c, 40)
             for c in list(candidates)[:MAX_CANDIDATES]]
    where = f"Parameter: {clip(parameter, 80) or '/'}"
    if received is not _MISSING:
        where += f" (received {render_received(received)})"
    tail = (f"; Candidates: {', '.join(shown)}" if shown else "") + \
        f". Executed: no. Retry: {retry}."
    reason, fix = reason.rstrip(". "), fix.rstrip(". ")
    budget = MAX_MSG_CHARS - len(where) - len(tail) - len(". . Fix: ")
    if len(reason) + len(fix) > budget:
        fix = clip(fix, max(budget // 2, budget - len(reason)))
        reason = clip(reason, budget - len(fix))
    return f"{reason}. {where}. Fix: {fix}{tail}"


def bad_request(
    reason: str,
    *,
    parameter: str,
    fix: str,
    received: Any = _MISSING,
    candidates: Iterable[Any] = (),
    code: int = BAD_REQUEST,
    status: int = 400,
) -> ApiFailure:
    """A refused request (nothing executed), with a templated message."""
    return ApiFailure(code, unexecuted_message(reason, parameter=parameter, fix=fix,
                                               received=received, candidates=candidates),
                      status=status)


def not_found(what: str, parameter: str, value: str, fix: str) -> ApiFailure:
    """A path or body reference to something that does not exist (HTTP 404)."""
    return bad_request(f"{what} was not found", parameter=parameter, received=value, fix=fix,
                       status=404)


def permission_denied(reason: str, fix: str) -> ApiFailure:
    """The caller is known but may not do this (HTTP 403)."""
    msg = f"{reason.rstrip('. ')}. Fix: {fix.rstrip('. ')}. Executed: no. " \
        "Retry: retry after access is granted."
    return ApiFailure(PERMISSION_DENIED, msg, status=403)
