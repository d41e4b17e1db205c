"""Database Functions: run a compiled query on a read-only connection, within limits.

Defence in depth, each layer enough on its own: the SQL was checked read-only and
compiled with every value a bound parameter (`basedb.check.sql`); the connection is
opened read-only (`mode=ro`) with `PRAGMA query_only`; and while the function's
statement is prepared and run, an authorizer allows only SELECT, reads of the physical
tables the statement was compiled against (plus json_each) and the allow-listed
functions. A progress handler stops a query that runs past the time limit, and a row
cap bounds what one call returns (`truncated: true` says more rows matched).

Connections are kept per thread per store (opening one costs more than most queries),
and the resolution of the call (site, deployment, catalog revision) reads through the
same read transaction as the query, so the function runs against exactly the catalog
it was compiled for.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from basedb.check.sql.model import OutputColumn
from basedb.core.protocol import ApiFailure, Code
from basedb.platform.storage import platform_log
from basedb.platform.storage.sql_query import (
    CompiledQuery,
    prepare_connection,
    read_only_authorizer,
)
from basedb.platform.storage.sql_results import column_decoder
from basedb.platform.storage.store import BUSY_TIMEOUT_S, Store

TIME_LIMIT_S = 5.0
ROW_CAP = 5_000
_PROGRESS_STEPS = 1_000  # SQLite VM instructions between two looks at the clock


@dataclass(frozen=True, slots=True)
class QueryLimits:
    time_limit_s: float = TIME_LIMIT_S
    row_cap: int = ROW_CAP


class _ReadOnlyConnection(sqlite3.Connection):
    """Weakly referenceable, so a pool can close what is still open."""


class ReadOnlyPool:
    """Read-only connections to one store's database, one per thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: weakref.WeakSet[_ReadOnlyConnection] = weakref.WeakSet()
        self._lock = threading.Lock()

    def connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    def _connect(self) -> sqlite3.Connection:
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False, cached_statements=512,
                               factory=_ReadOnlyConnection)
        conn.execute("PRAGMA query_only = ON")
        prepare_connection(conn)
        with self._lock:
            self._all.add(conn)
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One consistent read snapshot on this thread's connection."""
        conn = self.connection()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")

    def close(self) -> None:
        with self._lock:
            connections = list(self._all)
            self._all = weakref.WeakSet()
        for conn in connections:
            with suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()


_pools: weakref.WeakKeyDictionary[Store, ReadOnlyPool] = weakref.WeakKeyDictionary()
_pools_lock = threading.Lock()


def read_only_pool(store: Store) -> ReadOnlyPool:
    """The pool of `store` (created on first use; it goes away with the store)."""
    with _pools_lock:
        pool = _pools.get(store)
        if pool is None:
            pool = _pools[store] = ReadOnlyPool(store.path)
            weakref.finalize(store, pool.close)
        return pool


# -------------------------------------------------------------------------- running


def run_query(conn: sqlite3.Connection, compiled: CompiledQuery, values: Sequence[Any], *,
              user_id: str, function_id: str, log_id: str,
              limits: QueryLimits | None = None) -> dict[str, Any]:
    """Run the function's statement with its parameter values ($1 is values[0]); the
    result as `{rows, columns, rowCount, truncated}`. Limits default to the module's
    TIME_LIMIT_S and ROW_CAP as they are at call time."""
    limits = limits or QueryLimits(TIME_LIMIT_S, ROW_CAP)
    parameters = compiled.parameters(values, user_id)
    deadline = time.monotonic() + limits.time_limit_s

    def past_deadline() -> int:
        return 1 if time.monotonic() > deadline else 0

    conn.set_authorizer(read_only_authorizer(compiled))
    conn.set_progress_handler(past_deadline, _PROGRESS_STEPS)
    try:
        cursor = conn.execute(compiled.sql, parameters)
        try:
            rows = cursor.fetchmany(limits.row_cap + 1)
        finally:
            cursor.close()
    except sqlite3.OperationalError as exc:
        if "interrupt" in str(exc):
            raise _too_long(limits, log_id) from None
        raise _failed(exc, function_id, log_id) from None
    except (sqlite3.Error, OverflowError, ValueError) as exc:
        raise _failed(exc, function_id, log_id) from None
    finally:
        conn.set_progress_handler(None, 0)
        conn.set_authorizer(None)
    truncated = len(rows) > limits.row_cap
    if truncated:
        rows = rows[:limits.row_cap]
    return shape_result(compiled.columns, rows, truncated)


def shape_result(columns: Sequence[OutputColumn], rows: list[tuple[Any, ...]],
                 truncated: bool) -> dict[str, Any]:
    decoders = [column_decoder(column) for column in columns]
    names = [column.name for column in columns]
    out_rows = [{name: decode(cell) for name, decode, cell in zip(names, decoders, row,
                                                                   strict=False)}
                for row in rows]
    out_columns = [{"name": c.name, "type": c.field.type} if c.field is not None
                   else {"name": c.name} for c in columns]
    return {"rows": out_rows, "columns": out_columns, "rowCount": len(out_rows),
            "truncated": truncated}


def _too_long(limits: QueryLimits, log_id: str) -> ApiFailure:
    return ApiFailure(
        Code.EXECUTION_FAILED,
        f"The query ran longer than {limits.time_limit_s:g} s and was stopped; nothing was "
        "changed. Fix: narrow the parameters (a shorter date range, a smaller page), or ask "
        "the function's author to make the query cheaper. Retry: retry after fixing. "
        f"LogID: {log_id}", status=422)


def _failed(exc: BaseException, function_id: str, log_id: str) -> ApiFailure:
    # The SQLite message may quote the compiled statement: it goes to the platform log
    # only; the caller gets a fixed message and the log id.
    platform_log.write(f"basedb platform: Database Function {function_id} failed "
                       f"(log_id {log_id}): {type(exc).__name__}: {exc}")
    return ApiFailure(
        Code.EXECUTION_FAILED,
        "The Database Function failed while running and returned nothing; nothing was "
        "changed. Fix: check the parameter values; if it keeps failing, report it to the "
        f"function's author with the LogID. Retry: do not retry. LogID: {log_id}",
        status=422)
