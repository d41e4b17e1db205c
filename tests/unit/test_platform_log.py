"""The platform log: stderr unless a request's platform sends it to its log file."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from basedb.platform.storage import platform_log

TOKEN = "bdb_abcdefghijklmnopqrstuvwxyz012345"


def test_entries_go_to_stderr_by_default_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    platform_log.write(f"basedb faas: (log_id L1) token {TOKEN}\n")
    err = capsys.readouterr().err
    assert err.startswith("basedb faas: (log_id L1) token ") and err.endswith("\n")
    assert TOKEN not in err and err.count("\n") == 1


def test_within_logging_to_entries_append_to_a_private_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "platform.log"
    with platform_log.logging_to(path):
        platform_log.write("first (log_id A)")
        platform_log.write(f"second (log_id B) {TOKEN}")
    platform_log.write("after (log_id C)")
    assert capsys.readouterr().err == "after (log_id C)\n"
    text = path.read_text()
    assert text.startswith("first (log_id A)\nsecond (log_id B) ") and TOKEN not in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_unwritable_log_file_falls_back_to_stderr(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with platform_log.logging_to(tmp_path / "missing-dir" / "platform.log"):
        platform_log.write("kept (log_id D)")
    assert capsys.readouterr().err == "kept (log_id D)\n"
