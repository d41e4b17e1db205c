"""The platform log: stderr unless a request's platform sends it to its log file."""

from __future__ import annotations

import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from basedb.platform.storage import platform_log, schema

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


class _Recorder:
    """A stand-in store transaction that records each batch it was given."""

    def __init__(self) -> None:
        self.transactions = 0
        self.saved: list[str] = []

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        self.transactions += 1
        yield self

    def execute(self, sql: str, params: Any = ()) -> Any:
        if sql.startswith("SELECT last_insert_rowid()"):
            return _Rows([(len(self.saved),)])
        return _Rows([(1,)])

    def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        self.saved.extend(row[1] for row in rows)


class _Rows:
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows = rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None


def _scope(log_id: str) -> platform_log.LogScope:
    scope = platform_log.LogScope(log_id)
    scope.add(platform_log.Entry("call", "info", "ok"))
    return scope


def test_flush_saves_what_waits_at_once_whatever_the_linger() -> None:
    recorder = _Recorder()
    writer = platform_log.LogWriter(recorder.transaction, linger_s=3600)
    writer.submit(_scope("A"))
    writer.submit(_scope("B"))
    writer.flush(timeout=60)
    assert recorder.saved == ["A", "B"]


def test_scopes_that_arrive_together_are_saved_in_one_transaction() -> None:
    recorder = _Recorder()
    writer = platform_log.LogWriter(recorder.transaction, linger_s=3600)
    for number in range(platform_log.LogWriter.BATCH_SCOPES):
        writer.submit(_scope(f"L{number}"))
    writer.flush(timeout=60)
    assert len(recorder.saved) == platform_log.LogWriter.BATCH_SCOPES
    assert recorder.transactions == 1


def test_a_batch_keeps_each_scope_with_its_site_only_for_members() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    schema.apply_migrations(conn, schema.MIGRATIONS)  # foreign keys are not enforced here
    conn.execute("INSERT INTO site_members VALUES ('app1', 'ou_member', 'member')")
    scopes = [platform_log.LogScope("A", "app1", "ou_member"),
              platform_log.LogScope("B", "app1", "ou_stranger"),
              platform_log.LogScope("C", "app1", None),
              platform_log.LogScope("D", "app1", "ou_member"),
              platform_log.LogScope("E", None, "ou_member")]
    for scope in scopes:
        scope.add(platform_log.Entry("call", "info", "ok"))
    scopes[3].dropped = 2
    platform_log.save_all(conn, scopes)
    saved = conn.execute("SELECT log_id, app_token, kind FROM platform_log "
                         "ORDER BY entry_id").fetchall()
    assert saved == [("A", "app1", "call"), ("B", None, "call"), ("C", None, "call"),
                     ("D", "app1", "call"), ("D", "app1", "detail"), ("E", None, "call")]
    assert all(not scope.entries and not scope.dropped for scope in scopes)
