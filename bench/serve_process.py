"""`basedb serve` in a subprocess for benchmarks, and the CPUs client and server run on.

    with served(ctx.basedb, data_dir, env=ctx.env, log=scratch / "serve.log",
                cpus={0}) as server:
        server.port                      # the free loopback port it chose
    with pinned({1}): ...                # run this process on CPU 1 meanwhile

With two or more usable CPUs the server gets one and the measuring side another, so that
a client's own CPU time never queues the server (the server is one process, one event
loop; it cannot use more than about one CPU for Python work anyway).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from bench.timing import BenchError

READY_TIMEOUT_S = 60.0
_LISTENING_RE = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")


def usable_cpus() -> list[int]:
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def cpu_split() -> tuple[set[int] | None, set[int] | None]:
    """(server CPUs, client CPUs): one each when there are two or more, else no pinning."""
    cpus = usable_cpus()
    if len(cpus) < 2 or not hasattr(os, "sched_setaffinity"):
        return None, None
    return {cpus[0]}, set(cpus[1:])


def pin_process(pid: int, cpus: set[int]) -> None:
    """Pin every thread of `pid` (Linux lists them in /proc; elsewhere the process)."""
    tasks = Path(f"/proc/{pid}/task")
    ids = [int(t.name) for t in tasks.iterdir()] if tasks.is_dir() else [pid]
    for task in ids:
        with suppress(ProcessLookupError):  # a thread may end meanwhile
            os.sched_setaffinity(task, cpus)


@contextmanager
def pinned(cpus: set[int] | None) -> Iterator[None]:
    """Run this thread (and the threads it starts) on `cpus` for the block."""
    if cpus is None:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


@dataclass(frozen=True, slots=True)
class Server:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def served(basedb: Sequence[str], data_dir: Path, *, env: Mapping[str, str], log: Path,
           cpus: set[int] | None) -> Iterator[Server]:
    """`basedb serve --port 0 --data DIR` on loopback until the block ends. Its stderr
    (start-up lines and the access log) goes to `log`, so a full pipe never stalls it."""
    argv = [*basedb, "serve", "--host", "127.0.0.1", "--port", "0", "--data", str(data_dir)]
    with log.open("wb") as sink:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=sink, env=dict(env))
    try:
        if cpus is not None:
            pin_process(process.pid, cpus)  # before it starts threads; again once ready
        port = _wait_until_listening(process, log)
        if cpus is not None:
            pin_process(process.pid, cpus)
        yield Server(process, port, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_listening(process: subprocess.Popen[bytes], log: Path) -> int:
    return wait_until_listening("`basedb serve`", process, log, _LISTENING_RE)


def wait_until_listening(name: str, process: subprocess.Popen[bytes], log: Path,
                         ready: re.Pattern[str]) -> int:
    """The port a server started as `process` says it listens on (`ready` finds it in
    its log, group 1); a BenchError when it exits first or says nothing in time."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace")
        found = ready.search(text)
        if found:
            return int(found.group(1))
        if process.poll() is not None:
            tail = "\n  ".join(text.strip().splitlines()[-5:])
            raise BenchError(f"{name} exited with status {process.returncode} before "
                             f"listening:\n  {tail}")
        time.sleep(0.002)
    raise BenchError(f"{name} did not say it was listening within {READY_TIMEOUT_S:g} s "
                     f"(see {log})")
