"""Shared fixtures. Every test runs with its own config, data and state directories, so
no test reads or writes the user's real profiles or platform data."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Point $BASEDB_CONFIG_DIR, $BASEDB_DATA_DIR and $BASEDB_STATE_DIR into tmp_path."""
    dirs = {name: tmp_path / f"basedb-{name}" for name in ("config", "data", "state")}
    for name, path in dirs.items():
        monkeypatch.setenv(f"BASEDB_{name.upper()}_DIR", str(path))
    monkeypatch.delenv("BASEDB_PROFILE", raising=False)
    return dirs
