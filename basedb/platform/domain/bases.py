"""Bases, tables and fields: their metadata rows and the physical tables behind them.

Each Base table is a SQLite table (`physical.table_name`) whose columns follow its
fields; adding, changing or removing a field alters that table in the same transaction
as the metadata, so the two never disagree. Callers hold `store.write()` for changes.
Tables and fields are returned as the workspace model's `Table` and `Field`, the same
objects the checker and SQL compiler use for catalog.json.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any, Literal

from basedb.core.frozen import frozen_dataclass
from basedb.platform.storage import ids, indexes, physical
from basedb.protocol import bad_request, not_found, quote
from basedb.workspace.config import is_timezone
from basedb.workspace.model import FIELD_TYPES, Field, Table

# The local platform stores cells; it has no formula engine and no cross-table lookups.
UNSUPPORTED_FIELD_TYPES = frozenset({"formula", "lookup"})
CREATABLE_FIELD_TYPES = tuple(t for t in FIELD_TYPES if t not in UNSUPPORTED_FIELD_TYPES)
MAX_NAME_CHARS = 100
MAX_DESCRIPTION_CHARS = 2000
MAX_OPTIONS = 1000
MAX_FIELDS_PER_TABLE = 300


@frozen_dataclass
class BaseRow:
    base_token: str
    name: str
    owner_id: str
    timezone: str = ids.DEFAULT_TIMEZONE  # the zone the Base API writes datetimes in

    def to_dict(self) -> dict[str, Any]:
        """As `POST /bases` answers (the owner is the caller)."""
        return {"base_token": self.base_token, "name": self.name, "timezone": self.timezone}


@frozen_dataclass
class TableEntry:
    table_id: str
    name: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.table_id, "name": self.name}


@frozen_dataclass
class TablePage:
    """A page of a Base's tables in creation order, and how many it has in all."""

    tables: Sequence[TableEntry]
    has_more: bool
    total: int

    def to_dict(self) -> dict[str, Any]:
        return {"tables": [t.to_dict() for t in self.tables], "has_more": self.has_more,
                "total": self.total}


@frozen_dataclass
class Deleted:
    """A table or field deleted, by id."""

    id: str
    deleted: Literal[True] = True

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "deleted": self.deleted}


@frozen_dataclass
class FieldSpec:
    """A validated field definition from a request body."""

    name: str
    type: str
    multiple: bool = False
    options: tuple[str, ...] = ()
    link_table: str | None = None
    description: str = ""


# --------------------------------------------------------------------------- bases


def create_base(conn: sqlite3.Connection, name: str, owner_id: str,
                timezone: str = ids.DEFAULT_TIMEZONE) -> BaseRow:
    base = BaseRow(ids.new_id(ids.BASE_TOKEN), name, owner_id, timezone)
    conn.execute("INSERT INTO bases (base_token, name, owner_id, created_at, timezone) "
                 "VALUES (?, ?, ?, ?, ?)",
                 (base.base_token, name, owner_id, ids.now_text(), timezone))
    return base


def get_base(conn: sqlite3.Connection, base_token: str) -> BaseRow | None:
    row = conn.execute("SELECT base_token, name, owner_id, timezone FROM bases "
                       "WHERE base_token = ?", (base_token,)).fetchone()
    return BaseRow(*row) if row else None


def parse_timezone(value: Any, at: str) -> str:
    """An IANA time zone name from a request body (UTC when absent)."""
    if value is None:
        return ids.DEFAULT_TIMEZONE
    if not isinstance(value, str) or not is_timezone(value):
        raise bad_request("timezone must be an IANA time zone name", parameter=at,
                          received=value, fix='send a zone such as "Asia/Shanghai" or "UTC"')
    return value


# -------------------------------------------------------------------------- tables


def list_tables(conn: sqlite3.Connection, base_token: str, offset: int,
                limit: int) -> TablePage:
    total = conn.execute("SELECT COUNT(*) FROM base_tables WHERE base_token = ?",
                         (base_token,)).fetchone()[0]
    rows = conn.execute("SELECT table_id, name FROM base_tables WHERE base_token = ? "
                        "ORDER BY position LIMIT ? OFFSET ?", (base_token, limit, offset))
    tables = tuple(TableEntry(row[0], row[1]) for row in rows)
    return TablePage(tables, has_more=offset + len(tables) < total, total=total)


def load_table(conn: sqlite3.Connection, base_token: str, table_id: str) -> Table | None:
    """A table of the Base with its fields, or None."""
    found = load_tables(conn, base_token, [table_id])
    return found[0] if found else None


def load_tables(conn: sqlite3.Connection, base_token: str, table_ids: list[str]) -> list[Table]:
    """The tables of the Base among `table_ids`, in that order (unknown ids skipped)."""
    if not table_ids:
        return []
    wanted = json.dumps(table_ids)
    names = dict(conn.execute(
        "SELECT table_id, name FROM base_tables WHERE base_token = ? AND table_id IN "
        "(SELECT value FROM json_each(?))", (base_token, wanted)).fetchall())
    fields: dict[str, list[Field]] = {tid: [] for tid in names}
    for row in conn.execute(
        "SELECT table_id, field_id, name, type, multiple, options, link_table, description "
        "FROM fields WHERE table_id IN (SELECT value FROM json_each(?)) "
        "ORDER BY table_id, position", (wanted,)
    ):
        if row[0] in fields:
            fields[row[0]].append(Field(
                field_id=row[1], name=row[2], type=row[3], multiple=bool(row[4]),
                options=tuple(json.loads(row[5])) if row[5] else (),
                link_table=row[6], description=row[7]))
    return [Table(table_id=tid, name=names[tid], fields=tuple(fields[tid]))
            for tid in table_ids if tid in names]


def require_table(conn: sqlite3.Connection, base_token: str, table_id: str) -> Table:
    table = load_table(conn, base_token, table_id)
    if table is None:
        raise not_found(f"Table {table_id} of Base {base_token}", "/path/table_id", table_id,
                        f"use a table_id from GET /bases/{base_token}/tables")
    return table


def require_field(table: Table, field_id: str) -> Field:
    for field in table.fields:
        if field.field_id == field_id:
            return field
    raise not_found(f"Field {field_id} of table {table.table_id}", "/path/field_id", field_id,
                    f"use a field_id from GET …/tables/{table.table_id}/fields")


def create_table(conn: sqlite3.Connection, base_token: str, name: str,
                 specs: list[FieldSpec]) -> Table:
    _check_table_name_free(conn, base_token, name, "/name")
    table_id = ids.new_id(ids.TABLE_ID)
    position = conn.execute("SELECT COALESCE(MAX(position), 0) + 1 FROM base_tables "
                            "WHERE base_token = ?", (base_token,)).fetchone()[0]
    conn.execute("INSERT INTO base_tables (table_id, base_token, name, position, created_at) "
                 "VALUES (?, ?, ?, ?, ?)", (table_id, base_token, name, position, ids.now_text()))
    conn.execute(physical.record_table_ddl(table_id))
    conn.execute("INSERT INTO record_counts (table_id, records) VALUES (?, 0)", (table_id,))
    for trigger in physical.record_count_ddl(table_id):
        conn.execute(trigger)
    seen: set[str] = set()
    for index, spec in enumerate(specs):
        if spec.name in seen:
            raise bad_request(f"Field name {quote(spec.name)} is used twice",
                              parameter=f"/fields/{index}/name", received=spec.name,
                              fix="give every field of the table a different name")
        seen.add(spec.name)
    table = Table(table_id=table_id, name=name, fields=())
    for spec in specs:
        added = add_field(conn, table, spec)
        table = Table(table_id=table_id, name=name, fields=(*table.fields, added))
    return table


def rename_table(conn: sqlite3.Connection, base_token: str, table: Table, name: str) -> Table:
    if name != table.name:
        _check_table_name_free(conn, base_token, name, "/name")
        conn.execute("UPDATE base_tables SET name = ? WHERE table_id = ?", (name, table.table_id))
    return Table(table_id=table.table_id, name=name, fields=table.fields)


def delete_table(conn: sqlite3.Connection, base_token: str, table: Table) -> Deleted:
    inbound = conn.execute(
        "SELECT t.name, f.name FROM fields f JOIN base_tables t ON t.table_id = f.table_id "
        "WHERE f.link_table = ? AND f.table_id != ? ORDER BY t.position, f.position",
        (table.table_id, table.table_id)).fetchall()
    if inbound:
        where = ", ".join(f"{t}.{f}" for t, f in inbound[:3])
        raise bad_request(
            f"Table {quote(table.name)} is linked from other tables ({where})",
            parameter="/path/table_id", received=table.table_id,
            fix="delete those link fields first, then delete the table")
    conn.execute(f"DROP TABLE {physical.table_name(table.table_id)}")
    conn.execute("DELETE FROM record_counts WHERE table_id = ?", (table.table_id,))
    conn.execute("DELETE FROM fields WHERE table_id = ?", (table.table_id,))
    conn.execute("DELETE FROM base_tables WHERE table_id = ?", (table.table_id,))
    # A site left without tables is no longer bound to the Base.
    conn.execute("UPDATE sites SET base_token = NULL WHERE base_token = ? AND NOT EXISTS "
                 "(SELECT 1 FROM site_tables s WHERE s.app_token = sites.app_token)",
                 (base_token,))
    return Deleted(table.table_id)


def _check_table_name_free(conn: sqlite3.Connection, base_token: str, name: str,
                           at: str) -> None:
    if conn.execute("SELECT 1 FROM base_tables WHERE base_token = ? AND name = ?",
                    (base_token, name)).fetchone():
        raise bad_request(f"A table named {quote(name)} already exists in Base {base_token}",
                          parameter=at, received=name, fix="choose another table name",
                          status=409)


# -------------------------------------------------------------------------- fields


def parse_field_spec(conn: sqlite3.Connection, base_token: str, body: Any, at: str = "", *,
                     current: Field | None = None) -> FieldSpec:
    """Validate a field body; with `current`, omitted keys keep the current values."""
    if not isinstance(body, dict):
        raise bad_request("A field must be a JSON object", parameter=at or "/", received=body,
                          fix='send {"name": …, "type": …}')
    known = {"name", "type", "description", "multiple", "options", "link_table"}
    for key in body:
        if key not in known:
            raise bad_request(f"Unknown field property {quote(key)}", parameter=f"{at}/{key}",
                              received=body[key], fix="remove it",
                              candidates=sorted(known))
    name = body.get("name", current.name if current else None)
    name = parse_name(name, f"{at}/name", "field")
    if name == "record_id":
        raise bad_request("record_id is reserved for the record id pseudo-column",
                          parameter=f"{at}/name", received=name, fix="choose another name")
    ftype = body.get("type", current.type if current else None)
    if not isinstance(ftype, str) or ftype not in CREATABLE_FIELD_TYPES:
        reason = (f"Field type {quote(ftype)} is not supported by the local platform"
                  if isinstance(ftype, str) and ftype in UNSUPPORTED_FIELD_TYPES
                  else "Unknown field type")
        raise bad_request(reason, parameter=f"{at}/type", received=ftype,
                          fix=f"use one of {', '.join(CREATABLE_FIELD_TYPES)}",
                          candidates=("text", "number", "select"))
    if current is not None and ftype != current.type:
        raise bad_request(
            f"Changing a field's type ({current.type} to {ftype}) is not supported",
            parameter=f"{at}/type", received=ftype,
            fix="create a new field of the new type and copy the values")
    multiple = body.get("multiple", current.multiple if current else False)
    if not isinstance(multiple, bool):
        raise bad_request("multiple must be true or false", parameter=f"{at}/multiple",
                          received=multiple, fix="send a JSON boolean")
    if multiple and ftype not in ("select", "user"):
        raise bad_request(f"multiple applies to select and user fields, not {ftype}",
                          parameter=f"{at}/multiple", received=multiple, fix="remove it")
    options = _parse_options(body, at, ftype, current)
    link_table = _parse_link_table(conn, base_token, body, at, ftype, current)
    description = body.get("description", current.description if current else "")
    if description is None:
        description = ""
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION_CHARS:
        raise bad_request("description must be a string", parameter=f"{at}/description",
                          received=description,
                          fix=f"send at most {MAX_DESCRIPTION_CHARS} characters of text")
    return FieldSpec(name=name, type=ftype, multiple=multiple, options=options,
                     link_table=link_table, description=description)


def parse_name(value: Any, at: str, what: str) -> str:
    """A table or field name: non-empty text, at most 100 characters, no control chars."""
    if not isinstance(value, str) or not value.strip():
        raise bad_request(f"The {what} name is missing or empty", parameter=at, received=value,
                          fix=f"send a non-empty {what} name")
    name = value.strip()
    # str.strip() also trims the information separators U+001C–U+001F, which the
    # documented pattern (JSON Schema's `\s`) does not count as blanks: refused anywhere.
    if len(name) > MAX_NAME_CHARS or any(ord(ch) < 32 for ch in name) or any(
            "\x1c" <= ch <= "\x1f" for ch in value):
        raise bad_request(f"The {what} name is too long or contains control characters",
                          parameter=at, received=value,
                          fix=f"use at most {MAX_NAME_CHARS} printable characters")
    return name


def _parse_options(body: dict[str, Any], at: str, ftype: str,
                   current: Field | None) -> tuple[str, ...]:
    raw = body.get("options")
    if raw is None:
        return current.options if current is not None and ftype == "select" else ()
    if ftype != "select":
        raise bad_request(f"options apply to select fields, not {ftype}",
                          parameter=f"{at}/options", received=raw, fix="remove options")
    if not isinstance(raw, list) or len(raw) > MAX_OPTIONS:
        raise bad_request("options must be an array of {\"name\"} objects",
                          parameter=f"{at}/options", received=raw,
                          fix=f'send [{{"name": "…"}}, …] (at most {MAX_OPTIONS})')
    names: list[str] = []
    for index, item in enumerate(raw):
        value = item.get("name") if isinstance(item, dict) else item
        name = parse_name(value, f"{at}/options/{index}/name", "option")
        if name in names:
            raise bad_request(f"Option {quote(name)} is listed twice",
                              parameter=f"{at}/options/{index}/name", received=name,
                              fix="list each option once")
        names.append(name)
    return tuple(names)


def _parse_link_table(conn: sqlite3.Connection, base_token: str, body: dict[str, Any], at: str,
                      ftype: str, current: Field | None) -> str | None:
    raw = body.get("link_table")
    if ftype != "link":
        if raw is not None:
            raise bad_request(f"link_table applies to link fields, not {ftype}",
                              parameter=f"{at}/link_table", received=raw, fix="remove it")
        return None
    if current is not None:
        if raw is not None and raw != current.link_table:
            raise bad_request("A link field's link_table cannot change",
                              parameter=f"{at}/link_table", received=raw,
                              fix="create a new link field for the other table")
        return current.link_table
    if not isinstance(raw, str) or not conn.execute(
            "SELECT 1 FROM base_tables WHERE table_id = ? AND base_token = ?",
            (raw, base_token)).fetchone():
        candidates = [r[0] for r in conn.execute(
            "SELECT table_id FROM base_tables WHERE base_token = ? ORDER BY position LIMIT 3",
            (base_token,))]
        raise bad_request("A link field needs link_table: the id of a table in the same Base",
                          parameter=f"{at}/link_table", received=raw,
                          fix=f"use a table_id from GET /bases/{base_token}/tables",
                          candidates=candidates)
    return raw


def add_field(conn: sqlite3.Connection, table: Table, spec: FieldSpec) -> Field:
    _check_field_name_free(table, spec.name, None)
    field = Field(field_id=ids.new_id(ids.FIELD_ID), name=spec.name, type=spec.type,
                  multiple=spec.multiple, options=spec.options, link_table=spec.link_table,
                  description=spec.description)
    position = conn.execute("SELECT COALESCE(MAX(position), 0) + 1 FROM fields "
                            "WHERE table_id = ?", (table.table_id,)).fetchone()[0]
    tname, column = physical.table_name(table.table_id), physical.column_name(field.field_id)
    conn.execute(f"ALTER TABLE {tname} ADD COLUMN {column} {physical.column_affinity(field)}")
    next_number = None
    if field.type == "auto_number":
        # Existing records are numbered in insertion order, as Base does.
        conn.execute(f"UPDATE {tname} SET {column} = "
                     f"(SELECT COUNT(*) FROM {tname} AS o WHERE o._seq <= {tname}._seq)")
        next_number = conn.execute(f"SELECT COUNT(*) + 1 FROM {tname}").fetchone()[0]
    elif field.type in physical.SYSTEM_COLUMN_OF_TYPE:
        conn.execute(f"UPDATE {tname} SET {column} = "
                     f"{physical.SYSTEM_COLUMN_OF_TYPE[field.type]}")
    conn.execute(
        "INSERT INTO fields (field_id, table_id, name, type, multiple, options, link_table, "
        "description, position, next_number) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (field.field_id, table.table_id, field.name, field.type, int(field.multiple),
         json.dumps(list(field.options), ensure_ascii=False) if field.type == "select" else None,
         field.link_table, field.description, position, next_number))
    return field


def update_field(conn: sqlite3.Connection, table: Table, field: Field, spec: FieldSpec) -> Field:
    """Apply a new definition; cells follow (single/multiple switch, removed options)."""
    _check_field_name_free(table, spec.name, field.field_id)
    tname, column = physical.table_name(table.table_id), physical.column_name(field.field_id)
    if spec.multiple != field.multiple:
        conversion = "json_array({c})" if spec.multiple else "json_extract({c}, '$[0]')"
        conn.execute(f"UPDATE {tname} SET {column} = {conversion.format(c=column)} "
                     f"WHERE {column} IS NOT NULL")
    removed = [o for o in field.options if o not in spec.options]
    if field.type == "select" and removed:
        keep = json.dumps(list(spec.options), ensure_ascii=False)
        if spec.multiple:
            conn.execute(
                f"UPDATE {tname} SET {column} = (SELECT CASE WHEN COUNT(*) = 0 THEN NULL "
                f"ELSE json_group_array(value) END FROM json_each({tname}.{column}) "
                f"WHERE value IN (SELECT value FROM json_each(?))) WHERE {column} IS NOT NULL",
                (keep,))
        else:
            conn.execute(f"UPDATE {tname} SET {column} = NULL WHERE {column} NOT IN "
                         "(SELECT value FROM json_each(?))", (keep,))
    conn.execute(
        "UPDATE fields SET name = ?, multiple = ?, options = ?, description = ? "
        "WHERE field_id = ?",
        (spec.name, int(spec.multiple),
         json.dumps(list(spec.options), ensure_ascii=False) if spec.type == "select" else None,
         spec.description, field.field_id))
    return Field(field_id=field.field_id, name=spec.name, type=field.type,
                 multiple=spec.multiple, options=spec.options, link_table=field.link_table,
                 description=spec.description)


def delete_field(conn: sqlite3.Connection, table: Table, field: Field) -> Deleted:
    drop_column(conn, table.table_id, physical.column_name(field.field_id))
    conn.execute("DELETE FROM fields WHERE field_id = ?", (field.field_id,))
    return Deleted(field.field_id)


def drop_column(conn: sqlite3.Connection, table_id: str, column: str, *,
                native: bool | None = None) -> None:
    """Remove a column; rebuilds the table where SQLite predates DROP COLUMN (3.35)."""
    if native is None:
        native = sqlite3.sqlite_version_info >= (3, 35, 0)
    tname = physical.table_name(table_id)
    # SQLite refuses to drop an indexed column, and a rebuild loses every index.
    kept_indexes = indexes.drop_indexes_on_column(conn, tname, column)
    if native:
        conn.execute(f"ALTER TABLE {tname} DROP COLUMN {column}")
        return
    info = list(conn.execute(f"PRAGMA table_info({tname})"))
    columns = [(row[1], row[2]) for row in info]
    # Keep NOT NULL and DEFAULT (checkbox columns have both) when rebuilding.
    kept_fields = [(row[1], row[2] + (" NOT NULL" if row[3] else "")
                    + (f" DEFAULT {row[4]}" if row[4] is not None else ""))
                   for row in info if row[1].startswith("c_") and row[1] != column]
    rebuilt = f"{tname}__rebuild"
    conn.execute(physical.record_table_ddl(table_id).replace(tname, rebuilt, 1))
    for name, decl in kept_fields:
        conn.execute(f"ALTER TABLE {rebuilt} ADD COLUMN {name} {decl}")
    names = ", ".join(name for name, _ in columns if name != column)
    conn.execute(f"INSERT INTO {rebuilt} ({names}) SELECT {names} FROM {tname}")
    conn.execute(f"DROP TABLE {tname}")
    conn.execute(f"ALTER TABLE {rebuilt} RENAME TO {tname}")
    for create_index in kept_indexes:
        conn.execute(create_index)
    for trigger in physical.record_count_ddl(table_id):  # they went with the old table
        conn.execute(trigger)


def _check_field_name_free(table: Table, name: str, own_id: str | None) -> None:
    for other in table.fields:
        if other.name == name and other.field_id != own_id:
            raise bad_request(f"Table {quote(table.name)} already has a field named {quote(name)}",
                              parameter="/name", received=name, fix="choose another field name",
                              status=409)
