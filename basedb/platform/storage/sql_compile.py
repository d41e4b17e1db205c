"""Compile an analysed Database Function into one SQLite statement for the local platform.

    analysis = analyze_sql(sql, catalog, len(params))
    compiled = compile_for_sqlite(analysis, catalog)
    rows = conn.execute(compiled.sql, compiled.parameters(values, user_id))

The statement reads only the physical tables of the catalog tables the query names (plus
its own CTEs and json_each); every value arrives through a `?` placeholder. Run it under
`read_only_authorizer(compiled)` so SQLite itself refuses anything else.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from basedb.check.sql import functions
from basedb.check.sql.model import OutputColumn, SqlAnalysis
from basedb.platform.storage import physical
from basedb.platform.storage.sql_rewrite import CompileError
from basedb.workspace.model import Catalog

__all__ = ["CompileError", "CompiledQuery", "compile_for_sqlite", "prepare_connection",
           "read_only_authorizer"]

Slot = int | Literal["current_user"]


@dataclass(frozen=True, slots=True)
class CompiledQuery:
    sql: str
    # For each `?` in order: the 1-based parameter number, or "current_user".
    slots: tuple[Slot, ...]
    # Output columns in order; `field` (when set) tells how to decode the cell.
    columns: tuple[OutputColumn, ...]
    # Physical tables the statement reads (for the SQLite authorizer).
    tables: frozenset[str]
    # Names of its CTEs (renamed by the compiler, so none shadows a physical table).
    ctes: frozenset[str] = frozenset()

    def parameters(self, values: Sequence[Any], current_user: str | None) -> list[Any]:
        """Values for each `?`: `$n` takes values[n - 1] (None when missing), lists and
        tuples travel as JSON text (array params), booleans as 0 / 1."""
        out: list[Any] = []
        for slot in self.slots:
            if slot == "current_user":
                out.append(current_user)
                continue
            value = values[slot - 1] if slot - 1 < len(values) else None
            if isinstance(value, (list, tuple)):
                value = json.dumps(list(value), ensure_ascii=False)
            elif isinstance(value, bool):
                value = int(value)
            out.append(value)
        return out


def compile_for_sqlite(analysis: SqlAnalysis, catalog: Catalog) -> CompiledQuery:
    """Rewrite an analysed query (no problems, names resolved) into SQLite.

    Raises CompileError when the query is not compilable: it has problems, was analysed
    without a catalog, or uses a construct the local SQLite engine cannot run.
    """
    if analysis.problems or not analysis.resolved or analysis.tree is None:
        raise CompileError("Only a query that analysed without problems against the catalog "
                           "can be compiled; run `basedb check` for details.")
    from sqlglot.errors import ErrorLevel, SqlglotError

    from basedb.platform.storage.sql_rewrite import Rewriter

    marker = "__bdb_p"
    while marker in analysis.sql:  # a marker must never occur in the author's text
        marker += "_"
    tables = frozenset(physical.table_name(t.table_id) for t in analysis.tables)
    try:
        rewriter = Rewriter(analysis, marker)
        tree = rewriter.run()
        _check_tables(tree, tables | set(rewriter.cte_names.values()))
        text = tree.sql(dialect="sqlite", unsupported_level=ErrorLevel.RAISE)
    except RecursionError:
        raise CompileError("The query is nested too deeply to compile.") from None
    except SqlglotError as error:
        raise CompileError(f"The query uses SQL the local platform cannot run: "
                           f"{str(error).splitlines()[0]}") from None
    slots: list[Slot] = []

    def to_question_mark(match: re.Match[str]) -> str:
        tag = match.group(1)
        slots.append("current_user" if tag == "u" else int(tag))
        return "?"

    sql = re.sub(rf":{re.escape(marker)}(\d+|u)\b", to_question_mark, text)
    return CompiledQuery(sql=sql, slots=tuple(slots), columns=analysis.columns, tables=tables,
                         ctes=frozenset(rewriter.cte_names.values()))


def _check_tables(tree: Any, allowed: set[str] | frozenset[str]) -> None:
    """Every table the statement names must be physical, a CTE or json_each."""
    from sqlglot import exp

    for node in tree.walk():
        if not isinstance(node, exp.Table):
            continue
        if isinstance(node.this, exp.Anonymous) and str(node.this.this).lower() == "json_each":
            continue
        if isinstance(node.this, exp.Identifier) and node.name in allowed and not (
                node.args.get("db") or node.args.get("catalog")):
            continue
        raise CompileError(f"The compiled query would read {node.sql()!r}, which is not a "
                           "bound table of the query (parenthesized joins are not supported "
                           "on the local platform; write the joins without parentheses).")


# SQLite authorizer action codes that a read-only statement needs.
_SELECT, _READ, _FUNCTION, _RECURSIVE = 21, 20, 31, 33


def prepare_connection(conn: sqlite3.Connection) -> None:
    """Once per connection, before any authorizer: SQLite declares the json_each virtual
    table on first use through an internal schema write, which the read-only authorizer
    would (rightly) refuse."""
    conn.execute("SELECT value FROM json_each('[]')").fetchall()


def read_only_authorizer(compiled: CompiledQuery) -> Callable[..., int]:
    """An authorizer for `sqlite3.Connection.set_authorizer` that allows only what the
    compiled statement may do: SELECT, reading its physical tables and json_each, the
    allowed functions, and recursive CTEs. Everything else is denied. Call
    `prepare_connection` on the connection first."""
    readable = set(compiled.tables) | {"json_each"}

    def authorize(action: int, arg1: str | None, arg2: str | None, database: str | None,
                  source: str | None) -> int:
        if action in (_SELECT, _RECURSIVE):
            return sqlite3.SQLITE_OK
        if action == _READ and arg1 in readable and database in ("main", None):
            return sqlite3.SQLITE_OK
        # SQLite reports reading a CTE without naming a column (e.g. `count(*) FROM cte`)
        # as a read of the CTE with no database.
        if action == _READ and database is None and arg1 in compiled.ctes:
            return sqlite3.SQLITE_OK
        if action == _FUNCTION and arg2 is not None and functions.is_sqlite_function_allowed(
                arg2):
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY

    return authorize
