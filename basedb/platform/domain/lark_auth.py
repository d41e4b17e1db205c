"""The Lark stand-in: app credentials, tenant access tokens, the OAuth device flow and
refresh, as lark-cli calls them on Lark (`internal/auth/`, `internal/credential/`), so
that basedb's Lark sign-in runs end to end against this platform.

    app            registered by the platform owner: an app id, a secret (stored as a
                   hash, shown once) and the app's bot user
    tenant token   app id + secret -> `t-…`, 2 h; the bot user is its caller
    device grant   app (Basic auth) + scope -> device_code (shown to the client only) and
                   user_code (shown to the user), 4 min; a signed-in user approves or denies
                   it by user_code; the client polls with the device_code
    user token     `u-…` (2 h) and a refresh token `ur-…` (7 days), single use: a refresh
                   token used twice revokes its whole family (every token refreshed from
                   the same sign-in), the usual answer to a stolen refresh token

Guessing is throttled: failed app secrets per app and client, unknown device codes per
app and client, unknown user codes per user (`MAX_FAILURES` per `WINDOW_SECONDS`), then
99991400 with the seconds until the window ends. Lifetimes are module constants; the
device polling interval can be lowered with $BASEDB_LARK_DEVICE_INTERVAL (tests).
"""

from __future__ import annotations

import hmac
import os
import secrets
import sqlite3
import time
from dataclasses import field
from typing import Any

from basedb.core import environment
from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain.identity import User, create_user
from basedb.platform.storage import ids
from basedb.protocol import Code, RefreshCode, api_envelope

TENANT_SECONDS = 7200
USER_SECONDS = 7200
REFRESH_SECONDS = 7 * 24 * 3600
DEVICE_SECONDS = 240
DEFAULT_INTERVAL = 5
MAX_FAILURES = 10
WINDOW_SECONDS = 300
USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ23456789"  # no vowels, no look-alikes
OFFLINE_ACCESS = "offline_access"



@frozen_dataclass
class LarkAnswer:
    """A non-envelope answer (OAuth JSON, or Lark's flat auth/v3 JSON)."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@frozen_dataclass
class LarkApp:
    """A registered app: its secret is shown only now (only its hash is kept)."""

    app_id: str
    app_secret: str
    name: str
    bot_user_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"app_id": self.app_id, "app_secret": self.app_secret, "name": self.name,
                "bot_user_id": self.bot_user_id}


@frozen_dataclass
class DeviceDecision:
    """A signed-in user's answer to a pending device grant of app `app_id`."""

    app_id: str
    approved: bool

    def to_dict(self) -> dict[str, Any]:
        return {"app_id": self.app_id, "approved": self.approved}


class LarkRefusal(Exception):
    """Raised with the answer to send instead of the request's result."""

    def __init__(self, answer: LarkAnswer) -> None:
        super().__init__(answer.body.get("error") or answer.body.get("msg"))
        self.answer = answer


def _now(now: int | None) -> int:
    return int(time.time()) if now is None else now


def device_interval() -> int:
    value = os.environ.get(environment.LARK_DEVICE_INTERVAL, "")
    return int(value) if value.isdigit() else DEFAULT_INTERVAL


# ------------------------------------------------------------------------- throttle


def _throttled(conn: sqlite3.Connection, key: str, now: int) -> int | None:
    """Seconds until `key` may try again, or None when it may now."""
    row = conn.execute("SELECT failures, window_start FROM lark_throttle WHERE key = ?",
                       (key,)).fetchone()
    if row is None or now >= row[1] + WINDOW_SECONDS:
        return None
    return row[1] + WINDOW_SECONDS - now if row[0] >= MAX_FAILURES else None


def _fail(conn: sqlite3.Connection, key: str, now: int) -> None:
    row = conn.execute("SELECT failures, window_start FROM lark_throttle WHERE key = ?",
                       (key,)).fetchone()
    if row is None or now >= row[1] + WINDOW_SECONDS:
        conn.execute("INSERT OR REPLACE INTO lark_throttle (key, failures, window_start) "
                     "VALUES (?, 1, ?)", (key, now))
    else:
        conn.execute("UPDATE lark_throttle SET failures = failures + 1 WHERE key = ?", (key,))


def _guard(conn: sqlite3.Connection, key: str, now: int) -> None:
    wait = _throttled(conn, key, now)
    if wait is not None:
        raise LarkRefusal(LarkAnswer(429, {
            "code": Code.RATE_LIMITED, "msg": "request trigger frequency limit",
            "error": "slow_down", "error_description": f"Too many failed attempts; retry "
            f"in {wait}s."}, {"x-ogw-ratelimit-reset": str(wait)}))


# ----------------------------------------------------------------------------- apps


def register_app(conn: sqlite3.Connection, name: str) -> LarkApp:
    """A new app, with its bot user."""
    bot = create_user(conn, f"{name} (bot)").user
    app_id = "cli_" + secrets.token_hex(8)
    secret = secrets.token_urlsafe(24)
    conn.execute("INSERT INTO lark_apps (app_id, secret_hash, name, bot_user_id, created_at) "
                 "VALUES (?, ?, ?, ?, ?)",
                 (app_id, ids.hash_token(secret), name, bot.user_id, ids.now_text()))
    return LarkApp(app_id, secret, name, bot.user_id)


def _check_app(conn: sqlite3.Connection, app_id: Any, secret: Any, client: str,
               now: int) -> str | None:
    """The app's bot user id when the credentials match; None (a failure is counted)."""
    key = f"secret:{app_id}:{client}"
    _guard(conn, key, now)
    row = conn.execute("SELECT secret_hash, bot_user_id FROM lark_apps WHERE app_id = ?",
                       (app_id if isinstance(app_id, str) else "",)).fetchone()
    given = ids.hash_token(secret) if isinstance(secret, str) else ""
    if row is None or not hmac.compare_digest(row[0], given):
        _fail(conn, key, now)
        return None
    return str(row[1])


# --------------------------------------------------------------------- tenant token


def tenant_token(conn: sqlite3.Connection, app_id: Any, secret: Any, client: str, *,
                 now: int | None = None) -> LarkAnswer:
    """POST /open-apis/auth/v3/tenant_access_token/internal {app_id, app_secret}."""
    moment = _now(now)
    if not isinstance(app_id, str) or not app_id or not isinstance(secret, str) or not secret:
        return LarkAnswer(400, api_envelope(Code.AUTH_PARAM_INVALID,
                                            "app_id and app_secret are required"))
    known = conn.execute("SELECT 1 FROM lark_apps WHERE app_id = ?", (app_id,)).fetchone()
    bot = _check_app(conn, app_id, secret, client, moment)
    if bot is None:
        if known is None:
            return LarkAnswer(400, api_envelope(Code.AUTH_PARAM_INVALID,
                                                "invalid param: app_id"))
        return LarkAnswer(400, api_envelope(Code.APP_SECRET_INVALID, "app secret invalid"))
    token = _issue(conn, "t-", bot, "tenant", app_id, "", None, moment + TENANT_SECONDS)
    return LarkAnswer(200, {"code": 0, "msg": "ok", "tenant_access_token": token,
                            "expire": TENANT_SECONDS})


def _issue(conn: sqlite3.Connection, prefix: str, user_id: str, kind: str, app_id: str,
           scope: str, family: str | None, expires_at: int) -> str:
    token = prefix + secrets.token_urlsafe(32)
    conn.execute("INSERT INTO tokens (token_hash, user_id, created_at, kind, expires_at, "
                 "app_id, scope, family) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 (ids.hash_token(token), user_id, ids.now_text(), kind, expires_at, app_id,
                  scope, family))
    return token


# ---------------------------------------------------------------------- device flow


def _oauth_error(status: int, error: str, description: str,
                 code: int | None = None) -> LarkAnswer:
    body: dict[str, Any] = {"error": error, "error_description": description}
    if code is not None:
        body["code"] = code
    return LarkAnswer(status, body)


def _invalid_client() -> LarkAnswer:
    return _oauth_error(401, "invalid_client", "The app id or app secret is wrong.")


def start_device_grant(conn: sqlite3.Connection, app_id: Any, secret: Any, scope: Any,
                       client: str, verify_url: str, *, now: int | None = None) -> LarkAnswer:
    """POST /oauth/v1/device_authorization (Basic app_id:app_secret; client_id, scope)."""
    moment = _now(now)
    if _check_app(conn, app_id, secret, client, moment) is None:
        return _invalid_client()
    words = scope.split() if isinstance(scope, str) else []
    if len(words) > 100 or any(len(w) > 100 for w in words):
        return _oauth_error(400, "invalid_scope", "Too many or too long scopes.")
    device_code = secrets.token_urlsafe(32)
    user_code = _new_user_code(conn)
    interval = device_interval()
    conn.execute("INSERT INTO lark_device_grants (device_code_hash, user_code, app_id, scope, "
                 "status, interval, expires_at) VALUES (?, ?, ?, ?, 'pending', ?, ?)",
                 (ids.hash_token(device_code), user_code, app_id, " ".join(words), interval,
                  moment + DEVICE_SECONDS))
    return LarkAnswer(200, {
        "device_code": device_code, "user_code": user_code, "verification_uri": verify_url,
        "verification_uri_complete": f"{verify_url}?user_code={user_code}",
        "expires_in": DEVICE_SECONDS, "interval": interval})


def _new_user_code(conn: sqlite3.Connection) -> str:
    while True:
        raw = "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(8))
        code = f"{raw[:4]}-{raw[4:]}"
        if conn.execute("SELECT 1 FROM lark_device_grants WHERE user_code = ?",
                        (code,)).fetchone() is None:
            return code


def decide_device_grant(conn: sqlite3.Connection, user: User, user_code: Any, approve: bool,
                        *, now: int | None = None) -> DeviceDecision | LarkAnswer:
    """A signed-in user approves (or denies) the grant showing `user_code`. Returns the
    decision, or the refusal when the code is unknown, expired or already decided (returned,
    not raised, so that the failed guess it counts is committed)."""
    moment = _now(now)
    key = f"user_code:{user.user_id}"
    _guard(conn, key, moment)
    if user.is_bot:
        return _oauth_error(403, "access_denied", "A bot cannot sign in as a user.")
    code = user_code.strip().upper() if isinstance(user_code, str) else ""
    row = conn.execute("SELECT app_id, status, expires_at FROM lark_device_grants "
                       "WHERE user_code = ?", (code,)).fetchone()
    if row is None or row[1] != "pending" or row[2] <= moment:
        _fail(conn, key, moment)
        return _oauth_error(400, "invalid_grant", "No pending sign-in has this code; it may "
                            "have expired or been used.")
    conn.execute("UPDATE lark_device_grants SET status = ?, user_id = ? WHERE user_code = ?",
                 ("approved" if approve else "denied", user.user_id, code))
    return DeviceDecision(str(row[0]), approve)


def poll_device_grant(conn: sqlite3.Connection, form: dict[str, str], client: str, *,
                      now: int | None = None) -> LarkAnswer:
    """POST /open-apis/authen/v2/oauth/token, grant_type device_code."""
    moment = _now(now)
    app_id = form.get("client_id", "")
    if _check_app(conn, app_id, form.get("client_secret"), client, moment) is None:
        return _invalid_client()
    key = f"device_code:{app_id}:{client}"
    _guard(conn, key, moment)
    row = conn.execute(
        "SELECT device_code_hash, app_id, scope, status, user_id, interval, expires_at, "
        "last_poll FROM lark_device_grants WHERE device_code_hash = ?",
        (ids.hash_token(form.get("device_code", "")),)).fetchone()
    if row is None or row[1] != app_id or row[3] == "used":
        _fail(conn, key, moment)
        return _oauth_error(400, "invalid_grant", "Unknown or already used device code.")
    code_hash, _, scope, status, user_id, interval, expires_at, last_poll = row
    if expires_at <= moment:
        return _oauth_error(400, "expired_token", "The device code has expired.")
    conn.execute("UPDATE lark_device_grants SET last_poll = ? WHERE device_code_hash = ?",
                 (moment, code_hash))
    if status == "denied":
        return _oauth_error(400, "access_denied", "The user denied the sign-in.")
    if status == "pending":
        if last_poll is not None and moment - last_poll < interval:
            return _oauth_error(400, "slow_down", f"Poll at most every {interval}s.")
        return _oauth_error(400, "authorization_pending", "Waiting for the user.")
    conn.execute("UPDATE lark_device_grants SET status = 'used' WHERE device_code_hash = ?",
                 (code_hash,))
    return _user_tokens(conn, user_id, app_id, scope, secrets.token_hex(8), moment)


def _user_tokens(conn: sqlite3.Connection, user_id: str, app_id: str, scope: str,
                 family: str, now: int) -> LarkAnswer:
    access = _issue(conn, "u-", user_id, "user", app_id, scope, family, now + USER_SECONDS)
    body: dict[str, Any] = {"code": 0, "access_token": access, "token_type": "Bearer",
                            "expires_in": USER_SECONDS, "scope": scope}
    if OFFLINE_ACCESS in scope.split():
        refresh = "ur-" + secrets.token_urlsafe(32)
        conn.execute("INSERT INTO lark_refresh_tokens (token_hash, family, user_id, app_id, "
                     "scope, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                     (ids.hash_token(refresh), family, user_id, app_id, scope,
                      now + REFRESH_SECONDS))
        body.update(refresh_token=refresh, refresh_token_expires_in=REFRESH_SECONDS)
    return LarkAnswer(200, body)


def refresh_user_token(conn: sqlite3.Connection, form: dict[str, str], client: str, *,
                       now: int | None = None) -> LarkAnswer:
    """POST /open-apis/authen/v2/oauth/token, grant_type refresh_token (single use)."""
    moment = _now(now)
    app_id = form.get("client_id", "")
    if _check_app(conn, app_id, form.get("client_secret"), client, moment) is None:
        return _invalid_client()
    key = f"refresh:{app_id}:{client}"
    _guard(conn, key, moment)
    row = conn.execute("SELECT token_hash, family, user_id, app_id, scope, expires_at, "
                       "used_at FROM lark_refresh_tokens WHERE token_hash = ?",
                       (ids.hash_token(form.get("refresh_token", "")),)).fetchone()
    if row is None or row[3] != app_id:
        _fail(conn, key, moment)
        return _oauth_error(400, "invalid_grant", "The refresh token is invalid.",
                            RefreshCode.INVALID)
    token_hash, family, user_id, _, scope, expires_at, used_at = row
    if used_at == 0:
        return _oauth_error(400, "invalid_grant", "The refresh token was revoked.",
                            RefreshCode.REVOKED)
    if used_at is not None:
        revoke_family(conn, family)
        return _oauth_error(400, "invalid_grant", "The refresh token was already used; every "
                            "token of this sign-in is revoked.", RefreshCode.ALREADY_USED)
    if expires_at <= moment:
        return _oauth_error(400, "invalid_grant", "The refresh token has expired.",
                            RefreshCode.EXPIRED)
    conn.execute("UPDATE lark_refresh_tokens SET used_at = ? WHERE token_hash = ?",
                 (moment, token_hash))
    return _user_tokens(conn, user_id, app_id, scope, family, moment)


def revoke_family(conn: sqlite3.Connection, family: str) -> None:
    """Every access and refresh token that descends from one sign-in."""
    conn.execute("DELETE FROM tokens WHERE family = ?", (family,))
    conn.execute("UPDATE lark_refresh_tokens SET used_at = COALESCE(used_at, 0), "
                 "expires_at = 0 WHERE family = ?", (family,))
