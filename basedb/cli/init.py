"""`basedb init`."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from basedb.cli.common import (
    check_app_token,
    connection_options,
    emit_json,
    json_option,
    open_client,
)


@click.command("init")
@click.argument("directory", required=False, default=".",
                type=click.Path(path_type=Path))
@click.option("--template", default=None,
              help="Workspace template: example (a complete team leave site) or blank. "
                   "[default: example; blank with --schema]")
@click.option("--name", "--title", "title", default=None,
              help="Site name (default: the schema file's or the template's title, e.g. "
                   "团队休假报备). --title is an alias.")
@click.option("--description", default=None,
              help="What the site is for; kept as \"description\" in base-database.jsonc.")
@click.option("--schema", "schema_file", default=None,
              type=click.Path(path_type=Path, dir_okay=False),
              help="Create the Base's tables and fields from this JSON or YAML schema file "
                   "(docs/schema-file.md) instead of the template's.")
@click.option("--base-token", default=None,
              help="Bind an existing Base instead of creating one from the template.")
@click.option("--app-token", default=None, callback=check_app_token,
              help="Restore the workspace of this existing site instead of creating one: "
                   "from its latest deployment (as `pull`), else bound to its catalog.")
@json_option
@connection_options
def init_command(directory: Path, template: str | None, title: str | None,
                 description: str | None, schema_file: Path | None, base_token: str | None,
                 app_token: str | None, as_json: bool, profile: str | None) -> None:
    """Create a site workspace in DIRECTORY (default: the current directory).

    Creates the site on the platform and, unless --base-token is given, a Base with the
    template's tables and sample records (or the tables of --schema FILE); binds the
    tables and writes the workspace: base-database.jsonc, catalog.json, the template's
    functions and page, and a .gitignore for local state. DIRECTORY must be new or
    empty: init never overwrites files. With no profile configured, the site lives on
    the embedded local platform.

    With --app-token the site exists already and nothing is created on the platform:
    the workspace is restored from the site's latest deployment (source, live
    catalog.json, AI drafts), or, for a site never deployed, is the blank template bound
    to the site's tables.
    """
    from basedb.client.profiles import resolve_profile
    from basedb.core.errors import UsageError
    from basedb.deploy.provision import PlatformProvisioner
    from basedb.workspace.scaffold import ensure_empty_target, init_workspace

    if app_token is not None:
        given = [name for name, value in (("--template", template), ("--name", title),
                                           ("--description", description),
                                           ("--schema", schema_file),
                                           ("--base-token", base_token)) if value is not None]
        if given:
            raise UsageError(f"--app-token restores an existing site, so it cannot be "
                             f"used with {', '.join(given)} (for a new site).",
                             code="OPTIONS_CONFLICT",
                             hint=f"Leave out {', '.join(given)}, or --app-token to create "
                                  "a new site.")
        _restore(directory, app_token, as_json, profile)
        return
    schema = None
    if schema_file is not None:
        from basedb.workspace.schema_file import load_schema_file

        if base_token is not None:
            raise UsageError("--schema and --base-token cannot be used together: --schema "
                             "creates a new Base, --base-token binds an existing one.",
                             code="OPTIONS_CONFLICT",
                             hint="Leave out one of them.")
        if template not in (None, "blank"):
            raise UsageError(f"--schema is used with the blank template, not {template!r}: "
                             "that template's functions need its own tables.",
                             code="OPTIONS_CONFLICT",
                             hint="Leave out --template (or pass --template blank).")
        if not schema_file.is_file():
            raise UsageError(f"--schema {schema_file}: no such file.", code="SCHEMA_INVALID",
                             hint="Pass the path of a JSON or YAML schema file "
                                  "(docs/schema-file.md).")
        schema, titled = load_schema_file(schema_file)
        template = "blank"
        if not titled and title is None:
            title = schema_file.stem
    template = template or "example"
    ensure_empty_target(directory)  # refuse before the platform is even opened
    resolved = resolve_profile(profile, None)
    with open_client(resolved) as client:
        result = init_workspace(directory, template, title=title, base_token=base_token,
                                provisioner=PlatformProvisioner(client), schema=schema,
                                description=description)
    if not resolved.embedded:
        _remember_profile(result.workspace, resolved.name)
    if as_json:
        emit_json(result.to_dict())
        return
    shown = result.workspace if directory == Path(".") else directory
    click.echo(f"Created workspace {shown} from template {template!r} "
               f"({result.title}, {len(result.files)} files).")
    note = "" if base_token else (
        _new_base_note(template) if schema is None else
        f" (new, {len(schema.tables)} tables from {schema_file})")
    click.echo(f"Site {result.app_token} is bound to the tables of Base {result.base_token}"
               f"{note}.")
    click.echo("\nNext steps:")
    if result.workspace != Path.cwd().resolve():
        click.echo(f"  cd {shlex.quote(str(directory))}")
    click.echo("  basedb check     # validate declarations, SQL and the agent-tools policy")
    click.echo("  basedb deploy    # publish a preview release")


def _restore(directory: Path, app_token: str, as_json: bool, profile: str | None) -> None:
    from basedb.client.profiles import resolve_profile
    from basedb.deploy.restore import restore_workspace
    from basedb.workspace.scaffold import ensure_empty_target

    ensure_empty_target(directory)
    resolved = resolve_profile(profile, None)
    with open_client(resolved) as client:
        result = restore_workspace(client, app_token=app_token, target=directory)
    if not resolved.embedded:
        _remember_profile(result.workspace, resolved.name)
    if as_json:
        emit_json(result.to_dict())
        return
    shown = result.workspace if directory == Path(".") else directory
    if result.deployment_id is not None:
        click.echo(f"Restored workspace {shown} of site {app_token} from deployment "
                   f"{result.deployment_id} ({len(result.files)} files).")
    else:
        bound = (f"bound to the tables of Base {result.base_token}" if result.base_token
                 else "no tables bound yet (`basedb bind`)")
        click.echo(f"Created workspace {shown} for site {app_token}, which has no "
                   f"deployment yet: the {result.template} template, {bound}.")
    click.echo("\nNext steps:")
    if result.workspace != Path.cwd().resolve():
        click.echo(f"  cd {shlex.quote(str(directory))}")
    click.echo("  basedb check     # validate declarations, SQL and the agent-tools policy")


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
