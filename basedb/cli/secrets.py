"""`basedb secrets list|set|unset`: the values FaaS handlers read as environment
variables, kept on the platform and never in the workspace."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from basedb.cli.common import (
    app_token_option,
    connect_to,
    emit_json,
    json_option,
    profile_option,
    site_of,
    workspace_option,
)
from basedb.cli.groups import HelpfulGroup


@click.group("secrets", cls=HelpfulGroup)
def secrets_group() -> None:
    """Set the secrets a site's FaaS functions read (names only are ever shown).

    A function lists the names it reads in function.json (`"secrets": ["STRIPE_API_KEY"]`)
    and reads each as `process.env.STRIPE_API_KEY`. The values live on the platform, so
    they never enter the workspace, its git history or site.zip."""


@secrets_group.command("list")
@app_token_option
@json_option
@workspace_option
@profile_option
def list_command(app_token: str | None, as_json: bool, workspace_dir: Path | None,
                 profile: str | None) -> None:
    """The names of the site's secrets, with who set each and when."""
    from basedb.client.sites import SiteApi

    token, root = site_of(workspace_dir, app_token)
    with connect_to(profile, root) as client:
        listing = SiteApi(client, token).secrets()
    if as_json:
        emit_json({"appToken": token, "secrets": listing.get("secrets", [])})
        return
    found = listing.get("secrets") or []
    if not found:
        click.echo(f"Site {token} has no secrets (`basedb secrets set NAME` sets one).")
    for item in found:
        click.echo(f"{item['name']}  set {item.get('updatedAt', '')} by "
                   f"{item.get('updatedBy', '')}")


def _read_value(name: str) -> str:
    from basedb.core.errors import InputError

    if sys.stdin.isatty():
        value = click.prompt(f"Value of {name}", hide_input=True, err=True)
    else:
        value = sys.stdin.read()
        value = value[:-1] if value.endswith("\n") else value
        value = value[:-1] if value.endswith("\r") else value
    if not value:
        raise InputError(f"No value for secret {name}: stdin was empty.",
                         code="SECRET_VALUE_MISSING",
                         hint=f"Pipe the value in: `printf %s \"$VALUE\" | basedb secrets set "
                              f"{name}` (in CI, from the CI's own secret).")
    return str(value)


@secrets_group.command("set")
@click.argument("name")
@app_token_option
@json_option
@workspace_option
@profile_option
def set_command(name: str, app_token: str | None, as_json: bool, workspace_dir: Path | None,
                profile: str | None) -> None:
    """Set secret NAME to the value read from stdin (asked for, hidden, on a terminal),
    never from the command line, where other users of the machine could see it. Running
    workers get the new value on their next call."""
    from basedb.client.sites import SiteApi

    token, root = site_of(workspace_dir, app_token)
    with connect_to(profile, root) as client:
        site = SiteApi(client, token)
        site.secrets()  # the site is reachable and ours to change, before asking for a value
        value = _read_value(name)
        result: dict[str, Any] = site.put_secret(name, value)
    if as_json:
        emit_json({"appToken": token, **result})
        return
    click.echo(f"Set secret {name} of site {token}: FaaS functions that declare it read it "
               f"as process.env.{name}.")


@secrets_group.command("unset")
@click.argument("name")
@app_token_option
@json_option
@workspace_option
@profile_option
def unset_command(name: str, app_token: str | None, as_json: bool,
                  workspace_dir: Path | None, profile: str | None) -> None:
    """Delete secret NAME. Calls of functions that declare it are refused until it is
    set again."""
    from basedb.client.sites import SiteApi

    token, root = site_of(workspace_dir, app_token)
    with connect_to(profile, root) as client:
        result = SiteApi(client, token).delete_secret(name)
    if as_json:
        emit_json({"appToken": token, **result})
        return
    click.echo(f"Deleted secret {name} of site {token}.")
