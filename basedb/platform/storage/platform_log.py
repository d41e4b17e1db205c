"""The platform log: what callers are never shown (stacks, FaaS handler output, the raw
errors of SQLite or an AI endpoint), each entry tagged with its request's log id.

    platform_log.write(f"basedb faas: … (log_id {log_id}) …")

`basedb serve` writes it to stderr, beside its access log, within a byte budget
(`basedb.platform.storage.server_output`). A platform embedded in a CLI command (the
`local` profile, see `LocalPlatform.log_to_file`) appends it to `platform.log` in its
data dir instead (rotated at `FILE_MAX_BYTES`): that command's stderr carries the command's own
error envelope, which agents read as one JSON document, and an entry printed there would
be gone with the command, while error messages send the site's developer to look the
log id up later. The destination is per request (a context variable the request layer
sets), so an embedded platform and a served one can live in one process.

Every entry of a request is also kept in the `platform_log` table, which `basedb logs`
reads through the API (`basedb.platform.domain.logs` says who may read what). The
request layer opens a `LogScope` per request; `write` adds a `detail` entry to it, the
invoke route adds one `call` entry (what the caller was told), and the scope is saved
before the response starts, outside any transaction of the handler:

    detail   what callers are never shown: the site's owners and admins read it
    call     one line per function call (function, env, code, the message the caller
             got, milliseconds): the caller reads their own, owners and admins all

An entry belongs to a site only when the request named one (`/sites/{app}/…`) and the
caller is a member of it; any other entry is the platform owner's alone. Entries are
capped in size, and each site keeps its newest `ENTRIES_KEPT` (and what was added
since its last prune: see `_PRUNE_EVERY`). Storage is capped in bytes too (`LogCaps`):
the entries of all the sites of one owner (and the platform's own entries) keep at
most `owner_bytes`, all entries `total_bytes`; past a cap the oldest go, down to
`LOW_WATER` of it, so that a prune comes once per tenth of a cap written rather than on
every batch. An entry's size is its message's UTF-8 bytes plus `ENTRY_OVERHEAD_BYTES`
for the rest of its row, so a flood of small entries counts too.
"""

from __future__ import annotations

import atexit
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from basedb.core.frozen import frozen_dataclass
from basedb.core.redact import redact
from basedb.platform.storage import server_output
from basedb.platform.storage.ids import now_text

FILE_NAME = "platform.log"
FILE_MAX_BYTES = 16 * 1024 * 1024
MAX_ENTRY_CHARS = 32 * 1024
ENTRIES_KEPT = 10_000
ENTRIES_PER_REQUEST = 64
# Inserts between two prunes of one site's entries. A prune walks the site's newest
# ENTRIES_KEPT entries to find the cut, about a millisecond: once per 1,024 inserts it
# costs a logged request a microsecond, once per 64 it cost more than the insert.
_PRUNE_EVERY = 1024
MIB = 1024 * 1024
ENTRY_OVERHEAD_BYTES = 128
LOW_WATER = 0.9

_destination: ContextVar[Path | None] = ContextVar("basedb_platform_log", default=None)


@frozen_dataclass
class Entry:
    kind: str  # call | detail
    level: str  # info | error
    message: str
    env: str | None = None
    function_id: str | None = None
    code: int | None = None
    ms: float | None = None


@dataclass(slots=True, eq=False)
class LogScope:
    """The entries of one request, and what they belong to (filled in as the request
    is routed and authenticated)."""

    log_id: str
    app_token: str | None = None
    user_id: str | None = None
    entries: list[Entry] = field(default_factory=list)
    dropped: int = 0

    def add(self, entry: Entry) -> None:
        if len(self.entries) >= ENTRIES_PER_REQUEST:
            self.dropped += 1
            return
        text = entry.message
        if len(text) > MAX_ENTRY_CHARS:
            cut = len(text) - MAX_ENTRY_CHARS
            text = text[:MAX_ENTRY_CHARS] + f"\n… ({cut} more characters not kept)"
            entry = Entry(entry.kind, entry.level, text, entry.env, entry.function_id,
                          entry.code, entry.ms)
        self.entries.append(entry)


_scope: ContextVar[LogScope | None] = ContextVar("basedb_platform_log_scope", default=None)


@frozen_dataclass
class LogCaps:
    """How many bytes of entries the table keeps (`basedb serve --log-mib-per-owner`,
    `--log-mib`)."""

    owner_bytes: int = 64 * MIB  # all the sites of one owner; the platform's own entries
    total_bytes: int = 1024 * MIB  # every entry


def write(text: str) -> None:
    """Append one entry (redacted) to this request's platform log."""
    entry = redact(text.rstrip("\n")) + "\n"
    scope = _scope.get()
    if scope is not None:
        scope.add(Entry("detail", "error", entry.rstrip("\n")))
    path = _destination.get()
    if path is not None:
        try:
            _rotate_if_full(path)
            descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(descriptor, "a", encoding="utf-8") as log:
                log.write(entry)
            return
        except OSError:
            pass  # an unwritable log file must not lose the entry: stderr still has it
    server_output.STDERR.write(entry)


def _rotate_if_full(path: Path) -> None:
    """Past `FILE_MAX_BYTES`, the file becomes `platform.log.1` (replacing the one
    before) and a new one starts: an embedded platform's file keeps at most twice that."""
    try:
        full = path.stat().st_size >= FILE_MAX_BYTES
    except FileNotFoundError:
        return
    if full:
        os.replace(path, path.with_name(path.name + ".1"))


def destination() -> Path | None:
    """Where this request's entries go (None: stderr), for work done on its behalf on
    another thread."""
    return _destination.get()


def current_scope() -> LogScope | None:
    """The scope of the request being handled, if any."""
    return _scope.get()


@contextmanager
def logging_to(path: Path | None) -> Iterator[None]:
    """Within the block, entries go to `path` (None: stderr)."""
    token = _destination.set(path)
    try:
        yield
    finally:
        _destination.reset(token)


class request_logging:
    """Within the block, entries go to `path` (as in `logging_to`) and are also collected
    in `scope`: what every request enters first (a class, which costs a request less than
    a generator-based context manager)."""

    __slots__ = ("_path", "_scope", "_tokens")

    def __init__(self, scope: LogScope, path: Path | None) -> None:
        self._scope = scope
        self._path = path

    def __enter__(self) -> LogScope:
        self._tokens = (_destination.set(self._path), _scope.set(self._scope))
        return self._scope

    def __exit__(self, *exc: object) -> None:
        destination_token, scope_token = self._tokens
        _scope.reset(scope_token)
        _destination.reset(destination_token)


# ------------------------------------------------------------------------ the table


def save_all(conn: sqlite3.Connection, scopes: Sequence[LogScope],
             caps: LogCaps | None = None) -> None:
    """Insert the scopes' entries (inside a write transaction), each attached to its site
    when its caller is a member of it, and prune the oldest beyond `ENTRIES_KEPT` and
    beyond `caps`: one INSERT for all of them, and each caller's membership looked up
    once."""
    members: dict[tuple[str, str], bool] = {}
    rows: list[tuple[Any, ...]] = []
    sites: set[str | None] = set()
    created = now_text()
    for scope in scopes:
        if not scope.entries:
            continue
        site = scope.app_token
        if site is not None and scope.user_id is not None:
            key = (site, scope.user_id)
            if key not in members:
                members[key] = conn.execute(
                    "SELECT 1 FROM site_members WHERE app_token = ? AND user_id = ?",
                    key).fetchone() is not None
            site = site if members[key] else None
        else:
            site = None
        entries = list(scope.entries)
        if scope.dropped:
            entries.append(Entry("detail", "error", f"{scope.dropped} more entries of this "
                                 "request were not kept"))
        rows += [(created, scope.log_id, site, scope.user_id, e.kind, e.level, e.env,
                  e.function_id, e.code, e.ms, e.message,
                  len(e.message.encode("utf-8", "surrogatepass")) + ENTRY_OVERHEAD_BYTES)
                 for e in entries]
        sites.add(site)
        scope.entries.clear()
        scope.dropped = 0
    if not rows:
        return
    conn.executemany(
        "INSERT INTO platform_log (created_at, log_id, app_token, user_id, kind, level, env, "
        "function_id, code, ms, message, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows)
    last = conn.execute("SELECT last_insert_rowid()").fetchone()[0]
    if last // _PRUNE_EVERY != (last - len(rows)) // _PRUNE_EVERY:
        for site in sites:
            prune(conn, site)
    keep_within(conn, sites, caps or LogCaps())


def keep_within(conn: sqlite3.Connection, sites: set[str | None], caps: LogCaps) -> None:
    """Prune the entries of the owners of `sites` (None: the platform's own), and then
    all entries, that are over their caps."""
    owners: set[tuple[str, ...]] = set()
    for site in sites:
        owners.add(_sites_of_owner(conn, site) if site is not None else ())
    for owned in owners:
        _prune_bytes(conn, owned, caps.owner_bytes)
    _prune_bytes(conn, None, caps.total_bytes)


def usage(conn: sqlite3.Connection, sites: tuple[str, ...] | None = None) -> int:
    """Bytes of the entries of `sites` (`()`: the platform's own; None: all entries)."""
    args: tuple[str, ...] = ()
    if sites is None:
        query = "SELECT coalesce(sum(bytes), 0) FROM platform_log_usage"
    else:
        keys = sites or ("",)
        query = ("SELECT coalesce(sum(bytes), 0) FROM platform_log_usage WHERE site IN "
                 f"({', '.join('?' * len(keys))})")
        args = keys
    return int(conn.execute(query, args).fetchone()[0])


def _sites_of_owner(conn: sqlite3.Connection, site: str) -> tuple[str, ...]:
    owner = conn.execute("SELECT owner_id FROM sites WHERE app_token = ?", (site,)).fetchone()
    if owner is None:
        return (site,)
    return tuple(row[0] for row in conn.execute(
        "SELECT app_token FROM sites WHERE owner_id = ? ORDER BY app_token", owner))


def _prune_bytes(conn: sqlite3.Connection, sites: tuple[str, ...] | None, cap: int) -> None:
    """Delete the oldest entries of `sites` (as in `usage`) once they hold more than
    `cap` bytes, down to `LOW_WATER` of it."""
    used = usage(conn, sites)
    if used <= cap:
        return
    excess = used - int(cap * LOW_WATER)
    # Read from the indexes that hold each entry's size: never the entries themselves.
    args: tuple[str, ...] = ()
    if sites is None:
        index, where = "platform_log_sizes", ""
    elif sites:
        index, where = "platform_log_by_site", f"WHERE app_token IN ({', '.join('?' * len(sites))})"
        args = sites
    else:
        index, where = "platform_log_by_site", "WHERE app_token IS NULL"
    freed, cut = 0, None
    oldest = conn.execute(f"SELECT entry_id, bytes FROM platform_log INDEXED BY {index} "
                          f"{where} ORDER BY entry_id", args)
    for entry_id, size in oldest:
        freed += size
        cut = entry_id
        if freed >= excess:
            break
    oldest.close()
    if cut is not None:
        conn.execute(f"DELETE FROM platform_log {where} {'AND' if where else 'WHERE'} "
                     "entry_id <= ?", (*args, cut))


def prune(conn: sqlite3.Connection, app_token: str | None, keep: int | None = None) -> None:
    """Delete a site's (or the platform's own) entries beyond the newest `keep`
    (default `ENTRIES_KEPT`)."""
    keep = ENTRIES_KEPT if keep is None else keep
    row = conn.execute("SELECT entry_id FROM platform_log WHERE app_token IS ? "
                       "ORDER BY entry_id DESC LIMIT 1 OFFSET ?", (app_token, keep)).fetchone()
    if row is not None:
        conn.execute("DELETE FROM platform_log WHERE app_token IS ? AND entry_id <= ?",
                     (app_token, row[0]))


class LogWriter:
    """Saves request scopes to the table off the request path (see the module docstring).

    Scopes are written in batches, one transaction each: the writer waits up to
    `linger_s` after the first scope of a batch (or until `BATCH_SCOPES` are waiting) so
    that a busy server takes the write lock once per batch rather than once per request.
    Each commit also moves the database's data version, which empties what every
    read-only connection keeps of resolved calls (`basedb.platform.domain.resolved`),
    so batches are long. `flush` (what readers of the log call first, and the server
    before it closes the store) writes what is waiting at once."""

    LINGER_S = 1.0
    BATCH_SCOPES = 1024

    def __init__(self, transaction: Callable[[], AbstractContextManager[sqlite3.Connection]],
                 *, linger_s: float = LINGER_S, caps: LogCaps | None = None) -> None:
        self._transaction = transaction  # a write transaction on the platform's store
        self._linger_s = linger_s
        self.caps = caps or LogCaps()
        self._changed = threading.Condition()
        self._queue: list[LogScope] = []
        self._submitted = 0
        self._saved = 0
        self._wanted = 0  # flush() waits for everything up to here
        self._thread: threading.Thread | None = None

    def submit(self, scope: LogScope) -> None:
        """Take the scope's entries (the scope is left empty) to be saved soon."""
        if not scope.entries:
            return
        taken = LogScope(scope.log_id, scope.app_token, scope.user_id, list(scope.entries),
                         scope.dropped)
        scope.entries.clear()
        scope.dropped = 0
        with self._changed:
            self._queue.append(taken)
            self._submitted += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="basedb-platform-log",
                                                daemon=True)
                self._thread.start()
                atexit.register(self.flush)
            if len(self._queue) == 1 or len(self._queue) >= self.BATCH_SCOPES:
                self._changed.notify_all()

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until everything submitted so far is saved (or could not be)."""
        with self._changed:
            target = self._submitted
            if self._saved >= target:
                return
            self._wanted = max(self._wanted, target)
            self._changed.notify_all()
            self._changed.wait_for(lambda: self._saved >= target, timeout)

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: bool(self._queue))
                self._changed.wait_for(self._batch_ready, self._linger_s)
                batch, self._queue = self._queue, []
            try:
                with self._transaction() as conn:
                    save_all(conn, batch, self.caps)
            except Exception as exc:  # the text log has every detail; say why the table not
                for scope in batch:
                    write(f"basedb platform: log entries of {scope.log_id} were not saved: "
                          f"{type(exc).__name__}: {exc}")
            with self._changed:
                self._saved += len(batch)
                self._changed.notify_all()

    def _batch_ready(self) -> bool:
        """Whether the waiting scopes should be written now rather than after lingering
        (called with the condition held)."""
        return len(self._queue) >= self.BATCH_SCOPES or self._wanted > self._saved
