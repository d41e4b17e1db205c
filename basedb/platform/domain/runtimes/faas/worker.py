"""One FaaS worker: a started `runner.mjs` in its sandbox, and the conversation with it.

    worker = Worker.start(sandbox, slot=3, spawn=…)   # blocks until the runner is ready
    worker.load(source, env=…, egress=…)              # bind it to one function's code
    outcome = worker.call(input, context, routes, deadline)
    worker.stop()                                     # kill, reap, remove its directory

Messages to the runner go on its stdin; its answers come on a channel pipe of their own;
stdout and stderr together are the handler's log (see runner.mjs for the protocol). One
thread talks to a worker at a time (the pool hands it to one call), and every wait has
a deadline: a worker that does not answer in time is killed, never waited for.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from basedb.platform.domain.runtimes.faas.cgroups import WorkerGroup
from basedb.platform.domain.runtimes.faas.egress import EgressGrant
from basedb.platform.domain.runtimes.faas.masking import hidden
from basedb.platform.domain.runtimes.faas.outcome import CallLog, Outcome
from basedb.platform.domain.runtimes.faas.records import RecordCallError, RecordRoutes
from basedb.platform.domain.runtimes.faas.sandbox import Sandbox, WorkerPaths

RUNNER = Path(__file__).with_name("runner.mjs")
HANDLER_NAME = "index.mjs"
DEMOTE_AFTER_S = 0.1  # of one call, before the worker's CPU weight is lowered
DEMOTED_NICE = 10  # a tenth of a normal process's weight
EGRESS_NAME = "egress.sock"
_READ_CHUNK = 65536

Spawner = Callable[[Callable[[], subprocess.Popen[bytes]]], "Future[subprocess.Popen[bytes]]"]
"""Runs Popen on the pool's long-lived spawning thread (see pool.py for why)."""


class WorkerFailed(Exception):
    """A worker could not be started; the message says why (for the log)."""


@dataclass(slots=True)
class _Channel:
    """Lines from the runner's channel pipe."""

    fd: int
    limit: int
    pending: bytearray = field(default_factory=bytearray)
    closed: bool = False
    oversized: bool = False

    def feed(self, chunk: bytes) -> list[Any]:
        """The complete messages in `chunk` (with what came before); non-messages are
        dropped: a handler writing to the channel cannot forge anything it could not
        do through ctx."""
        if not chunk:
            self.closed = True
            return []
        self.pending += chunk
        messages = []
        while (end := self.pending.find(b"\n")) >= 0:
            line = bytes(self.pending[:end])
            del self.pending[:end + 1]
            if len(line) > self.limit:
                self.oversized = True
                continue
            try:
                message = json.loads(line)
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                continue
            if isinstance(message, dict):
                messages.append(message)
        if len(self.pending) > self.limit:
            self.oversized = True
        return messages


class Worker:
    def __init__(self, *, sandbox: Sandbox, slot: int, paths: WorkerPaths,
                 process: subprocess.Popen[bytes], channel: int, group: WorkerGroup | None,
                 pid: int) -> None:
        self.sandbox = sandbox
        self.slot = slot
        self.paths = paths
        self.process = process
        self.pid = pid  # of Node.js itself (bubblewrap: the sandbox's PID 1)
        self.group = group
        self.channel = _Channel(channel, sandbox.limits.max_message_bytes)
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin.fileno()
        self._log = process.stdout.fileno()
        os.set_blocking(self._stdin, False)
        os.set_blocking(self._log, False)
        os.set_blocking(channel, False)
        self._outgoing = bytearray()
        self._log_open = True
        # One selector for the worker's life: the channel and the log always, stdin while
        # something waits to be written.
        self._selector = selectors.DefaultSelector()
        self._selector.register(channel, selectors.EVENT_READ, "channel")
        self._selector.register(self._log, selectors.EVENT_READ, "log")
        self._writing = False
        self.loaded = False
        self.stopped = False
        self.calls = 0
        self.memory_mb: float | None = None  # its PSS once warm (pool.py, memory.py)
        self.last_used = time.monotonic()
        self.startup_log = CallLog(4096, 4096)
        self.oom_killed = False  # the kernel stopped it at its memory limit
        self.demoted = False  # lowered for running long (see `demote`)
        self.grant: EgressGrant | None = None  # its egress socket, if its function has hosts
        self.on_stop: list[Callable[[], None]] = []

    # -------------------------------------------------------------------- start

    @classmethod
    def start(cls, sandbox: Sandbox, *, slot: int, root: Path, spawn: Spawner,
              group: WorkerGroup | None) -> Worker:
        """A started worker that said it is ready, or WorkerFailed."""
        paths = _make_dirs(root, sandbox, slot)
        channel_read, channel_write = os.pipe()
        info_read, info_write = os.pipe() if sandbox.isolated else (-1, -1)
        block_read, block_write = os.pipe() if sandbox.isolated else (-1, -1)
        own = [fd for fd in (channel_write, info_write, block_read) if fd >= 0]
        launch = sandbox.launch(paths, slot=slot, channel_fd=channel_write,
                                info_fd=info_write if info_write >= 0 else None,
                                block_fd=block_read if block_read >= 0 else None)

        def popen() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                launch.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, cwd=launch.cwd, env=launch.env, pass_fds=own,
                start_new_session=True, user=launch.user, group=launch.user,
                extra_groups=[] if launch.user is not None else None)

        try:
            process = spawn(popen).result()
        except OSError as error:
            for fd in (channel_read, *own, info_read, block_write):
                if fd >= 0:
                    os.close(fd)
            _remove_dirs(paths)
            raise WorkerFailed(f"cannot start {launch.argv[0]}: {error}") from None
        finally:
            for fd in own:
                with contextlib.suppress(OSError):
                    os.close(fd)
        worker = cls(sandbox=sandbox, slot=slot, paths=paths, process=process,
                     channel=channel_read, group=group, pid=process.pid)
        deadline = time.monotonic() + sandbox.limits.spawn_timeout_s
        try:
            if sandbox.isolated:
                worker.pid = _sandbox_pid(info_read, deadline)
            if group is not None:
                group.attach(worker.pid)  # before any code of the runner runs
            if block_write >= 0:
                os.write(block_write, b"1")  # bubblewrap may now exec Node.js
            worker._await_ready(deadline)
        except (OSError, WorkerFailed) as error:
            worker.kill_and_drain(worker.startup_log)
            worker.stop()
            detail = worker.startup_log.text().strip()
            raise WorkerFailed(f"{error}" + (f": {detail[-500:]}" if detail else "")) from None
        finally:
            for fd in (info_read, block_write):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
        return worker

    def _await_ready(self, deadline: float) -> None:
        while True:
            for message in self._pump(deadline, self.startup_log):
                if message.get("type") == "ready":
                    return
            if self.channel.closed:
                raise WorkerFailed(f"the runner exited during start-up (status "
                                   f"{self.process.poll()})")
            if time.monotonic() >= deadline:
                raise WorkerFailed("the runner did not start in time")

    # --------------------------------------------------------------------- calls

    def load(self, source: str, *, env: dict[str, str], egress: bool) -> None:
        """Bind this worker to a function: its handler is imported before the next call."""
        handler = self.paths.code / HANDLER_NAME
        handler.write_text(source, encoding="utf-8")
        handler.chmod(0o644)
        code = self.sandbox.code_dir(self.paths)
        self._queue({"type": "load", "module": f"{code}/{HANDLER_NAME}", "env": env,
                     "hide": list(hidden(env.values())),
                     "egress": f"{code}/{EGRESS_NAME}" if egress else None})

    def call(self, call_id: int, input: Any, context: dict[str, Any], routes: RecordRoutes,
             deadline: float, log: CallLog) -> Outcome:
        """Run one call to its end (or the deadline); the worker is stopped unless the
        outcome says it is quiet and may take another call. Every message of the call
        carries `call_id`: anything else the channel says is not about this call and is
        ignored (a worker runs one call at a time, so there is no other call a handler
        could speak for)."""
        self.calls += 1
        outcome = Outcome(log=log)
        self._queue({"type": "call", "call": call_id, "input": input, "context": context})
        try:
            self._converse(call_id, routes, deadline, outcome)
        except OSError as error:
            outcome.kind, outcome.failure, outcome.detail = "exited", "", str(error)
        outcome.writes = routes.writes
        self._drain_log(outcome.log)
        if not (outcome.quiet and outcome.kind in ("result", "failure")):
            outcome.quiet = False
            self.stop()  # (its groups stay until it is reaped, then are read and removed)
            outcome.out_of_memory = self.oom_killed
        self.last_used = time.monotonic()
        return outcome

    def _converse(self, call_id: int, routes: RecordRoutes, deadline: float,
                  outcome: Outcome) -> None:
        demote_at = min(time.monotonic() + DEMOTE_AFTER_S, deadline)
        while True:
            if not self.demoted and time.monotonic() >= demote_at:
                self.demote()
            wait_until = deadline if self.demoted else demote_at
            for message in self._pump(wait_until, outcome.log):
                kind = message.get("type")
                if kind == "loaded":
                    self.loaded = True
                elif kind == "failure" and message.get("call") is None:
                    outcome.kind, outcome.failure = "failure", str(message.get("kind") or "")
                    outcome.detail = str(message.get("detail") or "")
                    return  # the handler did not load; the worker is of no further use
                elif message.get("call") != call_id:
                    continue  # a late message of an earlier call, or a forgery
                elif kind == "record":
                    self._queue(_record_reply(routes, message, call_id))
                elif kind in ("result", "failure"):
                    outcome.kind = str(kind)
                    outcome.value = message.get("value")
                    outcome.failure = str(message.get("kind") or "")
                    outcome.detail = str(message.get("detail") or "")
                    outcome.quiet = message.get("quiet") is True
                    return
            if self.channel.oversized:
                outcome.kind = "too_large"
                return
            if self.channel.closed:
                return  # the worker died: kind "exited"
            if time.monotonic() >= deadline:
                outcome.kind = "timeout"
                return

    # ------------------------------------------------------------------------ I/O

    def _queue(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        self._outgoing += text.encode("utf-8") + b"\n"
        try:  # most messages fit in the pipe at once: no wait for the selector
            written = os.write(self._stdin, self._outgoing)
        except (BlockingIOError, OSError):
            return
        del self._outgoing[:written]

    def _pump(self, deadline: float, log: CallLog) -> list[Any]:
        """Write what is queued, read what arrived; returns channel messages (possibly
        none) once something happened or the deadline passed."""
        self._want_write(bool(self._outgoing))
        if self.channel.closed and not self._log_open:
            return []
        messages: list[Any] = []
        for key, _ in self._selector.select(max(deadline - time.monotonic(), 0)):
            if key.data == "stdin":
                try:
                    written = os.write(self._stdin, self._outgoing)
                except BlockingIOError:
                    continue
                except OSError:  # the runner is gone; its channel will say so
                    self._outgoing.clear()
                    self._want_write(False)
                    continue
                del self._outgoing[:written]
                self._want_write(bool(self._outgoing))
            elif key.data == "log":
                chunk = _read(self._log)
                if chunk is None:
                    continue
                if chunk:
                    log.add(chunk)
                else:
                    self._log_open = False
                    self._selector.unregister(self._log)
            else:
                chunk = _read(self.channel.fd)
                if chunk is not None:
                    messages += self.channel.feed(chunk)
                    if self.channel.closed:
                        self._selector.unregister(self.channel.fd)
        return messages

    def _want_write(self, wanted: bool) -> None:
        if wanted != self._writing and not self.stopped:
            if wanted:
                self._selector.register(self._stdin, selectors.EVENT_WRITE, "stdin")
            else:
                self._selector.unregister(self._stdin)
            self._writing = wanted

    def _drain_log(self, log: CallLog) -> None:
        """What the handler printed before its last message is in the pipe: keep it."""
        while self._log_open:
            chunk = _read(self._log)
            if not chunk:
                if chunk is not None:
                    self._log_open = False
                return
            log.add(chunk)

    # ------------------------------------------------------------------- priority

    def demote(self) -> None:
        """A call that runs past DEMOTE_AFTER_S gives way: the worker gets a tenth of
        the CPU weight, so that handlers spinning on every core leave the server's other
        requests (and short calls of other workers) their CPU. Short calls, the usual
        case, never pay for it."""
        self.demoted = True
        _set_priority(self.pid, DEMOTED_NICE, threads=True)

    def restore(self) -> bool:
        """Back to normal weight after a long call; False when that is not allowed (the
        worker should then not take another call)."""
        if not self.demoted:
            return True
        self.demoted = not _set_priority(self.pid, 0, threads=os.geteuid() == 0)
        return not self.demoted

    # ----------------------------------------------------------------------- stop

    def kill_and_drain(self, log: CallLog) -> None:
        """Kill the worker and keep whatever it printed (why it failed to start)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self._drain_log(log)

    def stop(self) -> None:
        """Kill the worker (and its sandbox), reap it, remove its directory and groups."""
        if self.stopped:
            return
        self.stopped = True
        # The direct child: not reaped yet, so its pid cannot belong to anyone else. In a
        # bubblewrap sandbox its death takes the whole PID namespace with it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        for closing in (self.process.stdin, self.process.stdout):
            if closing is not None:
                with contextlib.suppress(OSError):
                    closing.close()
        self._selector.close()
        with contextlib.suppress(OSError):
            os.close(self.channel.fd)
        self.channel.closed = True
        self._log_open = False
        for callback in self.on_stop:
            with contextlib.suppress(Exception):
                callback()
        if self.group is not None:
            self.oom_killed = self.group.oom_kills() > 0
            self.group.remove()
        _remove_dirs(self.paths)

    @property
    def alive(self) -> bool:
        return not self.stopped and self.process.poll() is None

    def cpu_seconds(self) -> float:
        """CPU time Node.js has used so far (Linux; 0 where /proc is missing)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _record_reply(routes: RecordRoutes, message: dict[str, Any], call_id: int) -> dict[str, Any]:
    reply: dict[str, Any] = {"type": "reply", "call": call_id, "id": message.get("id")}
    try:
        return reply | {"ok": True, "value": routes.call(message.get("op"), message.get("args"))}
    except RecordCallError as refused:
        return reply | {"ok": False, "error": {"code": refused.code, "message": refused.message}}


def _read(fd: int) -> bytes | None:
    """A chunk, b"" at end of file, None when nothing is there yet."""
    try:
        return os.read(fd, _READ_CHUNK)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def _sandbox_pid(info_fd: int, deadline: float) -> int:
    """The pid of bubblewrap's sandboxed child, from `--info-fd` ({"child-pid": N, …})."""
    data = b""
    with selectors.DefaultSelector() as selector:
        selector.register(info_fd, selectors.EVENT_READ)
        while b"}" not in data:
            if not selector.select(max(deadline - time.monotonic(), 0)):
                raise WorkerFailed("bubblewrap did not report its sandbox in time")
            chunk = os.read(info_fd, 4096)
            if not chunk:
                raise WorkerFailed("bubblewrap exited before starting its sandbox")
            data += chunk
    try:
        return int(json.loads(data[:data.index(b"}") + 1])["child-pid"])
    except (ValueError, KeyError, TypeError):
        raise WorkerFailed(f"bubblewrap reported {data[:200]!r}") from None


def _set_priority(pid: int, nice: int, *, threads: bool) -> bool:
    """Set the scheduling weight of a worker (Linux): its session's autogroup (each
    worker has a session of its own) and, where allowed, each of its threads. Whether
    it took; raising a nice value is always allowed, lowering one needs root."""
    done = False
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/autogroup").write_text(str(nice), encoding="ascii")
        done = True
    if threads and hasattr(os, "setpriority"):
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                os.setpriority(os.PRIO_PROCESS, int(task), nice)
            done = True
        except (OSError, ValueError):
            pass
    return done


# -------------------------------------------------------------------- directories


def _make_dirs(root: Path, sandbox: Sandbox, slot: int) -> WorkerPaths:
    """`<root>/<platform pid>-<random>/code` (runner and handler, read-only to the worker)
    and, for a process sandbox, `…/work` (the worker's own)."""
    directory = root / f"{os.getpid()}-{slot}-{secrets.token_hex(4)}"
    directory.mkdir(mode=0o711)
    code = directory / "code"
    code.mkdir(mode=0o755)
    shutil.copyfile(RUNNER, code / RUNNER.name)
    (code / RUNNER.name).chmod(0o644)
    work = None
    if not sandbox.isolated:
        work = directory / "work"
        work.mkdir(mode=0o700)
        user = sandbox.user_for(slot)
        if user is not None:
            os.chown(work, user, user)
    return WorkerPaths(directory, code, work)


def _remove_dirs(paths: WorkerPaths) -> None:
    shutil.rmtree(paths.root, ignore_errors=True)
