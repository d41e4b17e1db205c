"""A Database Function compiled for SQLite, and what runs it read-only.

    rows = conn.execute(compiled.sql, compiled.parameters(values, user_id))

The statement reads only the physical tables of the catalog tables the query names (plus
its own CTEs and json_each); every value arrives through a `?` placeholder. Run it under
`read_only_authorizer(compiled)` so SQLite itself refuses anything else. Compiling is in
`sql_compile`, which loads sqlglot; running needs only this module.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from basedb.check.sql import functions
from basedb.check.sql.model import OutputColumn

Slot = int | Literal["current_user"]


class CompileError(ValueError):
    """The query cannot run on the local platform's SQLite engine."""


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
