"""Control groups for FaaS workers: a resident-memory cap and a task cap, where the
platform may write the cgroup tree (as root, v1 or v2).

    driver = find_cgroups()                  # None: no writable memory controller
    group = driver.create("4242-7", limits)  # one per worker
    group.attach(pid)                        # before the worker runs any code
    group.oom_kills()                        # > 0: the kernel killed it for memory
    group.remove()

Layout: a `basedb-faas` group under each controller's root holds one child per worker,
named `<platform pid>-<n>`, so that `clean_stale` can remove what a platform that died
left behind.

CPU is not shared out here: workers grouped under one CPU weight wait behind each other
and behind the server on every wake-up (measured: a third of the throughput of
ungrouped workers), so a worker that keeps running past a short grace period is lowered
instead (`worker.Worker.demote`), which costs well-behaved calls nothing.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain.runtimes.faas.limits import FaasLimits

ROOT_NAME = "basedb-faas"
MOUNTINFO = Path("/proc/self/mountinfo")


def _write(path: Path, value: str) -> None:
    path.write_text(value, encoding="ascii")


def _read_int(path: Path, key: str) -> int:
    """`key N` from a flat keyed file (memory.events, memory.oom_control); 0 if absent."""
    try:
        text = path.read_text(encoding="ascii")
    except OSError:
        return 0
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@frozen_dataclass
class WorkerGroup:
    """The cgroups of one worker."""

    version: int
    procs: tuple[Path, ...]  # cgroup.procs files the worker joins
    owned: tuple[Path, ...]  # directories made for it (removed at the end)
    oom_file: Path
    oom_key: str

    def attach(self, pid: int) -> None:
        for procs in self.procs:
            _write(procs, str(pid))

    def oom_kills(self) -> int:
        return _read_int(self.oom_file, self.oom_key)

    def remove(self) -> None:
        for directory in self.owned:
            _remove_group(directory)


def _remove_group(directory: Path) -> None:
    """Kill whatever is left in a worker's group, then remove it (best effort: a group
    still emptying is left for `clean_stale`)."""
    with contextlib.suppress(OSError):
        for line in (directory / "cgroup.procs").read_text(encoding="ascii").split():
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(line), signal.SIGKILL)
    for _ in range(50):
        try:
            directory.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            os.sched_yield()


@frozen_dataclass
class CgroupDriver:
    version: int  # 1 or 2
    memory: Path  # the controller root holding ROOT_NAME (v2: the unified root)
    pids: Path | None

    def describe(self) -> str:
        parts = ["memory", *(["pids"] if self.pids else [])]
        return f"cgroup v{self.version} ({', '.join(parts)})"

    def prepare(self) -> None:
        """Make the parent groups; raises OSError when the tree is not writable."""
        if self.version == 2:
            parent = self.memory / ROOT_NAME
            wanted = ["+memory", *(["+pids"] if self.pids else [])]
            _write(self.memory / "cgroup.subtree_control", " ".join(wanted))
            parent.mkdir(exist_ok=True)
            _write(parent / "cgroup.subtree_control", " ".join(wanted))
            return
        for root in (self.memory, self.pids):
            if root is not None:
                (root / ROOT_NAME).mkdir(exist_ok=True)
        with contextlib.suppress(OSError):
            _write(self.memory / ROOT_NAME / "memory.use_hierarchy", "1")

    def create(self, name: str, limits: FaasLimits) -> WorkerGroup:
        memory_bytes = str(limits.memory_mb * 1024 * 1024)
        if self.version == 2:
            group = self.memory / ROOT_NAME / name
            group.mkdir()
            try:
                _write(group / "memory.max", memory_bytes)
                with contextlib.suppress(OSError):
                    _write(group / "memory.swap.max", "0")
                if self.pids:
                    _write(group / "pids.max", str(limits.max_tasks))
            except OSError:
                _remove_group(group)
                raise
            return WorkerGroup(2, (group / "cgroup.procs",), (group,),
                               group / "memory.events", "oom_kill")
        owned: list[Path] = []
        try:
            memory = self.memory / ROOT_NAME / name
            memory.mkdir()
            owned.append(memory)
            _write(memory / "memory.limit_in_bytes", memory_bytes)
            swap = memory / "memory.memsw.limit_in_bytes"
            if swap.exists():
                with contextlib.suppress(OSError):
                    _write(swap, memory_bytes)
            procs = [memory / "cgroup.procs"]
            if self.pids is not None:
                pids = self.pids / ROOT_NAME / name
                pids.mkdir()
                owned.append(pids)
                _write(pids / "pids.max", str(limits.max_tasks))
                procs.append(pids / "cgroup.procs")
        except OSError:
            for directory in owned:
                _remove_group(directory)
            raise
        return WorkerGroup(1, tuple(procs), tuple(owned), memory / "memory.oom_control",
                           "oom_kill")

    def clean_stale(self) -> int:
        """Remove the worker groups of platform processes that are gone; how many."""
        removed = 0
        roots = [self.memory] if self.version == 2 else [self.memory, self.pids]
        for root in roots:
            parent = None if root is None else root / ROOT_NAME
            if parent is None or not parent.is_dir():
                continue
            for child in parent.iterdir():
                owner, _, _ = child.name.partition("-")
                if child.is_dir() and owner.isdigit() and not _pid_alive(int(owner)):
                    _remove_group(child)
                    removed += 1
        return removed


def find_cgroups() -> CgroupDriver | None:
    """The cgroup tree this process can give workers a memory cap in, if any."""
    if os.geteuid() != 0 or not MOUNTINFO.exists():
        return None
    v1: dict[str, Path] = {}
    v2: Path | None = None
    try:
        lines = MOUNTINFO.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        fields, _, tail = line.partition(" - ")
        parts, extra = fields.split(), tail.split()
        if len(parts) < 5 or len(extra) < 3 or parts[3] != "/":
            continue  # only a hierarchy's own root can be managed from here
        mount = Path(parts[4])
        if extra[0] == "cgroup2":
            v2 = mount
        elif extra[0] == "cgroup":
            for option in extra[2].split(","):
                if option in ("memory", "pids"):
                    v1[option] = mount
    if v2 is not None:
        try:
            controllers = (v2 / "cgroup.controllers").read_text(encoding="ascii").split()
        except OSError:
            controllers = []
        if "memory" in controllers:
            return CgroupDriver(2, v2, v2 if "pids" in controllers else None)
    if "memory" in v1:
        return CgroupDriver(1, v1["memory"], v1.get("pids"))
    return None
