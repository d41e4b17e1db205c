"""`basedb init`."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from basedb.cli.common import connection_options, emit_json, json_option, open_client


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
@connection_options
def init_command(directory: Path, template: str, title: str | None, base_token: str | None,
                 as_json: bool, profile: str | None) -> None:
    """Create a site workspace in DIRECTORY (default: the current directory).

    Creates the site on the platform and, unless --base-token is given, a Base with the
    template's tables and sample records; binds the tables and writes the workspace:
    base-database.jsonc, catalog.json, the template's functions and page, and a
    .gitignore for local state. DIRECTORY must be new or empty: init never overwrites
    files. With no profile configured, the site lives on the embedded local platform.
    """
    from basedb.client.profiles import resolve_profile
    from basedb.deploy.provision import PlatformProvisioner
    from basedb.workspace.scaffold import ensure_empty_target, init_workspace

    ensure_empty_target(directory)  # refuse before the platform is even opened
    resolved = resolve_profile(profile, None)
    with open_client(resolved) as client:
        result = init_workspace(directory, template, title=title, base_token=base_token,
                                provisioner=PlatformProvisioner(client))
    if not resolved.embedded:
        _remember_profile(result.workspace, resolved.name)
    if as_json:
        emit_json(result.to_dict())
        return
    shown = result.workspace if directory == Path(".") else directory
    click.echo(f"Created workspace {shown} from template {template!r} "
               f"({result.title}, {len(result.files)} files).")
    click.echo(f"Site {result.app_token} is bound to the tables of Base {result.base_token}"
               f"{'' if base_token else _new_base_note(template)}.")
    click.echo("\nNext steps:")
    if result.workspace != Path.cwd().resolve():
        click.echo(f"  cd {shlex.quote(str(directory))}")
    click.echo("  basedb check     # validate declarations, SQL and the agent-tools policy")
    click.echo("  basedb deploy    # publish a preview release")


def _remember_profile(workspace: Path, profile: str) -> None:
    """Name the profile in base-database.jsonc, so later commands reach the same platform."""
    from basedb.core.atomic import write_file_atomically
    from basedb.workspace.config import CONFIG_FILE
    from basedb.workspace.jsonc_edit import set_string

    path = workspace / CONFIG_FILE
    text = path.read_text(encoding="utf-8")
    write_file_atomically(path, set_string(text, ("profile",), profile).encode("utf-8"))


def _new_base_note(template: str) -> str:
    from basedb.core.resources import TEMPLATE_SCHEMA_FILE, template_dir
    from basedb.workspace.template_schema import load_template_schema

    schema = load_template_schema(template_dir(template) / TEMPLATE_SCHEMA_FILE)
    has_records = any(schema.records_of(t.name) for t in schema.tables)
    return " (new, with sample records)" if has_records else " (new, empty)"
