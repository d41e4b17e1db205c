"""Mutation writes made on the server's event loop: whatever other writers hold, and
whatever a site's Mutation costs, the loop never waits and no write is lost.

A Mutation's write is tried on the loop only when the write lock is free at once and
its statements finish within a small budget (`basedb.platform.domain.invoke`); else it
is rolled back and made in a worker thread, which waits for the lock as any write does.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

import pytest

from basedb.platform import LocalPlatform
from basedb.platform.domain import invoke as invoke_module
from basedb.platform.domain.runtimes import sql_inline
from basedb.platform.storage import physical
from basedb.platform.storage import store as store_module
from tests.platform.conftest import Api
from tests.platform.functions_support import (  # noqa: F401 - fresh_loop_budget: a fixture
    TaskSite,
    fresh_loop_budget,
    released_site,
)

GUARD_S = 60.0  # only a guard against a hang: nothing here depends on a timing window


pytestmark = pytest.mark.usefixtures("fresh_loop_budget")


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


def task(title: str) -> dict[str, Any]:
    return {"title": title, "status": "Open"}


def test_a_held_write_lock_does_not_stall_the_loop(site: TaskSite, platform: LocalPlatform,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Another connection holds the write lock (a long import, another process): a
    Mutation called meanwhile waits for it in a worker thread, the loop keeps answering,
    and the write lands once the lock is released."""
    site.invoke("createTask", task("warm-up"))
    expected = site.invoke("listTasks", {"status": "Open"})
    waiting = threading.Event()
    real_run_mutation = invoke_module._run_mutation

    def run_mutation(*args: Any, **kwargs: Any) -> Any:
        waiting.set()  # the write went to a worker thread, which now waits for the lock
        return real_run_mutation(*args, **kwargs)

    monkeypatch.setattr(invoke_module, "_run_mutation", run_mutation)
    answers: list[Any] = []
    writer = threading.Thread(target=lambda: answers.append(
        site.invoke("createTask", task("Written after the lock"))))
    holder = sqlite3.connect(platform.store.path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        writer.start()
        assert waiting.wait(GUARD_S)
        # The loop answers other calls while the write waits (a loop blocked on the
        # lock would answer only after the write had given up).
        assert site.invoke("listTasks", {"status": "Open"}) == expected
        assert writer.is_alive()
        assert not answers
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    writer.join(GUARD_S)
    [written] = answers
    [record_id] = written["recordIds"]
    assert site.records(site.tasks_table)[record_id]["Title"] == "Written after the lock"


def test_concurrent_writers_lose_nothing(site: TaskSite, platform: LocalPlatform) -> None:
    """Mutations from several threads (on the loop or, when the lock is taken, in
    workers), batches through the records API and a writer on its own connection: every
    record lands, once."""
    site.invoke("createTask", task("warm-up"))
    before = len(_titles(platform, site))
    errors: list[BaseException] = []
    threads_n, calls_n, batches_n = 4, 15, 5

    def mutations(index: int) -> None:
        try:
            for n in range(calls_n):
                site.invoke("createTask", task(f"m{index}-{n}"))
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    def batches() -> None:
        try:
            path = f"/bases/{site.base_token}/tables/{site.tasks_table}/records/batch_create"
            for n in range(batches_n):
                site.api.ok("POST", path, json={"fields": ["Title", "Status"], "rows": [
                    [f"b{n}-{k}", "Open"] for k in range(20)]})
        except BaseException as exc:
            errors.append(exc)

    def outside_writer() -> None:
        # Holds the lock in short bursts, as another process's writes would.
        conn = sqlite3.connect(platform.store.path, isolation_level=None, timeout=GUARD_S)
        try:
            for _ in range(20):
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("SELECT count(*) FROM platform_log").fetchone()
                conn.execute("COMMIT")
        except BaseException as exc:
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=mutations, args=(i,)) for i in range(threads_n)]
    threads += [threading.Thread(target=batches), threading.Thread(target=outside_writer)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(GUARD_S)
    assert not errors, errors
    titles = _titles(platform, site)
    expected = threads_n * calls_n + batches_n * 20
    assert len(titles) == before + expected
    assert len(set(titles)) == len(titles)  # each written once


def _titles(platform: LocalPlatform, site: TaskSite) -> list[str]:
    table = physical.table_name(site.tasks_table)
    title = next(f for f in _fields(platform, site) if f[1] == "Title")[0]
    with platform.store.read() as conn:
        return [row[0] for row in conn.execute(
            f"SELECT {physical.column_name(title)} FROM {table}")]


def _fields(platform: LocalPlatform, site: TaskSite) -> list[tuple[str, str]]:
    with platform.store.read() as conn:
        return [(row[0], row[1]) for row in conn.execute(
            "SELECT field_id, name FROM fields WHERE table_id = ?", (site.tasks_table,))]


def test_a_costly_mutation_gives_up_the_loop_once(site: TaskSite, platform: LocalPlatform,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A Mutation whose statements outrun the loop's budget is rolled back there once and
    then written straight in a worker thread: calling it again and again neither holds
    up the loop nor writes anything twice."""
    site.invoke("createTask", task("warm-up"))
    before = len(site.records(site.tasks_table))
    gave_up: list[str] = []
    real = sql_inline.gave_up_on_loop

    def spy(key: str, spent_s: float) -> None:
        gave_up.append(key)
        real(key, spent_s)

    monkeypatch.setattr(sql_inline, "gave_up_on_loop", spy)
    monkeypatch.setattr(invoke_module, "LOOP_WRITE_BUDGET_S", 0.0)
    monkeypatch.setattr(store_module, "CHECK_EVERY", 1)
    for n in range(3):
        assert site.invoke("createTask", task(f"costly-{n}"))["affected"] == 1
        assert site.invoke("listTasks", {"status": "Open"})["rows"]
    assert len(gave_up) == 1
    assert len(site.records(site.tasks_table)) == before + 3


def test_huge_params_never_write_on_the_loop(site: TaskSite, platform: LocalPlatform,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Params past LOOP_PARAMS_CHARS are validated and written in a worker thread."""
    site.invoke("createTask", task("warm-up"))
    attempts: list[int] = []
    real = store_module.Store.write_now

    def write_now(self: store_module.Store, *args: Any, **kwargs: Any) -> Any:
        attempts.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(store_module.Store, "write_now", write_now)
    title = "x" * (invoke_module.LOOP_PARAMS_CHARS + 1)
    written = site.invoke("createTask", task(title))
    assert not attempts
    assert site.records(site.tasks_table)[written["recordIds"][0]]["Title"] == title
