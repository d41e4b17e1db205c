"""Records of a Base table: validated writes and decoded reads.

This is the one write path for record data: the Base API uses it, and so should every
runtime that writes records (Mutations, the FaaS record routes), so that the same cell
rules, bookkeeping columns (created/updated time and user, auto numbers) and link
integrity hold whoever writes. Callers hold `store.write()` around a whole operation so
that it is all-or-nothing.

    prepared = prepare_values(conn, table, {"Status": "Open"}, at="/params", zone=zone)
    [record_id] = insert_records(conn, table, [prepared], actor=user_id, zone=zone)

`zone` is the IANA time zone the write happens in: a site's (its deployment's) for
Mutations and FaaS record calls, the Base's for the Base API. A datetime given as
milliseconds since 1970, and the created/updated time cells, are wall-clock times in it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

from basedb.core.frozen import frozen_dataclass
from basedb.core.memo import Memo
from basedb.platform.domain import bases
from basedb.platform.domain.revision import catalog_revision
from basedb.platform.storage import ids, physical
from basedb.platform.storage.cells import (
    InvalidCell,
    closest,
    column_encoder_for,
    decoder_for,
    decodes_as_stored,
    encode_cell,
    encoder_for,
    referenced_ids,
)
from basedb.protocol import not_found, quote
from basedb.protocol.findings import pointer as json_pointer
from basedb.workspace.model import Field, Table

# The most records one call creates, updates or deletes: a batch route, a Mutation, a
# FaaS record call. Base's own batch routes (lark-cli `base +record-batch-create`) take at
# most 200 records a call, so a caller written against the local platform cannot send a
# batch that Base refuses; larger loads are split (the deploy's provisioning does so).
MAX_BATCH = 200
_CHUNK = 500  # ids per IN (…) lookup


TableMemo = Memo[tuple[str, str, int], Table]
"""Tables with their fields, by (base token, table id, catalog revision)."""


def current_table(conn: sqlite3.Connection, memo: TableMemo, base_token: str,
                  table_id: str) -> Table:
    """`bases.require_table`, kept while the catalog revision stays: any change to a
    table's name or its fields, by any connection, moves it (`basedb.platform.domain.
    revision`). Call it inside the transaction that uses the table, so that the
    revision read is the one the table is used at."""
    return memo.get_or_build((base_token, table_id, catalog_revision(conn)),
                             lambda: bases.require_table(conn, base_token, table_id))


def resolve_field(table: Table, key: Any, at: str) -> Field:
    """A writable-or-not field by name or id, or InvalidCell listing close names."""
    field = table.field(key) if isinstance(key, str) else None
    if field is None or field.type == "record_id":
        names = [f.name for f in table.fields]
        raise InvalidCell(None, at, f"Table {quote(table.name)} has no field {quote(key)}",
                          "use a field name or field_id of the table",
                          received=key, candidates=closest(str(key), names))
    return field


Cell = tuple[str | tuple[str | int, ...], Any, Any]
"""(where the value is in the request, field name or id, value). Where is a JSON Pointer,
or its tokens: a batch passes tokens, which become a pointer only for an error message."""


def _pointer(where: str | tuple[str | int, ...]) -> str:
    return where if isinstance(where, str) else json_pointer(*where)


def prepare_values(conn: sqlite3.Connection, table: Table, values: Mapping[str, Any], *,
                   zone: str, at: str = "") -> dict[str, Any]:
    """Validate `{field name or id: value}` into `{field_id: stored}` (ids checked too)."""
    [prepared] = prepare_rows(conn, table, [
        [(at + json_pointer(key), key, value) for key, value in values.items()]], zone=zone)
    return prepared


def prepare_rows(conn: sqlite3.Connection, table: Table,
                 rows: Iterable[Iterable[Cell]], *, zone: str) -> list[dict[str, Any]]:
    """Validate several rows of cells into `{field_id: stored}` each, checking every
    referenced record and user id with one query per target table."""
    preparer = _Preparer(table, zone)
    prepared = [preparer.row(cells) for cells in rows]
    _check_references(conn, preparer.refs)
    return prepared


def prepare_grid(conn: sqlite3.Connection, table: Table, keys: Sequence[str],
                 rows: Sequence[Sequence[Any]], *, zone: str,
                 at: str = "rows") -> list[list[Any]]:
    """`prepare_rows` of rows given as values aligned with `keys` (field names or ids),
    the cell of row r and column c being at /`at`/r/c: the same stored values, column
    by column (one list per key), and the same first error, with what depends only on
    the column decided once."""
    preparer = _Preparer(table, zone)
    if not rows:
        return [[] for _ in keys]
    # The first row as prepare_rows takes it: it resolves every key, in order, and meets
    # a field given twice; the other rows name the same fields.
    first = preparer.row([((at, 0, c), key, value)
                          for c, (key, value) in enumerate(zip(keys, rows[0], strict=True))])
    columns = [(c, *preparer.resolved[key]) for c, key in enumerate(keys)]
    prepared = [[first[field.field_id]] for _, field, _, _ in columns]
    refs = preparer.refs
    if len(rows) > 1:
        whole = _encode_columns(columns, rows)
        if whole is not None:
            for column, rest in zip(prepared, whole, strict=True):
                column += rest
            _check_references(conn, refs)
            return prepared
    for r in range(1, len(rows)):
        values = rows[r]
        for (c, field, encode, refers), column in zip(columns, prepared, strict=True):
            value = values[c]
            try:
                stored = encode(value)
            except InvalidCell:
                encode_cell(field, value, json_pointer(at, r, c), zone=zone)
                raise
            column.append(stored)
            if refers and stored is not None:
                refs.append((field, (at, r, c), referenced_ids(field, stored)))
    _check_references(conn, refs)
    return prepared


def _encode_columns(columns: Sequence[tuple[int, Field, Any, bool]],
                    rows: Sequence[Sequence[Any]]) -> list[list[Any]] | None:
    """The stored values of rows[1:], column by column, when every column is of a simple
    type and every value plainly valid (`column_encoder_for`); else None, and the rows
    are encoded one cell at a time, which finds the first error in row order."""
    rest = rows[1:]
    encoded = []
    for c, field, _, _ in columns:
        encode_column = column_encoder_for(field)
        stored = encode_column([values[c] for values in rest]) if encode_column else None
        if stored is None:
            return None
        encoded.append(stored)
    return encoded


class _Preparer:
    """Rows of cells validated one by one, with each field resolved (and its encoder
    made) once."""

    def __init__(self, table: Table, zone: str) -> None:
        self.table = table
        self.zone = zone
        # field name or id -> (field, encoder, whether its cells refer to ids)
        self.resolved: Resolved = {}
        self.refs: list[tuple[Field, str | tuple[str | int, ...], list[str]]] = []

    def row(self, cells: Iterable[Cell]) -> dict[str, Any]:
        row: dict[str, Any] = {}
        for where, key, value in cells:
            found = self.resolved.get(key) if isinstance(key, str) else None
            if found is None:
                field = resolve_field(self.table, key, _pointer(where))
                found = (field, encoder_for(field, self.zone), field.type in ("link", "user"))
                self.resolved[key] = found
            field, encode, refers = found
            if field.field_id in row:
                raise InvalidCell(field, _pointer(where), f"Field {quote(field.name)} is "
                                  "given twice (by name and by id)", "give each field once",
                                  received=key)
            try:
                stored = encode(value)
            except InvalidCell:
                # Encode it again to say where the value is; building that pointer for
                # every cell would cost more than the encoding.
                encode_cell(field, value, _pointer(where), zone=self.zone)
                raise
            row[field.field_id] = stored
            if refers and stored is not None:
                self.refs.append((field, where, referenced_ids(field, stored)))
        return row


Resolved = dict[str, tuple[Field, Callable[[Any], Any], bool]]


def _check_references(conn: sqlite3.Connection,
                      refs: list[tuple[Field, str | tuple[str | int, ...], list[str]]]) -> None:
    wanted: dict[str | None, set[str]] = {}
    for field, _, values in refs:
        wanted.setdefault(field.link_table if field.type == "link" else None, set()).update(values)
    existing: dict[str | None, set[str]] = {}
    for target, ids_wanted in wanted.items():
        if target is None:
            existing[target] = _existing(conn, "SELECT user_id FROM users WHERE user_id IN "
                                         "(SELECT value FROM json_each(?))", ids_wanted)
        else:
            existing[target] = existing_record_ids(conn, target, ids_wanted)
    for field, at, values in refs:
        target = field.link_table if field.type == "link" else None
        for index, value in enumerate(values):
            if value in existing[target]:
                continue
            where = f"{_pointer(at)}/{index}"
            if target is None:
                raise InvalidCell(field, where, f"Field {quote(field.name)} refers to user "
                                  f"{quote(value)}, who does not exist", "use the id of an "
                                  "existing user (GET /users/me shows yours)", received=value)
            raise InvalidCell(field, where, f"Field {quote(field.name)} links to record "
                              f"{quote(value)}, which is not in table {target}",
                              f"use record ids from GET …/tables/{target}/records",
                              received=value)


def _existing(conn: sqlite3.Connection, sql: str, values: Iterable[str]) -> set[str]:
    values = list(values)
    found: set[str] = set()
    for start in range(0, len(values), _CHUNK):
        chunk = json.dumps(values[start:start + _CHUNK])
        found.update(row[0] for row in conn.execute(sql, (chunk,)))
    return found


def existing_record_ids(conn: sqlite3.Connection, table_id: str,
                        record_ids: Iterable[str]) -> set[str]:
    return _existing(conn, f"SELECT record_id FROM {physical.table_name(table_id)} "
                     "WHERE record_id IN (SELECT value FROM json_each(?))", record_ids)


# ---------------------------------------------------------------------------- writes


def insert_records(conn: sqlite3.Connection, table: Table, rows: list[dict[str, Any]], *,
                   actor: str, zone: str) -> list[str]:
    """Insert prepared rows; returns their new record ids in order."""
    return _insert(conn, table, rows, actor=actor, zone=zone)


def insert_grid(conn: sqlite3.Connection, table: Table, fields: Sequence[Field],
                columns: Sequence[Sequence[Any]], *, actor: str, zone: str) -> RecordRows:
    """Insert records given as prepared columns (`prepare_grid`), `columns[i]` holding
    the values of `fields[i]`; returns them as stored, with the values of `fields` (as
    `read_rows` would read them back, without reading: the stored values are known)."""
    count = len(columns[0]) if columns else 0
    if not count:
        return RecordRows(fields=tuple(f.name for f in fields),
                          field_ids=tuple(f.field_id for f in fields), record_ids=(),
                          data=[])
    plan = _planned_insert(table.table_id, table.fields)
    now = ids.now_in(zone)
    seq = conn.execute(plan.max_seq_sql).fetchone()[0]
    given = {field.field_id: column for field, column in zip(fields, columns, strict=True)}
    system = {"created_at": now, "updated_at": now, "created_by": actor, "updated_by": actor}
    record_ids = ids.new_record_ids(count)
    # Each column of the INSERT, in the plan's order: as inserted, by field.
    inserted: dict[str, Sequence[Any]] = {}
    numbers: dict[str, int] = {}
    if plan.auto:
        numbers = {row[0]: row[1] for row in conn.execute(
            "SELECT field_id, next_number FROM fields WHERE table_id = ? AND "
            "type = 'auto_number'", (table.table_id,))}
    for field_id in plan.auto:
        first = numbers.get(field_id) or 1
        numbers[field_id] = first + count
        inserted[field_id] = range(first, first + count)
    for field_id in plan.checkbox:
        column = given.get(field_id)
        inserted[field_id] = ([value or 0 for value in column] if column is not None
                              else [0] * count)
    for field_id in plan.cells:
        column = given.get(field_id)
        inserted[field_id] = column if column is not None else [None] * count
    constants = [[value] * count for value in
                 (now, now, actor, actor, *(system[kind] for kind in plan.constant_types))]
    conn.executemany(plan.insert_sql, zip(
        record_ids, range(seq + 1, seq + 1 + count), *constants,
        *(inserted[field_id] for field_id in (*plan.auto, *plan.checkbox, *plan.cells)),
        strict=True))
    if numbers:
        conn.executemany("UPDATE fields SET next_number = ? WHERE field_id = ?",
                         [(n, fid) for fid, n in numbers.items()])
    out = []
    for field in fields:
        column = inserted.get(field.field_id)
        if column is None:  # a bookkeeping field: one value for every record
            column = [system[field.type]] * count
        if not decodes_as_stored(field):
            decode = decoder_for(field)
            column = [decode(value) for value in column]
        out.append(column)
    data = [list(row) for row in zip(*out, strict=True)] if out else [
        [] for _ in record_ids]
    return RecordRows(fields=tuple(f.name for f in fields),
                      field_ids=tuple(f.field_id for f in fields),
                      record_ids=tuple(record_ids), data=data)


def _insert(conn: sqlite3.Connection, table: Table, rows: list[dict[str, Any]], *,
            actor: str, zone: str) -> list[str]:
    """Insert prepared rows: their record ids."""
    if not rows:
        return []
    plan = _planned_insert(table.table_id, table.fields)
    now = ids.now_in(zone)
    one = len(rows) == 1 and not plan.auto
    # One row takes the next sequence number within its INSERT; several read it first.
    seq = None if one else conn.execute(plan.max_seq_sql).fetchone()[0]
    system = {"created_at": now, "updated_at": now, "created_by": actor, "updated_by": actor}
    common = [now, now, actor, actor, *(system[kind] for kind in plan.constant_types)]
    auto, checkbox, cells = plan.auto, plan.checkbox, plan.cells
    numbers: dict[str, int] = {}
    if auto:
        numbers = {row[0]: row[1] for row in conn.execute(
            "SELECT field_id, next_number FROM fields WHERE table_id = ? AND "
            "type = 'auto_number'", (table.table_id,))}
    record_ids = ids.new_record_ids(len(rows))
    params: list[list[Any]] = []
    for row, record_id in zip(rows, record_ids, strict=True):
        if seq is not None:
            seq += 1
        values: list[Any] = [record_id, seq, *common]
        for field_id in auto:
            number = numbers.get(field_id) or 1
            numbers[field_id] = number + 1
            values.append(number)
        if checkbox:
            values += [row.get(field_id) or 0 for field_id in checkbox]
        values += map(row.get, cells)
        params.append(values)
    if one:
        [values] = params
        conn.execute(plan.insert_one_sql, [values[0], *values[2:]])
    else:
        conn.executemany(plan.insert_sql, params)
    if numbers:
        conn.executemany("UPDATE fields SET next_number = ? WHERE field_id = ?",
                         [(n, fid) for fid, n in numbers.items()])
    return list(record_ids)


@frozen_dataclass
class _InsertPlan:
    """How rows of one table (as its fields stand) are inserted."""

    table_id: str
    max_seq_sql: str
    insert_sql: str
    insert_one_sql: str  # one row, taking the next sequence number itself: no `_seq` value
    constant_types: tuple[str, ...]  # fields with one value for all rows, by type
    auto: tuple[str, ...]  # auto numbers
    checkbox: tuple[str, ...]  # unticked is 0, never NULL
    cells: tuple[str, ...]  # the prepared cells


@lru_cache(maxsize=256)
def _planned_insert(table_id: str, fields: tuple[Field, ...]) -> _InsertPlan:
    """The insert of `table_id` with `fields`: the columns in the order each row's values
    are built (the bookkeeping columns, then fields with one value for all rows, auto
    numbers, checkboxes and the prepared cells), made once per table and field list."""
    tname = physical.table_name(table_id)
    constant = [f for f in fields if f.type in _SYSTEM_TYPES]
    auto = [f.field_id for f in fields if f.type == "auto_number"]
    checkbox = [f.field_id for f in fields if f.type == "checkbox"]
    cells = [f.field_id for f in fields if f.type not in _SYSTEM_TYPES
             and f.type not in ("auto_number", "checkbox")]
    ordered = [f.field_id for f in constant] + auto + checkbox + cells
    columns = ["record_id", "_seq", *physical.SYSTEM_COLUMNS,
               *(physical.column_name(field_id) for field_id in ordered)]
    marks = ", ".join("?" * len(columns))
    rest = ", ".join("?" * (len(columns) - 2))
    return _InsertPlan(
        table_id=table_id,
        max_seq_sql=f"SELECT COALESCE(MAX(_seq), 0) FROM {tname}",
        insert_sql=f"INSERT INTO {tname} ({', '.join(columns)}) VALUES ({marks})",
        insert_one_sql=(f"INSERT INTO {tname} ({', '.join(columns)}) SELECT ?, "
                        f"COALESCE(MAX(_seq), 0) + 1, {rest} FROM {tname}"),
        constant_types=tuple(f.type for f in constant), auto=tuple(auto),
        checkbox=tuple(checkbox), cells=tuple(cells))


_SYSTEM_TYPES = frozenset({"created_at", "updated_at", "created_by", "updated_by"})


def update_records(conn: sqlite3.Connection, table: Table, record_ids: list[str],
                   values: dict[str, Any], *, actor: str, zone: str) -> int:
    """Apply one prepared patch to existing records; returns how many were updated."""
    if not record_ids:
        return 0
    now = ids.now_in(zone)
    assignments = {physical.column_name(fid): value for fid, value in values.items()}
    assignments["_updated_at"], assignments["_updated_by"] = now, actor
    for field in table.fields:
        if field.type == "updated_at":
            assignments[physical.column_name(field.field_id)] = now
        elif field.type == "updated_by":
            assignments[physical.column_name(field.field_id)] = actor
    sets = ", ".join(f"{column} = ?" for column in assignments)
    cursor = conn.execute(
        f"UPDATE {physical.table_name(table.table_id)} SET {sets} "
        "WHERE record_id IN (SELECT value FROM json_each(?))",
        (*assignments.values(), json.dumps(record_ids)))
    return cursor.rowcount


def delete_records(conn: sqlite3.Connection, table: Table, record_ids: list[str]) -> int:
    """Delete records and drop them from every link cell that pointed at them."""
    if not record_ids:
        return 0
    gone = json.dumps(record_ids)
    cursor = conn.execute(f"DELETE FROM {physical.table_name(table.table_id)} "
                          "WHERE record_id IN (SELECT value FROM json_each(?))", (gone,))
    inbound = conn.execute("SELECT table_id, field_id FROM fields WHERE link_table = ?",
                           (table.table_id,)).fetchall()
    for table_id, field_id in inbound:
        tname, column = physical.table_name(table_id), physical.column_name(field_id)
        conn.execute(
            f"UPDATE {tname} SET {column} = (SELECT CASE WHEN COUNT(*) = 0 THEN NULL ELSE "
            f"json_group_array(value) END FROM json_each({tname}.{column}) WHERE value NOT IN "
            "(SELECT value FROM json_each(?1))) WHERE EXISTS (SELECT 1 FROM "
            f"json_each({tname}.{column}) WHERE value IN (SELECT value FROM json_each(?1)))",
            (gone,))
    return cursor.rowcount


# ----------------------------------------------------------------------------- reads


def _select_list(table: Table) -> str:
    return ", ".join(["record_id"] + [physical.column_name(f.field_id) for f in table.fields])


def read_records(conn: sqlite3.Connection, table: Table,
                 record_ids: list[str]) -> dict[str, dict[str, Any]]:
    """`{record_id: {field name: value}}` for the records that exist."""
    decoders = [(f.name, decoder_for(f)) for f in table.fields]
    out: dict[str, dict[str, Any]] = {}
    for start in range(0, len(record_ids), _CHUNK):
        chunk = json.dumps(record_ids[start:start + _CHUNK])
        for row in conn.execute(
                f"SELECT {_select_list(table)} FROM {physical.table_name(table.table_id)} "
                "WHERE record_id IN (SELECT value FROM json_each(?))", (chunk,)):
            cells = zip(decoders, row[1:], strict=True)
            out[row[0]] = {name: decode(cell) for (name, decode), cell in cells}
    return out


@frozen_dataclass
class Record:
    """One record: its id and its cells by field name."""

    record_id: str
    fields: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"record_id": self.record_id, "fields": dict(self.fields)}


@frozen_dataclass
class RecordDeleted:
    record_id: str
    deleted: Literal[True] = True

    def to_dict(self) -> dict[str, Any]:
        return {"record_id": self.record_id, "deleted": self.deleted}


@frozen_dataclass
class RecordsPatched:
    """One patch applied to several records: their ids and the values it wrote, by
    field name (as lark-cli's +record-batch-update reads them)."""

    record_ids: tuple[str, ...]
    update: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"record_id_list": list(self.record_ids), "update": dict(self.update)}


def require_record(conn: sqlite3.Connection, table: Table, record_id: str) -> Record:
    """The record, or 404 naming the table to list ids from."""
    found = read_records(conn, table, [record_id]).get(record_id)
    if found is None:
        raise not_found(f"Record {record_id} of table {table.table_id}", "/path/record_id",
                        record_id, f"use a record id from GET …/tables/{table.table_id}/records")
    return Record(record_id, found)


@frozen_dataclass
class RecordRows:
    """Records column-oriented, as the Base API returns them: `data[i][j]` is the value
    of field `field_ids[j]` in record `record_ids[i]`."""

    fields: tuple[str, ...]  # names
    field_ids: tuple[str, ...]
    record_ids: tuple[str, ...]
    data: Sequence[Sequence[Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"fields": list(self.fields), "field_id_list": list(self.field_ids),
                "record_id_list": list(self.record_ids),
                "data": [list(row) for row in self.data]}


@frozen_dataclass
class RecordPage:
    """One page of a table's records, and whether more follow (`last_seq`: the insertion
    number of its last record, where the next page starts)."""

    rows: RecordRows
    has_more: bool
    total: int
    last_seq: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**self.rows.to_dict(), "has_more": self.has_more, "total": self.total}


def read_rows(conn: sqlite3.Connection, table: Table, fields: Sequence[Field],
              record_ids: list[str]) -> RecordRows:
    """The records (which must exist) with the values of `fields`, in that order."""
    found = read_records(conn, table, record_ids)
    return RecordRows(fields=tuple(f.name for f in fields),
                      field_ids=tuple(f.field_id for f in fields),
                      record_ids=tuple(record_ids),
                      data=[[found[rid][f.name] for f in fields] for rid in record_ids])


def record_count(conn: sqlite3.Connection, table_id: str) -> int:
    """How many records the table holds: kept by triggers (physical.record_count_ddl)."""
    found = conn.execute("SELECT records FROM record_counts WHERE table_id = ?",
                         (table_id,)).fetchone()
    if found is None:  # not counted: a table the platform did not make
        found = conn.execute(f"SELECT COUNT(*) FROM {physical.table_name(table_id)}").fetchone()
    return int(found[0])


def list_page(conn: sqlite3.Connection, table: Table, offset: int, limit: int, *,
              after: int | None = None) -> RecordPage:
    """One page in insertion order, column-oriented as the Base API returns it: the
    records after insertion number `after` (a keyset page: an index seek, whatever the
    page's depth), else those past the first `offset` (which reads and skips them)."""
    tname = physical.table_name(table.table_id)
    total = record_count(conn, table.table_id)
    decoders = [decoder_for(f) for f in table.fields]
    record_ids: list[str] = []
    data: list[list[Any]] = []
    where, start = ("WHERE _seq > ? ", (after,)) if after is not None else ("", ())
    rows = conn.execute(f"SELECT _seq, {_select_list(table)} FROM {tname} {where}"
                        "ORDER BY _seq LIMIT ? OFFSET ?",
                        (*start, limit + 1, 0 if after is not None else offset)).fetchall()
    for row in rows[:limit]:
        record_ids.append(row[1])
        data.append([decode(cell) for decode, cell in zip(decoders, row[2:], strict=True)])
    rows_out = RecordRows(fields=tuple(f.name for f in table.fields),
                          field_ids=tuple(f.field_id for f in table.fields),
                          record_ids=tuple(record_ids), data=data)
    return RecordPage(rows_out, has_more=len(rows) > limit, total=total,
                      last_seq=rows[limit - 1][0] if len(rows) > limit else None)
