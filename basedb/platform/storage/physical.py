"""How Base tables and fields are laid out as SQLite tables and columns.

This is the contract between the record store (which writes rows), the SQL compiler
(which rewrites a Database Function from Base names to these names) and the invoke
runtime (which decodes result cells). Names derive from ids, never from user-chosen
names, so no Base name can ever inject into a statement.

Cell storage by field type:

    text, formula, lookup      TEXT
    number                     REAL
    select (single)            TEXT   the option name
    select (multiple)          TEXT   JSON array of option names
    datetime                   TEXT   'YYYY-MM-DD HH:MM:SS' in the site time zone
    checkbox                   INTEGER 0 / 1 (never NULL: unticked is 0)
    user (single)              TEXT   the user id
    user (multiple)            TEXT   JSON array of user ids
    link                       TEXT   JSON array of record ids (always multi-valued)
    attachment                 TEXT   JSON array of {file_token, name, size, mime_type}
    location                   TEXT   JSON object
    auto_number                INTEGER
    created_at, updated_at     TEXT   'YYYY-MM-DD HH:MM:SS'
    created_by, updated_by     TEXT   the user id

Every record table also has `record_id TEXT PRIMARY KEY` and `_seq INTEGER` (insertion
order, used for stable listing and auto numbers), plus the hidden bookkeeping columns
`_created_at`, `_updated_at`, `_created_by`, `_updated_by` that the platform maintains
for every record, so that a created_at/… field added later shows the true values.

`record_counts` holds each record table's number of records, kept by two triggers on
the table (`record_count_ddl`) in the same transaction as every insert and delete,
whoever writes: a listing's `total` is then one lookup where COUNT(*) reads the table.
"""

from __future__ import annotations

import re

from basedb.workspace.model import Field

_ID_RE = re.compile(r"^[A-Za-z0-9_]{1,64}\Z")

JSON_TYPES = frozenset({"link", "attachment", "location"})

SYSTEM_COLUMNS: tuple[str, ...] = ("_created_at", "_updated_at", "_created_by", "_updated_by")
# Field types whose cells copy a bookkeeping column.
SYSTEM_COLUMN_OF_TYPE = {
    "created_at": "_created_at",
    "updated_at": "_updated_at",
    "created_by": "_created_by",
    "updated_by": "_updated_by",
}


def _safe(identifier: str) -> str:
    if not _ID_RE.match(identifier):
        raise ValueError(f"unsafe identifier {identifier!r}")
    return identifier


def table_name(table_id: str) -> str:
    """The SQLite table holding the records of a Base table."""
    return f"t_{_safe(table_id)}"


def column_name(field_id: str) -> str:
    """The SQLite column holding a field; `record_id` maps to itself."""
    if field_id == "record_id":
        return "record_id"
    return f"c_{_safe(field_id)}"


def column_affinity(field: Field) -> str:
    if field.type == "number":
        return "REAL"
    if field.type == "checkbox":
        # An unticked checkbox is false, never NULL, so `"Done" = false` matches it.
        return "INTEGER NOT NULL DEFAULT 0"
    if field.type == "auto_number":
        return "INTEGER"
    return "TEXT"


def is_json_encoded(field: Field) -> bool:
    """Whether the stored cell is a JSON document that must be decoded on read."""
    return field.type in JSON_TYPES or (field.type in ("select", "user") and field.multiple)


def record_count_ddl(table_id: str) -> list[str]:
    """The triggers that keep `record_counts` for one record table (which must exist;
    `record_counts` must hold its row). A table rebuilt under its name needs them again."""
    tname, key = table_name(table_id), _safe(table_id)
    return [f"CREATE TRIGGER IF NOT EXISTS {tname}__counted_insert AFTER INSERT ON {tname} "
            f"BEGIN UPDATE record_counts SET records = records + 1 WHERE table_id = '{key}'; "
            "END",
            f"CREATE TRIGGER IF NOT EXISTS {tname}__counted_delete AFTER DELETE ON {tname} "
            f"BEGIN UPDATE record_counts SET records = records - 1 WHERE table_id = '{key}'; "
            "END"]


def record_table_ddl(table_id: str) -> str:
    """CREATE TABLE for a Base table without fields (each field is added as a column)."""
    return (
        f"CREATE TABLE {table_name(table_id)} ("
        "record_id TEXT PRIMARY KEY, _seq INTEGER NOT NULL UNIQUE, "
        "_created_at TEXT NOT NULL, _updated_at TEXT NOT NULL, "
        "_created_by TEXT, _updated_by TEXT)"
    )
