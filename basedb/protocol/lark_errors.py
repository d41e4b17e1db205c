"""How lark-cli classifies Lark's error codes (`internal/output/lark_errors.go`,
`ClassifyLarkError`), which basedb follows for its error types and exit codes:

    type         codes                                        exit
    auth         99991661 99991671 99991668 99991663 99991677   3   log in again
    permission   99991672 99991676 99991679 230027              1   a scope is missing
    config       99991543                                       3   app id / secret wrong
    app_status   99991662 99991673                              3   app disabled
    rate_limit   99991400 (and HTTP 429)                        1   retried, then reported
    api_error    anything else                                  1

The codes themselves are `basedb.protocol.codes.Code`; the refresh endpoint's are
`RefreshCode`.
"""

from __future__ import annotations

from basedb.core.frozen import frozen_dataclass
from basedb.protocol.codes import Code

AUTH_CODES = frozenset({Code.TOKEN_MISSING, Code.TOKEN_BAD_FORMAT, Code.USER_TOKEN_INVALID,
                        Code.TOKEN_INVALID, Code.USER_TOKEN_EXPIRED})
"""The token is missing, malformed, invalid or expired: sign in again."""

RENEWABLE_CODES = frozenset({Code.USER_TOKEN_INVALID, Code.TOKEN_INVALID, Code.USER_TOKEN_EXPIRED})
"""A fresh token may cure these (lark-cli `TokenRetryCodes`, plus a revoked tenant token)."""

PERMISSION_CODES = frozenset({Code.PERMISSION_DENIED, Code.TOKEN_NO_PERMISSION,
                              Code.USER_SCOPE_INSUFFICIENT, Code.USER_NOT_AUTHORIZED})
USER_SCOPE_CODES = frozenset({Code.USER_SCOPE_INSUFFICIENT, Code.USER_NOT_AUTHORIZED})
"""The user has not granted a scope the app has (doctor: `missing_scopes`); the other
permission codes say the app itself lacks it (`app_scope_not_applied`)."""

APP_STATUS_CODES = frozenset({Code.APP_NOT_IN_USE, Code.APP_UNAUTHORIZED})


@frozen_dataclass
class Classification:
    type: str  # lark-cli's error type
    exit_code: int


def classify(code: int) -> Classification:
    """lark-cli's `ClassifyLarkError` for a non-zero Lark code."""
    if code in AUTH_CODES:
        return Classification("auth", 3)
    if code in PERMISSION_CODES:
        return Classification("permission", 1)
    if code == Code.APP_CREDENTIALS_INVALID:
        return Classification("config", 3)
    if code in APP_STATUS_CODES:
        return Classification("app_status", 3)
    if code == Code.RATE_LIMITED:
        return Classification("rate_limit", 1)
    return Classification("api_error", 1)


def lark_cli_hint(code: int) -> str | None:
    """The hint lark-cli's `ClassifyLarkError` gives (its `api` command shows these)."""
    kind = classify(code).type
    return {
        "auth": "run: lark-cli auth login to re-authorize",
        "permission": "check app permissions or re-authorize: lark-cli auth login",
        "config": "check app_id / app_secret: lark-cli config set",
        "app_status": "app is disabled or not installed — check developer console",
        "rate_limit": "please try again later",
    }.get(kind)


def required_scopes(error: object) -> list[str]:
    """The scopes named by an error's `permission_violations` (`[{subject, …}]`), as
    lark-cli's `extractRequiredScopes` reads them."""
    if not isinstance(error, dict):
        return []
    violations = error.get("permission_violations")
    if not isinstance(violations, list):
        return []
    return [v["subject"] for v in violations
            if isinstance(v, dict) and isinstance(v.get("subject"), str) and v["subject"]]
