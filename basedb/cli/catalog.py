"""`basedb catalog pull`."""

from __future__ import annotations

from pathlib import Path

import click

from basedb.cli.common import (
    connection_options,
    emit_json,
    json_option,
    open_client,
    workspace_option,
    workspace_root,
)
from basedb.cli.groups import HelpfulGroup
from basedb.core.wording import plural


@click.group("catalog", cls=HelpfulGroup)
def catalog_group() -> None:
    """Keep catalog.json in step with the site's bound tables."""


@catalog_group.command("pull")
@json_option
@workspace_option
@connection_options
def catalog_pull_command(as_json: bool, workspace_dir: Path | None,
                         profile: str | None) -> None:
    """Refresh catalog.json from the live catalog and merge the bound table ids.

    binding.tableIds in base-database.jsonc gains the ids of tables bound since; the rest
    of the file (comments included) stays as it is. Ids are never removed: unbind tables
    on the platform explicitly.
    """
    from basedb.client.profiles import current_profile
    from basedb.deploy.catalog_sync import pull_catalog

    root = workspace_root(workspace_dir)
    resolved, _ = current_profile(profile, root)
    with open_client(resolved) as client:
        result = pull_catalog(root, client)
    if as_json:
        emit_json(result.to_dict())
        return
    state = "updated" if result.catalog_changed else "already up to date"
    click.echo(f"catalog.json {state}: {plural(result.tables, 'table')} of Base "
               f"{result.base_token}.")
    if result.tables_added:
        click.echo(f"  Tables added: {', '.join(result.tables_added)}")
    if result.tables_removed:
        click.echo(f"  Tables no longer bound: {', '.join(result.tables_removed)}")
    if result.ids_added:
        click.echo(f"  binding.tableIds gained: {', '.join(result.ids_added)}")
    for warning in result.warnings:
        click.echo(f"Warning: {warning}", err=True)
