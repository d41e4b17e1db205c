"""The limits every FaaS call and worker runs under, and how an operator changes them.

    limits = FaasLimits.from_env()        # defaults, overridden by $BASEDB_FAAS_*

| variable | default | what |
| --- | --- | --- |
| `BASEDB_FAAS_CONCURRENCY` | 16 | FaaS calls running at once on this platform process |
| `BASEDB_FAAS_SITE_CONCURRENCY` | 8 | … of one site; more answer 503 "retry later" |
| `BASEDB_FAAS_MEMORY_MB` | 256 | resident memory of one worker (cgroup), V8 heap 128 |
| `BASEDB_FAAS_DISK_MB` | 64 | the work directory of one worker (tmpfs size) |
| `BASEDB_FAAS_IDLE_SECONDS` | 60 | an idle warm worker is stopped after this long |
| `BASEDB_FAAS_WARM_MB` | 1536 | PSS of all warm workers (~10 MB each); past it, LRU ones stop |
| `BASEDB_FAAS_SPARES` | 1 | started workers kept ready for a first call |
| `BASEDB_FAAS_SANDBOX` | auto | `auto`, `require` (no OS sandbox: refuse to run), `off` |

Timeouts come from the declaration (`timeoutMs`, default 10 s, at most 120 s).
"""

from __future__ import annotations

import os
from dataclasses import replace

from basedb.core import environment
from basedb.core.errors import InputError
from basedb.core.frozen import frozen_dataclass
from basedb.workspace.declarations import FAAS_MAX_TIMEOUT_MS

DEFAULT_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = FAAS_MAX_TIMEOUT_MS
SANDBOX_MODES = ("auto", "require", "off")

_RANGES = {
    "global_concurrency": (1, 1024),
    "site_concurrency": (1, 1024),
    "memory_mb": (96, 65536),
    "disk_mb": (1, 65536),
    "idle_seconds": (1, 86400),
    "spares": (0, 16),
    "warm_memory_mb": (1, 1048576),
}


def _setting(variable: str) -> str:
    return os.environ.get(variable, "").strip()


@frozen_dataclass
class FaasLimits:
    default_timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_timeout_ms: int = MAX_TIMEOUT_MS
    global_concurrency: int = 16
    site_concurrency: int = 8
    memory_mb: int = 256  # resident memory of a worker, Node.js itself included
    heap_mb: int = 128  # V8's old space, within memory_mb
    disk_mb: int = 64  # the work directory
    max_tasks: int = 64  # processes and threads of a worker (Node.js starts about 11)
    open_files: int = 256
    idle_seconds: int = 60
    spares: int = 1
    warm_memory_mb: int = 1536  # the warm workers of all sites, by PSS (memory.py)
    # A worker is recycled once it has used this much CPU time in all; the kernel stops
    # it (RLIMIT_CPU) at twice as much.
    worker_cpu_seconds: int = 120
    max_message_bytes: int = 8 * 1024 * 1024  # a result or one record call
    log_head_bytes: int = 48 * 1024  # of a call's output, the first bytes kept …
    log_tail_bytes: int = 16 * 1024  # … and the last
    spawn_timeout_s: float = 15.0  # for a worker to start and say it is ready
    sandbox: str = "auto"

    @classmethod
    def from_env(cls) -> FaasLimits:
        """The defaults, with what $BASEDB_FAAS_* set; a bad value is an InputError."""
        limits = cls()
        changes: dict[str, object] = {}
        for name, variable, raw in (
                ("global_concurrency", environment.FAAS_CONCURRENCY,
                 _setting(environment.FAAS_CONCURRENCY)),
                ("site_concurrency", environment.FAAS_SITE_CONCURRENCY,
                 _setting(environment.FAAS_SITE_CONCURRENCY)),
                ("memory_mb", environment.FAAS_MEMORY_MB, _setting(environment.FAAS_MEMORY_MB)),
                ("disk_mb", environment.FAAS_DISK_MB, _setting(environment.FAAS_DISK_MB)),
                ("idle_seconds", environment.FAAS_IDLE_SECONDS,
                 _setting(environment.FAAS_IDLE_SECONDS)),
                ("spares", environment.FAAS_SPARES, _setting(environment.FAAS_SPARES)),
                ("warm_memory_mb", environment.FAAS_WARM_MB,
                 _setting(environment.FAAS_WARM_MB))):
            if not raw:
                continue
            low, high = _RANGES[name]
            if not raw.isdigit() or not low <= int(raw) <= high:
                raise InputError(f"${variable} is {raw!r}; it must be an integer from {low} "
                                 f"to {high}.", code="FAAS_LIMIT_INVALID",
                                 hint=f"Set {variable} to a number in range, or unset it for "
                                      f"the default ({getattr(limits, name)}).")
            changes[name] = int(raw)
        mode = _setting(environment.FAAS_SANDBOX) or "auto"
        if mode not in SANDBOX_MODES:
            raise InputError(f"$BASEDB_FAAS_SANDBOX is {mode!r}; it must be one of "
                             f"{', '.join(SANDBOX_MODES)}.", code="FAAS_LIMIT_INVALID",
                             hint="Unset it (auto: the strongest sandbox this machine "
                                  "offers), or set require to refuse running without one.")
        changes["sandbox"] = mode
        return replace(limits, **changes)  # type: ignore[arg-type]

    def effective_timeout_ms(self, timeout_ms: object) -> int:
        """The declared timeoutMs, or the default when absent, capped at the maximum."""
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms <= 0:
            return self.default_timeout_ms
        return min(timeout_ms, self.max_timeout_ms)


def effective_timeout_ms(timeout_ms: object) -> int:
    """`FaasLimits().effective_timeout_ms`: the default limits' timeout for a declaration."""
    return FaasLimits().effective_timeout_ms(timeout_ms)


