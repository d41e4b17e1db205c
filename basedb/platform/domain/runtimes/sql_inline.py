"""A cheap Database Function statement, run in the server's own process.

    rows = run_inline(conn, compiled, parameters, site=app_token, column_names=names,
                      row_cap=…, response_cap_bytes=…)   # None: run it in a worker

Most calls are an indexed lookup that takes a fraction of a millisecond; sending each
to a worker process (`sql_pool`) would cost more than the statement. So a statement
first runs here, on the caller's read-only connection and inside the read snapshot the
call was resolved in, under bounds that make the attempt itself cheap whatever the
statement is:

- a budget of `BUDGET_S` of wall-clock time, checked by SQLite's progress handler every
  `CHECK_EVERY` virtual-machine instructions;
- only functions whose cost is linear in their arguments (`INLINE_FUNCTIONS`): no
  instr(), GLOB/LIKE, replace() or the platform's Python functions that build large
  values, whose single call can outlast any budget;
- every string or blob at most `VALUE_CAP_BYTES` (so each instruction is short, and a
  statement cannot build large values in the server), and SQLite's other statement
  limits as in a worker;
- at most `PER_SITE` such statements of one site at once.

An attempt made on the server's event loop (`on_loop`) has the far smaller budget
`LOOP_BUDGET_S` of the thread's CPU time, since nothing else is served while it runs,
and its answer may hold at most `LOOP_ANSWER_BYTES`: decoding its rows and encoding the
answer also run on the loop, outside SQLite's budget, and cost about what fetching did.
CPU time rather than wall-clock time, so that a busy machine taking the CPU away from
the server does not count against the statement; `BUDGET_S` of wall-clock time still
bounds waits for the disk. A statement that does not finish within it is not tried on
the loop again for `LOOP_BACKOFF_S` (it runs in a thread, then a worker, as above), and
once attempts that gave up have cost the loop `LOOP_WASTE_S` within one second
(`LOOP_WINDOW_S`), none is tried there until the next: whatever statements a site
deploys, they cannot take more than that share of the loop. Small writes tried on the
loop (`basedb.platform.domain.invoke`) share this accounting (`may_try_on_loop`,
`gave_up_on_loop`).

Anything else, or anything that stops the attempt (the budget, the cap, a refused
function, any error), gives up and returns None: the statement then runs in a worker
process under the full bounds of `basedb.platform.domain.runtimes.sql` (hard deadline
enforced from outside, memory and temporary-file caps, slow-query slots), which also
decides what the caller is told. The attempt only reads, so running again is safe.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cachetools import LRUCache, TTLCache

from basedb.platform.domain.runtimes.sql_worker import fetch_capped
from basedb.platform.storage.budget import TimeBudget
from basedb.sql.sqlite.query import CompiledQuery, authorizing, read_only_authorizer

BUDGET_S = 0.02
LOOP_BUDGET_S = 0.002
# The largest answer (as `fetch_capped` counts JSON bytes) made on the loop: shaping and
# encoding it take about as long as fetching it, outside SQLite's budget.
LOOP_ANSWER_BYTES = 256 * 1024
LOOP_BACKOFF_S = 1.0
LOOP_WASTE_S = 0.05
LOOP_WINDOW_S = 1.0  # the period LOOP_WASTE_S is counted over
CHECK_EVERY = 500
VALUE_CAP_BYTES = 64 * 1024
PER_SITE = 4
_FUNCTION = 31  # SQLite authorizer action: a function call

# Functions whose one call costs at most about linear time in its (capped) arguments.
INLINE_FUNCTIONS: frozenset[str] = frozenset({
    "abs", "coalesce", "ifnull", "length", "max", "min", "nullif", "substr", "trim",
    "ltrim", "rtrim", "typeof", "date", "datetime", "julianday", "strftime", "count", "sum",
    "total", "avg", "row_number", "rank", "dense_rank", "percent_rank", "cume_dist",
    "ntile", "lag", "lead", "first_value", "last_value", "nth_value", "json", "json_array",
    "json_array_length", "json_extract", "json_type", "json_valid", "json_quote",
    "json_each",
    "bdb_bool", "bdb_bool_output", "bdb_int", "bdb_float", "bdb_float_text",
    "bdb_float_to_int", "bdb_numeric", "bdb_numeric_to_int", "bdb_numeric_typmod",
    "bdb_to_numeric", "bdb_date", "bdb_timestamp", "bdb_timestamptz", "bdb_tstz_text",
    "bdb_one", "bdb_nonzero", "bdb_div", "bdb_mod", "bdb_sign", "bdb_bound", "bdb_ceil",
    "bdb_floor", "bdb_trunc", "bdb_round_even", "bdb_round_numeric", "bdb_lower",
    "bdb_upper", "bdb_left", "bdb_right", "bdb_substr", "bdb_octet_length",
    "bdb_starts_with", "bdb_greatest", "bdb_least", "bdb_jsonb", "bdb_jsonb_get",
    "bdb_jsonb_get_text", "bdb_jsonb_text", "bdb_jsonb_typeof", "bdb_jsonb_array_length",
})

# Statements known to need a worker (a function not in INLINE_FUNCTIONS): not tried here
# again. Keyed by the SQL text, which names everything the refusal depends on.
_refused: LRUCache[str, bool] = LRUCache(maxsize=1024)
_refused_lock = threading.Lock()
# Statements that did not finish within the loop's budget, by SQL text: tried in a thread
# instead until their entry expires.
_off_loop: TTLCache[str, bool] = TTLCache(maxsize=1024, ttl=LOOP_BACKOFF_S)
_off_loop_lock = threading.Lock()
_waste = [0.0, 0.0]  # [start of the current second, seconds the loop lost in it]
_running: Counter[str] = Counter()
_running_lock = threading.Lock()


def run_inline(conn: sqlite3.Connection, compiled: CompiledQuery, parameters: Sequence[Any],
               *, site: str, column_names: Sequence[str], row_cap: int,
               response_cap_bytes: int, statement_limits: Mapping[int, int],
               budget_s: float = BUDGET_S,
               on_loop: bool = False) -> tuple[list[tuple[Any, ...]], bool] | None:
    """(rows, truncated) of the statement run on `conn` within the bounds above, or None
    when it must run elsewhere instead (in a thread when `on_loop`, else in a worker)."""
    cpu_budget_s = None
    if on_loop:
        if not _loop_may_try(compiled.sql):
            return None
        cpu_budget_s = LOOP_BUDGET_S
    with _refused_lock:
        refused_before = compiled.sql in _refused
    if refused_before or not _enter(site):
        return None
    started = time.perf_counter()
    # On the loop the answer must stay small too: shaping and encoding it run there.
    cap_bytes = min(response_cap_bytes, LOOP_ANSWER_BYTES) if on_loop else response_cap_bytes
    try:
        answer = _attempt(conn, compiled, parameters, column_names, row_cap, cap_bytes,
                          statement_limits, budget_s, cpu_budget_s)
    finally:
        _leave(site)
    if answer is not None and cap_bytes < response_cap_bytes and answer[1] and (
            len(answer[0]) < row_cap):
        answer = None  # cut at the loop's cap, not the answer's: made in a thread instead
    if answer is None and on_loop:
        _loop_gave_up(compiled.sql, time.perf_counter() - started)
    return answer


def may_try_on_loop(key: str) -> bool:
    """Whether other work known by `key` (a write, say) may be tried on the loop: the same
    backoff and the same share of the loop as statements (`LOOP_WASTE_S`)."""
    return _loop_may_try(key)


def gave_up_on_loop(key: str, spent_s: float) -> None:
    """Record that an attempt known by `key` gave up on the loop after `spent_s`: it is
    not tried there for `LOOP_BACKOFF_S`, and the time counts towards `LOOP_WASTE_S`."""
    _loop_gave_up(key, spent_s)


def reset_loop_state() -> None:
    """Forget which statements left the loop and what it lost this second."""
    with _off_loop_lock:
        _off_loop.clear()
        _waste[:] = [time.monotonic(), 0.0]


def _loop_may_try(sql: str) -> bool:
    with _off_loop_lock:
        now = time.monotonic()
        if now - _waste[0] >= LOOP_WINDOW_S:
            _waste[:] = [now, 0.0]
        return sql not in _off_loop and _waste[1] <= LOOP_WASTE_S


def _loop_gave_up(sql: str, spent_s: float) -> None:
    with _off_loop_lock:
        _off_loop[sql] = True
        _waste[1] += spent_s


def _attempt(conn: sqlite3.Connection, compiled: CompiledQuery, parameters: Sequence[Any],
             column_names: Sequence[str], row_cap: int, response_cap_bytes: int,
             statement_limits: Mapping[int, int], budget_s: float,
             cpu_budget_s: float | None) -> tuple[list[tuple[Any, ...]], bool] | None:
    saved = [(limit, conn.setlimit(limit, value))
             for limit, value in _inline_limits(statement_limits)]
    conn.set_progress_handler(TimeBudget(budget_s, cpu_budget_s), CHECK_EVERY)
    try:
        with authorizing(conn, _authorizer(compiled)):
            cursor = conn.execute(compiled.sql, tuple(parameters))
            try:
                answer = fetch_capped(cursor, column_names, row_cap, response_cap_bytes)
            finally:
                cursor.close()
    except (sqlite3.Error, MemoryError, OverflowError, ValueError):
        return None
    finally:
        conn.set_progress_handler(None, 0)
        for limit, value in saved:
            conn.setlimit(limit, value)
    if answer[0] != "ok":
        return None
    return answer[1], answer[2]


def _inline_limits(statement_limits: Mapping[int, int]) -> list[tuple[int, int]]:
    """SQLite's limits for an attempt here: the statement's, with values capped at
    `VALUE_CAP_BYTES`."""
    return [*((limit, value) for limit, value in statement_limits.items()
              if limit != sqlite3.SQLITE_LIMIT_LENGTH),
            (sqlite3.SQLITE_LIMIT_LENGTH, VALUE_CAP_BYTES)]


# The authorizer of each statement tried here, by SQL text, with what it was built from.
_authorizers: dict[str, tuple[frozenset[str], frozenset[str], Callable[..., int]]] = {}
_AUTHORIZERS_KEPT = 1024


def _authorizer(compiled: CompiledQuery) -> Callable[..., int]:
    """`read_only_authorizer(compiled)` that also refuses every function outside
    `INLINE_FUNCTIONS` (and remembers the statement in `_refused`): built once per
    statement, since a call mostly finds its statement prepared and asks it nothing."""
    found = _authorizers.get(compiled.sql)
    if found is not None and found[0] == compiled.tables and found[1] == compiled.ctes:
        return found[2]
    authorize = _inline_authorizer(read_only_authorizer(compiled), compiled.sql)
    if len(_authorizers) >= _AUTHORIZERS_KEPT:
        _authorizers.clear()
    _authorizers[compiled.sql] = (compiled.tables, compiled.ctes, authorize)
    return authorize


def _inline_authorizer(base: Callable[..., int], sql: str) -> Callable[..., int]:
    def authorize(action: int, arg1: str | None, arg2: str | None, database: str | None,
                  source: str | None) -> int:
        if action == _FUNCTION and (arg2 or "").lower() not in INLINE_FUNCTIONS:
            with _refused_lock:
                _refused[sql] = True
            return sqlite3.SQLITE_DENY
        return base(action, arg1, arg2, database, source)

    return authorize


def _enter(site: str) -> bool:
    with _running_lock:
        if _running[site] >= PER_SITE:
            return False
        _running[site] += 1
        return True


def _leave(site: str) -> None:
    with _running_lock:
        _running[site] -= 1
        if _running[site] <= 0:
            del _running[site]
