"""`basedb init`."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from basedb.cli.common import emit_json, json_option


@click.command("init")
@click.argument("directory", required=False, default=".",
                type=click.Path(path_type=Path))
@click.option("--template", default="example", show_default=True,
              help="Workspace template: example (a complete team leave site) or blank.")
@click.option("--title", default=None,
              help="Site title (default: the template's, e.g. 团队休假报备).")
@click.option("--base-token", default=None,
              help="Bind an existing Base instead of creating one from the template.")
@json_option
def init_command(directory: Path, template: str, title: str | None, base_token: str | None,
                 as_json: bool) -> None:
    """Create a site workspace in DIRECTORY (default: the current directory).

    DIRECTORY must be new or empty: init never overwrites files. It writes
    base-database.jsonc, catalog.json, the template's functions and page, and a
    .gitignore for local state.
    """
    from basedb.workspace.scaffold import init_workspace

    result = init_workspace(directory, template, title=title, base_token=base_token)
    if as_json:
        emit_json({
            "workspace": str(result.workspace),
            "appToken": result.app_token,
            "template": result.template,
            "files": [p.relative_to(result.workspace).as_posix() for p in result.files],
        })
        return
    shown = result.workspace if directory == Path(".") else directory
    click.echo(f"Created workspace {shown} from template {template!r} "
               f"({result.title}, {len(result.files)} files).")
    if result.placeholder:
        click.echo("The site is not created on a platform yet: base-database.jsonc holds "
                   "placeholder tokens (see the note at its top).")
    click.echo("\nNext steps:")
    if result.workspace != Path.cwd().resolve():
        click.echo(f"  cd {shlex.quote(str(directory))}")
    click.echo("  basedb check     # validate declarations, SQL and the agent-tools policy")
    click.echo("  basedb deploy    # publish a preview release")
