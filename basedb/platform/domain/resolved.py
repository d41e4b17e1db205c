"""What an invoke resolved (caller's site and role, the deployment, the live catalog and
the function's plan), kept for as long as the database has not changed.

    with pool.transaction() as conn:
        version = data_version(conn)                 # starts the read snapshot
        target = memo.get(conn, version, key)        # None: resolve, then memo.put(…)

Resolving a call reads the site, the caller's membership, the environment's deployment
and the catalog revision: four lookups that give the same answer call after call. SQLite
says whether anything changed without reading any of it: `PRAGMA data_version` on a
connection moves whenever another connection commits (any write, by this process or
another). The platform's read-only connections never write, so on one of them an
unchanged version means the database is the one the memo's entries were resolved in,
and an entry is as good as resolving again inside the same read snapshot. Entries are
kept per connection (versions of two connections do not compare), and all of a
connection's entries are dropped at once when its version moves.

Only what succeeded is kept (a refusal is resolved again), and nothing that depends on
state outside the database (the development drafts of `basedb dev` live in memory).
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")

ENTRIES_PER_CONNECTION = 1024


def data_version(conn: sqlite3.Connection) -> int:
    """The connection's data version; inside a transaction, it starts the snapshot."""
    row = conn.execute("PRAGMA data_version").fetchone()
    return int(row[0])


class _Entries(Generic[V]):
    __slots__ = ("by_key", "version")

    def __init__(self, version: int) -> None:
        self.version = version
        self.by_key: dict[Hashable, V] = {}


class ResolvedMemo(Generic[V]):
    """Values resolved on a read-only connection, by key, valid at one data version of
    that connection. A connection is used by one thread at a time."""

    def __init__(self, entries_per_connection: int = ENTRIES_PER_CONNECTION) -> None:
        self._kept = entries_per_connection
        self._by_conn: weakref.WeakKeyDictionary[sqlite3.Connection, _Entries[V]] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()

    def get(self, conn: sqlite3.Connection, version: int, key: Hashable) -> V | None:
        entries = self._by_conn.get(conn)
        if entries is None or entries.version != version:
            return None
        return entries.by_key.get(key)

    def put(self, conn: sqlite3.Connection, version: int, key: Hashable, value: V) -> None:
        entries = self._by_conn.get(conn)
        if entries is None:
            with self._lock:
                entries = self._by_conn.setdefault(conn, _Entries(version))
        if entries.version != version:
            entries.version = version
            entries.by_key = {}
        elif len(entries.by_key) >= self._kept:
            entries.by_key = {}
        entries.by_key[key] = value
