"""Indexes for the filters of deployed Database Functions.

A Base table is a plain SQLite table, so without an index every Database Function scans
it: 8 ms for a selective query on 100,000 records, where an index answers in under
0.1 ms (bench `invoke`). Field types say little about what deserves an index (an index
on a five-option select field made that query slower), but a deployed function says
exactly which columns it filters on. So when a preview is deployed, every column that a
Database Function compares with `=` to a parameter or a constant, in a WHERE clause
joined only by AND, gets an index: one per (table, those columns), created if missing.

    specs = filter_indexes(compiled)                 # what one compiled query would use
    ensure_indexes(conn, specs)                      # CREATE INDEX IF NOT EXISTS …
    kept = drop_indexes_on_column(conn, tname, col)  # before a column is dropped

An index never changes a query's result, only its plan. The indexes are named
`bdx_<table>_<hash of the columns>` and are the platform's own: they go away with their
table, and with any column they cover (SQLite refuses to drop an indexed column).
Filters on multi-valued fields (link, multi-select, multi-user), which compile to
json_each, and filters under OR or on an expression get none.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from basedb.core.frozen import frozen_dataclass

if TYPE_CHECKING:
    from sqlglot import exp

    from basedb.sql.sqlite.query import CompiledQuery

INDEX_PREFIX = "bdx_"
MAX_COLUMNS = 4  # past a few equality columns an index only grows
_PHYSICAL_TABLE_RE = re.compile(r"^t_[A-Za-z0-9_]{1,64}\Z")
_PHYSICAL_COLUMN_RE = re.compile(r"^c_[A-Za-z0-9_]{1,64}\Z")


@frozen_dataclass
class IndexSpec:
    table: str  # physical table, t_<tableId>
    columns: tuple[str, ...]  # physical columns, c_<fieldId>, in filter order

    @property
    def name(self) -> str:
        digest = hashlib.sha256(",".join(self.columns).encode("ascii")).hexdigest()[:12]
        return f"{INDEX_PREFIX}{self.table}_{digest}"


def filter_indexes(compiled: CompiledQuery) -> list[IndexSpec]:
    """The indexes that would serve the equality filters of `compiled`: one per table
    filtered in each SELECT (the query itself, its CTEs and subqueries)."""
    # Lazy: sqlglot loads with the first deployment, not with the app.
    import sqlglot  # noqa: PLC0415
    from sqlglot import exp  # noqa: PLC0415
    from sqlglot.errors import SqlglotError  # noqa: PLC0415

    try:
        tree = sqlglot.parse_one(compiled.sql, read="sqlite")
    except SqlglotError:
        return []  # the compiler's own output; if sqlglot cannot read it, index nothing
    specs: list[IndexSpec] = []
    for select in tree.find_all(exp.Select):
        where = select.args.get("where")
        if where is None:
            continue
        tables = {table.alias_or_name: table.name for table in select.find_all(exp.Table)
                  if table.find_ancestor(exp.Select) is select
                  and _PHYSICAL_TABLE_RE.match(table.name)}
        condition = where.this
        conjuncts = condition.flatten() if isinstance(condition, exp.And) else [condition]
        found: dict[str, list[str]] = {}  # per SELECT: a CTE's filter is another query's
        for term in conjuncts:
            column = _equality_column(term)
            if column is None or not _PHYSICAL_COLUMN_RE.match(column.name):
                continue
            table = tables.get(column.table)
            if table is None:
                continue
            columns = found.setdefault(table, [])
            if column.name not in columns and len(columns) < MAX_COLUMNS:
                columns.append(column.name)
        specs.extend(IndexSpec(table, tuple(columns)) for table, columns in found.items())
    return specs


def _equality_column(term: Any) -> exp.Column | None:
    """The column of `column = value` (either way round), where value is a parameter or
    a literal; None for anything else."""
    # Lazy: sqlglot loads with the first deployment, not with the app.
    from sqlglot import exp  # noqa: PLC0415

    if not isinstance(term, exp.EQ):
        return None
    for column, value in ((term.left, term.right), (term.right, term.left)):
        if isinstance(column, exp.Column) and isinstance(value, (exp.Placeholder,
                                                                  exp.Literal)):
            return column
    return None


def ensure_indexes(conn: sqlite3.Connection, specs: Iterable[IndexSpec]) -> list[str]:
    """Create the indexes of `specs` that no platform index already covers (an index on
    (a, b) serves a filter on a alone); returns the names created."""
    existing = _platform_indexes(conn)
    created: list[str] = []
    for spec in sorted(set(specs), key=lambda s: (s.table, -len(s.columns), s.columns)):
        covering = existing.setdefault(spec.table, [])
        if any(columns[:len(spec.columns)] == spec.columns for columns in covering):
            continue
        conn.execute(f"CREATE INDEX IF NOT EXISTS {spec.name} ON {spec.table} "
                     f"({', '.join(spec.columns)})")
        covering.append(spec.columns)
        created.append(spec.name)
    return created


def _platform_indexes(conn: sqlite3.Connection) -> dict[str, list[tuple[str, ...]]]:
    found: dict[str, list[tuple[str, ...]]] = {}
    for name, table in conn.execute(
            "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' "
            "AND substr(name, 1, ?) = ?", (len(INDEX_PREFIX), INDEX_PREFIX)):
        found.setdefault(table, []).append(_index_columns(conn, name))
    return found


def _index_columns(conn: sqlite3.Connection, name: str) -> tuple[str, ...]:
    return tuple(row[2] for row in conn.execute(f"PRAGMA index_info({name})"))


def drop_indexes_on_column(conn: sqlite3.Connection, table: str, column: str) -> list[str]:
    """Drop the platform's indexes of `table` that cover `column`; returns the CREATE
    statements of its other platform indexes (a table rebuild has to recreate them)."""
    kept: list[str] = []
    for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
            "AND substr(name, 1, ?) = ?", (table, len(INDEX_PREFIX), INDEX_PREFIX)).fetchall():
        if column in _index_columns(conn, name):
            conn.execute(f"DROP INDEX {name}")
        else:
            kept.append(sql)
    return kept
