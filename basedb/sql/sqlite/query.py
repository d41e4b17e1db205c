"""A Database Function compiled for SQLite, and what runs it read-only.

    rows = conn.execute(compiled.sql, compiled.parameters(values, user_id))

The statement reads only the physical tables of the catalog tables the query names (plus
its own CTEs and json_each); every value arrives through a `?` placeholder. Run it under
`read_only_authorizer(compiled)` so SQLite itself refuses anything else. Compiling is in
`basedb.platform.storage.sql_compile`, which loads sqlglot; running needs only this module.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from basedb.core.frozen import frozen_dataclass
from basedb.sql import functions
from basedb.sql import pgtypes as T
from basedb.sql import pgvalues as V
from basedb.sql.model import OutputColumn
from basedb.sql.sqlite.udf import register_functions

Slot = int | Literal["current_user", "now", "today"]


class CompileError(ValueError):
    """The query cannot run on the local platform's SQLite engine."""


@frozen_dataclass
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
    # For each `?`: the PostgreSQL type its value binds as ("" when unknown).
    conversions: tuple[str, ...] = ()
    # The site's time zone: now(), CURRENT_DATE and timestamptz values are in it.
    timezone: str = "UTC"

    def parameters(self, values: Sequence[Any], current_user: str | None, *,
                   now: datetime | None = None) -> list[Any]:
        """Values for each `?`: `$n` takes values[n - 1] (None when missing) in the local
        representation of the type the query uses it as (lists and tuples as JSON text,
        booleans as 0 / 1, dates and timestamps as PostgreSQL's text); now() is the
        current time (or `now`) in the site's time zone."""
        out: list[Any] = []
        clock = ""
        conversions = self.conversions
        for index, slot in enumerate(self.slots):
            if slot == "current_user":
                out.append(current_user)
            elif slot == "now" or slot == "today":
                clock = clock or site_now(self.timezone, now)
                out.append(clock if slot == "now" else clock[:10])
            else:
                value = values[slot - 1] if slot - 1 < len(values) else None
                out.append(bind_value(value, conversions[index] if index < len(conversions)
                                      else "", self.timezone))
        return out


def site_now(zone: str, at: datetime | None = None) -> str:
    """The current time (or `at`) as wall-clock time in `zone`, in PostgreSQL's text."""
    moment = (at or datetime.now(UTC)).astimezone(V.zone_info(zone))
    text = moment.isoformat(sep=" ")  # …HH:MM:SS[.ffffff]+HH:MM
    return text[:26].rstrip("0") if moment.microsecond else text[:19]


def bind_value(value: Any, type_: str, zone: str = "UTC") -> Any:
    """A parameter value in the local representation of `type_` (as it came when the
    value does not fit: the query then fails as it would on PostgreSQL)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        element = T.element(type_) if T.is_array(type_) else ""
        return json.dumps([bind_value(v, element, zone) for v in value], ensure_ascii=False)
    if isinstance(value, bool):
        return int(value)
    try:
        if type_ == T.FLOAT8 or type_ == T.NUMERIC:
            return float(value) if isinstance(value, (int, float)) else value
        if type_ in (T.INT4, T.INT8):
            return int(value) if isinstance(value, float) and value.is_integer() else value
        if type_ == T.DATE and isinstance(value, str):
            if V.CANONICAL_DATE.fullmatch(value):  # a DATE param, as invoke normalised it
                return value
            return V.format_date(V.parse_date(value))
        if type_ == T.TIMESTAMP and isinstance(value, str):
            if V.CANONICAL_TIMESTAMP.fullmatch(value):  # a DATETIME param, normalised
                return value
            if V.CANONICAL_DATE.fullmatch(value):  # a DATE param compared as a timestamp
                return value + " 00:00:00"
            return V.format_timestamp(V.parse_timestamp(value))
        if type_ == T.TIMESTAMPTZ and isinstance(value, str):
            return V.format_timestamp(V.parse_timestamptz(value, V.zone_info(zone)))
    except V.ValueInputError:
        return value
    return value


# SQLite authorizer action codes that a read-only statement needs.
_SELECT, _READ, _FUNCTION, _RECURSIVE = 21, 20, 31, 33


# The largest string a query may build, in bytes. SQLite's own limit is a gigabyte, which
# a query like replace(repeat('x', 1e6), 'x', repeat('y', 1e6)) reaches in seconds; the
# platform's functions stop at a million characters (`udf_values.MAX_TEXT`), and a
# stored row is far smaller than this. A Database Function's statement runs under
# tighter limits still (`runtimes.sql.STATEMENT_LIMITS`); this bounds every other use.
MAX_VALUE_BYTES = 64 * 1024 * 1024


def prepare_connection(conn: sqlite3.Connection) -> None:
    """Once per connection, before any authorizer: cap the size of a value
    (`MAX_VALUE_BYTES`), add the platform's `bdb_` functions (PostgreSQL's semantics,
    `udf`), and let SQLite declare the json_each virtual table, which it does
    on first use through an internal schema write that the read-only authorizer would
    (rightly) refuse."""
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    register_functions(conn)
    conn.execute("SELECT value FROM json_each('[]')").fetchall()


Authorizer = Callable[[int, "str | None", "str | None", "str | None", "str | None"], int]


class StatementConnection(sqlite3.Connection):
    """A connection that runs Database Function statements, each under its own
    authorizer (`authorizing`). The authorizer SQLite holds is installed once and asks
    the current policy: `sqlite3_set_authorizer` expires every prepared statement of the
    connection, so setting one per statement would prepare every statement the
    connection runs (the platform's own lookups too) again on each call.

    A prepared statement keeps the decision made when it was prepared. That is sound
    here because a function's statement runs only under its policy, which follows from
    its SQL text (the same text names the same tables and functions), and the platform's
    own statements never run under one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.policy: Authorizer | None = None
        self.set_authorizer(self._authorize)

    def _authorize(self, action: int, arg1: str | None, arg2: str | None,
                   database: str | None, source: str | None) -> int:
        policy = self.policy
        if policy is None:
            return sqlite3.SQLITE_OK
        return policy(action, arg1, arg2, database, source)


_Conn = TypeVar("_Conn", bound=StatementConnection)


def connect_read_only(path: str | Path, factory: type[_Conn], *, timeout: float,
                      cached_statements: int) -> _Conn:
    """A connection that only reads the database at `path`, prepared for statements
    (`prepare_connection`): opened read-only and with `query_only` on, in autocommit
    mode, usable from any thread. The path goes into a `file:` URI percent-encoded, so a
    data dir whose name holds `#`, `?` or `%` opens the same file. `factory` is the
    connection class (`StatementConnection` or a subclass)."""
    uri = f"{Path(path).resolve().as_uri()}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None,
                           check_same_thread=False, cached_statements=cached_statements,
                           factory=factory)
    conn.execute("PRAGMA query_only = ON")
    prepare_connection(conn)
    return conn


class authorizing:
    """Within the block, statements prepared on `conn` are authorized by `authorizer`.
    (A class rather than a generator: it is entered on every function call.)"""

    __slots__ = ("_authorizer", "_conn", "_previous")

    def __init__(self, conn: sqlite3.Connection, authorizer: Authorizer) -> None:
        self._conn = conn
        self._authorizer = authorizer
        self._previous: Authorizer | None = None

    def __enter__(self) -> None:
        conn = self._conn
        if isinstance(conn, StatementConnection):
            self._previous, conn.policy = conn.policy, self._authorizer
        else:
            conn.set_authorizer(self._authorizer)

    def __exit__(self, *exc: object) -> None:
        conn = self._conn
        if isinstance(conn, StatementConnection):
            conn.policy = self._previous
        else:
            conn.set_authorizer(None)


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
