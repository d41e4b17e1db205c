"""A hostile workspace against `check`'s early SQL worker: the process forked before the
workspace loads (basedb.check.sql.workers.EarlyWorker).

The site author controls every main.sql and the number of folders. Whatever the queries
do to the analyser, the findings are those of a check in one process, and no process is
left behind."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from basedb.check.run import check_workspace
from basedb.check.sql import rules, workers
from basedb.workspace import load_workspace
from basedb.workspace.files import LIMIT_SQL
from tests.check_support import workspace_of_queries

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="workers fork (Linux only)")

HOSTILE = (
    "SELECT " + "(" * 3000 + "1" + ")" * 3000 + ' FROM "Tasks"',  # nested past any stack
    "SELECT 1 FROM \"Tasks\" WHERE " + " OR ".join(f'"Status" = ${i % 3 + 1}'
                                                   for i in range(3000)),
    "SELECT 1; DROP TABLE \"Tasks\"",
    "ATTACH DATABASE '/etc/passwd' AS p",
    "SELECT pg_read_file('/etc/passwd') FROM \"Tasks\"",
    "SELECT \udcff FROM \"Tasks\"",  # a lone surrogate, as a broken file decodes
    "-- only a comment",
    "x" * (LIMIT_SQL + 1),
    'SELECT t."Title" FROM "Tasks" AS t WHERE t.record_id = $1',
)


def _workspace(tmp_path: Path, functions: int) -> Path:
    return workspace_of_queries(tmp_path / "ws", [f"{HOSTILE[n % len(HOSTILE)]}\n-- {n}\n"
                                                  for n in range(functions)])


def _children() -> set[int]:
    try:
        return {int(p) for p in Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
                .read_text().split()}
    except OSError:
        return set()


def _early_report(root: Path) -> dict[str, Any]:
    early = rules.start_early_worker(root, cache=False, processes=2)
    assert early is not None
    return check_workspace(load_workspace(root), processes=2, early=early).to_dict()


def test_hostile_queries_give_the_findings_of_one_process(tmp_path: Path) -> None:
    root = _workspace(tmp_path, rules.MIN_EARLY_QUERIES + 3)
    before = _children()
    serial = check_workspace(load_workspace(root), processes=1).to_dict()
    assert serial["errors"]
    assert _early_report(root) == serial
    assert _children() == before


def test_a_worker_killed_while_it_analyses_costs_speed_not_findings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _workspace(tmp_path, rules.MIN_EARLY_QUERIES)
    serial = check_workspace(load_workspace(root), processes=1).to_dict()
    answer = workers.EarlyWorker._answer

    def killed_first(self: workers.EarlyWorker) -> Any:
        os.kill(self.pid, signal.SIGKILL)  # whatever it had claimed, it never answers
        return answer(self)

    monkeypatch.setattr(workers.EarlyWorker, "_answer", killed_first)
    assert _early_report(root) == serial


def test_folders_that_hold_no_function_fork_a_worker_that_is_stopped(
        tmp_path: Path) -> None:
    root = _workspace(tmp_path, 1)
    for n in range(rules.MIN_EARLY_QUERIES):
        (root / "database-functions" / f"empty{n:03d}").mkdir()
    before = _children()
    serial = check_workspace(load_workspace(root), processes=1).to_dict()
    assert _early_report(root) == serial
    assert _children() == before
