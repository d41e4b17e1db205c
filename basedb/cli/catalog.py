"""`basedb catalog pull`."""

from __future__ import annotations

from pathlib import Path

import click

from basedb.cli.common import emit_json, json_option, open_client, profile_option, workspace_option
from basedb.cli.groups import HelpfulGroup
from basedb.core.wording import plural


@click.group("catalog", cls=HelpfulGroup)
def catalog_group() -> None:
    """Keep catalog.json in step with the site's bound tables."""


@catalog_group.command("pull")
@json_option
@workspace_option
@profile_option
def catalog_pull_command(as_json: bool, workspace_dir: Path | None,
                         profile: str | None) -> None:
    """Refresh catalog.json from the live catalog and merge the bound table ids.

    binding.tableIds in base-database.jsonc gains the ids of tables bound since; the rest
    of the file (comments included) stays as it is. Ids are never removed: unbind tables
    on the platform explicitly.
    """
    from basedb.cli.deploy import workspace_root
    from basedb.client.profiles import current_profile
    from basedb.deploy.catalog_sync import pull_catalog

    root = workspace_root(workspace_dir)
    resolved, _ = current_profile(profile, root)
    with open_client(resolved) as client:
        result = pull_catalog(root, client)
    if as_json:
        emit_json(result)
        return
    catalog, binding = result["catalog"], result["binding"]
    state = "updated" if catalog["changed"] else "already up to date"
    click.echo(f"catalog.json {state}: {plural(catalog['tables'], 'table')} of Base "
               f"{catalog['baseToken']}.")
    if catalog["tablesAdded"]:
        click.echo(f"  Tables added: {', '.join(catalog['tablesAdded'])}")
    if catalog["tablesRemoved"]:
        click.echo(f"  Tables no longer bound: {', '.join(catalog['tablesRemoved'])}")
    if binding["added"]:
        click.echo(f"  binding.tableIds gained: {', '.join(binding['added'])}")
    for warning in result["warnings"]:
        click.echo(f"Warning: {warning}", err=True)
