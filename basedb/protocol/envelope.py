"""The envelopes on the wire, each built here and nowhere else.

The Open API answers every request with `{code, msg, data}` (`code` 0 on success):

    success   {"code": 0, "msg": "success", "data": …}
    error     {"code": <int>, "msg": "<≤ 500 chars> LogID: <id>", "error": {"log_id"}, "data"?}

and `data_of` is how a caller reads the data of an answer.

lark-cli writes a failed command's error envelope on stderr (its `internal/output`
`ErrorEnvelope` and `ErrDetail`), and basedb writes the same one, for `basedb api` and for
every other command in JSON mode:

    {"ok": false, "identity"?: "user", "error": {"type", "code"?, "message", "hint"?,
     "console_url"?, "detail"?}}

in that key order. Empty members are left out, as Go's `omitempty` leaves them out: a
`code` of 0 or none is not written.
"""

from __future__ import annotations

from typing import Any

from basedb.core.errors import BasedbError
from basedb.protocol.codes import Code
from basedb.protocol.messages import MAX_MSG_CHARS, clip

# The two envelopes as JSON Schema (the served OpenAPI document's components).
SUCCESS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"code": {"type": "integer", "const": 0}, "msg": {"type": "string"},
                   "data": {}},
    "required": ["code", "msg", "data"],
}
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Every failure. `msg` is at most 500 characters; a refused call follows "
                   "`<Reason>. Parameter: <JSON Pointer> (received <value>). Fix: <…>; "
                   "Candidates: <≤3>. Executed: no. Retry: <…>.`",
    "properties": {
        "code": {"type": "integer", "description": "9499 bad request, 99991661 token missing, "
                 "99991663 token invalid, 99991672 permission denied, 99991400 too many "
                 "slow queries at once (retry later), 404/405 unknown route or method, "
                 "408 body too slow, 413 body too large, 421 unknown host name, 500 "
                 "internal error, 503 busy; 8000040xx for functions (800004005: failed "
                 "or stopped at a limit while running)."},
        "msg": {"type": "string", "maxLength": 500},
        "error": {"type": "object", "properties": {"log_id": {"type": "string"}},
                  "required": ["log_id"]},
        "data": {},
    },
    "required": ["code", "msg", "error"],
}


def api_envelope(code: int, msg: str, *, error: Any = None, data: Any = None) -> dict[str, Any]:
    """`{code, msg, error?, data?}`: a member that is None is left out."""
    body: dict[str, Any] = {"code": code, "msg": msg}
    if error is not None:
        body["error"] = error
    if data is not None:
        body["data"] = data
    return body


def success_body(data: Any) -> dict[str, Any]:
    """The answer of every successful request (`data` is written even when null)."""
    return {"code": Code.SUCCESS, "msg": "success", "data": data}


def error_body(code: int, msg: str, log_id: str, data: Any = None) -> dict[str, Any]:
    """The envelope of every error response.

    The message ends with `LogID: <id>` (upstream: callers that only see `msg`, such as
    an agent reading lark-cli's stderr, can still quote it), within the 500-character cap.
    """
    if "LogID:" not in msg:
        suffix = f" LogID: {log_id}"
        msg = clip(msg, MAX_MSG_CHARS - len(suffix)) + suffix
    return api_envelope(code, clip(msg, MAX_MSG_CHARS), error={"log_id": log_id}, data=data)


def data_of(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer's `data` object; `{}` when it has none or it is not an object."""
    data = answer.get("data")
    return data if isinstance(data, dict) else {}


def cli_error(type_: str, message: str, *, code: str | int | None = None,
              hint: str | None = None, console_url: str | None = None,
              detail: Any = None) -> dict[str, Any]:
    """lark-cli's `ErrDetail`: `type`, `code`?, `message`, `hint`?, `console_url`?,
    `detail`?; `code` is Lark's integer code, or basedb's own stable string code."""
    error: dict[str, Any] = {"type": type_}
    if code:
        error["code"] = code
    error["message"] = message
    for key, value in (("hint", hint), ("console_url", console_url), ("detail", detail)):
        if value:
            error[key] = value
    return error


def cli_error_envelope(error: dict[str, Any], identity: str | None = None) -> dict[str, Any]:
    """lark-cli's `ErrorEnvelope` around a `cli_error`: `{ok: false, identity?, error}`."""
    answer: dict[str, Any] = {"ok": False}
    if identity:
        answer["identity"] = identity
    answer["error"] = error
    return answer


def error_envelope(error: BasedbError, identity: str | None = None) -> dict[str, Any]:
    """The error envelope of a basedb error, as JSON mode writes it on stderr."""
    return cli_error_envelope(cli_error(error.type, error.message, code=error.code,
                                        hint=error.hint, console_url=error.console_url,
                                        detail=error.detail), identity)
