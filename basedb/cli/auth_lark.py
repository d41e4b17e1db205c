"""`basedb auth` for Feishu/Lark profiles: the command-line side of
`basedb.client.lark.signin` (prompts, the spinner, what is printed where)."""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from basedb.cli.common import emit_json, stderr_is_tty


def _account(profile_name: str, brand: str, identity: str, app_id: str | None,
             pending: Any = None) -> Any:
    from basedb.client.lark.brands import hosts
    from basedb.client.profiles import LarkAccount, Profile, load_profiles

    stored = load_profiles().get(profile_name)
    if app_id is None and stored is not None and stored.lark is not None:
        app_id = stored.lark.app_id
    if app_id is None and pending is not None:
        app_id = pending.app_id
    if not app_id:
        from basedb.core.errors import UsageError

        raise UsageError("A Feishu/Lark sign-in needs the app's id.", code="APP_ID_MISSING",
                         hint="Pass --app-id cli_… (or set LARK_APP_ID); it is on the app's "
                              "Credentials & Basic Info page in the developer console.")
    account = LarkAccount(brand=brand, identity=identity, app_id=app_id)
    return Profile(profile_name, hosts(brand).open, lark=account)


def _secret_for(profile: Any, given: str | None, store: Any) -> str:
    from basedb.client.lark.accounts import app_secret, not_configured

    secret = given or app_secret(profile, store)
    if not secret:
        raise not_configured(profile)
    return secret


def login_brand(profile_name: str, brand: str, identity: str, app_id: str | None,
                secret: str | None, scope: str, *, no_wait: bool, device_code: str | None,
                timeout: float, verbose: bool, as_json: bool) -> None:
    from basedb.client.lark import signin
    from basedb.client.lark.http import AuthHttp
    from basedb.client.secrets import secret_store
    from basedb.client.trace import RequestTrace

    store = secret_store()
    pending = signin.pending_account(profile_name, store) if device_code else None
    profile = _account(profile_name, brand, identity, app_id,
                       pending[0] if pending else None)
    given = secret or (pending[1] if pending else None)
    given = _secret_for(profile, given, store)
    http = AuthHttp(timeout=timeout, trace=RequestTrace() if verbose else None)
    try:
        if identity == "bot":
            done = signin.sign_in_bot(profile, given, store=store, http=http)
        elif device_code:
            with spinner("Waiting for the sign-in to be approved"):
                done = signin.finish_user(profile, given, None, device_code, store=store,
                                          http=http, wait_first=False)
        else:
            device = signin.begin_user(profile, given, scope, store=store, http=http,
                                       keep_pending=no_wait)
            if no_wait:
                _print_device(device, profile_name, brand, as_json)
                return
            click.echo(f"Open {device.verification_uri_complete}\n"
                       f"and approve the sign-in with code {device.user_code} "
                       f"(expires in {device.expires_in}s).", err=True)
            with spinner("Waiting for the sign-in to be approved"):
                done = signin.finish_user(profile, given, device, device.device_code,
                                          store=store, http=http)
    finally:
        http.close()
    _print_signed_in(done.to_dict(), as_json)


def _print_device(device: Any, profile_name: str, brand: str, as_json: bool) -> None:
    finish = (f"basedb auth login --brand {brand} --device-code {device.device_code} "
              f"--profile {profile_name}")
    if as_json:
        emit_json({"verification_url": device.verification_uri_complete,
                   "user_code": device.user_code, "device_code": device.device_code,
                   "expires_in": device.expires_in,
                   "hint": "Show verification_url to the user, then run: " + finish})
        return
    click.echo(f"Open {device.verification_uri_complete} and approve code "
               f"{device.user_code}, then run:\n  {finish}")


def _print_signed_in(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(result)
        return
    user = result.get("user")
    who = (f"{user.get('name') or 'a user'} ({user.get('open_id')})" if user
           else f"the bot of app {result['appId']}")
    click.echo(f"Signed in to {result['brand']} as {who}; saved profile "
               f"{result['profile']!r}.")
    click.echo(f"Use it with --profile {result['profile']}, BASEDB_PROFILE="
               f"{result['profile']}, or \"profile\": \"{result['profile']}\" in "
               "base-database.jsonc.")


def login_lark_cli(profile_name: str, brand: str, identity: str, lark_profile: str | None, *,
                   timeout: float, as_json: bool) -> None:
    from basedb.client.lark import signin
    from basedb.client.lark.brands import hosts
    from basedb.client.profiles import LarkAccount, Profile, save_profile

    account = LarkAccount(brand=brand, identity=identity, via="lark-cli",
                          lark_profile=lark_profile)
    report = signin.sign_in_lark_cli(Profile(profile_name, hosts(brand).open, lark=account),
                                     timeout=timeout)
    if report.get("brand") in ("feishu", "lark") and report["brand"] != brand:
        account = LarkAccount(brand=report["brand"], identity=identity, via="lark-cli",
                              lark_profile=lark_profile, app_id=report.get("appId"))
        save_profile(Profile(profile_name, hosts(account.brand).open, lark=account))
    result = {"ok": True, "profile": profile_name, "kind": "lark", "via": "lark-cli",
              "larkProfile": lark_profile, "brand": report.get("brand", brand),
              "identity": identity, "appId": report.get("appId"),
              "user": ({"open_id": report.get("userOpenId"), "name": report.get("userName")}
                       if report.get("userOpenId") else None)}
    if as_json:
        emit_json(result)
        return
    click.echo(f"Profile {profile_name!r} now sends requests through lark-cli"
               + (f" (its profile {lark_profile!r})" if lark_profile else "")
               + f" as {identity}.")


@contextmanager
def spinner(text: str) -> Iterator[None]:
    """A spinner on stderr while waiting, when stderr is a terminal."""
    if not stderr_is_tty():
        yield
        return
    stop = threading.Event()

    def spin() -> None:
        for frame in itertools.cycle("|/-\\"):
            sys.stderr.write(f"\r{frame} {text}…")
            sys.stderr.flush()
            if stop.wait(0.15):
                break
        sys.stderr.write("\r" + " " * (len(text) + 3) + "\r")
        sys.stderr.flush()

    thread = threading.Thread(target=spin, name="basedb-spinner", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=1)


def stored_status_of(profile: Any) -> dict[str, Any]:
    """`auth status` of a Lark profile without asking the server: its account and, for a
    user, the stored sign-in (lark-cli answers from its own store)."""
    from basedb.client.lark import signin
    from basedb.client.secrets import secret_store

    report = signin.status(profile, store=secret_store())
    if profile.lark.via == "lark-cli":
        return {**_lark_cli_report(report, profile), "verified": False}
    user = None
    if report.get("userOpenId"):
        user = {"open_id": report.get("userOpenId"), "name": report.get("userName")}
    return {**report, "user": user, "verified": False}


def verified_status_of(profile: Any, client: Any) -> dict[str, Any]:
    """`auth status --verify` of a Lark profile: the stored sign-in checked against the
    server (a tenant token fetched, a user token refreshed when due, who it is)."""
    from basedb.client.lark import signin
    from basedb.client.secrets import secret_store

    report = signin.status(profile, store=secret_store())
    lark = profile.lark
    if lark.via == "lark-cli":
        return {**_lark_cli_report(report, profile), "verified": False}
    if lark.identity == "bot":
        client.credentials.token()  # the app credentials work
        report["user"] = None
    else:
        client.credentials.token()  # refreshed when due
        data = client.request("GET", "/open-apis/authen/v1/user_info").get("data") or {}
        report["user"] = {"open_id": data.get("open_id"), "name": data.get("name")}
        report.update(signin.status(profile, store=secret_store()))
    report["verified"] = True
    return report


def _lark_cli_report(report: dict[str, Any], profile: Any) -> dict[str, Any]:
    from basedb.client.lark import signin

    report.update(signin.lark_cli_status(profile.lark))
    report.pop("state", None)
    report.pop("fix", None)
    report["user"] = ({"open_id": report.get("userOpenId"), "name": report.get("userName")}
                      if report.get("userOpenId") else None)
    return report
