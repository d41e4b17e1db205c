"""Lark's security-policy refusals, 21000 and 21001, handled as lark-cli handles them
(`internal/auth/transport.go`, `uat_client.go`, `errors.go`).

21000 (`challenge_required`) means the tenant's access-control policy wants the user to
complete a challenge in the browser first; 21001 (`access_denied`) means the policy denies
the access. Neither says the sign-in is bad: the stored token is kept (a refresh answered
this way does not remove it), and the error shows the challenge URL, accepted only when it
is https, with the `cli_hint` the answer carried. They come in the refresh answer (`code`,
`error_description`, `challenge_url`, `cli_hint`), in an Open API envelope (`code`, `msg`,
`data: {challenge_url, cli_hint}`), and from lark-cli as its own envelope (`type:
auth_error`, `code: challenge_required | access_denied`, `challenge_url`, `hint`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from basedb.core.errors import AuthError
from basedb.protocol import Code

CHALLENGE_REQUIRED = Code.POLICY_CHALLENGE_REQUIRED
ACCESS_DENIED = Code.POLICY_ACCESS_DENIED
CODES = frozenset({CHALLENGE_REQUIRED, ACCESS_DENIED})
LARK_CLI_CODES = {"challenge_required": CHALLENGE_REQUIRED, "access_denied": ACCESS_DENIED}


def challenge_url(value: Any) -> str | None:
    """The challenge URL when it is one to show (https only, as lark-cli checks)."""
    if not isinstance(value, str):
        return None
    url = value.strip(" `")
    return url if urlsplit(url).scheme == "https" and urlsplit(url).netloc else None


def policy_error(code: int, message: str, url: Any, cli_hint: Any) -> AuthError:
    """The AuthError of a security-policy refusal; the stored sign-in stays as it is."""
    shown = challenge_url(url)
    said = message.strip() or ("Complete the access challenge first" if code ==
                               CHALLENGE_REQUIRED else "Access is denied by policy")
    if code == CHALLENGE_REQUIRED:
        hint = (f"Open {shown} and complete the challenge, then retry." if shown else
                "Complete the access challenge your organisation asks for, then retry.")
    else:
        hint = "Your organisation's access policy denies this; ask its Lark admin."
    if isinstance(cli_hint, str) and cli_hint.strip():
        hint = f"{hint} {cli_hint.strip()}"
    error = AuthError(f"Blocked by the access policy: {said}", code=code, error_type="auth",
                      hint=hint)
    detail: dict[str, Any] = {"state": "challenge_required" if code == CHALLENGE_REQUIRED
                              else "access_denied", "retryable": False}
    if shown:
        detail["challenge_url"] = shown
    return error.with_context(detail=detail)


def from_envelope(body: dict[str, Any]) -> AuthError | None:
    """A policy refusal in an Open API envelope, or None."""
    code = body.get("code")
    if code not in CODES:
        return None
    found = body.get("data")
    data: dict[str, Any] = found if isinstance(found, dict) else {}
    assert isinstance(code, int)
    return policy_error(code, str(body.get("msg") or ""), data.get("challenge_url"),
                        data.get("cli_hint"))
