"""The benchmarks `python -m bench` knows, and the types they report with.

Adding a benchmark
------------------
Write a module under bench/suites/, import it from bench/suites/__init__.py, and
decorate one function:

    @register("deploy", "preview deploy of 200 functions, and a no-change redeploy")
    def deploy(ctx: BenchContext) -> BenchResult:
        ws = ctx.workspace(functions=200)        # generated once per size, then shared
        samples = compare_processes({...}, runs=ctx.settings.runs, env=ctx.env)
        return BenchResult("deploy", [Figure(...)])

Each figure is a median, compared with a floor or a peer measured in the same run (a
ratio), and may carry a target; `--only NAME` runs one benchmark. Registration order is
the order of the table.

The platform benchmarks are bench/suites/deploy.py (`basedb deploy` of a 200-function
workspace on the embedded platform, and a no-change redeploy, against `deploy --dry-run`)
and bench/suites/invoke.py (Database Function invoke over loopback HTTP on a
100,000-record table, against the same compiled query in raw sqlite3).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bench.generate import GeneratedWorkspace, generate_workspace
from bench.timing import BenchError, Samples

__all__ = ["REGISTRY", "BenchContext", "BenchError", "BenchResult", "Benchmark", "Figure",
           "Settings", "Target", "register"]


@dataclass(frozen=True, slots=True)
class Settings:
    functions: int  # size of the main generated workspace
    runs: int  # fresh-process runs per measure (check, contracts)
    startup_runs: int  # runs per start-up measure (at least 20)
    seed: int
    quick: bool
    profile: bool  # profile check / list import offenders when over target


@dataclass(frozen=True, slots=True)
class Target:
    limit: float
    on: Literal["ratio", "seconds", "tokens"]  # tokens: the measure's median, in tokens

    @property
    def text(self) -> str:
        if self.on == "tokens":
            return f"≤ {self.limit:,.0f} tokens"
        return f"≤ {self.limit:g}×" if self.on == "ratio" else f"≤ {self.limit:g} s"

    def to_json(self) -> dict[str, Any]:
        return {"limit": self.limit, "on": self.on, "text": self.text}


@dataclass(slots=True)
class Figure:
    """One measure (a median), its peer or floor when there is one, and its target."""

    name: str  # stable key within the benchmark, e.g. "check"
    measure: Samples
    peer: Samples | None = None
    target: Target | None = None

    @property
    def ratio(self) -> float | None:
        if self.peer is None or self.peer.median <= 0:
            return None
        return self.measure.median / self.peer.median

    @property
    def passed(self) -> bool | None:
        if self.target is None:
            return None
        value = self.ratio if self.target.on == "ratio" else self.measure.median
        return value is not None and value <= self.target.limit

    def to_json(self) -> dict[str, Any]:
        ratio = self.ratio
        return {"name": self.name, "measure": self.measure.to_json(),
                "peer": self.peer.to_json() if self.peer else None,
                "ratio": round(ratio, 3) if ratio is not None else None,
                "target": self.target.to_json() if self.target else None,
                "passed": self.passed}


@dataclass(slots=True)
class BenchResult:
    name: str
    figures: list[Figure]
    details: dict[str, Any] = field(default_factory=dict)  # extra data for results.json
    notes: list[str] = field(default_factory=list)  # printed under the table


@dataclass(frozen=True, slots=True)
class Benchmark:
    name: str
    summary: str
    run: Callable[[BenchContext], BenchResult]


REGISTRY: dict[str, Benchmark] = {}


def register(name: str, summary: str) -> Callable[[Callable[[BenchContext], BenchResult]],
                                                  Callable[[BenchContext], BenchResult]]:
    def add(run: Callable[[BenchContext], BenchResult]) -> Callable[[BenchContext],
                                                                    BenchResult]:
        if name in REGISTRY:
            raise ValueError(f"benchmark {name!r} is registered twice")
        REGISTRY[name] = Benchmark(name, summary, run)
        return run
    return add


class BenchContext:
    """What a benchmark gets: settings, how to run basedb, a scratch dir, workspaces."""

    def __init__(self, settings: Settings, scratch: Path) -> None:
        self.settings = settings
        self.scratch = scratch
        self.python = sys.executable
        self.basedb = basedb_command(self.python)
        self.env = isolated_env(scratch)
        self.workspaces: dict[int, GeneratedWorkspace] = {}

    def workspace(self, functions: int | None = None) -> GeneratedWorkspace:
        """The generated workspace of that size (default: --functions), made on first use."""
        count = functions if functions is not None else self.settings.functions
        if count not in self.workspaces:
            self.log(f"generating a workspace of {count} functions …")
            self.workspaces[count] = generate_workspace(
                self.scratch / f"workspace-{count}", functions=count, seed=self.settings.seed)
        return self.workspaces[count]

    @staticmethod
    def log(message: str) -> None:
        print(f"[bench] {message}", file=sys.stderr, flush=True)


def basedb_command(python: str) -> list[str]:
    """How to start basedb with this interpreter: its console script, else `-m basedb`."""
    script = Path(python).parent / ("basedb.exe" if os.name == "nt" else "basedb")
    if script.is_file():
        return [python, str(script)]
    found = shutil.which("basedb")
    if found and Path(found).parent == Path(python).parent:
        return [python, found]
    return [python, "-m", "basedb"]


def isolated_env(scratch: Path) -> dict[str, str]:
    """The environment of every measured process: basedb's data, config and state dirs
    point into the scratch dir, so a benchmark never reads or writes the user's.

    Bytecode is cached, as it is for an installed basedb, but under the scratch dir
    (PYTHONPYCACHEPREFIX), so the checkout gets no __pycache__ directories; the warm-up
    run of each measure fills the cache. PYTHONDONTWRITEBYTECODE would otherwise make
    every run compile basedb from source, which no installed copy does.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    for name in ("BASEDB_DATA_DIR", "BASEDB_CONFIG_DIR", "BASEDB_STATE_DIR"):
        folder = scratch / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    env.pop("BASEDB_PROFILE", None)
    env["NO_COLOR"] = "1"
    return env
