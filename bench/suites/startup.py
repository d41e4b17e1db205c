"""CLI start-up: `basedb --version` and `basedb --help` against `python -c pass`."""

from __future__ import annotations

from typing import Any

from bench.profiling import import_offenders
from bench.registry import BenchContext, BenchResult, Figure, Target, register
from bench.timing import compare_processes

TARGET = Target(6.0, "ratio")
BARE = "python -c pass"


@register("startup", "basedb --version and --help vs. python -c pass, fresh processes")
def startup_benchmark(ctx: BenchContext) -> BenchResult:
    bare = [ctx.python, "-c", "pass"]
    commands = {BARE: bare,
                "basedb --version": [*ctx.basedb, "--version"],
                "basedb --help": [*ctx.basedb, "--help"]}
    ctx.log(f"startup: {ctx.settings.startup_runs} runs of each command …")
    samples = compare_processes(commands, runs=ctx.settings.startup_runs, env=ctx.env)
    figures = [Figure(label.removeprefix("basedb ").lstrip("-"), samples[label], samples[BARE],
                      TARGET) for label in ("basedb --version", "basedb --help")]
    details: dict[str, Any] = {"basedbCommand": ctx.basedb}
    notes: list[str] = []
    for figure in figures:
        if figure.passed is not False or not ctx.settings.profile:
            continue
        label = figure.measure.label
        offenders = import_offenders(commands[label], bare, env=ctx.env)
        details.setdefault("importOffenders", {})[label] = offenders
        notes.append(f"{label} imports {offenders['modules']} modules beyond a bare "
                     f"interpreter ({offenders['totalSelfMicros'] / 1000:.1f} ms own import "
                     "time); heaviest packages:")
        notes += [f"  {p['package']:<24} {p['selfMicros'] / 1000:>7.1f} ms  "
                  f"({p['modules']} modules)" for p in offenders["packages"]]
    return BenchResult("startup", figures, details=details, notes=notes)
