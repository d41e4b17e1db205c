"""What one Database Function may cost (issue finding 3): time, memory, the size of its
answer and its share of the machine, whatever its SQL does in a single statement.

Every attack here passes `basedb check` and deploys: the bounds are the runtime's.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
from cachetools import TTLCache

from basedb.core.memo import memos_only
from basedb.platform import LocalPlatform
from basedb.platform.domain.revision import catalog_revision
from basedb.platform.domain.runtimes import sql as sql_runtime
from basedb.platform.domain.runtimes import sql_inline
from basedb.platform.domain.runtimes.sql_pool import QueryPool
from basedb.platform.domain.runtimes.sql_worker import WorkerSettings
from basedb.platform.storage import physical
from basedb.platform.storage.read_only import read_only_pool
from basedb.protocol import ApiFailure, Code
from basedb.sql.sqlite.query import CompiledQuery
from tests.platform.conftest import Api
from tests.platform.functions_support import (
    DATABASE_FUNCTIONS,
    TaskSite,
    build_site,
    deploy,
    save_drafts,
    sql_function,
)

MIB = 1024 * 1024


def _straight_line(calls: int) -> str:
    """`calls` quadratic instr() calls one after another: no loop for an interrupt to
    land in (each about 0.4 s)."""
    terms = [f"strpos(repeat('a', {262_143 - i}) || 'b', "
             f"repeat('a', 131071) || 'b')" for i in range(calls)]
    return "SELECT " + " + ".join(terms) + ' AS n FROM "Tasks" LIMIT 1'


ATTACKS = [
    sql_function("straightLine", _straight_line(40)),
    sql_function("doubling", 'WITH RECURSIVE r(n, s) AS (SELECT 1, \'x\' UNION ALL SELECT '
                 'n + 1, s || s FROM r WHERE n < 26) SELECT max(length(s)) AS len FROM r, '
                 '"Tasks"'),
    sql_function("hugeRepeat", 'SELECT length(repeat(\'x\', 50000000)) AS n '
                 'FROM "Tasks"'),
    sql_function("quadraticReplace", 'WITH RECURSIVE r(n, s) AS (SELECT 1, repeat(\'a\', '
                 '200000) UNION ALL SELECT n + 1, replace(s, repeat(\'a\', 100000) '
                 '|| \'b\', \'c\') FROM r WHERE n < 1000) SELECT count(*) AS n FROM r, '
                 '"Tasks"'),
    sql_function("bigAnswer", 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r '
                 'WHERE n < 2000) SELECT n, repeat(\'x\', 10000) AS pad FROM r, '
                 '"Tasks"'),
    sql_function("cheap", 'SELECT count(*) AS n FROM "Tasks"'),
]


@pytest.fixture
def site(api: Api) -> TaskSite:
    found = build_site(api)
    save_drafts(found, database_functions=[*DATABASE_FUNCTIONS, *ATTACKS])
    deploy(found)
    return found


def test_a_statement_that_ignores_interrupts_still_stops_at_the_deadline(
        site: TaskSite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sql_runtime, "TIME_LIMIT_S", 1.0)
    monkeypatch.setattr(sql_runtime, "SLOW_AFTER_S", 1.0)
    msg = site.invoke_fails("straightLine", {}, code=Code.EXECUTION_FAILED)
    assert "ran longer than 1 s" in msg and "Executed: no." in msg
    assert site.invoke("cheap", {})["rows"] == [{"n": 4}]  # the workers carry on


def test_no_value_grows_past_the_cap(site: TaskSite) -> None:
    msg = site.invoke_fails("doubling", {}, code=Code.EXECUTION_FAILED)
    assert "larger than 1 MiB" in msg and "nothing was changed" in msg
    # repeat() past a million characters is an error, as PostgreSQL's is past 1 GB.
    site.invoke_fails("hugeRepeat", {}, code=Code.EXECUTION_FAILED)


def test_quadratic_work_on_built_up_strings_stops_at_the_deadline(
        site: TaskSite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sql_runtime, "TIME_LIMIT_S", 1.0)
    monkeypatch.setattr(sql_runtime, "SLOW_AFTER_S", 1.0)
    msg = site.invoke_fails("quadraticReplace", {}, code=Code.EXECUTION_FAILED)
    assert "ran longer than 1 s" in msg


def test_the_answer_is_capped(site: TaskSite, monkeypatch: pytest.MonkeyPatch) -> None:
    response = site.api.call("POST", site.url("/bigAnswer/invoke"), json={"params": {}})
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["truncated"] is True and 0 < data["rowCount"] < 8000
    assert len(response.text.encode()) < sql_runtime.RESPONSE_CAP_BYTES + 256 * 1024
    monkeypatch.setattr(sql_runtime, "RESPONSE_CAP_BYTES", 5000)
    msg = site.invoke_fails("bigAnswer", {}, code=Code.EXECUTION_FAILED)
    assert "One row of the answer is larger than 5000 bytes" in msg


def test_slow_queries_of_one_site_get_a_bounded_share(
        site: TaskSite, api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten slow calls at once: never more than the site's share runs, the rest are told
    to retry later, and another site's cheap call is answered meanwhile."""
    monkeypatch.setattr(sql_runtime, "TIME_LIMIT_S", 1.5)
    monkeypatch.setattr(sql_runtime, "SLOW_AFTER_S", 0.3)
    monkeypatch.setattr(sql_runtime.QUERY_POOL, "wait_for_worker_s", 0.5)
    other = build_site(api)
    save_drafts(other, database_functions=[*DATABASE_FUNCTIONS, ATTACKS[-1]])
    deploy(other)
    codes: list[int] = []
    other_answered: list[bool] = []
    lock = threading.Lock()

    def slow() -> None:
        response = site.api.call("POST", site.url("/straightLine/invoke"),
                                 json={"params": {}})
        with lock:
            codes.append(response.json()["code"])

    threads = [threading.Thread(target=slow) for _ in range(10)]
    for thread in threads:
        thread.start()
    most = 0
    while any(thread.is_alive() for thread in threads):
        most = max(most, sql_runtime.QUERY_POOL.slow_queries().get(site.app_token, 0))
        if not other_answered:
            other_answered.append(other.invoke("cheap", {})["rows"] == [{"n": 4}])
        time.sleep(0.02)
    assert other_answered == [True]
    assert len(codes) == 10 and set(codes) <= {Code.EXECUTION_FAILED, Code.RATE_LIMITED}
    assert 0 < most <= sql_runtime.SLOW_PER_SITE
    assert codes.count(Code.RATE_LIMITED) >= 10 - 2 * sql_runtime.SLOW_PER_SITE
    busy = site.api.call("POST", site.url("/straightLine/invoke"), json={"params": {}})
    assert busy.status_code in (422, 429)


def test_running_out_of_memory_or_temporary_space_is_an_answer(
        site: TaskSite, platform: LocalPlatform) -> None:
    """A worker allowed little memory and temporary space: SQLite's out-of-memory and
    disk-full errors come back as 800004005 naming the limit, never a 500."""
    pool = QueryPool(WorkerSettings(memory_bytes=400 * MIB, temp_file_bytes=8 * MIB, nice=0,
                                    statement_limits=sql_runtime.STATEMENT_LIMITS))
    tasks = physical.table_name(site.tasks_table)
    many = ", ".join(f"bdb_repeat('m', {1_000_000 - i}) AS c{i}" for i in range(600))
    sort = ("WITH RECURSIVE r(n, s) AS (SELECT 1, bdb_repeat('x', 500000) UNION ALL "
            "SELECT n + 1, s FROM r WHERE n < 200) SELECT n FROM r ORDER BY s || n")
    with platform.store.read() as conn:
        revision = catalog_revision(conn)
    try:
        for sql, expected in ((f"SELECT {many} FROM {tasks}", "more memory"),
                              (sort, "more temporary disk space")):
            compiled = CompiledQuery(sql=sql, slots=(), columns=(), tables=frozenset({tasks}))
            with pytest.raises(ApiFailure) as stopped:
                # A deadline far out: the memory and disk limits must be what stops
                # these, however slow the machine.
                sql_runtime.run_query(Path(platform.store.path), compiled, [],
                                      catalog_revision=revision, user_id="ou_x",
                                      function_id="hog", log_id="L1", pool=pool,
                                      limits=sql_runtime.QueryLimits(time_limit_s=600))
            assert stopped.value.code == Code.EXECUTION_FAILED, stopped.value.msg
            assert expected in stopped.value.msg
    finally:
        pool.close()



def test_only_cheap_statements_run_in_the_server_process(
        site: TaskSite, platform: LocalPlatform) -> None:
    """The in-process attempt gives up (and the statement goes to a worker) on a function
    whose one call may be slow, on a value past its cap, and past its budget."""
    tasks = physical.table_name(site.tasks_table)
    limits = sql_runtime.current_limits()
    pool = read_only_pool(platform.store)

    def inline(sql: str) -> tuple[list[tuple[object, ...]], bool] | None:
        compiled = CompiledQuery(sql=sql, slots=(), columns=(), tables=frozenset({tasks}))
        with pool.transaction() as conn:
            return sql_inline.run_inline(
                conn, compiled, [], site=site.app_token, column_names=["n"],
                row_cap=limits.row_cap, response_cap_bytes=limits.response_cap_bytes,
                statement_limits=sql_runtime.STATEMENT_LIMITS)

    assert inline(f"SELECT count(*) AS n FROM {tasks}") == ([(4,)], False)
    assert inline(f"SELECT instr('ab', 'b') AS n FROM {tasks}") is None
    assert inline(f"SELECT count(*) AS n FROM {tasks} WHERE 'a' GLOB 'a*'") is None
    assert inline("WITH RECURSIVE r(n, s) AS (SELECT 1, 'x' UNION ALL SELECT n + 1, s || s "
                  f"FROM r WHERE n < 20) SELECT max(length(s)) AS n FROM r, {tasks}") is None
    assert inline("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                  f"SELECT count(*) AS n FROM r, {tasks}") is None
    # The connection is left as it was: no authorizer, limits or progress handler.
    with pool.transaction() as conn:
        assert conn.execute("SELECT instr('ab', 'b')").fetchone() == (2,)
        assert conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) > sql_inline.VALUE_CAP_BYTES


def test_an_endless_statement_costs_the_event_loop_one_budget(
        site: TaskSite, monkeypatch: pytest.MonkeyPatch) -> None:
    """A site author's statement that never ends gives up on the loop once, within its
    2 ms budget, and then goes straight to a worker: calling it again and again does not
    hold up the loop, which keeps answering other calls."""
    monkeypatch.setattr(sql_runtime, "TIME_LIMIT_S", 0.5)
    monkeypatch.setattr(sql_runtime, "SLOW_AFTER_S", 0.5)
    monkeypatch.setattr(sql_inline, "_off_loop", TTLCache(maxsize=64, ttl=3600))
    monkeypatch.setattr(sql_inline, "LOOP_WINDOW_S", 3600.0)
    sql_inline.reset_loop_state()
    gave_up: list[str] = []
    real = sql_inline._loop_gave_up

    def spy(sql: str, spent_s: float) -> None:
        gave_up.append(sql)
        real(sql, spent_s)

    monkeypatch.setattr(sql_inline, "_loop_gave_up", spy)
    site.invoke("cheap", {})  # its plan is in memory from now on
    for _ in range(3):
        site.invoke_fails("countForever", {}, code=Code.EXECUTION_FAILED)
        assert site.invoke("cheap", {})["rows"] == [{"n": 4}]
    assert len(gave_up) == 1
    sql_inline.reset_loop_state()


def test_a_refused_function_gives_up_on_the_event_loop_too(
        site: TaskSite, platform: LocalPlatform) -> None:
    """On the loop, where nothing may be built, a statement calling a function that is
    not cheap is still refused there (and remembered), not mistaken for a memo miss."""
    tasks = physical.table_name(site.tasks_table)
    limits = sql_runtime.current_limits()
    compiled = CompiledQuery(sql=f"SELECT instr('ab', 'b') AS n FROM {tasks} LIMIT 1",
                             slots=(), columns=(), tables=frozenset({tasks}))
    sql_inline.reset_loop_state()
    with read_only_pool(platform.store).transaction() as conn, memos_only():
        assert sql_inline.run_inline(
            conn, compiled, [], site=site.app_token, column_names=["n"],
            row_cap=limits.row_cap, response_cap_bytes=limits.response_cap_bytes,
            statement_limits=sql_runtime.STATEMENT_LIMITS, on_loop=True) is None
    assert compiled.sql in sql_inline._refused
    sql_inline.reset_loop_state()
