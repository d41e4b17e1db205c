"""A check that analyses its queries in several processes reports exactly what a serial
check reports, in the same order, and survives a worker that fails."""

from __future__ import annotations

import json
import pickle
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from basedb.check.run import check_workspace
from basedb.check.sql import rules, workers
from basedb.workspace import load_workspace

CASES = Path(__file__).resolve().parents[1] / "cases" / "negative"
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
    root = tmp_path / "ws"
    shutil.copytree(CASES / "enum_out_of_domain", root)
    template = root / "database-functions" / "searchTasks"
    declaration = json.loads((template / "function.json").read_text(encoding="utf-8"))
    shutil.rmtree(template)
    for n in range(functions):
        folder = root / "database-functions" / f"query{n:03d}"
        folder.mkdir(parents=True)
        (folder / "function.json").write_text(
            json.dumps({**declaration, "name": f"query{n:03d}"}), encoding="utf-8")
        # A distinct text per function (a comment), so no two analyses are shared.
        (folder / "main.sql").write_text(f"-- {n}\n{QUERIES[n % len(QUERIES)]}\n",
                                         encoding="utf-8")
    return root


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
