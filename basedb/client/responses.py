"""One HTTP response -> the envelope, or the basedb error that says what went wrong.

    code 0                                  the envelope
    Lark auth codes (99991661, 99991663 …)  AuthError         exit 3  sign in again
    scope codes (99991672, 99991679 …)      PermissionDenied  exit 1  missing scopes and
                                                                      the console URL
    99991543 / 99991662, 99991673           AuthError         exit 3  type config / app_status
    99991400 or HTTP 429                    RateLimited       exit 1  (after retries)
    any other code, HTTP 5xx                ServerError       exit 4  outcome unknown
    any other code                          ApiError          exit 1
    not an envelope                         BadResponse       exit 4  names the HTTP status

The classification is lark-cli's (`basedb.protocol.lark_errors`); the hints name basedb's
commands for the profile in use (`ErrorContext.login_command`).
"""

from __future__ import annotations

import json as jsonlib
from collections.abc import Callable
from typing import Any

import httpx

from basedb.client.lark import policy
from basedb.client.lark.brands import console_url
from basedb.client.retry import RATE_LIMIT_RESET_HEADER, parse_reset
from basedb.core.errors import (
    ApiError,
    AuthError,
    BadResponse,
    PermissionDenied,
    RateLimited,
    ServerError,
)
from basedb.core.frozen import frozen_dataclass
from basedb.protocol import Code, FailureMessage, lark_errors

LOG_ID_HEADER = "X-Tt-Logid"
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@frozen_dataclass
class ErrorContext:
    """What the hints need to know about the profile a client speaks for."""

    profile_name: str | None = None
    embedded: bool = False
    login_command: str | None = None
    brand: str | None = None  # a Lark profile's brand: scope errors get a console URL
    app_id: str | None = None
    identity: str = "user"
    endpoint_label: str = "the platform"


def where(request: httpx.Request) -> str:
    return f"{request.method} {request.url.path}"


def is_json(response: httpx.Response) -> bool:
    ctype = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    return ctype == "application/json" or ctype.endswith("+json")


def rate_limit_reset(response: httpx.Response) -> float | None:
    return parse_reset(response.headers.get(RATE_LIMIT_RESET_HEADER))


UNPARSED: Any = object()
"""`envelope_or_raise(body=...)` when the body has not been parsed yet."""


def parse_body(response: httpx.Response, loads: Callable[[bytes], Any] | None = None) -> Any:
    """The response body parsed as JSON (by `loads`), or None when empty or not JSON."""
    return parse_content(response.content, loads)


def parse_content(content: bytes, loads: Callable[[bytes], Any] | None = None) -> Any:
    """`parse_body` of a body in hand."""
    try:
        return (loads or jsonlib.loads)(content) if content else None
    except (ValueError, UnicodeDecodeError):
        return None


def envelope_or_raise(request: httpx.Request, response: httpx.Response,
                      context: ErrorContext, *,
                      loads: Callable[[bytes], Any] | None = None,
                      body: Any = UNPARSED) -> dict[str, Any]:
    """The envelope of `response` (code 0), or the basedb error it carries. `body` is the
    body already parsed (`parse_body`), so that a large answer is decoded once."""
    status = response.status_code
    header_log_id = response.headers.get(LOG_ID_HEADER)
    if body is UNPARSED:
        body = parse_body(response, loads)
    code = body.get("code") if isinstance(body, dict) else None
    if not isinstance(body, dict) or not isinstance(code, int) or isinstance(code, bool):
        if status == 429:
            raise _rate_limited(request, response, Code.RATE_LIMITED,
                                f"{where(request)} was rate limited (HTTP 429).", None,
                                header_log_id, None)
        raise not_an_envelope(request, response, header_log_id, context)
    if code == 0 and status != 429:
        return body
    error = body.get("error")
    log_id = (error.get("log_id") if isinstance(error, dict) else None) or header_log_id
    log_id = str(log_id) if log_id else None
    msg = body.get("msg")
    message = msg if isinstance(msg, str) and msg.strip() else (
        f"{where(request)} failed with code {code} (HTTP {status}).")
    if code in (Code.RATE_LIMITED, 0) or status == 429:
        raise _rate_limited(request, response, code or Code.RATE_LIMITED, message, error,
                            log_id, body.get("data"))
    blocked = policy.from_envelope(body)
    if blocked is not None:
        raise blocked.with_context(detail={"log_id": log_id} if log_id else None)
    kind = lark_errors.classify(code)
    common: dict[str, Any] = {"code": code, "http_status": status, "log_id": log_id,
                              "data": body.get("data"), "error": error}
    if kind.type in ("auth", "config", "app_status"):
        raise AuthError(message, error_type=kind.type,
                        hint=_auth_hint(code, kind.type, context), **common)
    if kind.type == "permission":
        scopes = lark_errors.required_scopes(error)
        raise PermissionDenied(message, hint=_permission_hint(code, scopes, context),
                               console_url=_console_url(scopes, context), **common)
    if status >= 500:
        raise ServerError(message, hint=_server_hint(request, message), **common)
    raise ApiError(message, hint=_api_hint(code, message), **common)


def not_an_envelope(request: httpx.Request, response: httpx.Response,
                    log_id: str | None, context: ErrorContext | None = None) -> BadResponse:
    status = response.status_code
    ctype = response.headers.get("Content-Type", "").split(";")[0].strip()
    if not response.content:
        what = "an empty body"
    elif is_json(response):
        what = "JSON that is not a Lark envelope (no integer \"code\")"
    else:
        what = f"a non-JSON body ({ctype or 'no Content-Type'})"
    if status >= 500:
        hint = "The platform failed; retry later."
    elif context is not None and context.brand is not None:
        hint = (f"{context.brand.capitalize()} has no such API at this path. If basedb "
                "inferred it, `basedb doctor` says which; give its real path in "
                "$BASEDB_LARK_ENDPOINTS (docs/lark.md).") if status == 404 else \
            "Check the request path and the profile's brand (`basedb auth status`)."
    elif status in (301, 302, 303, 307, 308, 404):
        hint = ("Check the profile's endpoint: it must be the platform's base URL, "
                "e.g. http://127.0.0.1:8787 for `basedb serve` (`basedb auth status`).")
    else:
        hint = "Check the endpoint of the profile and the request path."
    detail: dict[str, Any] = {"http_status": status}
    if log_id:
        detail["log_id"] = log_id
    return BadResponse(f"{where(request)} answered HTTP {status} with {what}.",
                       code=f"HTTP_{status}", hint=hint, detail=detail)


# --------------------------------------------------------------------------- hints


def _rate_limited(request: httpx.Request, response: httpx.Response, code: int, message: str,
                  error: Any, log_id: str | None, data: Any) -> RateLimited:
    reset = rate_limit_reset(response)
    when = f" The limit resets in {reset:g}s." if reset is not None else ""
    return RateLimited(message, code=code, http_status=response.status_code, log_id=log_id,
                       data=data, error=error,
                       hint=f"Lark limits how often an app calls this API.{when} Retry "
                            "later, or spread the calls out.")


def _auth_hint(code: int, kind: str, context: ErrorContext) -> str:
    login = context.login_command
    profile = context.profile_name or "NAME"
    if kind == "config":
        return ("The app id or app secret is wrong. Check LARK_APP_ID / LARK_APP_SECRET, or "
                f"sign in again: `{login or 'basedb auth login --brand feishu'}`.")
    if kind == "app_status":
        return ("The app is disabled or not installed in this tenant: check it in the "
                "developer console.")
    if context.embedded:
        return ("The local platform rejected its owner token; check $BASEDB_DATA_DIR points "
                "at the data dir the platform was created in.")
    if login is None:
        login = f"basedb auth login --endpoint URL --token TOKEN --profile {profile}"
    if code == Code.TOKEN_MISSING:
        return f"No token was sent. Sign in with `{login}`."
    return (f"The {context.identity} token of profile {profile!r} is invalid or expired. "
            f"Sign in again with `{login}`.")


def _permission_hint(code: int, scopes: list[str], context: ErrorContext) -> str:
    if not scopes:
        return ("The identity lacks access to this resource. Ask a site admin to grant it, "
                "or use a profile with access (--profile).")
    needed = " ".join(scopes)
    what = "the scope" if len(scopes) == 1 else "the scopes"
    if code in lark_errors.USER_SCOPE_CODES and context.identity == "user":
        login = context.login_command or "basedb auth login"
        return (f"The user has not granted {what} {needed}. Grant it with "
                f"`{login} --scope \"{needed}\"`, then retry once.")
    return (f"The app has not been granted {what} {needed}: an app admin applies for it in "
            "the developer console (console_url), then retry once.")


def _console_url(scopes: list[str], context: ErrorContext) -> str | None:
    if not scopes or context.brand is None:
        return None
    return console_url(context.brand, context.app_id, scopes[0])


def _server_hint(request: httpx.Request, message: str) -> str | None:
    parsed = FailureMessage.parse(message)
    if parsed.executed is not None and parsed.retry is not None:
        # The platform said what ran and when to retry (e.g. a FaaS that failed before
        # writing: "Retry: retry after publishing"); a generic "retry later, outcome
        # unknown" would contradict it.
        return None
    suffix = (" The outcome of this write is unknown: read the resource back before "
              "retrying." if request.method in WRITE_METHODS else "")
    return "The platform failed while handling the request; retry later." + suffix


def _api_hint(code: int, message: str) -> str | None:
    if code == Code.BAD_REQUEST and FailureMessage.parse(message).fix is None:
        # The platform's own messages carry a fix; only a bare one needs ours.
        return ("The request is malformed: check that the query parameters and body are "
                "valid JSON with value types the endpoint expects.")
    return None
