"""The user identity: the OAuth device flow, token refresh and user info, as lark-cli does
them (`internal/auth/device_flow.go`, `uat_client.go`, `token_store.go`, `paths.go`):

    POST {accounts}/oauth/v1/device_authorization     Basic app_id:app_secret; form
         client_id, scope (always with offline_access)
         -> device_code, user_code, verification_uri(_complete), expires_in, interval
    POST {open}/open-apis/authen/v2/oauth/token       form grant_type=urn:…:device_code,
         device_code, client_id, client_secret; polled every `interval` seconds:
         authorization_pending (wait), slow_down (+5 s), access_denied, expired_token
         -> access_token, expires_in, refresh_token, refresh_token_expires_in, scope
    same endpoint, grant_type=refresh_token            a new pair; the old refresh token
                                                       is spent (single use)
    GET  {open}/open-apis/authen/v1/user_info          -> open_id, name

Stored tokens (`StoredToken`, times in ms as lark-cli keeps them) are `valid` until five
minutes before they expire, then `needs_refresh` until the refresh token expires, then
`expired`. A refresh happens under a lock shared by every basedb process, and re-reads
the store once the lock is held, so two commands never spend the same refresh token.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from basedb.client.lark import policy, scopes
from basedb.client.lark.brands import Hosts
from basedb.client.lark.http import AuthHttp
from basedb.client.secrets import SecretStore, locked
from basedb.core.errors import AuthError, BasedbError, NetworkError
from basedb.core.frozen import frozen_dataclass
from basedb.protocol.codes import RefreshCode

DEVICE_PATH = "/oauth/v1/device_authorization"
TOKEN_PATH = "/open-apis/authen/v2/oauth/token"
USER_INFO_PATH = "/open-apis/authen/v1/user_info"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
REFRESH_AHEAD_MS = 5 * 60 * 1000
MAX_POLL_INTERVAL = 60
MAX_POLLS = 200

# doctor's states (upstream skill: "认证与重新授权")
TOKEN_MISSING = "token_missing"
NEED_USER_AUTHORIZATION = "need_user_authorization"


def pause(seconds: float) -> None:
    """Wait between polls (tests replace it, e.g. to approve the sign-in meanwhile)."""
    time.sleep(seconds)


def token_key(profile: str) -> str:
    return f"lark:{profile}:user_token"


@frozen_dataclass
class DeviceAuthorization:
    device_code: str
    user_code: str
    verification_uri: str
    verification_uri_complete: str
    expires_in: int
    interval: int


@frozen_dataclass
class StoredToken:
    userOpenId: str
    appId: str
    accessToken: str
    refreshToken: str
    expiresAt: int
    refreshExpiresAt: int
    scope: str
    grantedAt: int
    userName: str = ""

    def status(self, now_ms: int) -> str:
        """lark-cli's TokenStatus: valid, needs_refresh or expired."""
        if now_ms < self.expiresAt - REFRESH_AHEAD_MS:
            return "valid"
        if now_ms < self.refreshExpiresAt:
            return "needs_refresh"
        return "expired"

    def public(self) -> dict[str, Any]:
        """What may be shown: everything but the two tokens."""
        return {"userOpenId": self.userOpenId, "userName": self.userName, "appId": self.appId,
                "scope": self.scope, "expiresAt": self.expiresAt,
                "refreshExpiresAt": self.refreshExpiresAt, "grantedAt": self.grantedAt}


def load_token(store: SecretStore, profile: str) -> StoredToken | None:
    raw = store.get(token_key(profile))
    try:
        entry = json.loads(raw) if raw else None
        return StoredToken(**entry) if isinstance(entry, dict) else None
    except (TypeError, ValueError):
        return None


def save_token(store: SecretStore, profile: str, token: StoredToken) -> None:
    store.set(token_key(profile), json.dumps(asdict(token)))


def _ms(clock: Callable[[], float]) -> int:
    return int(clock() * 1000)


class OAuth:
    """The device flow and refresh of one app on one brand's hosts."""

    def __init__(self, *, hosts: Hosts, app_id: str, app_secret: str, http: AuthHttp,
                 login_command: str, clock: Callable[[], float] = time.time) -> None:
        self.hosts = hosts
        self.app_id = app_id
        self._secret = app_secret
        self._http = http
        self.login_command = login_command
        self._clock = clock

    def __repr__(self) -> str:
        return f"OAuth(app_id={self.app_id!r})"

    def _auth_error(self, message: str, *, state: str | None = None, code: Any = None,
                    error_type: str = "auth") -> AuthError:
        known = isinstance(code, int) and not isinstance(code, bool) and code
        error = AuthError(message, code=code if known else
                          f"LARK_{state.upper()}" if state else "LARK_SIGN_IN_FAILED",
                          error_type=error_type,
                          hint=f"Sign in again with `{self.login_command}`.")
        return error.with_context(detail={"state": state} if state else None)

    # ---------------------------------------------------------------- device flow

    def start(self, scope: str) -> DeviceAuthorization:
        status, data, _ = self._http.post(
            self.hosts.accounts + DEVICE_PATH, auth=(self.app_id, self._secret),
            form={"client_id": self.app_id, "scope": scopes.requested(scope)})
        if status >= 400 or "error" in data:
            reason = data.get("error_description") or data.get("error") or f"HTTP {status}"
            kind = "config" if data.get("error") == "invalid_client" else "auth"
            raise self._auth_error(f"Device authorization failed: {reason}",
                                   error_type=kind)
        uri = str(data.get("verification_uri") or "")
        return DeviceAuthorization(
            device_code=str(data.get("device_code") or ""),
            user_code=str(data.get("user_code") or ""), verification_uri=uri,
            verification_uri_complete=str(data.get("verification_uri_complete") or uri),
            expires_in=_int(data.get("expires_in"), 240), interval=_int(data.get("interval"), 5))

    def wait(self, device_code: str, *, interval: int, expires_in: int,
             wait_first: bool = True) -> dict[str, Any]:
        """Poll until the user decides; the token answer, or an AuthError."""
        deadline = self._clock() + expires_in
        current = interval
        for poll in range(MAX_POLLS):
            if wait_first or poll:
                pause(current)
            if self._clock() > deadline:
                break
            try:
                status, data, _ = self._http.post(self.hosts.open + TOKEN_PATH, form={
                    "grant_type": DEVICE_GRANT, "device_code": device_code,
                    "client_id": self.app_id, "client_secret": self._secret})
            except NetworkError:
                current = min(current + 1, MAX_POLL_INTERVAL)
                continue
            error = data.get("error")
            if not error and data.get("access_token"):
                return data
            if error == "authorization_pending":
                continue
            if error == "slow_down":
                current = min(current + 5, MAX_POLL_INTERVAL)
                continue
            reason = data.get("error_description") or error or f"HTTP {status}"
            if error == "access_denied":
                raise self._auth_error(f"The sign-in was denied: {reason}")
            raise self._auth_error(f"The sign-in did not complete: {reason}")
        raise self._auth_error("The sign-in timed out before it was approved.")

    def user_info(self, access_token: str) -> dict[str, Any]:
        status, data, _ = self._http.get(self.hosts.open + USER_INFO_PATH, token=access_token)
        info = data.get("data")
        if data.get("code") != 0 or not isinstance(info, dict) or not info.get("open_id"):
            raise self._auth_error(f"Lark did not confirm the user token: "
                                   f"[{data.get('code')}] {data.get('msg') or status}",
                                   code=data.get("code"))
        return info

    def stored_from(self, answer: dict[str, Any], info: dict[str, Any],
                    granted_at: int | None = None) -> StoredToken:
        now = _ms(self._clock)
        expires_in = _int(answer.get("expires_in"), 7200)
        refresh = str(answer.get("refresh_token") or "")
        refresh_in = _int(answer.get("refresh_token_expires_in"), 604800) if refresh \
            else expires_in
        return StoredToken(
            userOpenId=str(info.get("open_id")), appId=self.app_id,
            accessToken=str(answer["access_token"]), refreshToken=refresh,
            expiresAt=now + expires_in * 1000, refreshExpiresAt=now + refresh_in * 1000,
            scope=str(answer.get("scope") or ""), grantedAt=granted_at or now,
            userName=str(info.get("name") or ""))

    # -------------------------------------------------------------------- refresh

    def refresh(self, stored: StoredToken) -> StoredToken | None:
        """A refreshed token, or None when the refresh token is gone (sign in again).
        The server error 20050 is tried once more, as lark-cli does; a security-policy
        refusal (21000/21001) raises and leaves the stored token alone."""
        now = _ms(self._clock)
        if now >= stored.refreshExpiresAt or not stored.refreshToken:
            return None
        form = {"grant_type": "refresh_token", "refresh_token": stored.refreshToken,
                "client_id": self.app_id, "client_secret": self._secret}
        for attempt in (1, 2):
            _, data, _ = self._http.post(self.hosts.open + TOKEN_PATH, form=form)
            code = data.get("code", -1)
            if code in policy.CODES:  # the sign-in is fine: keep it, show the challenge
                raise policy.policy_error(code, str(data.get("error_description") or ""),
                                          data.get("challenge_url"), data.get("cli_hint"))
            failed = (code not in (-1, 0)) or bool(data.get("error"))
            if not failed and data.get("access_token"):
                break
            if code == RefreshCode.SERVER_ERROR and attempt == 1:
                continue
            return None
        answer = {**data, "refresh_token": data.get("refresh_token") or stored.refreshToken}
        if not data.get("refresh_token_expires_in"):
            answer["refresh_token_expires_in"] = max(0, (stored.refreshExpiresAt - now) // 1000)
        info = {"open_id": stored.userOpenId, "name": stored.userName}
        fresh = self.stored_from(answer, info, granted_at=stored.grantedAt)
        return fresh if fresh.scope else _replace_scope(fresh, stored.scope)


def _replace_scope(token: StoredToken, scope: str) -> StoredToken:
    return StoredToken(**{**asdict(token), "scope": scope})


def _int(value: Any, default: int) -> int:
    return int(value) if isinstance(value, (int, float)) and value >= 0 else default


class UserCredentials:
    """A profile's stored user token, refreshed under a lock before it expires."""

    identity = "user"

    def __init__(self, *, profile: str, oauth: OAuth, store: SecretStore,
                 clock: Callable[[], float] = time.time) -> None:
        self.profile = profile
        self.oauth = oauth
        self._store = store
        self._clock = clock

    def __repr__(self) -> str:
        return f"UserCredentials(profile={self.profile!r})"

    def token(self) -> str:
        stored = load_token(self._store, self.profile)
        if stored is None:
            raise self.oauth._auth_error(
                f"Profile {self.profile!r} has no user token: nobody signed in yet, or the "
                "sign-in was removed.", state=TOKEN_MISSING)
        status = stored.status(_ms(self._clock))
        if status == "valid":
            return stored.accessToken
        if status == "needs_refresh":
            return self._refreshed(stored.accessToken)
        self._store.delete(token_key(self.profile))
        raise self._need_authorization("the refresh token has expired")

    def renew(self, rejected: str) -> bool:
        try:
            self._refreshed(rejected, force=True)
        except BasedbError as error:
            if error.code in policy.CODES:
                raise
            return False
        return True

    def _need_authorization(self, why: str) -> AuthError:
        return self.oauth._auth_error(f"Profile {self.profile!r} needs the user to sign in "
                                      f"again: {why}.", state=NEED_USER_AUTHORIZATION)

    def _refreshed(self, current: str, *, force: bool = False) -> str:
        with locked(f"refresh-{self.profile}"):
            # Another process may have refreshed while this one waited for the lock.
            stored = load_token(self._store, self.profile)
            if stored is None:
                raise self._need_authorization("the stored token is gone")
            if stored.accessToken != current and stored.status(_ms(self._clock)) == "valid":
                return stored.accessToken
            if not force and stored.status(_ms(self._clock)) == "valid":
                return stored.accessToken
            fresh = self.oauth.refresh(stored)
            if fresh is None:
                self._store.delete(token_key(self.profile))
                raise self._need_authorization("Lark refused the refresh token")
            save_token(self._store, self.profile, fresh)
            return fresh.accessToken
