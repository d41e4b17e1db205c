"""What lark-cli says about its own setup, told apart from a lost connection.

lark-cli reports a profile it does not know and a missing configuration as `config`
errors (`internal/core/config.go`: `profile "X" not found`, its hint listing the
profiles; "not configured"), and a missing sign-in as an `auth` error without a Lark
code. Every failure to make a call is typed `network` by its `api` command
(`internal/client/api_errors.go`), including the two that are about sign-in, not the
network: "no access token available for user" and a tenant token the server refused
("TAT API error: [code] msg", a wrong or rotated app secret). Those must not be retried as
a lost connection nor reported as "outcome unknown": they become an AuthError naming the
lark-cli command that fixes them, with a stable string code and upstream's doctor state.

    lark-cli says                    code                        fix
    profile "X" not found            LARK_CLI_PROFILE_NOT_FOUND  lark-cli config init --name X
    not configured                   LARK_CLI_NOT_CONFIGURED     lark-cli config init --name X
    not logged in, no user token     LARK_CLI_NOT_SIGNED_IN      lark-cli auth login --profile X
    need_user_authorization          LARK_CLI_NOT_SIGNED_IN      lark-cli auth login --profile X
    TAT API error: [10014] …         10014 (Lark's code)         lark-cli config init --name X
"""

from __future__ import annotations

import re
from typing import Any

from basedb.core.errors import AuthError

NOT_CONFIGURED = "not_configured"
TOKEN_MISSING = "token_missing"
NEED_USER_AUTHORIZATION = "need_user_authorization"

PROFILE_NOT_FOUND = "LARK_CLI_PROFILE_NOT_FOUND"
NOT_CONFIGURED_CODE = "LARK_CLI_NOT_CONFIGURED"
NOT_SIGNED_IN = "LARK_CLI_NOT_SIGNED_IN"

_NO_TOKEN = re.compile(r"no access token available for (\w+)")
_TENANT_REFUSED = re.compile(r"TAT API error: \[(\d+)\] ?(.*)", re.S)
_TENANT_FAILED = re.compile(r"TAT API |failed to parse TAT response")
_PROFILE_NOT_FOUND = re.compile(r'profile "([^"]*)" not found')


def login_command(lark_profile: str | None) -> str:
    return "lark-cli auth login" + (f" --profile {lark_profile}" if lark_profile else "")


def config_command(lark_profile: str | None) -> str:
    return f"lark-cli config init --name {lark_profile}" if lark_profile else \
        "lark-cli config init --new"


def state_error(stderr: bytes, envelope: dict[str, Any] | None, *,
                lark_profile: str | None) -> AuthError | None:
    """The sign-in or setup state lark-cli reported, as an AuthError; None when the
    failure is about something else (an API answer, or the network itself)."""
    text = stderr.decode("utf-8", errors="replace")
    error = envelope.get("error") if envelope else None
    error = error if isinstance(error, dict) else {}
    message = str(error.get("message") or text.strip())
    kind = error.get("type")
    login, config = login_command(lark_profile), config_command(lark_profile)
    missing = _PROFILE_NOT_FOUND.search(message)
    if kind == "config" and missing:
        known = str(error.get("hint") or "").removeprefix("available profiles: ")
        return _error(f"lark-cli has no profile {missing.group(1)!r} (it has: {known or 'none'}).",
                      PROFILE_NOT_FOUND, "config", NOT_CONFIGURED,
                      f"Create it with `{config}`, then sign in with `{login}`.")
    if kind == "config" or "not configured" in message:
        return _error(f"lark-cli is not configured: {message}.", NOT_CONFIGURED_CODE, "config",
                      NOT_CONFIGURED,
                      f"Configure the app with `{config}`, then sign in with `{login}`.")
    refused = _TENANT_REFUSED.search(message)
    if refused:
        found = AuthError(
            f"Lark refused the app credentials lark-cli holds: {refused.group(2).strip()}.",
            code=int(refused.group(1)), error_type="config",
            hint=f"Enter the app's current secret with `{config}`.")
        return found.with_context(detail={"state": NOT_CONFIGURED})
    no_token = _NO_TOKEN.search(message)
    if no_token and no_token.group(1) == "bot":
        return _error("lark-cli has no app credentials to act as the app (bot).",
                      NOT_CONFIGURED_CODE, "config", NOT_CONFIGURED,
                      f"Configure the app with `{config}`.")
    if no_token or "need_user_authorization" in text or (kind == "auth"
                                                         and not error.get("code")):
        state = NEED_USER_AUTHORIZATION if "need_user_authorization" in text else TOKEN_MISSING
        return _error(f"lark-cli is not signed in as a user: {message}.", NOT_SIGNED_IN,
                      "auth", state, f"Sign in with `{login}`.")
    return None


def tenant_token_unreachable(message: str) -> bool:
    """Whether a `network` error is lark-cli failing to get a tenant token (nothing of
    the request itself was sent)."""
    return bool(_TENANT_FAILED.search(message))


def _error(message: str, code: str, kind: str, state: str, hint: str) -> AuthError:
    found = AuthError(message.replace("..", "."), code=code, error_type=kind, hint=hint)
    return found.with_context(detail={"state": state})
