"""`basedb bind TABLE…` and `basedb unbind TABLE…`: incremental binding in one step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from basedb.cli import common
from basedb.cli.common import (
    connect_to,
    connection_options,
    emit_json,
    json_option,
    workspace_option,
    workspace_root,
)


def _print(change: Any) -> None:
    verb = "Bound" if change.action == "bind" else "Unbound"
    names = ", ".join(f"{name or tid} ({tid})" for tid, name in change.tables)
    click.echo(f"{verb} {names} {'to' if change.action == 'bind' else 'from'} site "
               f"{change.app_token}.")
    pull = change.pull
    click.echo(f"  catalog.json {'updated' if pull.catalog_changed else 'already up to date'}"
               f": {pull.tables} bound table{'s' if pull.tables != 1 else ''}.")
    if pull.ids_added:
        click.echo(f"  binding.tableIds gained: {', '.join(pull.ids_added)}")
    if change.ids_removed:
        click.echo(f"  binding.tableIds lost: {', '.join(change.ids_removed)}")
    for warning in pull.warnings:
        click.echo(f"Warning: {warning}", err=True)


@click.command("bind")
@click.argument("tables", nargs=-1, required=True)
@click.option("--base-token", default=None,
              help="The Base the tables are in (default: the one the workspace binds; "
                   "needed for a site's first binding).")
@json_option
@workspace_option
@connection_options
def bind_command(tables: tuple[str, ...], base_token: str | None, as_json: bool,
                 workspace_dir: Path | None, profile: str | None) -> None:
    """Bind TABLES (ids or names) of the Base to the workspace's site.

    One step for upstream's incremental binding: POST bind_base (appends, never
    replaces), then refresh catalog.json from the live catalog and merge the new ids into
    binding.tableIds of base-database.jsonc (comments kept).
    """
    from basedb.deploy.binding import bind_tables

    root = workspace_root(workspace_dir)
    with connect_to(profile, root) as client:
        change = bind_tables(root, client, list(tables), base_token=base_token)
    if as_json:
        emit_json(change.to_dict())
        return
    _print(change)
    click.echo("  Next: basedb check   # functions may now use the new tables")


@click.command("unbind")
@click.argument("tables", nargs=-1, required=True)
@click.option("--yes", "-y", is_flag=True, help="Confirm without a prompt.")
@json_option
@workspace_option
@connection_options
def unbind_command(tables: tuple[str, ...], yes: bool, as_json: bool,
                   workspace_dir: Path | None, profile: str | None) -> None:
    """Unbind TABLES (ids or names) from the workspace's site; asks first (--yes skips).

    POST unbind_base, then the ids leave binding.tableIds and catalog.json is refreshed.
    The tables and their records stay in the Base; functions that use them stop
    working, which `basedb check` reports. Removing an id from base-database.jsonc by
    hand unbinds nothing.
    """
    from basedb.core.errors import UsageError
    from basedb.deploy.binding import unbind_plan, unbind_tables

    root = workspace_root(workspace_dir)
    app_token, planned = unbind_plan(root, list(tables))
    if not yes:
        if not (common.stdin_is_tty() and common.stderr_is_tty()):
            raise UsageError("unbind needs --yes: the site's functions lose these tables.",
                             code="CONFIRMATION_REQUIRED",
                             hint=f"Run `basedb unbind {' '.join(tables)} --yes`.")
        names = ", ".join(name or tid for tid, name in planned)
        common.confirm_or_stop(f"Unbind {names} from site {app_token}? Functions using them "
                               "stop working.", f"Not unbound: site {app_token} is unchanged.")
    with connect_to(profile, root) as client:
        change = unbind_tables(root, client, list(tables))
    if as_json:
        emit_json(change.to_dict())
        return
    _print(change)
    click.echo("  Next: basedb check   # finds functions that still use them")
