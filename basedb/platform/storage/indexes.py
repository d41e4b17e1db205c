"""Indexes for the filters and orders of deployed Database Functions.

A Base table is a plain SQLite table, so without an index every Database Function scans
it: 8 ms for a selective query on 100,000 records, where an index answers in under
0.1 ms (bench `invoke`), and a paged query (`WHERE … ORDER BY … LIMIT 20`) sorts every
match before it returns twenty. Field types say little about what deserves an index (an
index on a five-option select field made that query slower), but a deployed function
says exactly what it filters and orders on. So when a preview is deployed, each SELECT
of each Database Function gets one index per table it filters or orders, its key made
as SQLite's planner uses one:

1. the columns compared with `=` to a parameter or a constant (at most MAX_COLUMNS),
   in a WHERE clause joined only by AND: the index narrows to them exactly;
2. then the ORDER BY's leading columns on that table, in one direction, when the
   query has no range filter or its first is on the first ORDER BY column: the rows
   come out of the index in order, and LIMIT stops the read (no sort);
3. else one column compared with < <= > >= or BETWEEN: the index narrows to the range;
4. then, when at most MAX_COVERING_EXTRA columns remain, every other column the SELECT
   reads: a covering index, whose rows are never looked up in the table.

    specs = plan_indexes(compiled)                   # what one compiled query would use
    ensure_indexes(conn, specs)                      # CREATE INDEX IF NOT EXISTS …
    kept = drop_indexes_on_column(conn, tname, col)  # before a column is dropped

An index never changes a query's result, only its plan. The indexes are named
`bdx_<table>_<hash of the columns>` and are the platform's own: they go away with their
table, and with any column they cover (SQLite refuses to drop an indexed column). A
table gets at most MAX_PER_TABLE of them, since each one is updated by every write.
Filters on multi-valued fields (link, multi-select, multi-user), which compile to
json_each, filters under OR or on an expression, and LIKE (compiled to a GLOB on a
function of the pattern) get none; docs/sql.md lists the shapes that stay linear.
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
MAX_COVERING_EXTRA = 2  # columns added only so that the index covers the query
MAX_PER_TABLE = 8  # every index is one more b-tree that each write to the table updates
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


def plan_indexes(compiled: CompiledQuery) -> list[IndexSpec]:
    """The indexes that would serve `compiled`: one per table in each SELECT (the query
    itself, its CTEs and subqueries) that filters or orders that table."""
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
        tables = {table.alias_or_name: table.name for table in select.find_all(exp.Table)
                  if table.find_ancestor(exp.Select) is select
                  and _PHYSICAL_TABLE_RE.match(table.name)}
        if tables:
            specs.extend(_select_indexes(select, tables))
    return specs


def _select_indexes(select: exp.Select, tables: dict[str, str]) -> list[IndexSpec]:
    """Per table of one SELECT: its equality columns, then one range column, then the
    ORDER BY columns (when the order starts on this table and on the range column, if
    any), then, when that leaves at most a few more, the other columns it reads."""
    # Lazy: sqlglot loads with the first deployment, not with the app.
    from sqlglot import exp  # noqa: PLC0415

    equal: dict[str, list[str]] = {}
    ranged: dict[str, list[str]] = {}
    where = select.args.get("where")
    condition = where.this if where is not None else None
    conjuncts = ([] if condition is None else
                 condition.flatten() if isinstance(condition, exp.And) else [condition])
    for term in conjuncts:
        for found, column in ((equal, _equality_column(term)), (ranged, _range_column(term))):
            located = _physical(column, tables)
            if located is not None and located[1] not in found.setdefault(located[0], []):
                found[located[0]].append(located[1])
    order_table, order = _order_columns(select, tables)
    specs = []
    for table in dict.fromkeys(tables.values()):
        key = equal.get(table, [])[:MAX_COLUMNS]
        ranges = [c for c in ranged.get(table, []) if c not in key]
        ordered = [c for c in order if c not in key] if order_table == table else []
        if ordered and (not ranges or ordered[0] == ranges[0]):
            key += ordered
        elif ranges:
            key.append(ranges[0])
        if not key:
            continue
        read = _columns_read(select, table, tables)
        extra = [c for c in read if c not in key] if read is not None else None
        if extra is not None and len(extra) <= MAX_COVERING_EXTRA:
            key += extra  # a covering index: the rows never have to be looked up
        specs.append(IndexSpec(table, tuple(key)))
    return specs


def _physical(column: exp.Column | None,
              tables: dict[str, str]) -> tuple[str, str] | None:
    """(physical table, physical column) of a field column of one of `tables`."""
    if column is None or not _PHYSICAL_COLUMN_RE.match(column.name):
        return None
    table = tables.get(column.table)  # the compiler qualifies every column it writes
    return None if table is None else (table, column.name)


def _order_columns(select: exp.Select,
                   tables: dict[str, str]) -> tuple[str | None, list[str]]:
    """The table the ORDER BY of `select` starts on, and the leading run of its columns
    on that table in one direction (SQLite reads an index backwards for DESC, and serves
    ASC NULLS LAST and DESC NULLS FIRST from it too); (None, []) for none."""
    # Lazy: sqlglot loads with the first deployment, not with the app.
    from sqlglot import exp  # noqa: PLC0415

    order = select.args.get("order")
    if order is None:
        return None, []
    aliases = {projection.alias: projection.this for projection in select.expressions
               if isinstance(projection, exp.Alias)}
    first: str | None = None
    direction: bool | None = None
    columns: list[str] = []
    for ordered in order.expressions:
        target = ordered.this
        if isinstance(target, exp.Column) and not target.table and target.name in aliases:
            target = aliases[target.name]  # ORDER BY "Title": the projection's column
        located = _physical(target if isinstance(target, exp.Column) else None, tables)
        desc = bool(ordered.args.get("desc"))
        if located is None or located[0] != (first or located[0]) or (
                direction is not None and desc != direction):
            break
        first, direction = located[0], desc
        if located[1] not in columns:
            columns.append(located[1])
    return first, columns


def _columns_read(select: exp.Select, table: str, tables: dict[str, str]) -> list[str] | None:
    """The field columns of `table` that `select` reads, in order of appearance; None when
    it reads anything else of it (record_id, a star, a column of a nested query)."""
    # Lazy: sqlglot loads with the first deployment, not with the app.
    from sqlglot import exp  # noqa: PLC0415

    if any(isinstance(star, exp.Star) for star in select.find_all(exp.Star)):
        return None
    aliases = {alias for alias, name in tables.items() if name == table}
    projected = {projection.alias for projection in select.expressions
                 if isinstance(projection, exp.Alias)}
    read: list[str] = []
    for column in select.find_all(exp.Column):
        if column.find_ancestor(exp.Select) is not select:
            continue
        if not column.table and column.name in projected:
            continue  # ORDER BY "Title": a projection's alias
        if column.table and column.table not in aliases:
            continue
        if not column.table:
            return None
        if not _PHYSICAL_COLUMN_RE.match(column.name):
            return None
        if column.name not in read:
            read.append(column.name)
    return read


def _equality_column(term: Any) -> exp.Column | None:
    """The column of `column = value` (either way round), where value is a parameter or
    a literal; None for anything else."""
    # Lazy: sqlglot loads with the first deployment, not with the app.
    from sqlglot import exp  # noqa: PLC0415

    if not isinstance(term, exp.EQ):
        return None
    return _compared_column(term)


def _range_column(term: Any) -> exp.Column | None:
    """The column of `column < value` (any of < <= > >=, either way round) or `column
    BETWEEN value AND value`, where each value is a parameter or a literal."""
    # Lazy: sqlglot loads with the first deployment, not with the app.
    from sqlglot import exp  # noqa: PLC0415

    if isinstance(term, (exp.GT, exp.GTE, exp.LT, exp.LTE)):
        return _compared_column(term)
    if (isinstance(term, exp.Between) and isinstance(term.this, exp.Column)
            and all(_is_value(term.args.get(bound)) for bound in ("low", "high"))):
        return term.this
    return None


def _compared_column(term: Any) -> exp.Column | None:
    # Lazy: sqlglot loads with the first deployment, not with the app.
    from sqlglot import exp  # noqa: PLC0415

    for column, value in ((term.left, term.right), (term.right, term.left)):
        if isinstance(column, exp.Column) and _is_value(value):
            return column
    return None


def _is_value(node: Any) -> bool:
    # Lazy: sqlglot loads with the first deployment, not with the app.
    from sqlglot import exp  # noqa: PLC0415

    return isinstance(node, (exp.Placeholder, exp.Literal))


def ensure_indexes(conn: sqlite3.Connection, specs: Iterable[IndexSpec]) -> list[str]:
    """Create the indexes of `specs` that no platform index already covers (an index on
    (a, b) serves a filter on a alone), at most MAX_PER_TABLE per table; returns the
    names created."""
    existing = _platform_indexes(conn)
    created: list[str] = []
    for spec in sorted(set(specs), key=lambda s: (s.table, -len(s.columns), s.columns)):
        covering = existing.setdefault(spec.table, [])
        if any(columns[:len(spec.columns)] == spec.columns for columns in covering):
            continue
        if len(covering) >= MAX_PER_TABLE:
            continue  # over budget: the query still answers, by a scan or another index
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
