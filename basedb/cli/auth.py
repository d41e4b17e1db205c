"""`basedb auth`: add, inspect and remove profiles.

`auth token` is the only command that ever prints a token.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import click

from basedb.cli.common import (
    connection_options,
    embedded_platform,
    emit_json,
    json_option,
    open_client,
    profile_option,
    workspace_option,
)
from basedb.cli.groups import HelpfulGroup
from basedb.core import environment

_TOKEN_RE = re.compile(r"[\x21-\x7e]+")
DEFAULT_LOGIN_PROFILE = "default"


@click.group("auth", cls=HelpfulGroup)
def auth_group() -> None:
    """Manage profiles and tokens.

    A profile is an endpoint and a token, stored in $BASEDB_CONFIG_DIR/config.json
    (mode 0600). `local` is built in: the embedded platform and its owner token.
    Commands use --profile, else the workspace's "profile", else `local`.
    """


@auth_group.command("login")
@click.option("--endpoint", default=None, metavar="URL",
              help="A basedb platform's base URL, e.g. http://127.0.0.1:8787 for "
                   "`basedb serve` (with --token).")
@click.option("--token", default=None, metavar="TOKEN",
              help="Its access token; pass - to read it from stdin (keeps it out of shell "
                   "history).")
@click.option("--brand", type=click.Choice(["feishu", "lark"]), default=None,
              help="Sign in to Feishu (open.feishu.cn) or Lark (open.larksuite.com).")
@click.option("--as", "identity", type=click.Choice(["user", "bot"]), default="user",
              show_default=True, help="With --brand or --lark-cli: a user (OAuth device "
              "flow) or the app's bot (tenant access token).")
@click.option("--app-id", default=None, envvar=environment.LARK_APP_ID, metavar="ID",
              help="With --brand: the app's id ($LARK_APP_ID).")
@click.option("--app-secret", default=None, envvar=environment.LARK_APP_SECRET, metavar="SECRET",
              help="With --brand: the app's secret ($LARK_APP_SECRET; - reads stdin).")
@click.option("--scope", default="", metavar="SCOPES",
              help="With --brand --as user: scopes to request besides the site-builder "
                   "set basedb needs (space-separated; offline_access and that set are always "
                   "requested).")
@click.option("--no-wait", is_flag=True,
              help="With --brand --as user: print the verification URL and device code and "
                   "return; finish with --device-code.")
@click.option("--device-code", default=None, metavar="CODE",
              help="Finish a sign-in started with --no-wait (polls until approved).")
@click.option("--lark-cli", "use_lark_cli", is_flag=True,
              help="Send requests through the installed lark-cli and its sign-in.")
@click.option("--lark-profile", default=None, metavar="NAME",
              help="With --lark-cli: lark-cli's --profile to use.")
@click.option("--profile", "profile_name", default=DEFAULT_LOGIN_PROFILE, show_default=True,
              help="Name to store the profile under.")
@click.option("--no-verify", is_flag=True, help="With --endpoint: store without checking the "
              "token first.")
@click.option("--timeout", type=click.FloatRange(min=0.1, max=3600), default=30.0,
              envvar=environment.TIMEOUT, show_default=True, metavar="SECONDS",
              help="Seconds to wait for each answer.")
@click.option("--verbose", is_flag=True, envvar=environment.DEBUG,
              help="Log every request and response line to stderr, secrets redacted.")
@json_option
def login_command(endpoint: str | None, token: str | None, brand: str | None, identity: str,
                  app_id: str | None, app_secret: str | None, scope: str, no_wait: bool,
                  device_code: str | None, use_lark_cli: bool, lark_profile: str | None,
                  profile_name: str, no_verify: bool, timeout: float, verbose: bool,
                  as_json: bool) -> None:
    """Sign in and store a profile: a basedb platform, Feishu/Lark, or lark-cli.

    \b
      basedb auth login --endpoint http://127.0.0.1:8787 --token - --profile team
      basedb auth login --brand feishu                      # a user: device flow
      basedb auth login --brand feishu --as bot --profile ci
      basedb auth login --lark-cli --lark-profile work

    A Feishu/Lark sign-in needs the app's id and secret (--app-id/--app-secret or
    $LARK_APP_ID/$LARK_APP_SECRET). A user sign-in prints a verification URL and code and
    waits until the user approves it in the browser.
    """
    from basedb.client.profiles import validate_profile_name
    from basedb.core.errors import UsageError

    validate_profile_name(profile_name)
    modes = [name for name, given in (("--endpoint", endpoint), ("--brand", brand),
                                      ("--lark-cli", use_lark_cli)) if given]
    if device_code and not brand:
        modes.append("--device-code without --brand")
    if len(modes) != 1:
        raise UsageError(
            "Say where to sign in: one of --endpoint URL, --brand feishu|lark or --lark-cli"
            + (f" (got {', '.join(modes)})." if modes else "."),
            code="LOGIN_TARGET", hint="e.g. `basedb auth login --brand feishu`, or "
            "`basedb auth login --endpoint http://127.0.0.1:8787 --token -`.")
    if endpoint:
        if token is None:
            raise UsageError("--endpoint needs --token.", code="TOKEN_MISSING",
                             hint="Pass --token TOKEN, or --token - to read it from stdin.")
        _login_endpoint(endpoint, token, profile_name, no_verify, as_json)
        return
    from basedb.cli import auth_lark

    if use_lark_cli:
        auth_lark.login_lark_cli(profile_name, brand or "feishu", identity, lark_profile,
                                 timeout=timeout, as_json=as_json)
        return
    assert brand is not None
    auth_lark.login_brand(profile_name, brand, identity, app_id,
                          _read_secret(app_secret) if app_secret else None, scope,
                          no_wait=no_wait, device_code=device_code, timeout=timeout,
                          verbose=verbose, as_json=as_json)


def _read_secret(value: str) -> str:
    return _read_token(value) if value == "-" else value.strip()


def _login_endpoint(endpoint: str, token: str, profile_name: str, no_verify: bool,
                    as_json: bool) -> None:
    from basedb.client.profiles import Profile, normalize_endpoint, save_profile

    base_url = normalize_endpoint(endpoint)
    secret = _read_token(token)
    user: dict[str, Any] | None = None
    if not no_verify:
        from basedb.client.client import Client

        with Client(base_url=base_url, token=secret) as client:
            client.profile_name = profile_name
            user = _user_of(client.request("GET", "/users/me"))
    path = save_profile(Profile(profile_name, base_url, secret))
    if as_json:
        emit_json({"ok": True, "profile": profile_name, "endpoint": base_url,
                   "verified": not no_verify, "user": user, "config": str(path)})
        return
    who = f" as {_user_label(user)}" if user else " (token not verified)"
    click.echo(f"Logged in to {base_url}{who}; saved profile {profile_name!r} in {path}.")
    click.echo(f"Use it with --profile {profile_name}, BASEDB_PROFILE={profile_name}, or "
               f"\"profile\": \"{profile_name}\" in base-database.jsonc.")


@auth_group.command("token")
@profile_option
@workspace_option
def token_command(profile: str | None, workspace_dir: Path | None) -> None:
    """Print the current profile's token, and nothing else (as `gh auth token`)."""
    from basedb.client.profiles import current_profile, profile_token

    resolved, _ = current_profile(profile, workspace_dir)
    if resolved.lark is not None:
        with open_client(resolved) as client:
            secret = client.credentials.token()
        if not secret:
            from basedb.core.errors import UsageError

            raise UsageError(f"Profile {resolved.name!r} signs in through lark-cli, which "
                             "keeps its tokens itself.", code="TOKEN_NOT_HELD",
                             hint="Ask lark-cli for it, or use `basedb api` / "
                                  "`basedb lark-cli -- …` with this profile.")
        click.echo(secret)
        return
    secret = profile_token(resolved, embedded=embedded_platform)
    if not secret:
        from basedb.core.errors import AuthError
        from basedb.protocol import Code

        raise AuthError(f"Profile {resolved.name!r} has no token.", code=Code.TOKEN_MISSING,
                        hint="Log in again with `basedb auth login --endpoint URL --token "
                             f"TOKEN --profile {resolved.name}`.")
    click.echo(secret)


@auth_group.command("status")
@click.option("--verify", is_flag=True,
              help="Feishu/Lark profiles: check the stored sign-in against the server (a "
                   "token is fetched or refreshed). Without it, only what is stored is shown.")
@connection_options
@workspace_option
@json_option
def status_command(verify: bool, profile: str | None, workspace_dir: Path | None,
                   as_json: bool) -> None:
    """Show the current profile, its endpoint and the signed-in user (never the token)."""
    from basedb.client.profiles import current_profile

    resolved, source = current_profile(profile, workspace_dir)
    endpoint = resolved.endpoint
    if resolved.embedded:
        from basedb.core import paths

        endpoint = f"embedded (data dir {paths.data_dir()})"
    lark: dict[str, Any] = {}
    if resolved.lark is not None:
        from basedb.cli.auth_lark import stored_status_of, verified_status_of

        if verify:
            with open_client(resolved) as client:
                lark = verified_status_of(resolved, client)
        else:
            lark = stored_status_of(resolved)
        user = lark.pop("user", None)
    else:
        with open_client(resolved) as client:
            user = _user_of(client.request("GET", "/users/me"))
    if as_json:
        emit_json({"ok": True, "profile": resolved.name, "source": source,
                   "endpoint": resolved.endpoint, "user": user, **lark})
        return
    click.echo(f"Profile:  {resolved.name} (from {source})")
    click.echo(f"Endpoint: {endpoint}")
    if lark:
        click.echo(f"Account:  {lark['brand']} {lark['identity']}, app {lark.get('appId')}"
                   f" ({'through lark-cli' if lark['via'] == 'lark-cli' else 'native'})")
        if lark.get("tokenStatus"):
            click.echo(f"Token:    {lark['tokenStatus']}")
    click.echo(f"User:     {_user_label(user) if user else ('the app bot' if lark else 'unknown')}")


@auth_group.command("logout")
@profile_option
@workspace_option
@json_option
def logout_command(profile: str | None, workspace_dir: Path | None, as_json: bool) -> None:
    """Remove a stored profile (default: the current one) and its token."""
    from basedb.client.profiles import config_path, current_profile, delete_profile
    from basedb.core.errors import UsageError

    resolved, _ = current_profile(profile, workspace_dir)
    if resolved.embedded:
        raise UsageError(
            "The local profile has no stored login to remove; it uses the owner token in "
            "the platform's data dir.",
            code="PROFILE_BUILTIN",
            hint="Name a stored profile with --profile (see `basedb auth list`).")
    if resolved.lark is not None:
        from basedb.client.lark.signin import logout
        from basedb.client.secrets import secret_store

        logout(resolved, store=secret_store())
    else:
        delete_profile(resolved.name)
    if as_json:
        emit_json({"ok": True, "profile": resolved.name, "removed": True})
        return
    click.echo(f"Removed profile {resolved.name!r} from {config_path()}.")


@auth_group.command("list")
@profile_option
@workspace_option
@json_option
def list_command(profile: str | None, workspace_dir: Path | None, as_json: bool) -> None:
    """List profiles (never their tokens); * marks the one commands here would use."""
    from basedb.client.profiles import LOCAL, load_profiles, workspace_profile

    current = profile or workspace_profile(workspace_dir) or LOCAL.name
    rows = [LOCAL, *(p for _, p in sorted(load_profiles().items()))]
    if as_json:
        emit_json({"current": current, "profiles": [
            {"name": p.name, "kind": p.kind, "endpoint": p.endpoint,
             "identity": p.identity, "current": p.name == current} for p in rows]})
        return
    width = max(len(p.name) for p in rows)
    for p in rows:
        mark = "*" if p.name == current else " "
        how = (f"  ({p.lark.brand} {p.identity}"
               f"{', through lark-cli' if p.lark.via == 'lark-cli' else ''})" if p.lark else "")
        click.echo(f"{mark} {p.name.ljust(width)}  {p.endpoint}{how}")
    if current not in {p.name for p in rows}:
        click.echo(f"Notice: the current profile {current!r} does not exist; create it with "
                   f"`basedb auth login --endpoint URL --token TOKEN --profile {current}`.",
                   err=True)


def _read_token(value: str) -> str:
    from basedb.core.errors import InputError

    if value == "-":
        value = sys.stdin.readline()
    token = value.strip()
    if not token:
        raise InputError("--token is empty.", code="TOKEN_INVALID",
                         hint="Pass the token with --token TOKEN, or pipe it with --token -.")
    if not _TOKEN_RE.fullmatch(token):
        raise InputError("--token contains spaces or characters a token cannot have.",
                         code="TOKEN_INVALID",
                         hint="Copy the token again; it is one word of printable ASCII.")
    return token


def _user_of(envelope: dict[str, Any]) -> dict[str, Any] | None:
    data = envelope.get("data")
    if isinstance(data, dict) and isinstance(data.get("user"), dict):
        return dict(data["user"])
    return dict(data) if isinstance(data, dict) else None


def _user_label(user: dict[str, Any] | None) -> str:
    if not user:
        return "unknown"
    name = next((user[k] for k in ("name", "en_name", "display_name") if user.get(k)), None)
    ident = next((user[k] for k in ("user_id", "id", "open_id") if user.get(k)), None)
    if name and ident:
        return f"{name} ({ident})"
    return str(name or ident or "unknown")
