"""Database Functions: run a compiled query on a read-only connection, within limits.

Defence in depth, each layer enough on its own: the SQL was checked read-only and
compiled with every value a bound parameter (`basedb.sql`); the connection is
opened read-only (`mode=ro`) with `PRAGMA query_only`; and while the function's
statement is prepared and run, an authorizer allows only SELECT, reads of the physical
tables the statement was compiled against (plus json_each) and the allow-listed
functions.

Bounds that hold for any single statement, however it is written:

- time: a cheap statement runs in this process within a small budget (`sql_inline`);
  any other, or one that outgrows the budget, runs in a worker process (`sql_pool`,
  `sql_worker`) that the platform interrupts at the deadline and kills if that does not
  stop it, so no single step, however long, outlives the deadline by more than a moment;
- concurrency: a site runs a few statements at once; one still running after
  `slow_after_s` needs one of its site's few slow-query slots (and its owner's, and the
  platform's), else it is stopped with 99991400 (retry later); cheap queries never wait
  for a slot;
- size: while the statement runs, SQLite's own limits cap every string or blob (and
  row) at `VALUE_CAP_BYTES`, and the SQL, expression depth, compound SELECTs, LIKE
  patterns and program size at the values of `STATEMENT_LIMITS`; the worker's address
  space and temporary files are capped too;
- answer: at most `ROW_CAP` rows and `RESPONSE_CAP_BYTES` of JSON (`truncated: true`
  says more rows matched).

A query stopped by any of them, or running out of memory or temporary space, answers
800004005 in upstream's message template naming the limit (a site over its share of
slow queries: 99991400); nothing is ever written, so nothing is left half done.

Resolving a call (site, deployment, catalog revision) reads through read-only
connections kept per thread per store; the worker runs the statement only if the
catalog revision is still the one it was compiled against, so the function runs
against exactly the catalog it was compiled for.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain.runtimes.sql_inline import BUDGET_S, run_inline
from basedb.platform.domain.runtimes.sql_pool import (
    Outcome,
    PoolLimits,
    QueryPool,
    default_settings,
)
from basedb.platform.domain.runtimes.sql_worker import QueryRequest
from basedb.platform.storage import platform_log
from basedb.platform.storage.sql_results import column_decoder
from basedb.protocol import ApiFailure, Code, FailureMessage
from basedb.sql.model import OutputColumn
from basedb.sql.sqlite.query import CompiledQuery

MIB = 1024 * 1024
TIME_LIMIT_S = 5.0
ROW_CAP = 5_000
RESPONSE_CAP_BYTES = 8 * MIB
VALUE_CAP_BYTES = 1 * MIB
SLOW_AFTER_S = 0.25
SLOW_PER_SITE = 2
SLOW_PER_PLATFORM = 4
# SQLite's limits while a Database Function's statement runs (sqlite3.Connection.setlimit).
STATEMENT_LIMITS = {
    sqlite3.SQLITE_LIMIT_LENGTH: VALUE_CAP_BYTES,
    sqlite3.SQLITE_LIMIT_SQL_LENGTH: 1 * MIB,
    sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 500,
    sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 100,
    sqlite3.SQLITE_LIMIT_VDBE_OP: 2_000_000,
    sqlite3.SQLITE_LIMIT_ATTACHED: 0,
    sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: 1_000,
    sqlite3.SQLITE_LIMIT_WORKER_THREADS: 0,
}


@frozen_dataclass
class QueryLimits:
    time_limit_s: float = TIME_LIMIT_S
    row_cap: int = ROW_CAP
    response_cap_bytes: int = RESPONSE_CAP_BYTES
    slow_after_s: float = SLOW_AFTER_S
    slow_per_site: int = SLOW_PER_SITE
    slow_per_platform: int = SLOW_PER_PLATFORM
    slow_per_owner: int | None = None  # of all the sites of one owner; None: no share

    def pool_limits(self) -> PoolLimits:
        return PoolLimits(self.time_limit_s, self.slow_after_s, self.slow_per_site,
                          self.slow_per_platform, self.slow_per_owner)


def current_limits() -> QueryLimits:
    """The limits as the module's constants are now (tests lower them)."""
    return QueryLimits(TIME_LIMIT_S, ROW_CAP, RESPONSE_CAP_BYTES, SLOW_AFTER_S,
                       SLOW_PER_SITE, SLOW_PER_PLATFORM)


# -------------------------------------------------------------------------- running


QUERY_POOL = QueryPool(default_settings(STATEMENT_LIMITS))
"""The process's query workers: their slots are shares of this machine."""


class StaleCatalog(Exception):
    """The catalog changed between resolving a call and running its statement."""


def run_cheap(conn: sqlite3.Connection, compiled: CompiledQuery, values: Sequence[Any], *,
              user_id: str, site: str, limits: QueryLimits | None = None,
              on_loop: bool = False) -> dict[str, Any] | None:
    """The result of the function's statement run in this process on `conn`, a
    read-only connection inside the read snapshot the call was resolved in, when it is
    cheap (`sql_inline`; `on_loop`: cheap enough for the server's event loop); None when
    it must go to `run_query` instead."""
    limits = limits or current_limits()
    answer = run_inline(conn, compiled, compiled.parameters(values, user_id), site=site,
                        column_names=column_names(compiled),
                        row_cap=limits.row_cap, response_cap_bytes=limits.response_cap_bytes,
                        statement_limits=STATEMENT_LIMITS,
                        budget_s=min(BUDGET_S, limits.time_limit_s), on_loop=on_loop)
    if answer is None:
        return None
    return shape_result(compiled.columns, *answer)


def run_query(database: Path, compiled: CompiledQuery, values: Sequence[Any], *,
              catalog_revision: int, user_id: str, function_id: str, log_id: str,
              site: str = "", owner: str = "", slow_per_owner: int | None = None,
              limits: QueryLimits | None = None,
              pool: QueryPool | None = None) -> dict[str, Any]:
    """Run the function's statement on `database` with its parameter values ($1 is
    values[0]); the result as `{rows, columns, rowCount, truncated}`. `site` is whose
    share of the workers it uses, `owner` (the site's owner) whose share of slow-query
    slots, at most `slow_per_owner`; limits default to the module's constants as they
    are at call time. Raises StaleCatalog when the catalog is no longer at
    `catalog_revision`."""
    limits = limits or current_limits()
    if slow_per_owner is not None:
        limits = replace(limits, slow_per_owner=slow_per_owner)
    request = QueryRequest(
        database=str(database.resolve()), sql=compiled.sql,
        parameters=tuple(compiled.parameters(values, user_id)), tables=compiled.tables,
        ctes=compiled.ctes, column_names=tuple(c.name for c in compiled.columns),
        catalog_revision=catalog_revision, row_cap=limits.row_cap,
        response_cap_bytes=limits.response_cap_bytes)
    outcome = (pool or QUERY_POOL).run(request, site=site, owner=owner,
                                       limits=limits.pool_limits())
    rows, truncated = _rows(outcome, limits, function_id, log_id)
    return shape_result(compiled.columns, rows, truncated)


def _rows(outcome: Outcome, limits: QueryLimits, function_id: str,
          log_id: str) -> tuple[list[tuple[Any, ...]], bool]:
    """The rows of a finished statement, or the failure that says why there are none."""
    if outcome.stopped in ("busy", "queue"):
        raise _busy(limits, log_id, queued=outcome.stopped == "queue")
    if outcome.stopped == "deadline":
        raise _limit_failure(f"The query ran longer than {limits.time_limit_s:g} s and was "
                             "stopped", "narrow the parameters (a shorter date range, a "
                             "smaller page), or ask the function's author to make the query "
                             "cheaper", log_id)
    answer = outcome.answer
    if outcome.stopped == "killed" or answer is None:
        raise _failed(RuntimeError("the query worker stopped"), function_id, log_id)
    kind = answer[0]
    if kind == "ok":
        return list(answer[1]), bool(answer[2])
    if kind == "stale":
        raise StaleCatalog
    if kind == "too_big":
        raise _limit_failure(f"A value the query built is larger than {_size(VALUE_CAP_BYTES)}",
                             "make the query build smaller values (shorter strings, fewer "
                             "rows concatenated)", log_id)
    if kind == "row_too_big":
        raise _limit_failure(f"One row of the answer is larger than "
                             f"{_size(limits.response_cap_bytes)}", "select fewer or "
                             "smaller columns", log_id)
    if kind in ("no_memory", "disk_full"):
        what = "memory" if kind == "no_memory" else "temporary disk space"
        raise _limit_failure(f"The query needed more {what} than a query may use",
                             "make the query cheaper (fewer rows sorted, grouped or made "
                             "distinct, smaller values)", log_id)
    detail = answer[1] if len(answer) > 1 else kind
    raise _failed(RuntimeError(str(detail)), function_id, log_id)


def shape_result(columns: Sequence[OutputColumn], rows: list[tuple[Any, ...]],
                 truncated: bool) -> dict[str, Any]:
    names, decoders, shown = _shape(columns)
    out_rows = [{name: decode(cell) for name, decode, cell in zip(names, decoders, row,
                                                                   strict=False)}
                for row in rows]
    return {"rows": out_rows, "columns": [dict(column) for column in shown],
            "rowCount": len(out_rows), "truncated": truncated}


_Shape = tuple[tuple[str, ...], tuple[Callable[[Any], Any], ...], tuple[dict[str, Any], ...]]


def _shape(columns: Sequence[OutputColumn]) -> _Shape:
    """How the statement's columns are shaped: names, decoders, the `columns` entries.
    (Made for each answer: keeping them by the columns' identity saved under 10% of an
    invoke, docs/performance.md.)"""
    return (tuple(column.name for column in columns),
            tuple(column_decoder(column) for column in columns),
            tuple({"name": c.name, "type": c.field.type} if c.field is not None
                  else {"name": c.name} for c in columns))


def column_names(compiled: CompiledQuery) -> tuple[str, ...]:
    """The names of the statement's output columns, in order."""
    return _shape(compiled.columns)[0]


def _size(count: int) -> str:
    return f"{count // MIB} MiB" if count >= MIB and count % MIB == 0 else f"{count} bytes"


def _busy(limits: QueryLimits, log_id: str, *, queued: bool) -> ApiFailure:
    reason = ("This site already runs as many queries as it may at once, and more are "
              "waiting" if queued else
              f"The query ran longer than {limits.slow_after_s:g} s while this site "
              f"already runs {limits.slow_per_site} slow queries (or its owner's sites "
              f"{limits.slow_per_owner if limits.slow_per_owner is not None else 'theirs'}, "
              f"or the platform {limits.slow_per_platform}), so it was stopped")
    return ApiFailure(Code.RATE_LIMITED, FailureMessage(
        f"{reason}; nothing was changed", fix="retry in a moment, or make the query "
        "cheaper (narrower parameters, an indexed filter)", executed="no",
        retry="retry later", log_id=log_id).render(), status=429,
        headers={"Retry-After": "1"})


def _limit_failure(reason: str, fix: str, log_id: str) -> ApiFailure:
    """A query stopped at one of the limits: 800004005, nothing changed."""
    return ApiFailure(Code.EXECUTION_FAILED, FailureMessage(
        f"{reason}; it only reads, so nothing was changed", fix=fix, executed="no",
        retry="retry after fixing", log_id=log_id).render(), status=422)


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
