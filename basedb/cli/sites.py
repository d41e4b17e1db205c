"""`basedb sites list|delete`: the sites of the active profile, and removing one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from basedb.cli import common
from basedb.cli.common import (
    check_app_token,
    connect_to,
    connection_options,
    emit_json,
    json_option,
    optional_workspace_root,
    workspace_option,
)
from basedb.cli.groups import HelpfulGroup


@click.group("sites", cls=HelpfulGroup)
def sites_group() -> None:
    """List the sites you belong to, or delete one you own."""


def _workspace_token(root: Path | None) -> str | None:
    from basedb.core.errors import BasedbError
    from basedb.workspace.config import workspace_app_token

    if root is None:
        return None
    try:
        return workspace_app_token(root)
    except BasedbError:
        return None


@sites_group.command("list")
@json_option
@workspace_option
@connection_options
def list_command(as_json: bool, workspace_dir: Path | None, profile: str | None) -> None:
    """Every site you are a member of, with your role and its Base."""
    from basedb.client import endpoints

    root = optional_workspace_root(workspace_dir)
    with connect_to(profile, root) as client:
        listing = client.paginate("GET", endpoints.SITES_LIST, list_field="sites")
    found = [s for s in (listing.get("data") or {}).get("sites", []) if isinstance(s, dict)]
    if as_json:
        emit_json({"sites": found, "total": len(found)})
        return
    if not found:
        click.echo("You have no sites yet (`basedb init` creates one).", err=True)
        return
    current = _workspace_token(root)
    for line in _table(found, current):
        click.echo(line)


def _table(found: list[dict[str, Any]], current: str | None) -> list[str]:
    rows = [("APP TOKEN", "ROLE", "BASE", "TITLE")]
    rows += [(str(s.get("appToken", "")), str(s.get("role", "")),
              str(s.get("baseToken") or "-"),
              str(s.get("title", "")) + ("  (this workspace)" if s.get("appToken") == current
                                         else "")) for s in found]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return ["  ".join([*(row[i].ljust(widths[i]) for i in range(3)), row[3]]).rstrip()
            for row in rows]


@sites_group.command("delete")
@click.argument("app_token", callback=check_app_token)
@click.option("--yes", "-y", is_flag=True, help="Confirm without a prompt.")
@json_option
@workspace_option
@connection_options
def delete_command(app_token: str, yes: bool, as_json: bool, workspace_dir: Path | None,
                   profile: str | None) -> None:
    """Delete APP_TOKEN, a site you own, with its deployments, drafts and log.

    Its pages and functions stop answering at once; this cannot be undone. The Base it
    binds, and the Base's records, are kept. Without --yes on a terminal it asks;
    answering no changes nothing and exits 1.
    """
    from basedb.client.sites import SiteApi
    from basedb.core.errors import UsageError

    if not yes:
        if not (common.stdin_is_tty() and common.stderr_is_tty()):
            raise UsageError("sites delete needs --yes: it deletes the site's deployments, "
                             "drafts and log, and cannot be undone.",
                             code="CONFIRMATION_REQUIRED",
                             hint=f"Run `basedb sites delete {app_token} --yes`.")
        common.confirm_or_stop(f"Delete site {app_token} with its deployments, drafts and "
                               "log? This cannot be undone.",
                               f"Not deleted: site {app_token} is unchanged.")
    root = optional_workspace_root(workspace_dir)
    with connect_to(profile, root) as client:
        result = SiteApi(client, app_token).delete()
    if as_json:
        emit_json(result)
        return
    click.echo(f"Deleted site {app_token}.")
    if result.get("baseToken"):
        click.echo(f"  Base {result['baseToken']} and its records are kept.")
    if _workspace_token(root) == app_token:
        click.echo(f"Notice: this workspace ({root}) still names {app_token}; connect it to "
                   "another site before deploying.", err=True)
