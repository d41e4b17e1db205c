"""Shared fixtures. Every test runs with its own config, data and state directories, so
no test reads or writes the user's real profiles or platform data."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# CI runs the property tests on a fixed sequence of examples, so a red build always means
# a change broke something; locally they explore new examples on every run.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Point $BASEDB_CONFIG_DIR, $BASEDB_DATA_DIR and $BASEDB_STATE_DIR into tmp_path."""
    dirs = {name: tmp_path / f"basedb-{name}" for name in ("config", "data", "state")}
    for name, path in dirs.items():
        monkeypatch.setenv(f"BASEDB_{name.upper()}_DIR", str(path))
    for name in ("BASEDB_PROFILE", "BASEDB_TIMEOUT", "BASEDB_DEBUG", "LARK_APP_ID",
                 "LARK_APP_SECRET", "LARK_BRAND", "BASEDB_LARK_OPEN_URL",
                 "BASEDB_LARK_ACCOUNTS_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BASEDB_SECRET_STORE", "file")
    return dirs


@pytest.fixture(autouse=True)
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The client's retry waits, recorded instead of slept: no test waits on a clock."""
    waited: list[float] = []
    monkeypatch.setattr("basedb.client.retry.pause", waited.append)
    return waited


# ---------------------------------------------------------------- nothing left behind

ROOT = Path(__file__).resolve().parents[1]


def tree_changes() -> set[str] | None:
    """What `git status` lists in the checkout (changed and untracked files, ignored ones
    left out), or None outside a git checkout."""
    try:
        done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                              cwd=ROOT, capture_output=True, text=True, timeout=60,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return set(done.stdout.splitlines()) if done.returncode == 0 else None


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller, once
        session.config.stash[_TREE_KEY] = tree_changes()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Tests write under temporary directories only: a run that leaves a file in the
    checkout (or changes one) fails, naming it."""
    if hasattr(session.config, "workerinput"):
        return
    before = session.config.stash.get(_TREE_KEY, None)
    after = tree_changes()
    if before is None or after is None:
        return
    left = sorted(after - before)
    if left:
        session.config.stash[_LEFT_KEY] = left
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _left_behind(terminalreporter: Any) -> None:
    left = terminalreporter.config.stash.get(_LEFT_KEY, [])
    if left:
        terminalreporter.section("files the tests left in the checkout")
        for line in left:
            terminalreporter.write_line(line)
        terminalreporter.write_line("Tests must write under tmp_path (or another temporary "
                                    "directory) only.")


_TREE_KEY = pytest.StashKey[set[str] | None]()
_LEFT_KEY = pytest.StashKey[list[str]]()


# The differential SQL suite's counts (tests/differential/conftest.py), carried from
# pytest-xdist workers: the controller never loads that conftest, so it prints them here.
_WORKER_SUMMARIES: list[str] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _WORKER_SUMMARIES.extend(getattr(node, "workeroutput", {}).get("sql_differential", []))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    _left_behind(terminalreporter)
    if _WORKER_SUMMARIES:
        terminalreporter.section("SQL compared with PostgreSQL")
        for line in sorted(_WORKER_SUMMARIES):
            terminalreporter.write_line(line)
