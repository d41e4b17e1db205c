"""`basedb link`: connect a workspace to a site on the active profile."""

from __future__ import annotations

from pathlib import Path

import click

from basedb.cli.common import (
    check_app_token,
    connection_options,
    emit_json,
    json_option,
    open_client,
    workspace_option,
    workspace_root,
)


@click.command("link")
@click.option("--app-token", default=None, callback=check_app_token,
              help="Link to this existing site (one you belong to: `basedb api GET "
                   "/sites/list` lists them).")
@click.option("--create", is_flag=True,
              help="Create a new site, and a Base with the tables and fields of catalog.json.")
@click.option("--name", "--title", "title", default=None,
              help="--create: the new site's name (default: the workspace's title).")
@json_option
@workspace_option
@connection_options
def link_command(app_token: str | None, create: bool, title: str | None, as_json: bool,
                 workspace_dir: Path | None, profile: str | None) -> None:
    """Connect the workspace to a site on the active profile.

    For a workspace cloned from git, or moved to another platform or profile: --app-token
    links an existing site, --create makes a new one whose Base has catalog.json's tables
    and fields (no records). base-database.jsonc gets the site's appToken and binding
    (every comment kept), and catalog.json the live catalog. Functions name tables and
    fields by name, so they work against the new ids; deploy next.
    """
    from basedb.client.profiles import current_profile
    from basedb.core.errors import UsageError
    from basedb.deploy.link import link_existing, link_new

    if create == (app_token is not None):
        raise UsageError("Pass exactly one of --app-token (an existing site) and --create "
                         "(a new site and Base).", code="OPTIONS_CONFLICT",
                         hint="e.g. `basedb link --create`, or `basedb link --app-token "
                              "Prj…`.")
    if title is not None and not create:
        raise UsageError("--name names a site that --create makes; an existing site keeps "
                         "its own.", code="OPTIONS_CONFLICT", hint="Leave out --name.")
    root = workspace_root(workspace_dir)
    resolved, source = current_profile(profile, root)
    remembered = resolved.name if source == "--profile" and not resolved.embedded else None
    with open_client(resolved) as client:
        result = (link_new(root, client, title=title, profile=remembered) if create else
                  link_existing(root, client, str(app_token), profile=remembered))
    if as_json:
        emit_json(result.to_dict())
        return
    what = "a new site" if result.created else "site"
    click.echo(f"Linked the workspace to {what} {result.app_token} ({result.title}) on "
               f"profile {resolved.name}.")
    if result.previous_app_token != result.app_token:
        click.echo(f"  It named {result.previous_app_token} before.")
    click.echo(f"  Base {result.base_token}: {len(result.tables)} bound tables "
               f"({', '.join(name for _, name in result.tables)}).")
    for skipped in result.skipped_fields:
        click.echo(f"Warning: field not recreated: {skipped}", err=True)
    click.echo("  Next: basedb check && basedb deploy")
