"""Worker processes that run Database Function statements, and who may use them when.

    outcome = QUERY_POOL.run(request, site=app_token, limits=limits)

A statement runs in one of a few worker processes (`sql_worker`), so that the platform
can stop it for certain: it asks first (`interrupt()` through the worker's control pipe)
and kills the worker when that does not work within `GRACE_S`. The pool decides:

- at most `per_site` statements of one site run at once, so that one site cannot take
  every worker; others wait for a turn (at most `wait_for_worker_s`, and at most
  `per_site_waiting` of one site and `waiting` in all; more are refused at once, since
  each waits in a thread of the server);
- a statement still running after `slow_after_s` is a slow one and needs a slot: at
  most `slow_per_site` per site, `slow_per_owner` for all the sites of one owner
  (basedb.platform.domain.quotas) and `slow_per_platform` in all; without one it is
  stopped ("busy"). Cheap statements never wait for a slot. A slow statement's worker
  drops to the lowest CPU priority (on Linux, SCHED_IDLE: it runs on what nothing else
  wants), and is retired afterwards, since a process cannot raise its priority again;
- at the deadline it is stopped ("deadline").

Workers start on first use, forked by a template process (`sql_worker.forker_main`,
single-threaded, the worker's modules loaded: not a fork of this threaded server), and
are replaced when killed or dead.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, Literal

from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain.runtimes.sql_worker import QueryRequest, WorkerSettings

MIB = 1024 * 1024
GRACE_S = 0.1
WORKERS = 16
PER_SITE = 2
PER_SITE_WAITING = 64
WAITING = 96
WAIT_FOR_WORKER_S = 5.0
WORKER_MEMORY_BYTES = 1024 * MIB
WORKER_TEMP_FILE_BYTES = 512 * MIB
WORKER_NICE = 0

Stop = Literal["deadline", "busy", "queue", "killed"]


@frozen_dataclass
class PoolLimits:
    deadline_s: float
    slow_after_s: float
    slow_per_site: int
    slow_per_platform: int
    slow_per_owner: int | None = None  # None: no share per owner


@frozen_dataclass
class Outcome:
    """What became of a statement: the worker's answer, or why the pool stopped it."""

    answer: tuple[Any, ...] | None = None
    stopped: Stop | None = None


@dataclass(eq=False, slots=True)
class _Worker:
    pid: int
    pidfd: int | None  # names this very process even once its pid is reused (Linux)
    tasks: Connection
    control: Connection
    seq: int = 0
    demoted: bool = False  # lowered priority for a slow statement: retire it after


@dataclass(slots=True)
class _SiteUse:
    running: int = 0
    waiting: int = 0


@dataclass(slots=True)
class QueryPool:
    """Worker processes and the rules for using them; safe to share between threads."""

    settings: WorkerSettings
    workers: int = WORKERS
    per_site: int = PER_SITE
    per_site_waiting: int = PER_SITE_WAITING
    waiting: int = WAITING
    wait_for_worker_s: float = WAIT_FOR_WORKER_S
    _lock: threading.Condition = field(default_factory=threading.Condition)
    _idle: list[_Worker] = field(default_factory=list)
    _live: int = 0
    _sites: dict[str, _SiteUse] = field(default_factory=dict)
    _waiting: int = 0
    _slow: Counter[str] = field(default_factory=Counter)
    _slow_by_owner: Counter[str] = field(default_factory=Counter)
    _forker: _Forker | None = None

    def run(self, request: QueryRequest, *, site: str, limits: PoolLimits,
            owner: str = "") -> Outcome:
        worker = self._acquire(site)
        if worker is None:
            return Outcome(stopped="queue")
        healthy = False
        try:
            outcome, healthy = self._drive(worker, request, site, owner, limits)
            return outcome
        finally:
            self._release(worker, site, healthy)

    def start_spare(self) -> None:
        """Start one idle worker now unless one is idle already (at server start-up:
        the first statement then waits for neither the forker nor a fork)."""
        with self._lock:
            if self._idle or self._live >= self.workers:
                return
            self._live += 1
        try:
            worker = self._start()
        except BaseException:
            with self._lock:
                self._live -= 1
                self._lock.notify_all()
            raise
        with self._lock:
            self._idle.append(worker)
            self._lock.notify_all()

    def slow_queries(self) -> dict[str, int]:
        with self._lock:
            return {site: n for site, n in self._slow.items() if n}

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
            self._live -= len(idle)
            forker, self._forker = self._forker, None
        for worker in idle:
            _stop(worker)
        if forker is not None:
            forker.close()

    # ------------------------------------------------------------------- workers

    def _acquire(self, site: str) -> _Worker | None:
        deadline = time.monotonic() + self.wait_for_worker_s
        with self._lock:
            use = self._sites.setdefault(site, _SiteUse())
            must_wait = use.running >= self.per_site or (not self._idle
                                                         and self._live >= self.workers)
            if must_wait and (use.waiting >= self.per_site_waiting
                              or self._waiting >= self.waiting):
                self._forget_if_unused(site)
                return None
            use.waiting += 1
            self._waiting += 1
            try:
                while use.running >= self.per_site or (not self._idle
                                                       and self._live >= self.workers):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return None
                    self._lock.wait(remaining)
                use.running += 1
                if self._idle:
                    return self._idle.pop()
                self._live += 1
            finally:
                use.waiting -= 1
                self._waiting -= 1
                self._forget_if_unused(site)
        try:
            return self._start()
        except BaseException:
            with self._lock:
                self._live -= 1
                self._sites.setdefault(site, _SiteUse()).running -= 1
                self._forget_if_unused(site)
                self._lock.notify_all()
            raise

    def _release(self, worker: _Worker, site: str, healthy: bool) -> None:
        healthy = healthy and not worker.demoted
        if not healthy:
            _stop(worker)
        with self._lock:
            self._sites[site].running -= 1
            self._forget_if_unused(site)
            if healthy:
                self._idle.append(worker)
            else:
                self._live -= 1
            self._lock.notify_all()

    def _forget_if_unused(self, site: str) -> None:
        use = self._sites.get(site)
        if use is not None and use.running <= 0 and use.waiting <= 0:
            del self._sites[site]

    def _start(self) -> _Worker:
        with self._lock:
            if self._forker is None:
                self._forker = _Forker()
            forker = self._forker
        return forker.fork(self.settings)

    # ----------------------------------------------------------------- one query

    def _drive(self, worker: _Worker, request: QueryRequest, site: str, owner: str,
               limits: PoolLimits) -> tuple[Outcome, bool]:
        """Run one statement on `worker`: (what became of it, the worker still usable)."""
        worker.seq += 1
        seq = worker.seq
        started = time.monotonic()
        slot = False
        try:
            try:
                worker.tasks.send((seq, request))
            except (OSError, EOFError):
                return Outcome(stopped="killed"), False
            got = _answer(worker, seq, min(limits.slow_after_s, limits.deadline_s))
            if got is not None:
                return got
            stop: Stop = "deadline"
            if limits.slow_after_s < limits.deadline_s:
                slot = self._take_slot(site, owner, limits)
                if slot:
                    _demote(worker)
                    remaining = limits.deadline_s - (time.monotonic() - started)
                    got = _answer(worker, seq, remaining)
                    if got is not None:
                        return got
                else:
                    stop = "busy"
            got = _answer(worker, seq, GRACE_S) if _interrupt(worker, seq) else None
            if got is None:
                return Outcome(stopped=stop), False  # deaf to the interrupt: killed
            outcome, usable = got
            if outcome.answer is not None and outcome.answer[0] != "interrupted":
                return got  # it finished just as it was stopped
            return Outcome(stopped=stop), usable
        finally:
            if slot:
                self._give_slot(site, owner)

    def _take_slot(self, site: str, owner: str, limits: PoolLimits) -> bool:
        with self._lock:
            if (self._slow[site] >= limits.slow_per_site
                    or (limits.slow_per_owner is not None
                        and self._slow_by_owner[owner] >= limits.slow_per_owner)
                    or sum(self._slow.values()) >= limits.slow_per_platform):
                return False
            self._slow[site] += 1
            self._slow_by_owner[owner] += 1
            return True

    def _give_slot(self, site: str, owner: str) -> None:
        with self._lock:
            for counts, key in ((self._slow, site), (self._slow_by_owner, owner)):
                counts[key] -= 1
                if counts[key] <= 0:
                    del counts[key]


def _answer(worker: _Worker, seq: int, timeout: float) -> tuple[Outcome, bool] | None:
    """The worker's answer within `timeout` seconds: (outcome, worker still usable), or
    None when it has not answered yet."""
    try:
        if not worker.tasks.poll(max(timeout, 0.0)):
            return None
        answer_seq, answer = worker.tasks.recv()
    except (EOFError, OSError):
        return Outcome(stopped="killed"), False
    if answer_seq != seq:  # cannot happen: a worker answers each request once, in order
        return Outcome(stopped="killed"), False
    return Outcome(answer=answer), True


def _demote(worker: _Worker) -> None:
    """Give a slow statement's worker only the CPU nothing else wants."""
    worker.demoted = True
    pid = worker.pid
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, pid, 19)
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))


def _interrupt(worker: _Worker, seq: int) -> bool:
    try:
        worker.control.send(seq)
    except (OSError, EOFError):
        return False
    return True


def _stop(worker: _Worker) -> None:
    for pipe in (worker.tasks, worker.control):
        pipe.close()
    # Its parent, the forker, reaps it.
    if worker.pidfd is not None:
        with contextlib.suppress(ProcessLookupError, OSError):
            signal.pidfd_send_signal(worker.pidfd, signal.SIGKILL)
        os.close(worker.pidfd)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker.pid, signal.SIGKILL)


class _Forker:
    """The template process workers are forked from (`sql_worker.forker_main`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        ours, theirs = socket.socketpair()
        self._channel = ours
        self._process = subprocess.Popen(
            [sys.executable, "-c", "import sys; from basedb.platform.domain.runtimes."
             "sql_worker import forker_main; forker_main(int(sys.argv[1]))",
             str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, close_fds=True,
            # Its own session: Ctrl+C at the terminal stops the server, which closes
            # the channel; the forker and its workers then end by themselves.
            start_new_session=True)
        theirs.close()

    def fork(self, settings: WorkerSettings) -> _Worker:
        tasks, worker_tasks = socket.socketpair()
        control, worker_control = socket.socketpair()
        try:
            with self._lock:
                socket.send_fds(self._channel, [pickle.dumps(settings)],
                                [worker_tasks.fileno(), worker_control.fileno()])
                answer = _receive_exactly(self._channel, 8)
        finally:
            worker_tasks.close()
            worker_control.close()
        (pid,) = struct.unpack("!q", answer)
        pidfd = None
        with contextlib.suppress(AttributeError, OSError):
            pidfd = os.pidfd_open(pid)
        return _Worker(pid, pidfd, Connection(tasks.detach()), Connection(control.detach()))

    def close(self) -> None:
        self._channel.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()


def _receive_exactly(channel: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = channel.recv(size - len(data))
        if not chunk:
            raise OSError("the query worker forker has stopped")
        data += chunk
    return data


def default_settings(statement_limits: dict[int, int]) -> WorkerSettings:
    return WorkerSettings(memory_bytes=WORKER_MEMORY_BYTES,
                          temp_file_bytes=WORKER_TEMP_FILE_BYTES, nice=WORKER_NICE,
                          statement_limits=statement_limits)

