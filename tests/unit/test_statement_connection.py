"""Statements of Database Functions run under a per-statement authorizer that is switched,
not re-installed, so the connection's prepared statements survive from call to call."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from basedb.sql.sqlite.query import Authorizer, StatementConnection, authorizing

_READ = 20


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    path = tmp_path / "db.sqlite"
    setup = sqlite3.connect(path)
    setup.executescript("CREATE TABLE open_t (v); INSERT INTO open_t VALUES (1);"
                        "CREATE TABLE secret_t (v); INSERT INTO secret_t VALUES (2);")
    setup.close()
    found = sqlite3.connect(path, isolation_level=None, factory=StatementConnection)
    assert isinstance(found, StatementConnection)
    return found


def only_open(calls: list[str]) -> Authorizer:
    def authorize(action: int, arg1: str | None, arg2: str | None, database: str | None,
                  source: str | None) -> int:
        calls.append(f"{action}:{arg1}")
        if action == _READ and arg1 != "open_t":
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    return authorize


def test_a_refused_statement_is_refused_every_time(conn: sqlite3.Connection) -> None:
    for _ in range(3):
        with authorizing(conn, only_open([])), pytest.raises(sqlite3.DatabaseError):
            conn.execute("SELECT v FROM secret_t").fetchall()
    # Outside a policy the platform's own statements are not restricted.
    assert conn.execute("SELECT v FROM secret_t").fetchall() == [(2,)]


def test_an_allowed_statement_is_prepared_once(conn: sqlite3.Connection) -> None:
    calls: list[str] = []
    for _ in range(3):
        with authorizing(conn, only_open(calls)):
            assert conn.execute("SELECT v FROM open_t").fetchall() == [(1,)]
        assert conn.execute("SELECT v FROM secret_t").fetchall() == [(2,)]
    assert calls.count(f"{_READ}:open_t") == 1  # consulted when prepared, then cached


def test_a_plain_connection_gets_the_authorizer_for_the_block(tmp_path: Path) -> None:
    plain = sqlite3.connect(tmp_path / "plain.sqlite", isolation_level=None)
    plain.execute("CREATE TABLE secret_t (v)")
    with authorizing(plain, only_open([])), pytest.raises(sqlite3.DatabaseError):
        plain.execute("SELECT v FROM secret_t")
    assert plain.execute("SELECT count(*) FROM secret_t").fetchone() == (0,)
