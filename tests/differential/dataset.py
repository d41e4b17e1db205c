"""The tables and rows the differential suite runs every query over, on both engines.

One catalog with every field type, and rows chosen to hit the edges where SQLite and
PostgreSQL part ways: NULLs everywhere, mixed-case and non-ASCII text, `%`, `_` and `\\`
in text, halves for rounding, negative numbers, whole numbers stored in number fields,
midnights and month ends, empty and multi-element multi-valued fields, JSON documents.

Rows are written in the Base API's cell shapes and stored locally with the platform's
own encoder (`cells.encode_cell`), exactly as a write through the API would store them;
PostgreSQL gets the same values in its own types (`pgtypes.field_type`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from basedb.platform.storage import physical
from basedb.platform.storage.cells import encode_cell
from basedb.sql import pgtypes as T
from basedb.workspace.catalog import build_catalog
from basedb.workspace.model import Catalog, Field, Table

CATALOG_DOC: dict[str, Any] = {
    "baseToken": "basDiff",
    "tables": [
        {"tableId": "tblTasks", "name": "Tasks", "fields": [
            {"fieldId": "fldTitle", "name": "Title", "type": "text"},
            {"fieldId": "fldNotes", "name": "Notes", "type": "text"},
            {"fieldId": "fldStatus", "name": "Status", "type": "select", "options": [
                {"name": "Todo"}, {"name": "Doing"}, {"name": "Done"}, {"name": "Blocked"}]},
            {"fieldId": "fldTags", "name": "Tags", "type": "select", "multiple": True,
             "options": [{"name": "api"}, {"name": "ui"}, {"name": "urgent"},
                         {"name": "Docs"}]},
            {"fieldId": "fldPoints", "name": "Points", "type": "number"},
            {"fieldId": "fldEstimate", "name": "Estimate", "type": "number"},
            {"fieldId": "fldDue", "name": "Due", "type": "datetime"},
            {"fieldId": "fldDone", "name": "Done", "type": "checkbox"},
            {"fieldId": "fldOwner", "name": "Owner", "type": "user"},
            {"fieldId": "fldWatchers", "name": "Watchers", "type": "user", "multiple": True},
            {"fieldId": "fldProject", "name": "Project", "type": "link",
             "linkTable": "tblProjects"},
            {"fieldId": "fldSeq", "name": "Seq", "type": "auto_number"},
            {"fieldId": "fldFiles", "name": "Files", "type": "attachment"},
            {"fieldId": "fldPlace", "name": "Place", "type": "location"},
        ]},
        {"tableId": "tblProjects", "name": "Projects", "fields": [
            {"fieldId": "fldName", "name": "Name", "type": "text"},
            {"fieldId": "fldLead", "name": "Lead", "type": "user"},
            {"fieldId": "fldBudget", "name": "Budget", "type": "number"},
            {"fieldId": "fldStart", "name": "Start", "type": "datetime"},
            {"fieldId": "fldActive", "name": "Active", "type": "checkbox"},
            {"fieldId": "fldKind", "name": "Kind", "type": "select", "options": [
                {"name": "internal"}, {"name": "client"}]},
        ]},
        {"tableId": "tblNotes", "name": "Notes", "fields": [
            {"fieldId": "fldBody", "name": "Body", "type": "text"},
            {"fieldId": "fldTask", "name": "Task", "type": "link", "linkTable": "tblTasks"},
            {"fieldId": "fldAuthor", "name": "Author", "type": "user"},
            {"fieldId": "fldWritten", "name": "Written", "type": "datetime"},
            {"fieldId": "fldScore", "name": "Score", "type": "number"},
        ]},
    ],
}

USERS = ("ou_ann", "ou_bob", "ou_cat", "ou_dan")
CALLER = "ou_ann"
PROJECTS = ("recP1", "recP2", "recP3", "recP4")

_TEXTS = ("Write API", "write api", "WRITE API", "Draw pages", "Fix bug", "fix_bug",
          "50% done", "a\\b", "Straße", "ÉCOLE", "école", "任务一", "任务二", "", "  padded  ",
          "Zebra", "apple", "Apple", "x", "O'Brien", "tab\there", "new\nline", "😀 emoji",
          "Docs", "api")
_NUMBERS = (None, 0, 1, 2, 2.5, 3, -1.5, -2, 0.5, 1.5, 10, 100, 3.14159, -0.5, 7, 1e6,
            0.1, 0.2, 0.3, 12.345, -7)
_DATES = (None, "2024-01-31 00:00:00", "2024-02-29 23:59:59", "2024-03-01 08:30:00",
          "2024-05-17 10:30:00", "2024-06-01 00:00:00", "2024-12-31 23:00:00",
          "2025-01-01 00:00:00", "2023-11-05 01:30:00", "2024-07-04 12:00:00",
          "2024-03-10 02:30:00", "1999-12-31 23:59:59")
_STATUSES = (None, "Todo", "Doing", "Done", "Blocked")
_TAGS = (None, ["api"], ["ui", "urgent"], ["urgent"], ["Docs", "api", "ui"], ["ui"])


def _pick(values: tuple[Any, ...], index: int, step: int) -> Any:
    return values[(index * step) % len(values)]


def task_rows() -> list[dict[str, Any]]:
    rows = []
    for i in range(40):
        watchers = [USERS[(i + k) % 4] for k in range(i % 3)]
        projects = [PROJECTS[(i + k) % 4] for k in range((i * 7) % 3)]
        row: dict[str, Any] = {
            "Title": _pick(_TEXTS, i, 1), "Notes": _pick(_TEXTS, i, 7) if i % 4 else None,
            "Status": _pick(_STATUSES, i, 3), "Tags": _pick(_TAGS, i, 5),
            "Points": _pick(_NUMBERS, i, 1), "Estimate": _pick(_NUMBERS, i, 5),
            "Due": _pick(_DATES, i, 7), "Done": i % 3 == 0,
            "Owner": [{"id": USERS[i % 4]}] if i % 5 else None,
            "Watchers": [{"id": u} for u in watchers] or None,
            "Project": [{"id": p} for p in projects] or None,
            "Files": [{"file_token": f"box{i}", "name": f"f{i}.png", "size": i * 10,
                       "mime_type": "image/png"}] if i % 6 == 0 else None,
            "Place": {"location": f"{116 + i / 10:.1f},39.9", "full_address": f"Road {i}",
                      "name": "Office" if i % 2 else "Home"} if i % 4 == 1 else None,
        }
        rows.append(row)
    return rows


def project_rows() -> list[dict[str, Any]]:
    return [
        {"Name": "Platform", "Lead": [{"id": "ou_ann"}], "Budget": 1200.5,
         "Start": "2024-01-15 09:00:00", "Active": True, "Kind": "internal"},
        {"Name": "Portal", "Lead": [{"id": "ou_bob"}], "Budget": 300,
         "Start": "2024-06-01 00:00:00", "Active": False, "Kind": "client"},
        {"Name": "platform", "Lead": None, "Budget": None, "Start": None, "Active": True,
         "Kind": None},
        {"Name": "Ünicode", "Lead": [{"id": "ou_cat"}], "Budget": -50, "Start":
         "2023-12-31 23:59:59", "Active": False, "Kind": "client"},
    ]


def note_rows() -> list[dict[str, Any]]:
    rows = []
    for i in range(16):
        rows.append({
            "Body": _pick(_TEXTS, i, 3) or None,
            "Task": [{"id": f"recT{(i * 3) % 40 + 1}"}] if i % 5 else None,
            "Author": [{"id": USERS[i % 4]}] if i % 3 else None,
            "Written": _pick(_DATES, i, 5), "Score": _pick(_NUMBERS, i, 3),
        })
    return rows


def catalog() -> Catalog:
    found, findings = build_catalog(CATALOG_DOC)
    assert not findings, findings
    return found


def record_ids(table: Table) -> list[str]:
    prefix = {"tblTasks": "recT", "tblProjects": "recP", "tblNotes": "recN"}[table.table_id]
    return [f"{prefix}{i + 1}" for i in range(len(ROWS[table.table_id]))]


ROWS: dict[str, list[dict[str, Any]]] = {
    "tblTasks": task_rows(), "tblProjects": project_rows(), "tblNotes": note_rows()}


Cells = Mapping[str, list[tuple[str, list[Any]]]]  # table id -> (record id, cells)


def stored(table: Table) -> list[tuple[str, list[Any]]]:
    """Each record as (record_id, cells in field order), encoded as the platform stores
    them (auto numbers counted from 1)."""
    return _encode(table, list(zip(record_ids(table), ROWS[table.table_id], strict=True)))


def _encode(table: Table, rows: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, list[Any]]]:
    out = []
    for number, (record_id, row) in enumerate(rows, start=1):
        cells = []
        for field in table.fields:
            if field.type == "auto_number":
                cells.append(number)
            elif field.is_read_only:  # the platform fills these: stored as it stores them
                cells.append(row.get(field.name))
            else:
                cells.append(encode_cell(field, row.get(field.name), f"/{field.name}",
                                         zone="Asia/Shanghai"))
        out.append((record_id, cells))
    return out


def generated_cells(cat: Catalog, count: int = 14) -> dict[str, list[tuple[str, list[Any]]]]:
    """Rows for any catalog, from the same edge values as the fixed dataset: NULLs,
    mixed-case and non-ASCII text, halves, midnights, every option of a select field,
    links to records of the linked table (none, one or several). Record ids are
    `rec<table>_<n>`, so a link cell points at rows that exist."""
    ids = {t.table_id: [f"rec{ti}_{i + 1}" for i in range(count)]
           for ti, t in enumerate(cat.tables)}
    out: dict[str, list[tuple[str, list[Any]]]] = {}
    for table in cat.tables:
        rows = []
        for i, record_id in enumerate(ids[table.table_id]):
            row = {f.name: _generated_value(f, i + fi, ids) for fi, f in enumerate(table.fields)}
            rows.append((record_id, row))
        out[table.table_id] = _encode(table, rows)
    return out


def _generated_value(field: Field, i: int, ids: Mapping[str, list[str]]) -> Any:
    kind = field.type
    if kind in ("text", "formula", "lookup"):
        return _pick(_TEXTS, i, 1) if i % 5 else None
    if kind == "number":
        return _pick(_NUMBERS, i, 3)
    if kind == "checkbox":
        return i % 3 == 0
    if kind == "datetime" and i % 6 == 5:
        return None
    if kind in ("datetime", "created_at", "updated_at"):
        # Distinct in each column (an ORDER BY on a date fixes the order, as it mostly
        # does in real data), around month ends and leap days, midnight every fourth row.
        moment = datetime(2024, 2, 29, 23, 59, 59) + timedelta(days=17 * i - 40, hours=-5 * i)
        if i % 4 == 0:
            moment = moment.replace(hour=0, minute=0, second=0)
        return moment.strftime("%Y-%m-%d %H:%M:%S")
    if kind in ("created_by", "updated_by"):
        return USERS[i % 4]
    if kind == "select":
        options = (None, *field.options)
        if field.multiple:
            return [o for k, o in enumerate(field.options) if (i >> k) & 1] or None
        return _pick(options, i, 1)
    if kind == "user":
        users = [{"id": USERS[(i + k) % 4]} for k in range(i % 3 if field.multiple else 1)]
        return (users or None) if i % 4 else None
    if kind == "link":
        targets = ids.get(field.link_table or "", [])
        links = [{"id": targets[(i * 5 + k) % len(targets)]}
                 for k in range(i % 3 if i % 4 else 1)] if targets else []
        return links or None
    if kind == "attachment":
        return [{"file_token": f"box{i}", "name": f"f{i}.png", "size": i * 10,
                 "mime_type": "image/png"}] if i % 3 == 0 else None
    if kind == "location":
        return {"location": f"{116 + i / 10:.1f},39.9", "full_address": f"Road {i}",
                "name": "Office"} if i % 4 == 1 else None
    return None


# ------------------------------------------------------------------------- SQLite

def load_sqlite(conn: sqlite3.Connection, cat: Catalog, cells: Cells | None = None) -> None:
    """The tables laid out as the platform lays them out; `cells` (by table id) are the
    rows, the fixed dataset's when None."""
    for table in cat.tables:
        name = physical.table_name(table.table_id)
        columns = ", ".join(f"{physical.column_name(f.field_id)} "
                            f"{physical.column_affinity(f)}" for f in table.fields)
        conn.execute(f"CREATE TABLE {name} (record_id TEXT PRIMARY KEY, _seq INTEGER, "
                     f"{columns})")
        rows = stored(table) if cells is None else cells[table.table_id]
        for seq, (record_id, row) in enumerate(rows, start=1):
            marks = ", ".join("?" for _ in range(len(row) + 2))
            conn.execute(f"INSERT INTO {name} VALUES ({marks})", (record_id, seq, *row))
    conn.commit()


# --------------------------------------------------------------------- PostgreSQL

def pg_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def pg_value(field: Field, cell: Any) -> Any:
    """A stored cell as the PostgreSQL value of the field's type (psycopg adapts it)."""
    if cell is None:
        return None
    type_ = T.field_type(field)
    if field.type == "checkbox":
        return bool(cell)
    if T.is_array(type_):
        values = json.loads(cell)
        return values or None
    if type_ == T.JSONB:
        return cell  # JSON text, cast by the INSERT
    return cell


def load_postgres(conn: Any, cat: Catalog, cells: Cells | None = None,
                  schema: str = "public") -> None:
    """Tables named as the Base names them, columns as the fields (plus record_id), so
    an author's query runs on PostgreSQL as written; in `schema`, with `cells` (by table
    id) as the rows, the fixed dataset's when None."""
    for table in cat.tables:
        columns = ["record_id text PRIMARY KEY"] + [
            f"{pg_ident(f.name)} {T.field_type(f)}" for f in table.fields]
        qualified = f"{pg_ident(schema)}.{pg_ident(table.name)}"
        conn.execute(f"CREATE TABLE {qualified} ({', '.join(columns)})")
        names = ["record_id"] + [pg_ident(f.name) for f in table.fields]
        marks = ["%s"] + [f"%s::{T.field_type(f)}" for f in table.fields]
        statement = (f"INSERT INTO {qualified} ({', '.join(names)}) VALUES "
                     f"({', '.join(marks)})")
        for record_id, row in (stored(table) if cells is None else cells[table.table_id]):
            values = [pg_value(f, c) for f, c in zip(table.fields, row, strict=True)]
            conn.execute(statement, [record_id, *values])
