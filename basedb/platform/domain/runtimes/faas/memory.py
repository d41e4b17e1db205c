"""What a warm FaaS worker costs in memory, for the budget that bounds the warm set.

A warm worker answers its function's next call in a few milliseconds where a cold start
costs a hundred; what it costs meanwhile is memory. So the warm workers of all sites are
bounded by a budget in megabytes (`FaasLimits.warm_memory_mb`), not by a count tied to
concurrency: with a hundred sites called in turn, a count of sixteen made every call
cold, though a hundred warm workers fit in about 1.3 GB.

    mb = worker_memory_mb(pid)   # its proportional set size, measured once when warm

A worker is counted by its PSS (proportional set size: its own pages, plus its share of
the pages it shares with the other Node.js processes, such as the executable), which is
what stopping it gives back: 10 to 13 MB for a handler of a few modules. Where /proc
cannot say (not Linux, or the process is gone), it counts as ESTIMATED_MB.
"""

from __future__ import annotations

from pathlib import Path

ESTIMATED_MB = 10.0


def worker_memory_mb(pid: int) -> float:
    """The PSS of process `pid` in megabytes, or ESTIMATED_MB when it cannot be read."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return ESTIMATED_MB
    for line in text.splitlines():
        if line.startswith("Pss:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) / 1024
    return ESTIMATED_MB
