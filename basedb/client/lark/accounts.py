"""A Lark profile's credentials: where its app secret and tokens come from, and the
`Credentials` object a client sends requests with.

    app secret   $LARK_APP_SECRET when $LARK_APP_ID names the profile's app (or the
                 profile was made from them), else the secret store (`lark:<profile>:
                 app_secret`); none at all is doctor's `not_configured`
    bot          TenantCredentials (cached in the secret store)
    user         UserCredentials (the tokens `basedb auth login --brand` stored)
    via lark-cli no credentials here: lark-cli signs every request itself
"""

from __future__ import annotations

import os

import httpx

from basedb.client.credentials import Credentials, StaticToken
from basedb.client.lark.brands import hosts
from basedb.client.lark.http import AuthHttp
from basedb.client.lark.oauth import OAuth, UserCredentials
from basedb.client.lark.tenant import TenantCredentials
from basedb.client.profiles import APP_ID_ENV, APP_SECRET_ENV, Profile
from basedb.client.secrets import SecretStore, secret_store
from basedb.client.trace import RequestTrace
from basedb.core import environment
from basedb.core.errors import AuthError

NOT_CONFIGURED = "not_configured"
NOT_CONFIGURED_CODE = "LARK_NOT_CONFIGURED"


def secret_key(profile: str) -> str:
    return f"lark:{profile}:app_secret"


def app_secret(profile: Profile, store: SecretStore) -> str | None:
    lark = profile.lark
    if lark is None:
        return None
    env_id = os.environ.get(environment.LARK_APP_ID, "").strip()
    env_secret = os.environ.get(environment.LARK_APP_SECRET, "").strip()
    if env_secret and (lark.from_env or (env_id and env_id == lark.app_id)):
        return env_secret
    return store.get(secret_key(profile.name))


def not_configured(profile: Profile) -> AuthError:
    lark = profile.lark
    what = f"app {lark.app_id}" if lark is not None and lark.app_id else "an app"
    error = AuthError(
        f"Profile {profile.name!r} has no app secret for {what}.", code=NOT_CONFIGURED_CODE,
        error_type="config",
        hint=f"Set {APP_ID_ENV} and {APP_SECRET_ENV}, or sign in with "
             f"`{profile.login_command}`.")
    return error.with_context(detail={"state": NOT_CONFIGURED})


def oauth_for(profile: Profile, *, store: SecretStore, http: AuthHttp) -> OAuth:
    lark = profile.lark
    secret = app_secret(profile, store)
    if lark is None or not lark.app_id or not secret:
        raise not_configured(profile)
    return OAuth(hosts=hosts(lark.brand), app_id=lark.app_id, app_secret=secret, http=http,
                 login_command=profile.login_command)


def credentials_for(profile: Profile, *, timeout: float = 30.0,
                    trace: RequestTrace | None = None,
                    transport: httpx.BaseTransport | None = None) -> Credentials:
    """The credentials of a Lark profile (`connect` calls this)."""
    lark = profile.lark
    if lark is None or lark.via == "lark-cli":
        return StaticToken(None, identity=profile.identity)
    store = secret_store()
    http = AuthHttp(timeout=timeout, transport=transport, trace=trace)
    if lark.identity == "bot":
        secret = app_secret(profile, store)
        if not lark.app_id or not secret:
            raise not_configured(profile)
        return TenantCredentials(open_url=hosts(lark.brand).open, app_id=lark.app_id,
                                 app_secret=secret, http=http, store=store,
                                 login_command=profile.login_command)
    return UserCredentials(profile=profile.name, oauth=oauth_for(profile, store=store,
                                                                 http=http), store=store)
