"""The platform's storage: one SQLite database file in WAL mode.

Connections are per thread (Starlette runs sync handlers in a thread pool, and the
in-process client may call from any thread); each is opened once and reused, so a
request pays no connection setup. Reads run in a deferred transaction (a consistent
snapshot across several statements); writes run in `BEGIN IMMEDIATE`, which takes the
write lock up front so that two writers never deadlock on a lock upgrade, and wait up to
`BUSY_TIMEOUT_S` for it.

    with store.read() as conn: ...     # snapshot reads
    with store.write() as conn: ...    # all-or-nothing writes

A `write()` inside a `write()` on the same thread joins the outer transaction.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from basedb.platform.storage.schema import MIGRATIONS, Migration, apply_migrations

DATABASE_FILE = "platform.db"
BUSY_TIMEOUT_S = 10.0


class _Connection(sqlite3.Connection):
    """A connection that can be weakly referenced, so that the store can close the
    connections still alive without keeping those of finished threads open."""


class Store:
    """The platform database; safe to share between threads."""

    def __init__(self, path: Path, *, migrations: list[Migration] | None = None) -> None:
        self.path = path
        self._local = threading.local()
        self._connections: weakref.WeakSet[_Connection] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._closed = False
        with self.write() as conn:
            apply_migrations(conn, MIGRATIONS if migrations is None else migrations)

    # ------------------------------------------------------------------ connections

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (autocommit mode: transactions are explicit)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            self._local.mode = None
        return conn

    def _connect(self) -> sqlite3.Connection:
        if self._closed:
            raise RuntimeError(f"the platform store at {self.path} is closed")
        # check_same_thread=False only so that close() may run on another thread; each
        # connection is otherwise used by the thread that opened it, and closes when that
        # thread ends (its thread-local slot is the only strong reference).
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False, cached_statements=512,
                               factory=_Connection)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")  # durable across crashes in WAL mode
        with self._lock:
            self._connections.add(conn)
        return conn

    def close(self) -> None:
        """Close every connection; the store cannot be used afterwards."""
        with self._lock:
            self._closed = True
            connections = list(self._connections)
            self._connections = weakref.WeakSet()
        for conn in connections:
            with suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()

    # ----------------------------------------------------------------- transactions

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read snapshot; joins an enclosing transaction on this thread."""
        conn = self.connection()
        if conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN")
        self._local.mode = "read"
        try:
            yield conn
        finally:
            self._local.mode = None
            if conn.in_transaction:
                conn.execute("COMMIT")  # nothing was written; this just ends the snapshot

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed when the block ends, rolled back if it raises."""
        conn = self.connection()
        if conn.in_transaction:
            if self._local.mode == "read":
                raise RuntimeError("store.write() inside store.read(): take the write "
                                   "transaction first")
            yield conn
            return
        conn.execute("BEGIN IMMEDIATE")
        self._local.mode = "write"
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")
        finally:
            self._local.mode = None


def is_busy_error(error: BaseException) -> bool:
    """Whether a sqlite3 error means the write lock could not be had in time."""
    return isinstance(error, sqlite3.OperationalError) and (
        "locked" in str(error) or "busy" in str(error)
    )
