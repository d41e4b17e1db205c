"""The bot identity: an app's id and secret -> a tenant access token, as lark-cli gets it
(`internal/credential/default_provider.go`: POST {open}/open-apis/auth/v3/
tenant_access_token/internal {app_id, app_secret} -> {code, msg, tenant_access_token,
expire}).

The token is cached in the secret store (so the next command of a CI job reuses it) and
fetched again five minutes before it expires, or at once when the platform rejects it.
The cache is keyed by a hash of the app secret as well as the app id: a wrong or rotated
secret finds no token cached for it, so it is checked by Lark at once instead of working
until the cached token expires.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable

from basedb.client.lark.http import AuthHttp
from basedb.client.retry import parse_reset
from basedb.client.secrets import SecretStore
from basedb.core.errors import AuthError, BasedbError, RateLimited
from basedb.protocol import lark_errors
from basedb.protocol.codes import Code

TENANT_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
REFRESH_AHEAD = 300.0
CREDENTIAL_CODES = frozenset({Code.AUTH_PARAM_INVALID, Code.APP_SECRET_INVALID,
                              Code.APP_CREDENTIALS_INVALID})
"""Answers that mean the app id or secret is wrong (config: exit 3)."""


REFUSED = "LARK_TENANT_TOKEN_REFUSED"
"""basedb's code for a refusal whose answer carried no Lark code."""


def cache_key(open_url: str, app_id: str, app_secret: str) -> str:
    """The secret-store key of the cached tenant token: a token is found only with the
    secret it was issued for (the hash names the secret without revealing it)."""
    digest = hashlib.sha256(f"{app_id}\0{app_secret}".encode()).hexdigest()[:32]
    return f"lark:tenant:{open_url}:{app_id}:{digest}"


class TenantCredentials:
    """Tenant access tokens for one app on one open host."""

    identity = "bot"

    def __init__(self, *, open_url: str, app_id: str, app_secret: str, http: AuthHttp,
                 store: SecretStore | None, login_command: str,
                 clock: Callable[[], float] = time.time) -> None:
        self.open_url = open_url
        self.app_id = app_id
        self._secret = app_secret
        self._http = http
        self._store = store
        self._login = login_command
        self._clock = clock
        self._token: str | None = None
        self._expires_at = 0.0

    def __repr__(self) -> str:
        return f"TenantCredentials(app_id={self.app_id!r}, open_url={self.open_url!r})"

    def token(self) -> str:
        now = self._clock()
        if self._token and now < self._expires_at - REFRESH_AHEAD:
            return self._token
        cached = self._cached(now)
        if cached is not None:
            return cached
        return self._fetch(now)

    def verify(self) -> str:
        """A new token, whatever is cached: proves the app id and secret work."""
        return self._fetch(self._clock())

    def renew(self, rejected: str) -> bool:
        if rejected == self._token:
            self._token, self._expires_at = None, 0.0
        if self._store is not None:
            self._store.delete(cache_key(self.open_url, self.app_id, self._secret))
        return True

    def _cached(self, now: float) -> str | None:
        if self._store is None:
            return None
        try:
            raw = self._store.get(cache_key(self.open_url, self.app_id, self._secret))
            entry = json.loads(raw) if raw else None
        except (BasedbError, ValueError):
            return None
        if (isinstance(entry, dict) and isinstance(entry.get("token"), str)
                and isinstance(entry.get("expiresAt"), (int, float))
                and now < entry["expiresAt"] - REFRESH_AHEAD):
            self._token, self._expires_at = entry["token"], float(entry["expiresAt"])
            return self._token
        return None

    def _fetch(self, now: float) -> str:
        status, data, headers = self._http.post(
            self.open_url + TENANT_PATH, body={"app_id": self.app_id,
                                               "app_secret": self._secret})
        code = data.get("code")
        msg = str(data.get("msg") or "")
        if code == Code.RATE_LIMITED or status == 429:
            reset = parse_reset(headers.get("x-ogw-ratelimit-reset"))
            raise RateLimited(f"Getting a tenant access token was rate limited: {msg}",
                              code=Code.RATE_LIMITED, http_status=status,
                              hint="Retry later" + (f" (in {reset:g}s)." if reset else "."))
        token = data.get("tenant_access_token")
        if code != 0 or not isinstance(token, str) or not token:
            number = code if isinstance(code, int) and not isinstance(code, bool) else 0
            kind = "config" if number in CREDENTIAL_CODES else lark_errors.classify(number).type
            said = f": {msg}" if msg else "."
            raise AuthError(
                f"Lark refused the app credentials of {self.app_id}{said}",
                code=number or REFUSED, http_status=status,
                error_type=kind if kind != "api_error" else "auth",
                hint=f"Check the app id and secret ({self._login}); the secret is in the "
                     "developer console under Credentials & Basic Info.")
        expire = data.get("expire")
        lifetime = float(expire) if isinstance(expire, (int, float)) and expire > 0 else 7200.0
        self._token, self._expires_at = token, now + lifetime
        if self._store is not None:
            self._store.set(cache_key(self.open_url, self.app_id, self._secret),
                            json.dumps({"token": token, "expiresAt": self._expires_at}))
        return token
