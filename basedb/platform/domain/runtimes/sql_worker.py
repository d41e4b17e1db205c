"""The process a Database Function's statement runs in (see `sql_pool`).

SQLite checks for an interrupt only between some of its instructions: a program of
straight-line expensive calls (a few thousand `instr()` over long strings, one after the
other) runs to its end whatever `interrupt()` says. A statement that must stop at a
deadline therefore runs where it can be stopped for certain: in a worker process the
platform kills when asking nicely (`interrupt()`, sent over the control pipe) does not
work. The process also carries the statement's other bounds: an address-space limit
(SQLite then fails with "out of memory" instead of the server growing), a file-size
limit on its temporary files, and a lower CPU priority than the server.

Workers are forked, on request, by a template process (`forker_main`) that the platform
starts once with the modules a worker needs already loaded: forking the threaded server
itself would be unsafe, and starting a fresh interpreter per worker slow.

Each request is answered with one of:

    ("ok", rows, truncated)        rows as tuples; truncated: more rows matched
    ("stale",)                      the catalog moved since the call was resolved
    ("interrupted",)                stopped through the control pipe
    ("too_big",)                    a string, blob or row over the value cap
    ("no_memory",)                  the address-space limit was reached
    ("disk_full",)                  the temporary-file limit was reached
    ("row_too_big",)                one row alone over the response cap
    ("failed", "<Type: message>")   anything else (for the platform log only)
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import sqlite3
import struct
import sys
import threading
from collections import OrderedDict
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from basedb.core.frozen import frozen_dataclass
from basedb.sql.sqlite.query import (
    CompiledQuery,
    StatementConnection,
    authorizing,
    connect_read_only,
    read_only_authorizer,
)

MIB = 1024 * 1024
BUSY_TIMEOUT_S = 10.0
CONNECTIONS_KEPT = 4
_FETCH_BATCH = 256


@frozen_dataclass
class WorkerSettings:
    memory_bytes: int  # address-space limit of the process
    temp_file_bytes: int  # largest file it may write (SQLite's temporary files)
    nice: int  # added to the CPU niceness
    statement_limits: dict[int, int]  # sqlite3 limit -> value


@frozen_dataclass
class QueryRequest:
    database: str
    sql: str
    parameters: tuple[Any, ...]
    tables: frozenset[str]
    ctes: frozenset[str]
    column_names: tuple[str, ...]
    catalog_revision: int  # the revision the statement was compiled against
    row_cap: int
    response_cap_bytes: int


def forker_main(fd: int) -> None:
    """The template process: for each request on the socket `fd` (settings, and the
    worker's ends of its task and control pipes), fork a worker and answer its pid."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers are reaped as they end
    channel = socket.socket(fileno=fd)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(channel, 65536, 2)
        except OSError:
            return
        if not message or len(fds) != 2:
            return  # the platform has gone
        settings = pickle.loads(message)
        pid = os.fork()
        if pid == 0:
            channel.close()
            code = 0
            try:
                serve(Connection(fds[0]), Connection(fds[1]), settings)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        for worker_fd in fds:
            os.close(worker_fd)
        channel.sendall(struct.pack("!q", pid))


def serve(tasks: Connection, control: Connection, settings: WorkerSettings) -> None:
    """The worker's main loop: run requests from `tasks` until the pipe closes."""
    _confine(settings)
    running = _Running()
    threading.Thread(target=running.listen, args=(control,), daemon=True).start()
    connections: OrderedDict[str, sqlite3.Connection] = OrderedDict()
    while True:
        try:
            seq, request = tasks.recv()
        except (EOFError, OSError):
            return
        try:
            conn = _connection(connections, request.database)
            answer = _execute(conn, request, settings, running, seq)
        except MemoryError:
            answer = ("no_memory",)
        except Exception as exc:  # reported, never fatal to the worker
            answer = ("failed", f"{type(exc).__name__}: {exc}")
        try:
            tasks.send((seq, answer))
        except MemoryError:
            tasks.send((seq, ("no_memory",)))
        except (EOFError, OSError):
            return


class _Running:
    """Which statement runs now, so that a late interrupt never reaches the next one."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seq: int | None = None
        self.conn: sqlite3.Connection | None = None

    def listen(self, control: Connection) -> None:
        while True:
            try:
                seq = control.recv()
            except (EOFError, OSError):
                return
            with self.lock:
                if seq == self.seq and self.conn is not None:
                    self.conn.interrupt()

    def start(self, seq: int, conn: sqlite3.Connection) -> None:
        with self.lock:
            self.seq, self.conn = seq, conn

    def stop(self) -> None:
        with self.lock:
            self.seq, self.conn = None, None


def _confine(settings: WorkerSettings) -> None:
    with contextlib.suppress(OSError, AttributeError):
        os.nice(settings.nice)
    try:
        import resource  # noqa: PLC0415  # Lazy: Unix only; a worker elsewhere runs unconfined
    except ImportError:
        return
    for limit, value in ((resource.RLIMIT_AS, settings.memory_bytes),
                         (resource.RLIMIT_FSIZE, settings.temp_file_bytes)):
        _, hard = resource.getrlimit(limit)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(limit, (value, hard))
    # Past the file-size limit a write fails (SQLite: "database or disk is full")
    # instead of the signal ending the process.
    with contextlib.suppress(AttributeError, ValueError):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _connection(connections: OrderedDict[str, sqlite3.Connection],
                database: str) -> sqlite3.Connection:
    conn = connections.get(database)
    if conn is not None:
        connections.move_to_end(database)
        return conn
    conn = connect_read_only(database, StatementConnection, timeout=BUSY_TIMEOUT_S,
                             cached_statements=256)
    connections[database] = conn
    while len(connections) > CONNECTIONS_KEPT:
        _, oldest = connections.popitem(last=False)
        oldest.close()
    return conn


def _execute(conn: sqlite3.Connection, request: QueryRequest, settings: WorkerSettings,
             running: _Running, seq: int) -> tuple[Any, ...]:
    conn.execute("BEGIN")
    try:
        revision = conn.execute("SELECT revision FROM catalog_revision WHERE id = 1").fetchone()
        if revision is None or int(revision[0]) != request.catalog_revision:
            return ("stale",)
        compiled = CompiledQuery(sql=request.sql, slots=(), columns=(), tables=request.tables,
                                 ctes=request.ctes)
        saved = {limit: conn.setlimit(limit, value)
                 for limit, value in settings.statement_limits.items()}
        running.start(seq, conn)
        try:
            with authorizing(conn, read_only_authorizer(compiled)):
                cursor = conn.execute(request.sql, request.parameters)
                try:
                    return fetch_capped(cursor, request.column_names, request.row_cap,
                                        request.response_cap_bytes)
                finally:
                    cursor.close()
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "interrupt" in text:
                return ("interrupted",)
            if "out of memory" in text:
                return ("no_memory",)
            if "full" in text or "disk I/O" in text:  # a temporary file past its limit
                return ("disk_full",)
            return ("failed", f"OperationalError: {text}")
        except sqlite3.DataError as exc:
            return ("too_big",) if "too big" in str(exc) else ("failed", f"DataError: {exc}")
        except MemoryError:
            return ("no_memory",)
        except (sqlite3.Error, OverflowError, ValueError) as exc:
            return ("failed", f"{type(exc).__name__}: {exc}")
        finally:
            running.stop()  # before anything else runs on the connection
            for limit, value in saved.items():
                conn.setlimit(limit, value)
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def fetch_capped(cursor: sqlite3.Cursor, column_names: Sequence[str], row_cap: int,
                 response_cap_bytes: int) -> tuple[Any, ...]:
    """At most `row_cap` rows and about `response_cap_bytes` of JSON (each row counted
    as its cells' `json_size` plus its column names).

    A batch whose rows cannot reach either cap is taken whole, sized by a bound that
    needs no encoding (`_size_bound`, never below the exact count); only a batch that
    might reach one is counted row by row, exactly, so the rows kept and `truncated` are
    those of counting every row."""
    rows: list[tuple[Any, ...]] = []
    names = sum(len(name.encode("utf-8")) + 4 for name in column_names)
    bound = 0  # at least the size of `rows` while it is not counted exactly
    size = 0
    exact = False
    while True:
        batch = cursor.fetchmany(_FETCH_BATCH)
        if not batch:
            return ("ok", rows, False)
        if not exact:
            batch_bound = _size_bound(batch, names)
            if (len(rows) + len(batch) <= row_cap
                    and bound + batch_bound <= response_cap_bytes):
                rows += batch
                bound += batch_bound
                if len(batch) < _FETCH_BATCH:  # fetchmany came up short: no more rows
                    return ("ok", rows, False)
                continue
            exact = True
            size = sum(names + sum(json_size(cell) for cell in row) for row in rows)
        for row in batch:
            if len(rows) >= row_cap:
                return ("ok", rows, True)
            size += names + sum(json_size(cell) for cell in row)
            if size > response_cap_bytes:
                return ("ok", rows, True) if rows else ("row_too_big",)
            rows.append(row)


def _size_bound(batch: list[tuple[Any, ...]], names: int) -> int:
    """At least the `json_size` of the batch's rows (with `names` per row): every cell
    counts at most 24 bytes plus 4 per character of text or byte of a blob (UTF-8 takes at
    most 4 bytes a character)."""
    width = len(batch[0]) if batch else 0
    text = sum(len(cell) for row in batch for cell in row if isinstance(cell, (str, bytes)))
    return len(batch) * (names + 24 * width) + 4 * text


def json_size(cell: Any) -> int:
    """About how many bytes a cell takes in the JSON answer (exact enough for a cap)."""
    if isinstance(cell, str):
        return len(cell.encode("utf-8", "surrogatepass")) + 2
    if isinstance(cell, bytes):
        return 2 * len(cell) + 2
    return 24


if __name__ == "__main__":
    forker_main(int(sys.argv[1]))
