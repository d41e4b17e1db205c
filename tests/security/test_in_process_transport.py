"""The embedded platform through the in-process transport, which runs the app on each
calling thread's own event loop: a Mutation that blocks holds up only its caller, a
huge body is refused without harm, a client shared by many threads loses no write, and
a client closed mid-call gives its caller an error and leaves nothing running.

Nothing here depends on a timing window: events say when something has happened, and
timeouts are only guards against a hang.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from basedb.client.client import EMBEDDED_BASE_URL, Client
from basedb.client.transport import InProcessTransport
from basedb.core.errors import ApiError, ConnectionLost
from basedb.platform import LocalPlatform
from basedb.platform.domain import invoke as invoke_module
from basedb.platform.storage import physical
from tests.platform.conftest import Api
from tests.platform.functions_support import (  # noqa: F401 - fresh_loop_budget: a fixture
    TaskSite,
    fresh_loop_budget,
    released_site,
)

GUARD_S = 60.0  # only a guard against a hang

pytestmark = pytest.mark.usefixtures("fresh_loop_budget")


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


@pytest.fixture
def embedded(platform: LocalPlatform) -> Iterator[Client]:
    with Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                transport=InProcessTransport(platform.app), timeout=GUARD_S) as client:
        yield client


def invoke(client: Client, site: TaskSite, title: str) -> dict[str, Any]:
    answer = client.request("POST", f"/sites/{site.app_token}/functions/createTask/invoke",
                            json={"params": {"title": title, "status": "Open"}})
    data: dict[str, Any] = answer["data"]
    return data


def titles(platform: LocalPlatform, site: TaskSite) -> list[str]:
    table = physical.table_name(site.tasks_table)
    with platform.store.read() as conn:
        field_id = conn.execute("SELECT field_id FROM fields WHERE table_id = ? AND name = ?",
                                (site.tasks_table, "Title")).fetchone()[0]
        return [row[0] for row in conn.execute(
            f"SELECT {physical.column_name(field_id)} FROM {table}")]


def spy_on_worker_writes(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """An event set once a Mutation's write has gone to a worker thread."""
    waiting = threading.Event()
    real = invoke_module._run_mutation

    def run_mutation(*args: Any, **kwargs: Any) -> Any:
        waiting.set()
        return real(*args, **kwargs)

    monkeypatch.setattr(invoke_module, "_run_mutation", run_mutation)
    return waiting


def test_a_blocked_mutation_holds_up_only_its_caller(
        site: TaskSite, platform: LocalPlatform, embedded: Client,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Another connection holds the write lock: a Mutation called from one thread waits
    for it in a worker thread, while another thread's calls through the same client are
    answered; the write lands once, when the lock is released."""
    invoke(embedded, site, "warm-up")
    waiting = spy_on_worker_writes(monkeypatch)
    answers: list[Any] = []
    holder = sqlite3.connect(platform.store.path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        writer = threading.Thread(target=lambda: answers.append(invoke(embedded, site,
                                                                       "after the lock")))
        writer.start()
        assert waiting.wait(GUARD_S)
        for _ in range(3):  # reads from this thread go on meanwhile, on its own loop
            rows = embedded.request("POST", f"/sites/{site.app_token}/functions/listTasks/"
                                    "invoke", json={"params": {"status": "Open"}})
            assert rows["code"] == 0
        assert writer.is_alive() and not answers
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    writer.join(GUARD_S)
    [written] = answers
    assert written["affected"] == 1
    assert titles(platform, site).count("after the lock") == 1


def test_a_huge_body_is_refused_and_the_client_goes_on(site: TaskSite, platform: LocalPlatform,
                                                      embedded: Client) -> None:
    huge = {"params": {"title": "x" * (5 * 1024 * 1024), "status": "Open"}}  # limit: 4 MiB
    with pytest.raises(ApiError) as refused:
        embedded.request("POST", f"/sites/{site.app_token}/functions/createTask/invoke",
                         json=huge)
    assert refused.value.detail.get("http_status") == 413
    assert "x" * 100 not in titles(platform, site)
    assert invoke(embedded, site, "after the huge body")["affected"] == 1


def test_one_client_in_many_threads_loses_no_write(site: TaskSite, platform: LocalPlatform,
                                                  embedded: Client) -> None:
    before = len(titles(platform, site))
    errors: list[BaseException] = []
    threads_n, calls_n = 6, 20

    def calls(index: int) -> None:
        try:
            for n in range(calls_n):
                invoke(embedded, site, f"t{index}-{n}")
            path = f"/bases/{site.base_token}/tables/{site.tasks_table}/records/batch_create"
            embedded.request("POST", path, json={"fields": ["Title", "Status"], "rows": [
                [f"b{index}-{k}", "Open"] for k in range(10)]})
        except BaseException as exc:  # reported in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=calls, args=(i,)) for i in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(GUARD_S)
    assert not errors, errors
    written = titles(platform, site)
    assert len(written) == before + threads_n * (calls_n + 10)
    assert len(set(written)) == len(written)


def test_a_client_closed_mid_call(site: TaskSite, platform: LocalPlatform,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The client is closed (from another thread) while a Mutation waits for the write
    lock: its caller gets a ConnectionLost that says the outcome is unknown, the close
    returns, the write it had started lands once (not lost, not twice), and no thread
    the client started is left running."""
    before_threads = set(threading.enumerate())
    client = Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                    transport=InProcessTransport(platform.app), timeout=GUARD_S)
    invoke(client, site, "warm-up")
    waiting = spy_on_worker_writes(monkeypatch)
    failures: list[BaseException] = []

    def call() -> None:
        try:
            invoke(client, site, "cut off")
        except BaseException as exc:
            failures.append(exc)

    holder = sqlite3.connect(platform.store.path, isolation_level=None, timeout=GUARD_S)
    try:
        holder.execute("BEGIN IMMEDIATE")
        caller = threading.Thread(target=call)
        caller.start()
        assert waiting.wait(GUARD_S)
        closer = threading.Thread(target=client.close)
        closer.start()
        caller.join(GUARD_S)
        assert not caller.is_alive()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    closer.join(GUARD_S)
    assert not closer.is_alive()
    [failure] = failures
    assert isinstance(failure, ConnectionLost)
    assert "outcome of this write is unknown" in str(failure.hint)
    for thread in set(threading.enumerate()) - before_threads:
        if thread.name.startswith("AnyIO worker"):
            thread.join(GUARD_S)
            assert not thread.is_alive()
    assert titles(platform, site).count("cut off") == 1


def test_a_process_that_never_closes_its_client_exits(tmp_path: Path) -> None:
    """The caller loops' worker threads take the main thread's daemon flag: they must not
    keep the interpreter waiting at exit when the client was never closed."""
    script = textwrap.dedent(f"""
        from pathlib import Path
        from basedb.client.client import EMBEDDED_BASE_URL, Client
        from basedb.client.transport import InProcessTransport
        from basedb.platform import open_platform

        platform = open_platform(Path({str(tmp_path / "data")!r}))
        client = Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                        transport=InProcessTransport(platform.app))
        base = client.request("POST", "/bases", json={{"name": "b"}})["data"]["base_token"]
        client.request("GET", f"/bases/{{base}}/tables")  # a sync handler: a worker thread
        print("done", flush=True)
    """)
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=GUARD_S, check=False)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == "done"
