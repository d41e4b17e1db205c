"""`basedb base create`, `basedb table list|create|delete`, `basedb field
list|create|update|delete`: a Base's schema from the command line.

Tables and fields are named by id or by name. The Base is --base-token, else the one the
workspace binds. A change to a table the workspace binds refreshes catalog.json (as
`catalog pull` does), so `check` sees the new schema at once.
"""

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
from basedb.cli.groups import HelpfulGroup

FIELD_TYPE_HELP = ("text number select datetime checkbox user link attachment location "
                   "auto_number created_at updated_at created_by updated_by")


def base_token_option(f: Any) -> Any:
    return click.option("--base-token", default=None,
                        help="The Base (default: the one the workspace binds).")(f)


def yes_option(f: Any) -> Any:
    return click.option("--yes", "-y", is_flag=True, help="Confirm without a prompt.")(f)


def _context(base_token: str | None, workspace_dir: Path | None,
             ) -> tuple[str, Path | None]:
    """(the Base token, the workspace root when there is one)."""
    from basedb.core.errors import UsageError, WorkspaceNotFound
    from basedb.workspace.config import read_workspace_config

    missing = ""
    try:
        root: Path | None = workspace_root(workspace_dir)
    except WorkspaceNotFound as error:
        if workspace_dir is not None:
            raise
        root, missing = None, error.message
    if base_token:
        return base_token, root
    bound = read_workspace_config(root).binding.base_token if root is not None else ""
    if not bound:
        where = "the workspace binds no Base yet" if root else missing.rstrip(".")
        raise UsageError(f"Which Base? --base-token is not given, and {where}.",
                         code="BASE_TOKEN_REQUIRED",
                         hint="Pass --base-token bas… (`basedb base create NAME` makes a "
                              "Base), or run inside a workspace that binds one.")
    return bound, root



def _confirm(yes: bool, question: str, declined: str, command: str) -> None:
    from basedb.core.errors import UsageError

    if yes:
        return
    if not (common.stdin_is_tty() and common.stderr_is_tty()):
        raise UsageError(f"{command} needs --yes: it deletes data that cannot be restored.",
                         code="CONFIRMATION_REQUIRED", hint=f"Run `{command} --yes`.")
    common.confirm_or_stop(question, declined)


def _report_refresh(pull: Any, document: dict[str, Any]) -> None:
    """Put the catalog refresh into the JSON document, or say it on stderr."""
    document["catalogRefreshed"] = pull is not None and pull.catalog_changed
    if pull is not None and pull.catalog_changed and not common.in_json_mode():
        common.echo_err("catalog.json updated (the table is bound to this workspace's site).")


def _field_line(field: dict[str, Any]) -> str:
    extra = []
    if field.get("multiple"):
        extra.append("multiple")
    if field.get("options"):
        extra.append("options: " + ", ".join(str(o.get("name")) for o in field["options"]))
    if field.get("link_table"):
        extra.append(f"links to {field['link_table']}")
    suffix = f"  ({'; '.join(extra)})" if extra else ""
    return f"{field.get('id', '')}  {field.get('name', '')}  [{field.get('type', '')}]{suffix}"


# --------------------------------------------------------------------------- base


@click.group("base", cls=HelpfulGroup)
def base_group() -> None:
    """Create a Base (the tables a site's data lives in)."""


@base_group.command("create")
@click.argument("name")
@json_option
@connection_options
def base_create_command(name: str, as_json: bool, profile: str | None) -> None:
    """Create an empty Base named NAME, owned by you; prints its token.

    Add tables with `basedb table create --base-token TOKEN`, then bind them to a site
    with `basedb bind --base-token TOKEN TABLE…`.
    """
    from basedb.client.bases import base_token_of, create_base

    with connect_to(profile, None) as client:
        created = create_base(client, name)
    token = base_token_of(created)
    if as_json:
        emit_json({"ok": True, "baseToken": token, "name": created.get("name", name)})
        return
    click.echo(f"Created Base {token} ({created.get('name', name)}).")
    click.echo(f"  Next: basedb table create --base-token {token} TABLE_NAME")


# -------------------------------------------------------------------------- tables


@click.group("table", cls=HelpfulGroup)
def table_group() -> None:
    """List, create and delete the tables of a Base."""


@table_group.command("list")
@base_token_option
@json_option
@workspace_option
@connection_options
def table_list_command(base_token: str | None, as_json: bool, workspace_dir: Path | None,
                       profile: str | None) -> None:
    """The tables of the Base, and which ones the workspace binds."""
    from basedb.client.bases import BaseApi, item_id
    from basedb.workspace.config import read_workspace_config

    token, root = _context(base_token, workspace_dir)
    bound = set(read_workspace_config(root).binding.table_ids) if root else set()
    with connect_to(profile, root) as client:
        tables = BaseApi(client, token).tables()
    rows = [{"tableId": item_id(t), "name": t.get("name", ""), "bound": item_id(t) in bound}
            for t in tables]
    if as_json:
        emit_json({"baseToken": token, "tables": rows})
        return
    if not rows:
        click.echo(f"Base {token} has no tables yet: `basedb table create NAME` adds one.")
        return
    for row in rows:
        click.echo(f"{row['tableId']}  {row['name']}{'  (bound)' if row['bound'] else ''}")


@table_group.command("create")
@click.argument("name")
@click.option("--field", "fields", multiple=True, metavar="NAME:TYPE",
              help="A field to create with the table, e.g. 标题:text (repeatable; the first "
                   "is the primary field). Other types and options: `basedb field create`.")
@click.option("--bind", "bind", is_flag=True,
              help="Also bind the new table to the workspace's site (as `basedb bind`).")
@base_token_option
@json_option
@workspace_option
@connection_options
def table_create_command(name: str, fields: tuple[str, ...], bind: bool,
                         base_token: str | None, as_json: bool, workspace_dir: Path | None,
                         profile: str | None) -> None:
    """Create a table NAME in the Base (default fields: none but what --field adds)."""
    from basedb.client.bases import BaseApi, item_id
    from basedb.core.errors import UsageError
    from basedb.deploy.binding import bind_tables

    token, root = _context(base_token, workspace_dir)
    if bind and root is None:
        raise UsageError("--bind needs a workspace: there is no site to bind the table to.",
                         code="WORKSPACE_NOT_FOUND",
                         hint="Run inside a workspace (or pass -C DIR), or leave out --bind.")
    bodies = [_simple_field(spec) for spec in fields]
    with connect_to(profile, root) as client:
        created = BaseApi(client, token).create_table(name, bodies)
        table_id = item_id(created)
        change = (bind_tables(root, client, [table_id], base_token=token)
                  if bind and root is not None else None)
    document = {"ok": True, "baseToken": token, "tableId": table_id,
                "name": created.get("name", name),
                "fields": [{"fieldId": item_id(f), "name": f.get("name"), "type": f.get("type")}
                           for f in created.get("fields") or []],
                "bound": change is not None}
    if as_json:
        emit_json(document)
        return
    click.echo(f"Created table {table_id} ({document['name']}) in Base {token}.")
    if change is not None:
        click.echo("  Bound to the site; catalog.json and binding.tableIds updated.")
    else:
        click.echo(f"  Next: basedb field create {table_id} NAME --type TYPE; "
                   f"basedb bind {table_id}")


def _simple_field(spec: str) -> dict[str, Any]:
    from basedb.core.errors import UsageError
    from basedb.deploy.schema_edit import FIELD_TYPE_CHOICES

    name, _, ftype = spec.rpartition(":")
    if not name or ftype not in FIELD_TYPE_CHOICES or ftype in ("select", "link"):
        raise UsageError(f"--field {spec!r} is not NAME:TYPE with a type that needs no "
                         "options.", code="FIELD_OPTION_INVALID",
                         hint="Use e.g. --field 标题:text; types: text number datetime "
                              "checkbox user attachment location auto_number created_at "
                              "updated_at created_by updated_by. Add select and link fields "
                              "with `basedb field create`.")
    return {"name": name, "type": ftype}


@table_group.command("delete")
@click.argument("table")
@yes_option
@base_token_option
@json_option
@workspace_option
@connection_options
def table_delete_command(table: str, yes: bool, base_token: str | None, as_json: bool,
                         workspace_dir: Path | None, profile: str | None) -> None:
    """Delete TABLE (an id or name) with all its records; asks first (--yes skips).

    The platform refuses while a link field of another table points at it, and unbinds
    it from the sites that bound it.
    """
    from basedb.client.bases import BaseApi, item_id

    token, root = _context(base_token, workspace_dir)
    with connect_to(profile, root) as client:
        api = BaseApi(client, token)
        found = api.resolve_table(table, parameter="TABLE")
        table_id, name = item_id(found), found.get("name", "")
        _confirm(yes, f"Delete table {name} ({table_id}) and all its records?",
                 f"Not deleted: table {name} is unchanged.",
                 f"basedb table delete {table}")
        api.delete_table(table_id)
        pull = _after_delete(root, client, table_id)
    document: dict[str, Any] = {"ok": True, "baseToken": token, "tableId": table_id,
                                "name": name, "deleted": True}
    _report_refresh(pull, document)
    if as_json:
        emit_json(document)
        return
    click.echo(f"Deleted table {table_id} ({name}) from Base {token}.")


def _after_delete(root: Path | None, client: Any, table_id: str) -> Any:
    """A deleted bound table leaves the site's binding: drop it from the workspace too."""
    from basedb.deploy.binding import drop_table_ids
    from basedb.deploy.catalog_sync import pull_catalog
    from basedb.workspace.config import read_workspace_config

    if root is None or table_id not in read_workspace_config(root).binding.table_ids:
        return None
    drop_table_ids(root, [table_id])
    return pull_catalog(root, client)


# -------------------------------------------------------------------------- fields


@click.group("field", cls=HelpfulGroup)
def field_group() -> None:
    """List, create, update and delete the fields of a table."""


@field_group.command("list")
@click.argument("table")
@base_token_option
@json_option
@workspace_option
@connection_options
def field_list_command(table: str, base_token: str | None, as_json: bool,
                       workspace_dir: Path | None, profile: str | None) -> None:
    """The fields of TABLE (an id or name), in order; the first is the primary field."""
    from basedb.client.bases import BaseApi, item_id

    token, root = _context(base_token, workspace_dir)
    with connect_to(profile, root) as client:
        api = BaseApi(client, token)
        found = api.resolve_table(table, parameter="TABLE")
        fields = api.fields(item_id(found))
    if as_json:
        emit_json({"baseToken": token, "tableId": item_id(found),
                   "name": found.get("name", ""), "fields": fields})
        return
    for field in fields:
        click.echo(_field_line(field))


def field_options(f: Any) -> Any:
    for decorator in reversed([
        click.option("--option", "options", multiple=True, metavar="NAME",
                     help="A select option (repeatable, in order; on update the list "
                          "replaces the old one, and cells holding a removed option are "
                          "cleared)."),
        click.option("--multiple/--single", "multiple", default=None,
                     help="select and user fields: several values per cell, or one."),
        click.option("--description", default=None, help="What the field holds."),
    ]):
        f = decorator(f)
    return f


@field_group.command("create")
@click.argument("table")
@click.argument("name")
@click.option("--type", "field_type", required=True, metavar="TYPE",
              help=f"One of: {FIELD_TYPE_HELP}.")
@click.option("--link-table", default=None, metavar="TABLE",
              help="link fields: the table linked to (an id or name, same Base).")
@field_options
@base_token_option
@json_option
@workspace_option
@connection_options
def field_create_command(table: str, name: str, field_type: str, link_table: str | None,
                         options: tuple[str, ...], multiple: bool | None,
                         description: str | None, base_token: str | None, as_json: bool,
                         workspace_dir: Path | None, profile: str | None) -> None:
    """Add a field NAME of --type TYPE to TABLE (an id or name).

    \b
    basedb field create 任务 标题 --type text
    basedb field create 任务 状态 --type select --option 待办 --option 完成
    basedb field create 任务 负责人 --type user --multiple
    basedb field create 任务 项目 --type link --link-table 项目
    """
    from basedb.client.bases import BaseApi, item_id
    from basedb.core.errors import UsageError
    from basedb.deploy.schema_edit import (
        FIELD_TYPE_CHOICES,
        FieldOptions,
        field_body,
        refresh_if_bound,
    )

    if field_type not in FIELD_TYPE_CHOICES:
        raise UsageError(f"--type {field_type!r} is not a field type basedb can create.",
                         code="FIELD_TYPE_INVALID",
                         hint=f"Use one of: {FIELD_TYPE_HELP} (formula and lookup fields are "
                              "made in the Base itself).")
    token, root = _context(base_token, workspace_dir)
    with connect_to(profile, root) as client:
        api = BaseApi(client, token)
        listed = api.tables()
        found = api.resolve_table(table, parameter="TABLE", tables=listed)
        link_id = (item_id(api.resolve_table(link_table, parameter="--link-table",
                                             tables=listed))
                   if link_table is not None else None)
        body = field_body(FieldOptions(name=name, type=field_type,
                                       options=list(options) if options else None,
                                       multiple=multiple, link_table=link_id,
                                       description=description))
        created = api.create_field(item_id(found), body)
        pull = refresh_if_bound(root, client, token, [item_id(found)])
    document: dict[str, Any] = {"ok": True, "baseToken": token, "tableId": item_id(found),
                                "field": created}
    _report_refresh(pull, document)
    if as_json:
        emit_json(document)
        return
    click.echo(f"Added field {_field_line(created)} to table {found.get('name')}.")


@field_group.command("update")
@click.argument("table")
@click.argument("field")
@click.option("--name", default=None, help="A new name for the field.")
@field_options
@base_token_option
@json_option
@workspace_option
@connection_options
def field_update_command(table: str, field: str, name: str | None, options: tuple[str, ...],
                         multiple: bool | None, description: str | None,
                         base_token: str | None, as_json: bool, workspace_dir: Path | None,
                         profile: str | None) -> None:
    """Change FIELD (an id or name) of TABLE: its name, description, options or
    multiple. A field's type and linked table cannot change."""
    from basedb.client.bases import BaseApi, item_id
    from basedb.deploy.schema_edit import FieldOptions, field_body, refresh_if_bound

    token, root = _context(base_token, workspace_dir)
    with connect_to(profile, root) as client:
        api = BaseApi(client, token)
        found = api.resolve_table(table, parameter="TABLE")
        current = api.resolve_field(found, field, parameter="FIELD")
        body = field_body(FieldOptions(name=name, options=list(options) if options else None,
                                       multiple=multiple, description=description),
                          current_type=str(current.get("type")))
        updated = api.update_field(item_id(found), item_id(current), body)
        pull = refresh_if_bound(root, client, token, [item_id(found)])
    document: dict[str, Any] = {"ok": True, "baseToken": token, "tableId": item_id(found),
                                "field": updated}
    _report_refresh(pull, document)
    if as_json:
        emit_json(document)
        return
    click.echo(f"Updated field {_field_line(updated)}.")


@field_group.command("delete")
@click.argument("table")
@click.argument("field")
@yes_option
@base_token_option
@json_option
@workspace_option
@connection_options
def field_delete_command(table: str, field: str, yes: bool, base_token: str | None,
                         as_json: bool, workspace_dir: Path | None,
                         profile: str | None) -> None:
    """Delete FIELD (an id or name) of TABLE with its cells; asks first (--yes skips)."""
    from basedb.client.bases import BaseApi, item_id
    from basedb.deploy.schema_edit import refresh_if_bound

    token, root = _context(base_token, workspace_dir)
    with connect_to(profile, root) as client:
        api = BaseApi(client, token)
        found = api.resolve_table(table, parameter="TABLE")
        current = api.resolve_field(found, field, parameter="FIELD")
        label = f"{found.get('name')}.{current.get('name')}"
        _confirm(yes, f"Delete field {label} and every value in it?",
                 f"Not deleted: field {label} is unchanged.",
                 f"basedb field delete {table} {field}")
        api.delete_field(item_id(found), item_id(current))
        pull = refresh_if_bound(root, client, token, [item_id(found)])
    document: dict[str, Any] = {"ok": True, "baseToken": token, "tableId": item_id(found),
                                "fieldId": item_id(current), "name": current.get("name"),
                                "deleted": True}
    _report_refresh(pull, document)
    if as_json:
        emit_json(document)
        return
    click.echo(f"Deleted field {label} ({item_id(current)}).")
