"""Shared fixtures. Every test runs with its own config, data and state directories, so
no test reads or writes the user's real profiles or platform data."""

from __future__ import annotations

import os
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


# The differential SQL suite's counts (tests/differential/conftest.py), carried from
# pytest-xdist workers: the controller never loads that conftest, so it prints them here.
_WORKER_SUMMARIES: list[str] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _WORKER_SUMMARIES.extend(getattr(node, "workeroutput", {}).get("sql_differential", []))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _WORKER_SUMMARIES:
        terminalreporter.section("SQL compared with PostgreSQL")
        for line in sorted(_WORKER_SUMMARIES):
            terminalreporter.write_line(line)
