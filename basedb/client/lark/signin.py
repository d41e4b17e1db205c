"""Signing a Lark profile in and out, and saying how it stands (`basedb auth` wires these
to the command line; nothing here prints).

    bot        check the app id and secret by getting a tenant token, store the profile
               and the secret
    user       the device flow (`begin_user` -> URL and code, `finish_user` -> poll, user
               info, store the tokens), `--no-wait` / `--device-code` split it in two
    lark-cli   check lark-cli answers for its profile, store a profile that delegates
    status     the profile, its identity and token state (never a token)
    logout     forget the profile, its secret, its tokens and its cached tenant token
"""

from __future__ import annotations

import json
import time
from typing import Any

from basedb.client.lark.accounts import app_secret, secret_key
from basedb.client.lark.brands import hosts
from basedb.client.lark.http import AuthHttp
from basedb.client.lark.larkcli import error_envelope, run_lark_cli
from basedb.client.lark.larkcli_states import NOT_SIGNED_IN, login_command, state_error
from basedb.client.lark.oauth import (
    DeviceAuthorization,
    OAuth,
    load_token,
    save_token,
    token_key,
)
from basedb.client.lark.tenant import TenantCredentials, cache_key
from basedb.client.profiles import LarkAccount, Profile, delete_profile, save_profile
from basedb.client.secrets import SecretStore
from basedb.core.errors import AuthError
from basedb.core.frozen import frozen_dataclass


@frozen_dataclass
class SignedIn:
    profile: Profile
    user: dict[str, Any] | None  # {open_id, name} for a user; None for a bot
    scope: str = ""

    def to_dict(self) -> dict[str, Any]:
        lark = self.profile.lark
        assert lark is not None
        return {"ok": True, "profile": self.profile.name, "kind": "lark", "brand": lark.brand,
                "identity": lark.identity, "via": lark.via, "appId": lark.app_id,
                "endpoint": self.profile.endpoint, "user": self.user, "scope": self.scope}


def store_account(profile: Profile, store: SecretStore, secret: str | None) -> None:
    save_profile(profile)
    if secret is not None:
        store.set(secret_key(profile.name), secret)


def sign_in_bot(profile: Profile, secret: str, *, store: SecretStore,
                http: AuthHttp) -> SignedIn:
    """Fetch a tenant token with the credentials (which checks them), then store."""
    lark = profile.lark
    assert lark is not None and lark.app_id
    TenantCredentials(open_url=hosts(lark.brand).open, app_id=lark.app_id, app_secret=secret,
                      http=http, store=store, login_command=profile.login_command).verify()
    store_account(profile, store, secret)
    return SignedIn(profile, None)


def pending_key(profile: str) -> str:
    """A sign-in started with --no-wait: the account to store once it succeeds."""
    return f"lark:{profile}:pending"


def pending_account(profile_name: str, store: SecretStore) -> tuple[LarkAccount, str] | None:
    """The account and secret of a sign-in `begin_user(keep_pending=True)` started."""
    raw = store.get(pending_key(profile_name))
    try:
        entry = json.loads(raw) if raw else None
    except ValueError:
        return None
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in (
            "brand", "identity", "appId", "secret")):
        return None
    return (LarkAccount(brand=entry["brand"], identity=entry["identity"],
                        app_id=entry["appId"]), entry["secret"])


def _oauth(profile: Profile, secret: str, http: AuthHttp) -> OAuth:
    lark = profile.lark
    assert lark is not None and lark.app_id
    return OAuth(hosts=hosts(lark.brand), app_id=lark.app_id, app_secret=secret, http=http,
                 login_command=profile.login_command)


def begin_user(profile: Profile, secret: str, scope: str, *, store: SecretStore,
               http: AuthHttp, keep_pending: bool = False) -> DeviceAuthorization:
    """Ask for a device code (the app credentials are checked there too). Nothing is
    stored as the profile yet; with `keep_pending` (--no-wait) the account is kept aside
    in the secret store, so that `finish_user` in another process can poll."""
    device = _oauth(profile, secret, http).start(scope)
    lark = profile.lark
    if keep_pending and lark is not None:
        store.set(pending_key(profile.name), json.dumps({
            "brand": lark.brand, "identity": lark.identity, "appId": lark.app_id,
            "secret": secret}))
    return device


def finish_user(profile: Profile, secret: str, device: DeviceAuthorization | None,
                device_code: str, *, store: SecretStore, http: AuthHttp,
                wait_first: bool = True) -> SignedIn:
    """Poll until the user decides, then read who they are; only then store the profile,
    its secret and the user's tokens (a failed sign-in leaves nothing behind)."""
    oauth = _oauth(profile, secret, http)
    answer = oauth.wait(device_code, interval=device.interval if device else 5,
                        expires_in=device.expires_in if device else 240,
                        wait_first=wait_first)
    info = oauth.user_info(str(answer["access_token"]))
    stored = oauth.stored_from(answer, info)
    store_account(profile, store, secret)
    save_token(store, profile.name, stored)
    store.delete(pending_key(profile.name))
    return SignedIn(profile, {"open_id": stored.userOpenId, "name": stored.userName},
                    stored.scope)


def sign_in_lark_cli(profile: Profile, *, timeout: float) -> dict[str, Any]:
    """Check that lark-cli knows its profile (`lark-cli auth status`), then store ours."""
    lark = profile.lark
    assert lark is not None
    status, found = _lark_cli_status(lark, timeout=timeout)
    if found is not None:
        raise found
    if status.get("state") not in (None, "ok"):
        error = AuthError(f"lark-cli is not signed in: {status.get('detail')}",
                          code=NOT_SIGNED_IN, error_type="auth",
                          hint=f"Run `{login_command(lark.lark_profile)}` first.")
        raise error.with_context(detail={"state": status["state"]})
    save_profile(profile)
    return status


def lark_cli_status(lark: LarkAccount, *, timeout: float = 30.0) -> dict[str, Any]:
    """`lark-cli auth status` as {state, detail, fix?, appId?, brand?, identity?,
    userName?, tokenStatus?}; state is None when the wanted identity is usable."""
    return _lark_cli_status(lark, timeout=timeout)[0]


def _lark_cli_status(lark: LarkAccount, *,
                     timeout: float) -> tuple[dict[str, Any], AuthError | None]:
    args = (["--profile", lark.lark_profile] if lark.lark_profile else []) + ["auth", "status"]
    done = run_lark_cli(args, timeout=timeout)
    if done.returncode != 0:
        error = state_error(done.stderr, error_envelope(done.stderr),
                            lark_profile=lark.lark_profile)
        if error is None:
            return {"state": "not_configured",
                    "detail": done.stderr.decode(errors="replace").strip()}, None
        return {"state": error.detail.get("state"), "detail": error.message,
                "fix": error.hint}, error
    try:
        report = json.loads(done.stdout)
    except ValueError:
        report = {}
    if not isinstance(report, dict):
        report = {}
    found: dict[str, Any] = {k: report.get(k) for k in (
        "appId", "brand", "identity", "userName", "userOpenId", "tokenStatus", "scope")
        if report.get(k) is not None}
    if lark.identity == "user" and report.get("identity") != "user":
        state = ("token_missing" if not report.get("userOpenId")
                 or report.get("tokenStatus") is None else "need_user_authorization")
        return {**found, "state": state, "detail": str(report.get("note") or
                                                       "no user is signed in to lark-cli"),
                "fix": f"Sign in with `{login_command(lark.lark_profile)}`."}, None
    return {**found, "state": None, "detail": "lark-cli is signed in"}, None


def status(profile: Profile, *, store: SecretStore) -> dict[str, Any]:
    """How a Lark profile stands, without asking the network: its account and, for a
    user, the stored token's state (`valid`, `needs_refresh`, `expired`) and times."""
    lark = profile.lark
    assert lark is not None
    report: dict[str, Any] = {"kind": "lark", "brand": lark.brand, "identity": lark.identity,
                              "via": lark.via, "appId": lark.app_id}
    if lark.via == "lark-cli":
        report["larkProfile"] = lark.lark_profile
        return report
    report["appSecret"] = "set" if app_secret(profile, store) else "missing"
    if lark.identity == "user":
        stored = load_token(store, profile.name)
        if stored is None:
            report["tokenStatus"] = "missing"
        else:
            report.update(stored.public())
            report["tokenStatus"] = stored.status(int(time.time() * 1000))
    return report


def logout(profile: Profile, *, store: SecretStore) -> bool:
    """Forget the profile and every secret it left behind; False when none was stored."""
    lark = profile.lark
    secret = app_secret(profile, store)
    existed = delete_profile(profile.name)
    store.delete(token_key(profile.name))
    store.delete(secret_key(profile.name))
    if lark is not None and lark.app_id and secret:
        store.delete(cache_key(hosts(lark.brand).open, lark.app_id, secret))
    return existed
