"""Which calls the event loop answers itself, and which it hands to a worker thread.

A cheap Database Function statement on what the memos already hold is answered on the
loop (no thread hop), and so is a Mutation's write while the write lock is free; a first
call (memos empty), large params, a write that would wait for the lock or runs past the
loop's budget, a FaaS call and a statement past the loop's budget are finished in a
thread, with the same answer."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from basedb.core.memo import Memo, NotBuilt, memos_only, require_builds
from basedb.platform import LocalPlatform
from basedb.platform.domain import invoke as invoke_module
from basedb.platform.domain.caches import DomainCaches
from basedb.platform.domain.invoke import (
    LOOP_PARAMS_CHARS,
    InvokeCall,
    Pending,
    start_on_loop,
)
from basedb.platform.domain.runtimes import sql_inline
from basedb.platform.storage import store as store_module
from basedb.platform.storage.budget import TimeBudget
from basedb.platform.storage.physical import table_name
from basedb.platform.storage.read_only import read_only_pool
from basedb.platform.web.routes import functions as function_routes
from basedb.protocol import ApiFailure, Code
from tests.platform.conftest import Api
from tests.platform.functions_support import (  # noqa: F401 - fresh_loop_budget: a fixture
    TaskSite,
    fresh_loop_budget,
    released_site,
)

pytestmark = pytest.mark.usefixtures("fresh_loop_budget")


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


def call_of(platform: LocalPlatform, site: TaskSite, function_id: str, params: dict[str, Any],
            caches: DomainCaches | None = None) -> InvokeCall:
    context = platform.app.state.context
    owner = _owner(platform)
    return InvokeCall(context.store, caches or context.caches, owner, site.app_token,
                      function_id, params, "prod", False, False, "LOGID", context.faas)


def _owner(platform: LocalPlatform) -> Any:
    from basedb.platform.domain import identity

    return identity.authenticate(platform.store.connection(),
                                 f"Bearer {platform.owner_token}")


OPEN = {"status": "Open"}


def chars(params: dict[str, Any]) -> int:
    return len(json.dumps({"params": params}))


def test_a_warm_cheap_call_is_answered_on_the_loop(site: TaskSite,
                                                   platform: LocalPlatform) -> None:
    over_http = site.invoke("listTasks", {"status": "Open"})
    answer = start_on_loop(call_of(platform, site, "listTasks", {"status": "Open"}),
                           chars({"status": "Open"}))
    assert not isinstance(answer, Pending)
    assert answer == over_http


def test_the_route_answers_a_warm_cheap_call_without_a_thread(
        site: TaskSite, monkeypatch: pytest.MonkeyPatch) -> None:
    first = site.invoke("listTasks", {"status": "Open"})

    async def no_threads(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the call went to a worker thread")

    monkeypatch.setattr(function_routes, "run_in_threadpool", no_threads)
    assert site.invoke("listTasks", {"status": "Open"}) == first


def test_what_the_memos_do_not_hold_is_built_in_a_thread(site: TaskSite,
                                                         platform: LocalPlatform) -> None:
    expected = site.invoke("listTasks", {"status": "Done"})
    cold = call_of(platform, site, "listTasks", {"status": "Done"}, caches=DomainCaches())
    answer = start_on_loop(cold, chars({"status": "Done"}))
    assert isinstance(answer, Pending)
    assert answer.finish() == expected
    # Built now: the next call with the same memos stays on the loop.
    assert start_on_loop(cold, chars({"status": "Done"})) == expected


def test_large_params_are_checked_in_a_thread(site: TaskSite, platform: LocalPlatform) -> None:
    site.invoke("listTasks", {"status": "Open"})
    call = call_of(platform, site, "listTasks", {"status": "Open"})
    assert isinstance(start_on_loop(call, LOOP_PARAMS_CHARS + 1), Pending)


def test_a_write_is_made_on_the_loop_when_the_lock_is_free(site: TaskSite,
                                                           platform: LocalPlatform) -> None:
    site.invoke("createTask", {"title": "warm-up", "status": "Open"})
    params = {"title": "Written on the loop", "status": "Open"}
    answer = start_on_loop(call_of(platform, site, "createTask", params), chars(params))
    assert not isinstance(answer, Pending)
    assert answer["affected"] == 1
    [record_id] = answer["recordIds"]
    assert site.records(site.tasks_table)[record_id]["Title"] == "Written on the loop"


@contextmanager
def write_lock_held(platform: LocalPlatform) -> Iterator[sqlite3.Connection]:
    """Another connection holding the platform's write lock (as a writer mid-transaction
    in another thread or process does)."""
    other = sqlite3.connect(platform.store.path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield other
    finally:
        if other.in_transaction:
            other.execute("ROLLBACK")
        other.close()


def test_a_write_waits_for_the_lock_only_in_a_thread(site: TaskSite,
                                                     platform: LocalPlatform) -> None:
    site.invoke("createTask", {"title": "warm-up", "status": "Open"})
    before = len(site.records(site.tasks_table))
    params = {"title": "Written off the loop", "status": "Open"}
    with write_lock_held(platform):
        # Not waited for on the loop (see test_store_identity: busy timeout 0).
        answer = start_on_loop(call_of(platform, site, "createTask", params), chars(params))
        assert isinstance(answer, Pending)
    assert len(site.records(site.tasks_table)) == before
    written = answer.finish()
    [record_id] = written["recordIds"]
    assert site.records(site.tasks_table)[record_id]["Title"] == "Written off the loop"


def test_a_write_past_the_loop_budget_is_rolled_back_and_made_in_a_thread(
        site: TaskSite, platform: LocalPlatform, monkeypatch: pytest.MonkeyPatch) -> None:
    site.invoke("createTask", {"title": "warm-up", "status": "Open"})
    before = len(site.records(site.tasks_table))
    monkeypatch.setattr(invoke_module, "LOOP_WRITE_BUDGET_S", 0.0)
    monkeypatch.setattr(store_module, "CHECK_EVERY", 1)
    params = {"title": "Too slow for the loop", "status": "Open"}
    call = call_of(platform, site, "createTask", params)
    answer = start_on_loop(call, chars(params))
    assert isinstance(answer, Pending)
    assert len(site.records(site.tasks_table)) == before  # rolled back: nothing half-done
    assert answer.finish()["affected"] == 1
    assert len(site.records(site.tasks_table)) == before + 1
    # It stays off the loop until its backoff ends, whatever the budget.
    monkeypatch.setattr(invoke_module, "LOOP_WRITE_BUDGET_S", 1.0)
    monkeypatch.setattr(store_module, "CHECK_EVERY", 500)
    assert isinstance(start_on_loop(call, chars(params)), Pending)
    sql_inline.reset_loop_state()
    assert not isinstance(start_on_loop(call, chars(params)), Pending)


def test_a_refused_write_on_the_loop_changes_nothing(site: TaskSite,
                                                     platform: LocalPlatform) -> None:
    site.invoke("createTask", {"title": "warm-up", "status": "Open"})
    before = site.records(site.tasks_table)
    # Refused inside the write transaction: the linked record does not exist.
    dangling = {"title": "Dangling", "status": "Open", "projectId": "recDoesNotExist1"}
    with pytest.raises(ApiFailure) as refused:
        start_on_loop(call_of(platform, site, "createTask", dangling), chars(dangling))
    assert refused.value.code == Code.PARAMETER_INVALID
    assert "recDoesNotExist1" in refused.value.msg
    assert site.records(site.tasks_table) == before
    # The loop's connection is left without a transaction: the next write goes through.
    params = {"title": "After the refusal", "status": "Open"}
    assert start_on_loop(call_of(platform, site, "createTask", params),
                         chars(params))["affected"] == 1


def test_a_refusal_is_answered_on_the_loop(site: TaskSite, platform: LocalPlatform) -> None:
    site.invoke("listTasks", {"status": "Open"})
    with pytest.raises(ApiFailure) as refused:
        start_on_loop(call_of(platform, site, "listTasks", {"status": "Nope"}),
                      chars({"status": "Nope"}))
    assert refused.value.code == Code.PARAMETER_INVALID


def test_a_statement_past_the_loop_budget_leaves_the_loop_for_a_while(
        site: TaskSite, platform: LocalPlatform, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = site.invoke("listTasks", {"status": "Open"})
    monkeypatch.setattr(sql_inline, "LOOP_BUDGET_S", 0.0)
    monkeypatch.setattr(sql_inline, "CHECK_EVERY", 1)
    call = call_of(platform, site, "listTasks", {"status": "Open"})
    answer = start_on_loop(call, chars({"status": "Open"}))
    assert isinstance(answer, Pending)
    assert answer.finish() == expected  # in a thread, its full budget: answered
    # With the budget back, the statement still stays off the loop until its backoff ends.
    monkeypatch.setattr(sql_inline, "LOOP_BUDGET_S", 0.002)
    monkeypatch.setattr(sql_inline, "CHECK_EVERY", 500)
    assert isinstance(start_on_loop(call, chars({"status": "Open"})), Pending)
    sql_inline.reset_loop_state()
    assert start_on_loop(call, chars({"status": "Open"})) == expected


def test_attempts_that_gave_up_cost_the_loop_a_bounded_share(
        site: TaskSite, platform: LocalPlatform, monkeypatch: pytest.MonkeyPatch) -> None:
    """Statements of many functions that each give up once cannot keep the loop busy:
    past LOOP_WASTE_S of lost time in a second, nothing more is tried there."""
    site.invoke("listTasks", {"status": "Open"})
    site.invoke("tasksByStatusText", {"status": "Open"})
    monkeypatch.setattr(sql_inline, "LOOP_WASTE_S", 0.0)
    sql_inline.reset_loop_state()
    # Nothing wasted yet: the first attempt is made and succeeds.
    by_status = call_of(platform, site, "tasksByStatusText", OPEN)
    assert not isinstance(start_on_loop(by_status, chars(OPEN)), Pending)
    monkeypatch.setattr(sql_inline, "LOOP_BUDGET_S", 0.0)
    monkeypatch.setattr(sql_inline, "CHECK_EVERY", 1)
    assert isinstance(start_on_loop(by_status, chars(OPEN)), Pending)
    monkeypatch.setattr(sql_inline, "LOOP_BUDGET_S", 1.0)
    monkeypatch.setattr(sql_inline, "CHECK_EVERY", 500)
    # The waste allowance is spent: another function's statement is not tried either.
    assert isinstance(start_on_loop(call_of(platform, site, "listTasks", {"status": "Open"}),
                                    chars({"status": "Open"})), Pending)


def test_the_loop_attempt_leaves_the_connection_as_it_was(site: TaskSite,
                                                          platform: LocalPlatform) -> None:
    site.invoke("tasksByStatusText", {"status": "Open"})
    start_on_loop(call_of(platform, site, "tasksByStatusText", OPEN), chars(OPEN))

    with read_only_pool(platform.store).transaction() as conn:
        tasks = table_name(site.tasks_table)
        assert conn.execute(f"SELECT instr('ab', 'b') FROM {tasks} LIMIT 1").fetchone() == (2,)


def test_memos_only_refuses_to_build() -> None:
    memo: Memo[str, int] = Memo(4)
    assert memo.get_or_build("a", lambda: 1) == 1
    with memos_only():
        assert memo.get_or_build("a", lambda: 2) == 1
        with pytest.raises(NotBuilt):
            memo.get_or_build("b", lambda: 3)
        with pytest.raises(NotBuilt):
            require_builds()
    assert memo.get_or_build("b", lambda: 3) == 3
    require_builds()


def test_the_loop_budget_counts_the_statements_cpu_time_not_the_machines_business() -> None:
    """A server the machine takes the CPU away from (here: a sleeping thread) does not
    make its statements look expensive; time away from the disk still counts."""
    on_loop = TimeBudget(budget_s=1.0, cpu_budget_s=0.01)
    wall_only = TimeBudget(budget_s=0.01)
    time.sleep(0.05)
    assert not on_loop()
    assert wall_only()
    spent = TimeBudget(budget_s=1.0, cpu_budget_s=0.0)
    started = time.thread_time()
    while time.thread_time() == started:
        pass
    assert spent() and spent.spent
