"""Timing: fresh processes (interleaved with their peers) and in-process calls.

Peers are run alternately (check, floor, check, floor, …) after one discarded warm-up
each, so that a burst of load on the machine hits both sides of a ratio alike. The
figure of a measure is the median of its runs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class BenchError(Exception):
    """A benchmark could not be measured (a command failed, a workspace was not clean)."""


@dataclass(slots=True)
class Samples:
    """Wall-clock seconds of repeated runs of one measure."""

    label: str
    command: list[str] = field(default_factory=list)  # empty for in-process measures
    seconds: list[float] = field(default_factory=list)  # or bytes or tokens (`unit`)
    unit: str = "seconds"

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"label": self.label, "runs": len(self.seconds),
                               "median": round(self.median, 6),
                               "min": round(min(self.seconds), 6),
                               "max": round(max(self.seconds), 6),
                               "samples": [round(s, 6) for s in self.seconds]}
        if self.command:
            doc["command"] = self.command
        if self.unit != "seconds":
            doc["unit"] = self.unit
        return doc


def run_process(argv: Sequence[str], *, env: Mapping[str, str], ok: frozenset[int],
                capture: bool = False, cwd: Path | None = None,
                ) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run once; (wall seconds, completed process). Output goes to /dev/null unless
    `capture`. Raises BenchError when the exit status is not in `ok`."""
    out = subprocess.PIPE if capture else subprocess.DEVNULL
    started = time.perf_counter()
    done = subprocess.run(list(argv), stdout=out, stderr=subprocess.PIPE, env=dict(env),
                          cwd=cwd, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in ok:
        tail = (done.stderr or "").strip().splitlines()[-5:]
        raise BenchError(f"`{' '.join(argv)}` exited with status {done.returncode}"
                         + (":\n  " + "\n  ".join(tail) if tail else "."))
    return seconds, done


def compare_processes(commands: Mapping[str, Sequence[str]], *, runs: int,
                      env: Mapping[str, str], ok: frozenset[int] = frozenset({0}),
                      warmup: int = 1) -> dict[str, Samples]:
    """Time each command `runs` times as a fresh process, interleaved; label → Samples."""
    samples = {label: Samples(label, list(argv)) for label, argv in commands.items()}
    for _ in range(warmup):  # fills the page cache and writes .pyc files
        for argv in commands.values():
            run_process(argv, env=env, ok=ok)
    for _ in range(runs):
        for label, argv in commands.items():
            seconds, _ = run_process(argv, env=env, ok=ok)
            samples[label].seconds.append(seconds)
    return samples


def time_calls(label: str, call: Callable[[], Any], *, runs: int,
               warmup: int = 1) -> Samples:
    """Time an in-process call `runs` times (after `warmup` discarded calls)."""
    for _ in range(warmup):
        call()
    samples = Samples(label)
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.seconds.append(time.perf_counter() - started)
    return samples


# Forks the measured command from a small interpreter and reports its rusage. Linux keeps
# the high-water mark of the memory a process had before exec, so a command started
# straight from this (large) process would report at least this process's own size.
_RSS_WRAPPER = """
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        os.execvp(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def peak_rss(argv: Sequence[str], *, env: Mapping[str, str],
             ok: frozenset[int] = frozenset({0})) -> int:
    """Run once; the command's peak resident set size in bytes. (Exact above the small
    interpreter it is forked from, about 10 MB; POSIX only.)"""
    done = subprocess.run([sys.executable, "-c", _RSS_WRAPPER, *argv], env=dict(env),
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          check=False)
    try:
        maxrss, status = (int(word) for word in done.stdout.split()[-2:])
    except ValueError:
        raise BenchError(f"could not measure the memory of `{' '.join(argv)}`: "
                         f"{done.stdout[-300:]!r}") from None
    if status not in ok:
        raise BenchError(f"`{' '.join(argv)}` exited with status {status}")
    # ru_maxrss is in kilobytes on Linux, in bytes on macOS.
    return maxrss if sys.platform == "darwin" else maxrss * 1024
