"""Shared fixtures. Every test runs with its own config, data and state directories, so
no test reads or writes the user's real profiles or platform data."""

from __future__ import annotations

import os
from pathlib import Path

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
