"""A check that analyses its queries in several processes reports exactly what a serial
check reports, in the same order, and survives a worker that fails."""

from __future__ import annotations

import json
import os
import pickle
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from basedb.check.run import check_workspace
from basedb.check.sql import rules, workers
from basedb.workspace import load_workspace
from tests.check_support import workspace_of_queries

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="workers fork (Linux only)")

# Queries with something to say: an out-of-domain enum, an unknown field, a record_id
# binding, an unused parameter, a parse error, a write, a type error, and clean ones.
QUERIES = (
    'SELECT t."Title" AS title FROM "Tasks" AS t WHERE t."Status" = $1',
    'SELECT t."Title", t."Pionts" FROM "Tasks" AS t WHERE t."Status" = $1',
    'SELECT t."Title" FROM "Tasks" AS t WHERE t.record_id = $1',
    'SELECT p."Name" FROM "Projects" AS p',
    'SELECT FROM WHERE',
    'DELETE FROM "Tasks" WHERE "Status" = $1',
    'SELECT t."Title" FROM "Tasks" AS t WHERE t."Title" + 1 = $1',
    'SELECT c."Body", count(*) AS n FROM "Comments" AS c GROUP BY c."Body" '
    'HAVING count(*) > 1 AND c."Task" = $1',
)


def _workspace(tmp_path: Path, functions: int) -> Path:
    # A distinct text per function (a comment), so no two analyses are shared.
    return workspace_of_queries(tmp_path / "ws", [f"-- {n}\n{QUERIES[n % len(QUERIES)]}\n"
                                                  for n in range(functions)])


def _report(root: Path, processes: int) -> dict[str, Any]:
    return check_workspace(load_workspace(root), processes=processes).to_dict()


def test_several_processes_report_what_one_reports(tmp_path: Path) -> None:
    root = _workspace(tmp_path, 4 * workers.MIN_QUERIES_PER_PROCESS)
    serial = _report(root, 1)
    assert serial["errors"] and serial["functionHints"]
    assert _report(root, 3) == serial
    assert _report(root, 2) == serial


def test_a_failing_worker_costs_speed_not_findings(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = _workspace(tmp_path, 2 * workers.MIN_QUERIES_PER_PROCESS)
    serial = _report(root, 1)

    class BrokenPickle:
        """The worker cannot send its answer; the parent still reads with pickle."""

        HIGHEST_PROTOCOL = pickle.HIGHEST_PROTOCOL
        loads = staticmethod(pickle.loads)

        @staticmethod
        def dumps(*args: Any, **kwargs: Any) -> bytes:
            raise RuntimeError("cannot send")

    shares: list[int] = []
    analyse_share = workers._analyse_share

    def counted(queries: Any, share: int, *args: Any) -> None:
        shares.append(share)  # in the parent, these stay; a worker's own are lost
        analyse_share(queries, share, *args)

    monkeypatch.setattr(workers, "pickle", BrokenPickle)
    monkeypatch.setattr(workers, "_analyse_share", counted)
    assert _report(root, 2) == serial
    assert shares == [0, 1]  # the parent analysed the failed worker's share itself


def test_what_workers_found_is_cached_as_a_serial_run_would_cache_it(tmp_path: Path) -> None:
    root = _workspace(tmp_path, 2 * workers.MIN_QUERIES_PER_PROCESS)
    cache_file = root / ".base-database-cli" / "cache" / "sql-analysis.json"
    serial = check_workspace(load_workspace(root), cache=True).to_dict()
    written = json.loads(cache_file.read_text(encoding="utf-8"))
    cache_file.unlink()
    assert check_workspace(load_workspace(root), cache=True, processes=2).to_dict() == serial
    assert json.loads(cache_file.read_text(encoding="utf-8")) == written
    # And a run answered from that cache reports the same again.
    assert check_workspace(load_workspace(root), cache=True, processes=2).to_dict() == serial


@pytest.mark.parametrize(("cpus", "load", "expected"), [
    (1, 0.0, 1),  # one CPU: no workers
    (2, 0.2, 2),  # an idle pair: one worker
    (2, 1.0, 2),  # busy only with this check (or its last run): still one worker
    (2, 1.5, 1),  # other work keeps half a CPU busy: stay in one process
    (2, 7.0, 1),  # a saturated machine
    (8, 0.5, 4),  # never more than MAX_PROCESSES
    (8, 5.5, 3),  # one per idle CPU, plus this one
])
def test_workers_only_on_idle_cpus(cpus: int, load: float, expected: int) -> None:
    assert rules.processes_for(cpus, load) == expected


@pytest.mark.parametrize(("cpus", "load", "running", "expected"), [
    (2, 1.5, 1, 2),  # the average still holds the last runs, but only this check runs now
    (2, 1.5, 2, 1),  # something else is running now too
    (2, 0.2, 6, 2),  # a burst this instant on a machine idle for the last minute
    (2, 7.0, 1, 2),  # the machine has just become idle
    (2, 7.0, 5, 1),  # a saturated machine
    (8, 5.5, 3, 4),  # two other tasks now: four processes (at most MAX_PROCESSES)
])
def test_workers_count_what_runs_now(cpus: int, load: float, running: int,
                                     expected: int) -> None:
    assert rules.processes_for(cpus, load, running) == expected


def test_running_tasks_are_read_from_the_kernel() -> None:
    running = rules._running()
    if Path("/proc/loadavg").is_file():
        assert running is not None and running >= 1  # this process at least
    else:
        assert running is None


def _early_report(root: Path, *, cache: bool = False) -> dict[str, Any]:
    early = rules.start_early_worker(root, cache=cache, processes=2)
    assert early is not None
    return check_workspace(load_workspace(root), cache=cache, processes=2,
                           early=early).to_dict()


def _reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_worker_started_before_loading_reports_what_one_process_reports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _workspace(tmp_path, 4 * workers.MIN_QUERIES_PER_PROCESS + 7)
    serial = _report(root, 1)
    claims: list[tuple[int, int, int]] = []
    analyse = workers.EarlyWorker.analyse

    def watched(self: workers.EarlyWorker, queries: Any, *args: Any, **kwargs: Any) -> Any:
        pid = self.pid
        found = analyse(self, queries, *args, **kwargs)
        claims.append((self._claims[0], self._claims[1], len(queries)))
        assert self.pid == 0 and _reaped(pid)
        return found

    monkeypatch.setattr(workers.EarlyWorker, "analyse", watched)
    assert _early_report(root) == serial
    front, back, count = claims[0]
    # The two processes met: the worker took the queries before the meeting point, the
    # parent those after it (a query at the meeting point may have been taken by both;
    # where it lies depends on how busy each CPU was).
    assert count == 4 * workers.MIN_QUERIES_PER_PROCESS + 7
    assert back <= front <= back + 1


def test_what_an_early_worker_found_is_cached_as_a_serial_run_caches_it(
        tmp_path: Path) -> None:
    root = _workspace(tmp_path, 2 * workers.MIN_QUERIES_PER_PROCESS)
    cache_file = root / ".base-database-cli" / "cache" / "sql-analysis.json"
    serial = check_workspace(load_workspace(root), cache=True).to_dict()
    written = json.loads(cache_file.read_text(encoding="utf-8"))
    cache_file.unlink()
    assert _early_report(root, cache=True) == serial
    assert json.loads(cache_file.read_text(encoding="utf-8")) == written
    # With the cache written, the next run needs no worker.
    assert rules.start_early_worker(root, cache=True, processes=2) is None


@pytest.mark.parametrize("failure", ["killed", "cannot send", "cannot hand over"])
def test_a_failing_early_worker_costs_speed_not_findings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str) -> None:
    root = _workspace(tmp_path, 2 * workers.MIN_QUERIES_PER_PROCESS)
    serial = _report(root, 1)
    if failure == "killed":
        hand_over = workers.EarlyWorker._hand_over

        def then_killed(self: workers.EarlyWorker, *args: Any) -> bool:
            os.kill(self.pid, signal.SIGKILL)
            return hand_over(self, *args)

        monkeypatch.setattr(workers.EarlyWorker, "_hand_over", then_killed)
    elif failure == "cannot send":
        monkeypatch.setattr(workers, "_encode", None)  # the worker fails before answering
    else:
        monkeypatch.setattr(workers.EarlyWorker, "_hand_over", lambda *args: False)
    assert _early_report(root) == serial


def test_an_early_worker_not_needed_is_stopped(tmp_path: Path) -> None:
    root = _workspace(tmp_path, 2 * workers.MIN_QUERIES_PER_PROCESS)
    check_workspace(load_workspace(root), cache=True)  # every analysis cached
    (root / "database-functions" / "query000" / "main.sql").write_text(
        'SELECT t."Title" FROM "Tasks" AS t WHERE t."Status" = $1 -- changed\n',
        encoding="utf-8")
    serial = check_workspace(load_workspace(root), cache=False).to_dict()
    early = workers.EarlyWorker.start()
    assert early is not None
    pid = early.pid
    # One query missed: not worth a worker; it is stopped all the same.
    assert check_workspace(load_workspace(root), cache=True, processes=2,
                           early=early).to_dict() == serial
    assert early.pid == 0 and _reaped(pid)
    early.close()  # closing twice is harmless


def test_no_early_worker_where_it_would_not_pay(tmp_path: Path) -> None:
    # The parent and the worker each have at least a worker's minimum of queries.
    assert rules.MIN_EARLY_QUERIES == 2 * workers.MIN_QUERIES_PER_PROCESS
    small = _workspace(tmp_path, rules.MIN_EARLY_QUERIES - 1)
    assert rules.start_early_worker(small, cache=False, processes=2) is None
    large = _workspace(tmp_path / "large", rules.MIN_EARLY_QUERIES)
    assert rules.start_early_worker(large, cache=False, processes=1) is None
    assert rules.start_early_worker(large, cache=False, processes=3) is None
