"""Read-only connections to a store's database, one per thread, for reads that need
no write lock: resolving a call, authenticating a bearer token, running a Database
Function's statement (`basedb.platform.domain.runtimes.sql`)."""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from basedb.platform.storage.store import BUSY_TIMEOUT_S, Store
from basedb.sql.sqlite.query import StatementConnection, connect_read_only


class _ReadOnlyConnection(StatementConnection):
    """Weakly referenceable, so a pool can close what is still open."""


class ReadOnlyPool:
    """Read-only connections to one store's database, one per thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: weakref.WeakSet[_ReadOnlyConnection] = weakref.WeakSet()
        self._lock = threading.Lock()

    def connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    def _connect(self) -> sqlite3.Connection:
        conn = connect_read_only(self.path, _ReadOnlyConnection, timeout=BUSY_TIMEOUT_S,
                                 cached_statements=512)
        with self._lock:
            self._all.add(conn)
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One consistent read snapshot on this thread's connection."""
        conn = self.connection()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")

    def close(self) -> None:
        with self._lock:
            connections = list(self._all)
            self._all = weakref.WeakSet()
        for conn in connections:
            with suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()


_pools: weakref.WeakKeyDictionary[Store, ReadOnlyPool] = weakref.WeakKeyDictionary()
_pools_lock = threading.Lock()


def read_only_pool(store: Store) -> ReadOnlyPool:
    """The pool of `store` (created on first use; it goes away with the store)."""
    with _pools_lock:
        pool = _pools.get(store)
        if pool is None:
            pool = _pools[store] = ReadOnlyPool(store.path)
            weakref.finalize(store, pool.close)
        return pool


def close_read_only_pool(store: Store) -> None:
    """Close the pool of `store`, if it has one, before the store itself: the store's
    last connection to close checkpoints the write-ahead log and removes it, which a
    read-only connection still open would prevent."""
    with _pools_lock:
        pool = _pools.pop(store, None)
    if pool is not None:
        pool.close()
