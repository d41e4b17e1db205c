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
    embedded_platform,
    emit_json,
    json_option,
    open_client,
    profile_option,
    workspace_option,
)
from basedb.cli.groups import HelpfulGroup

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
@click.option("--endpoint", required=True, metavar="URL",
              help="Platform base URL, e.g. http://127.0.0.1:8787 for `basedb serve`.")
@click.option("--token", required=True, metavar="TOKEN",
              help="Access token; pass - to read it from stdin (keeps it out of shell history).")
@click.option("--profile", "profile_name", default=DEFAULT_LOGIN_PROFILE, show_default=True,
              help="Name to store the profile under.")
@click.option("--no-verify", is_flag=True, help="Store without checking the token first.")
@json_option
def login_command(endpoint: str, token: str, profile_name: str, no_verify: bool,
                  as_json: bool) -> None:
    """Store a profile after checking its token with GET /users/me."""
    from basedb.client.profiles import (
        Profile,
        normalize_endpoint,
        save_profile,
        validate_profile_name,
    )

    validate_profile_name(profile_name)
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
    secret = profile_token(resolved, embedded=embedded_platform)
    if not secret:
        from basedb.core.errors import AuthError
        from basedb.core.protocol import Code

        raise AuthError(f"Profile {resolved.name!r} has no token.", code=Code.TOKEN_MISSING,
                        hint="Log in again with `basedb auth login --endpoint URL --token "
                             f"TOKEN --profile {resolved.name}`.")
    click.echo(secret)


@auth_group.command("status")
@profile_option
@workspace_option
@json_option
def status_command(profile: str | None, workspace_dir: Path | None, as_json: bool) -> None:
    """Show the current profile, its endpoint and the signed-in user (never the token)."""
    from basedb.client.profiles import current_profile

    resolved, source = current_profile(profile, workspace_dir)
    endpoint = resolved.endpoint
    if resolved.embedded:
        from basedb.core import paths

        endpoint = f"embedded (data dir {paths.data_dir()})"
    with open_client(resolved) as client:
        user = _user_of(client.request("GET", "/users/me"))
    if as_json:
        emit_json({"ok": True, "profile": resolved.name, "source": source,
                   "endpoint": resolved.endpoint, "user": user})
        return
    click.echo(f"Profile:  {resolved.name} (from {source})")
    click.echo(f"Endpoint: {endpoint}")
    click.echo(f"User:     {_user_label(user)}")


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
            {"name": p.name, "endpoint": p.endpoint, "current": p.name == current}
            for p in rows]})
        return
    width = max(len(p.name) for p in rows)
    for p in rows:
        mark = "*" if p.name == current else " "
        click.echo(f"{mark} {p.name.ljust(width)}  {p.endpoint}")
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
