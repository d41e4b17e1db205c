"""Where the time goes when a figure misses its target: cProfile and `-X importtime`."""

from __future__ import annotations

import pstats
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.timing import run_process


@dataclass(frozen=True, slots=True)
class Stage:
    """A function whose cumulative time is one stage of a command (matched by the end of
    its file path and its name, so it survives line moves)."""

    label: str
    file_suffix: str
    function: str


def profile_command(argv: Sequence[str], *, out: Path, env: Mapping[str, str],
                    ok: frozenset[int]) -> pstats.Stats:
    """Run `argv` (which starts with the interpreter) under cProfile; its stats."""
    python, *rest = argv  # rest is a script and its args, or `-m module …`: both work
    command = [python, "-m", "cProfile", "-o", str(out), *rest]
    run_process(command, env=env, ok=ok)
    return pstats.Stats(str(out))


def stage_times(stats: pstats.Stats, stages: Sequence[Stage]) -> list[dict[str, Any]]:
    """Cumulative profiled seconds (and share of the whole run) of each stage found."""
    table: Mapping[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = max(getattr(stats, "total_tt", 0.0), 1e-9)
    out = []
    for stage in stages:
        for (filename, _line, function), (_cc, _nc, _tt, cumulative, _callers) in table.items():
            if function == stage.function and filename.replace("\\", "/").endswith(
                    stage.file_suffix):
                out.append({"stage": stage.label, "seconds": round(cumulative, 4),
                            "share": round(cumulative / total, 3)})
                break
    return out


def top_functions(stats: pstats.Stats, *, limit: int = 15) -> list[dict[str, Any]]:
    """The functions with the most own time (tottime), with their cumulative time."""
    table: Mapping[Any, Any] = stats.stats  # type: ignore[attr-defined]
    rows = sorted(table.items(), key=lambda item: item[1][2], reverse=True)[:limit]
    return [{"function": f"{_short(filename)}:{line}({function})", "calls": nc,
             "ownSeconds": round(tt, 4), "cumulativeSeconds": round(ct, 4)}
            for (filename, line, function), (_cc, nc, tt, ct, _callers) in rows]


def _short(filename: str) -> str:
    path = filename.replace("\\", "/")
    for marker in ("/site-packages/", "/lib/python3"):
        if marker in path:
            return path.split(marker, 1)[1]
    if "/basedb/" in path:
        return "basedb/" + path.split("/basedb/", 1)[1]
    return path


def import_times(argv: Sequence[str], *, env: Mapping[str, str]) -> list[dict[str, Any]]:
    """`python -X importtime …`: each imported module with its self and cumulative µs and
    its nesting depth (0 for a module imported by the program itself)."""
    python, *rest = argv
    _, done = run_process([python, "-X", "importtime", *rest], env=env, ok=frozenset({0}))
    modules = []
    for line in done.stderr.splitlines():
        parsed = _importtime_line(line)
        if parsed is None:
            continue
        own, cumulative, name = parsed
        depth = (len(name) - len(name.lstrip(" "))) // 2
        modules.append({"module": name.strip(), "selfMicros": own,
                        "cumulativeMicros": cumulative, "depth": depth})
    return modules


def _importtime_line(line: str) -> tuple[int, int, str] | None:
    """(self µs, cumulative µs, indented name) of one `-X importtime` line, else None."""
    if not line.startswith("import time:"):
        return None
    parts = line[len("import time:"):].split("|")
    if len(parts) != 3:
        return None
    own, cumulative = parts[0].strip(), parts[1].strip()
    if not (own.isdigit() and cumulative.isdigit()):
        return None  # the header line
    # One space follows the bar, then two more per level of nesting.
    return int(own), int(cumulative), parts[2][1:]


def import_offenders(argv: Sequence[str], baseline: Sequence[str], *,
                     env: Mapping[str, str], limit: int = 10) -> dict[str, Any]:
    """What `argv` imports beyond the bare interpreter (`baseline`): own import time summed
    per top-level package, and the single modules with the most own time."""
    bare = {m["module"] for m in import_times(baseline, env=env)}
    extra = [m for m in import_times(argv, env=env) if m["module"] not in bare]
    packages: dict[str, dict[str, Any]] = {}
    for m in extra:
        entry = packages.setdefault(m["module"].split(".")[0], {"modules": 0, "selfMicros": 0})
        entry["modules"] += 1
        entry["selfMicros"] += m["selfMicros"]
    heaviest = sorted(packages.items(), key=lambda item: item[1]["selfMicros"], reverse=True)
    return {
        "totalSelfMicros": sum(m["selfMicros"] for m in extra),
        "modules": len(extra),
        "packages": [{"package": name, **entry} for name, entry in heaviest[:limit]],
        "topModules": sorted(extra, key=lambda m: m["selfMicros"], reverse=True)[:limit],
    }
