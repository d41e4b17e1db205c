"""The platform's storage: one SQLite database file in WAL mode.

Connections are per thread (Starlette runs sync handlers in a thread pool, and the
in-process client may call from any thread); each is opened once and reused, so a
request pays no connection setup. Reads run in a deferred transaction (a consistent
snapshot across several statements); writes run in `BEGIN IMMEDIATE`, which takes the
write lock up front so that two writers never deadlock on a lock upgrade, and wait up to
`BUSY_TIMEOUT_S` for it.

    with store.read() as conn: ...     # snapshot reads
    with store.write() as conn: ...    # all-or-nothing writes
    with store.write_now(cpu_budget_s) as conn: ...  # the same, or WriteNotNow at once

A `write()` inside a `write()` on the same thread joins the outer transaction.

`write_now` is for a thread that must not wait: the server's event loop. It runs on a
second connection of the thread whose busy timeout is zero, so taking the write lock
either succeeds at once or raises `WriteBusy`; a SQLite progress handler stops the
transaction's statements once they have used their budget of CPU time (or of wall-clock
time, for waits on the disk) (`WriteOutOfTime`). Either
way nothing was written, so the caller may run the same write with `write()`
elsewhere. That connection never checkpoints the WAL itself (a checkpoint copies pages
and syncs the database file: milliseconds the loop would stand still); after every
`CHECKPOINT_EVERY` of its commits a background thread runs a passive checkpoint.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from basedb.platform.storage.budget import TimeBudget
from basedb.platform.storage.schema import MIGRATIONS, Migration, apply_migrations

DATABASE_FILE = "platform.db"
BUSY_TIMEOUT_S = 10.0
# Commits of no-wait writes between two background checkpoints. A small write adds a
# few WAL frames, so this keeps the WAL near SQLite's own automatic threshold (1000).
CHECKPOINT_EVERY = 200
# SQLite virtual-machine instructions between two looks at a no-wait write's clock.
CHECK_EVERY = 500


class WriteNotNow(Exception):
    """`write_now` could not write without waiting; nothing was written."""


class WriteBusy(WriteNotNow):
    """Another connection holds the write lock."""


class WriteOutOfTime(WriteNotNow):
    """The transaction's statements ran past the budget and were rolled back."""


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
        self._checkpointer = _Checkpointer(self)
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

    def _nowait_connection(self) -> sqlite3.Connection:
        """This thread's connection for `write_now`: no busy wait, no checkpoints."""
        conn: sqlite3.Connection | None = getattr(self._local, "nowait", None)
        if conn is None:
            conn = self._connect(busy_timeout_s=0.0)
            conn.execute("PRAGMA wal_autocheckpoint=0")
            self._local.nowait = conn
        return conn

    def _connect(self, busy_timeout_s: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
        if self._closed:
            raise RuntimeError(f"the platform store at {self.path} is closed")
        # check_same_thread=False only so that close() may run on another thread; each
        # connection is otherwise used by the thread that opened it, and closes when that
        # thread ends (its thread-local slot is the only strong reference).
        conn = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None,
                               check_same_thread=False, cached_statements=512,
                               factory=_Connection)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")  # durable across crashes in WAL mode
        with self._lock:
            self._connections.add(conn)
        return conn

    def close(self) -> None:
        """Close every connection; the store cannot be used afterwards."""
        with self._lock:
            self._closed = True
            self._checkpointer.stop()
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
        if getattr(self._local, "mode", None) == "nowait":
            raise RuntimeError("store.read() inside store.write_now(): use its connection")
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
        if getattr(self._local, "mode", None) == "nowait":
            raise RuntimeError("store.write() inside store.write_now(): it would wait for "
                               "the lock this thread holds")
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

    @contextmanager
    def write_now(self, cpu_budget_s: float,
                  budget_s: float = 0.02) -> Iterator[sqlite3.Connection]:
        """A write transaction taken without waiting and bounded in time: committed when
        the block ends, rolled back if it raises. Raises WriteBusy when the write lock is
        held elsewhere, WriteOutOfTime when its statements run past `cpu_budget_s` of
        this thread's CPU time (a busy machine taking the CPU away does not count) or
        `budget_s` of wall-clock time (waits for the disk); in both cases nothing was
        written."""
        if self.connection().in_transaction or getattr(self._local, "mode", None):
            raise RuntimeError("store.write_now() inside another transaction of this thread")
        conn = self._nowait_connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if is_busy_error(exc):
                raise WriteBusy(str(exc)) from None
            raise
        budget = TimeBudget(budget_s, cpu_budget_s)
        self._local.mode = "nowait"
        conn.set_progress_handler(budget, CHECK_EVERY)
        try:
            yield conn
            conn.set_progress_handler(None, 0)
        except BaseException as exc:
            conn.set_progress_handler(None, 0)
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if budget.spent and isinstance(exc, sqlite3.OperationalError):
                raise WriteOutOfTime("the write ran past its budget") from None
            if is_busy_error(exc):
                raise WriteBusy(str(exc)) from None
            raise
        else:
            # Never interrupt the COMMIT itself: it only appends the written pages.
            try:
                conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if is_busy_error(exc):
                    raise WriteBusy(str(exc)) from None
                raise
            self._checkpointer.committed()
        finally:
            self._local.mode = None


class _Checkpointer:
    """Runs a passive WAL checkpoint in a background thread after every CHECKPOINT_EVERY
    commits of no-wait writes (whose connections never checkpoint themselves)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._commits = 0
        self._wanted = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def committed(self) -> None:
        with self._lock:
            self._commits += 1
            if self._commits < CHECKPOINT_EVERY or self._stopping:
                return
            self._commits = 0
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="basedb-checkpoint")
                self._thread.start()
        self._wanted.set()

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
        self._wanted.set()

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            self._wanted.clear()
            if self._stopping:
                return
            # PASSIVE: copies what no reader still needs, waits for no one.
            with suppress(sqlite3.Error, RuntimeError):
                self._store.connection().execute("PRAGMA wal_checkpoint(PASSIVE)")


def is_busy_error(error: BaseException) -> bool:
    """Whether a sqlite3 error means the write lock could not be had in time."""
    return isinstance(error, sqlite3.OperationalError) and (
        "locked" in str(error) or "busy" in str(error)
    )
