"""Analyse many Database Function queries on several CPUs: forked processes, one pipe each.

Analysing a query (parse, resolve names, type) is pure CPU work in Python, one query at a
time, and queries do not depend on one another; a large workspace's check spends most of
its time there. Forked after the workspace is loaded, each worker already holds the
catalog and the imported analyser, analyses every n-th query and sends back only what
the check rules read (`CachedAnalysis`: problems, `$n` used, bindings), so the parent's
findings are exactly those of a serial run, in the same order.

Only where `os.fork` is safe to use (Linux, from a process without threads of its own:
the `check` command). A worker that fails for any reason costs speed, not results: the
parent analyses its share itself.
"""

from __future__ import annotations

import contextlib
import gc
import mmap
import os
import pickle
import signal
import struct
from collections.abc import Sequence

from basedb.check.sql.cache import CachedAnalysis
from basedb.sql.model import ParamBinding, SqlAnalysis, SqlProblem
from basedb.workspace.model import EMPTY_CATALOG, RECORD_ID_FIELD, Catalog, Field, Table

Query = tuple[str, int, Sequence[str | None]]  # main.sql, declared params, their kinds
# A worker's answer per query: problems as tuples, $n used, bindings as positions in the
# catalog (table index, field index or -1 for record_id) instead of objects.
_Encoded = tuple[tuple[tuple[object, ...], ...], tuple[int, ...],
                 tuple[tuple[int, int, int, bool], ...]]

MIN_QUERIES_PER_PROCESS = 48  # below this, forking costs more than it saves
RELEASE_EVERY = 64  # collect the young generation this often (trees are cyclic)


def summarize(analysis: SqlAnalysis | CachedAnalysis) -> CachedAnalysis:
    """What the check rules read of an analysis, without its parse tree."""
    if isinstance(analysis, CachedAnalysis):
        return analysis
    return CachedAnalysis(analysis.problems, analysis.params, analysis.bindings)


def analyse_in_processes(queries: Sequence[Query], catalog: Catalog, *, resolve: bool,
                         processes: int) -> list[CachedAnalysis]:
    """Analyse `queries` with up to `processes` processes (this one included); the
    summaries come back in the order of `queries`."""
    count = max(1, min(processes, len(queries) // MIN_QUERIES_PER_PROCESS))
    results: list[CachedAnalysis | None] = [None] * len(queries)
    workers: list[tuple[int, int, int]] = []  # (share, pid, read end of its pipe)
    for share in range(1, count):
        worker = _fork_worker(queries, share, count, catalog, resolve)
        if worker is None:
            break
        workers.append((share, *worker))
    forked = {share for share, _, _ in workers}
    try:
        for share in [0, *(s for s in range(1, count) if s not in forked)]:
            _analyse_share(queries, share, count, catalog, resolve, results)
    except BaseException:  # interrupted: leave no worker behind
        for _, pid, fd in workers:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            _collect(pid, fd)
        raise
    for share, pid, fd in workers:
        encoded = _collect(pid, fd)
        if encoded is None or len(encoded) != len(range(share, len(queries), count)):
            _analyse_share(queries, share, count, catalog, resolve, results)
            continue
        for index, item in zip(range(share, len(queries), count), encoded, strict=True):
            results[index] = _decode(item, catalog)
    return [result for result in results if result is not None]


def _analyse_share(queries: Sequence[Query], share: int, count: int, catalog: Catalog,
                   resolve: bool, results: list[CachedAnalysis | None]) -> None:
    for done, index in enumerate(range(share, len(queries), count), start=1):
        results[index] = _summary(queries[index], catalog, resolve)
        if done % RELEASE_EVERY == 0:
            gc.collect(0)


def _fork_worker(queries: Sequence[Query], share: int, count: int, catalog: Catalog,
                 resolve: bool) -> tuple[int, int] | None:
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid:
        os.close(write_end)
        return pid, read_end
    # The worker: analyse, write the answer, and leave without running the parent's
    # exit handlers or flushing its buffered output.
    status = 1
    try:
        os.close(read_end)
        results: list[CachedAnalysis | None] = [None] * len(queries)
        _analyse_share(queries, share, count, catalog, resolve, results)
        positions = _positions(catalog)
        payload = pickle.dumps([_encode(results[index], positions)
                                for index in range(share, len(queries), count)],
                               protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
        status = 0
    finally:
        os._exit(status)


def _collect(pid: int, fd: int) -> list[_Encoded] | None:
    chunks = []
    with contextlib.suppress(OSError), os.fdopen(fd, "rb") as pipe:
        while chunk := pipe.read(1 << 20):
            chunks.append(chunk)
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return None
    if status != 0:
        return None
    try:
        encoded = pickle.loads(b"".join(chunks))
    except Exception:  # a truncated or garbled answer: analyse that share here instead
        return None
    return encoded if isinstance(encoded, list) else None


def _positions(catalog: Catalog) -> dict[int, tuple[int, dict[int, int]]]:
    return {id(table): (t, {id(f): i for i, f in enumerate(table.fields)})
            for t, table in enumerate(catalog.tables)}


def _encode(analysis: CachedAnalysis | None,
            positions: dict[int, tuple[int, dict[int, int]]]) -> _Encoded:
    if analysis is None:
        raise ValueError("a query of this share was not analysed")
    bindings = []
    for b in analysis.bindings:
        table_index, fields = positions[id(b.table)]
        field_index = -1 if b.field is RECORD_ID_FIELD else fields[id(b.field)]
        bindings.append((b.param_index, table_index, field_index, b.provable))
    problems = tuple((p.code, p.message, p.fix, p.line, p.column) for p in analysis.problems)
    return problems, tuple(sorted(analysis.params)), tuple(bindings)


def _decode(item: _Encoded, catalog: Catalog) -> CachedAnalysis:
    problems, params, bindings = item
    decoded = []
    for param_index, table_index, field_index, provable in bindings:
        table: Table = catalog.tables[table_index]
        field: Field = RECORD_ID_FIELD if field_index < 0 else table.fields[field_index]
        decoded.append(ParamBinding(param_index, table, field, provable))
    return CachedAnalysis(tuple(SqlProblem(*p) for p in problems),  # type: ignore[arg-type]
                          frozenset(params), tuple(decoded))


# --------------------------------------------------------------------------- early worker


class EarlyWorker:
    """One worker forked before the workspace is loaded, so that its own start (the
    fork, importing sqlglot and the analyser) overlaps the parent's loading of the
    workspace. It waits for the queries, then the two processes meet in the middle:
    the worker analyses from the first query forwards, the parent from the last one
    backwards, each claiming one query at a time in a small shared page, until they
    meet. Neither waits for the other to finish a fixed share, whatever each started
    with or however busy its CPU.

    The queries and the catalog are handed over in an anonymous in-memory file written
    by the parent, with only their size sent down a pipe (so the parent never blocks on
    a worker still importing). Claims cannot leave a query to no one: each process stops
    only at a query the other has claimed (a stale read of the other's claim makes both
    analyse one query, never neither). Whatever the worker does not answer, for any
    reason, the parent analyses itself.
    """

    def __init__(self, pid: int, start_fd: int, answer_fd: int, payload_fd: int,
                 claims: memoryview) -> None:
        self.pid = pid
        self._start_fd: int | None = start_fd
        self._answer_fd: int | None = answer_fd
        self._payload_fd: int | None = payload_fd
        self._claims = claims

    @classmethod
    def start(cls) -> EarlyWorker | None:
        """Fork the worker; None where that fails (the check then runs without it)."""
        try:
            payload_fd = os.memfd_create("basedb-check-queries", os.MFD_CLOEXEC)
        except (AttributeError, OSError):
            return None
        pipes: list[int] = []
        try:
            claims = memoryview(mmap.mmap(-1, mmap.PAGESIZE)).cast("q")
            start_read, start_write = os.pipe()
            pipes += [start_read, start_write]
            answer_read, answer_write = os.pipe()
            pipes += [answer_read, answer_write]
            pid = os.fork()
        except OSError:
            for fd in (payload_fd, *pipes):
                os.close(fd)
            return None
        if pid:
            os.close(start_read)
            os.close(answer_write)
            return cls(pid, start_write, answer_read, payload_fd, claims)
        status = 1
        try:
            os.close(start_write)
            os.close(answer_read)
            _early_worker(start_read, answer_write, payload_fd, claims)
            status = 0
        finally:
            os._exit(status)

    def analyse(self, queries: Sequence[Query], catalog: Catalog, *,
                resolve: bool) -> list[CachedAnalysis]:
        """Analyse `queries` with the worker; the summaries in the order of `queries`."""
        results: list[CachedAnalysis | None] = [None] * len(queries)
        handed = self._hand_over(queries, catalog, resolve)
        try:
            done = 0
            claims = self._claims
            while True:
                index = claims[_BACK] - 1
                if index < claims[_FRONT]:
                    break
                claims[_BACK] = index
                results[index] = _summary(queries[index], catalog, resolve)
                done += 1
                if done % RELEASE_EVERY == 0:
                    gc.collect(0)
            encoded = self._answer() if handed else None
        finally:
            self.close()
        for index, item in enumerate(encoded or ()):
            if index < len(results) and results[index] is None:
                results[index] = _decode(item, catalog)
        left = [index for index, result in enumerate(results) if result is None]
        for done, index in enumerate(left, start=1):  # the worker failed: analyse here
            results[index] = _summary(queries[index], catalog, resolve)
            if done % RELEASE_EVERY == 0:
                gc.collect(0)
        return [result for result in results if result is not None]

    def _hand_over(self, queries: Sequence[Query], catalog: Catalog, resolve: bool) -> bool:
        """Give the worker its queries and let it start; False if it cannot have them
        (the parent then claims every query itself)."""
        self._claims[_FRONT], self._claims[_BACK] = 0, len(queries)
        try:
            payload = pickle.dumps((list(queries), catalog, resolve),
                                   protocol=pickle.HIGHEST_PROTOCOL)
            assert self._payload_fd is not None and self._start_fd is not None
            view, written = memoryview(payload), 0
            while written < len(payload):
                written += os.pwrite(self._payload_fd, view[written:], written)
            os.write(self._start_fd, _SIZE.pack(len(payload)))
        except Exception:  # a catalog that will not pickle, a full memory: go alone
            return False
        return True

    def _answer(self) -> list[_Encoded] | None:
        fd, self._answer_fd = self._answer_fd, None
        if fd is None:
            return None
        chunks = []
        with contextlib.suppress(OSError), os.fdopen(fd, "rb") as pipe:
            while chunk := pipe.read(1 << 20):
                chunks.append(chunk)
        try:
            encoded = pickle.loads(b"".join(chunks))
        except Exception:  # a truncated or garbled answer: analyse those queries here
            return None
        return encoded if isinstance(encoded, list) else None

    def close(self) -> None:
        """Stop the worker (if it still runs) and release what it was given."""
        for name in ("_start_fd", "_answer_fd", "_payload_fd"):
            fd = getattr(self, name)
            if fd is not None:
                setattr(self, name, None)
                with contextlib.suppress(OSError):
                    os.close(fd)
        if self.pid:
            pid, self.pid = self.pid, 0
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


# The shared claims, one machine word each (written whole, and each by one process only):
# the first query the worker has not claimed, the last query the parent has claimed.
_FRONT, _BACK = 0, 1
_SIZE = struct.Struct("=q")


def _summary(query: Query, catalog: Catalog, resolve: bool) -> CachedAnalysis:
    # Lazy: sqlglot loads only in a process that analyses (a forked worker has it already;
    # an early worker loads it while the parent loads the workspace).
    from basedb.sql.analysis import analyze_sql  # noqa: PLC0415

    sql, param_count, kinds = query
    return summarize(analyze_sql(sql, catalog, param_count, resolve=resolve,
                                 param_kinds=kinds))


def _early_worker(start_fd: int, answer_fd: int, payload_fd: int,
                  claims: memoryview) -> None:
    _summary(("SELECT 1", 0, ()), EMPTY_CATALOG, False)  # load the analyser meanwhile
    with os.fdopen(start_fd, "rb") as start:
        size = start.read(_SIZE.size)
    if len(size) != _SIZE.size:
        return  # the parent needs no worker after all
    chunks: list[bytes] = []
    left, offset = _SIZE.unpack(size)[0], 0
    while left > 0 and (chunk := os.pread(payload_fd, left, offset)):
        chunks.append(chunk)
        left -= len(chunk)
        offset += len(chunk)
    os.close(payload_fd)
    queries, catalog, resolve = pickle.loads(b"".join(chunks))
    del chunks
    gc.freeze()  # what exists now lives until the end: keep it out of the collections
    results: list[CachedAnalysis] = []
    while True:
        front = claims[_FRONT]
        if front >= claims[_BACK]:
            break
        claims[_FRONT] = front + 1
        results.append(_summary(queries[front], catalog, resolve))
        if len(results) % RELEASE_EVERY == 0:
            gc.collect(0)
    positions = _positions(catalog)
    answer = pickle.dumps([_encode(result, positions) for result in results],
                          protocol=pickle.HIGHEST_PROTOCOL)
    with os.fdopen(answer_fd, "wb") as pipe:
        pipe.write(answer)
