"""`basedb check --json` on the generated workspace, against the read-and-parse floor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.profiling import Stage, profile_command, stage_times, top_functions
from bench.registry import BenchContext, BenchError, BenchResult, Figure, Target, register
from bench.timing import Samples, compare_processes, peak_rss, run_process

FLOOR_SCRIPT = Path(__file__).resolve().parent.parent / "floor_check.py"
TARGET = Target(2.0, "ratio")  # check, analysis cache warm
COLD_TARGET = Target(1.3, "ratio")  # check --no-cache, at both sizes
RSS_TARGET = Target(2.0, "ratio")  # peak RSS of check --no-cache on the large workspace
SMALL_TARGET = Target(4.0, "ratio")  # a 10-function workspace against `python -c pass`
LARGE_FACTOR = 10  # the large workspace: 10× --functions (10,000 by default)
SMALL_FUNCTIONS = 10
# check exits 1 when the workspace has errors; the timing runs accept it, and the
# verification run below turns errors into a failed benchmark.
CHECK_EXIT = frozenset({0, 1})

CHECK_STAGES = (
    Stage("imports (all modules)", "<frozen importlib._bootstrap>", "_find_and_load"),
    Stage("load workspace", "basedb/workspace/loader.py", "load_workspace"),
    Stage("check_workspace (all rules)", "basedb/check/run.py", "check_workspace"),
    Stage("  declarations", "basedb/check/declarations.py", "check_declarations"),
    Stage("  SQL analysis", "basedb/check/sql/rules.py", "check_database_functions"),
    Stage("  mutations", "basedb/check/mutations.py", "check_mutations"),
    Stage("  FaaS schemas", "basedb/check/faas.py", "check_faas"),
    Stage("  agent tools", "basedb/check/agent_tools.py", "check_agent_tools"),
    Stage("  contracts staleness", "basedb/contracts/__init__.py", "stale_findings"),
    Stage("render report", "basedb/check/reporters/__init__.py", "render"),
)


def check_argv(ctx: BenchContext, root: Path, *, cache: bool = True) -> list[str]:
    return [*ctx.basedb, "check", "--json", "-C", str(root),
            *(() if cache else ("--no-cache",))]


@register("check", "basedb check --json (with its analysis cache warm, and with --no-cache) "
                   "vs. the floor (read every file, sqlglot.parse every SQL), fresh processes")
def check_benchmark(ctx: BenchContext) -> BenchResult:
    ws = ctx.workspace()
    outcome = verify_clean(ctx, ws.root)
    floor_argv = [ctx.python, str(FLOOR_SCRIPT), str(ws.root)]
    _, floor_run = run_process(floor_argv, env=ctx.env, ok=frozenset({0}), capture=True)
    floor_phases = json.loads(floor_run.stdout)
    if floor_phases["sql"] != ws.database_functions:
        raise BenchError(f"the floor parsed {floor_phases['sql']} SQL files, but the workspace "
                         f"has {ws.database_functions} Database Functions")
    ctx.log(f"check: {ctx.settings.runs} runs each of check and floor …")
    # verify_clean above ran check once, so its SQL analysis cache is warm: the default
    # run measures what a developer or CI re-run sees; --no-cache measures a first run.
    samples = compare_processes(
        {"basedb check --json": check_argv(ctx, ws.root),
         "basedb check --json --no-cache": check_argv(ctx, ws.root, cache=False),
         "floor: read + sqlglot.parse": floor_argv},
        runs=ctx.settings.runs, env=ctx.env, ok=CHECK_EXIT)
    floor = samples["floor: read + sqlglot.parse"]
    figure = Figure("check", samples["basedb check --json"], floor, TARGET)
    cold = Figure("check (no cache)", samples["basedb check --json --no-cache"], floor,
                  COLD_TARGET)
    large, rss, large_details = _large(ctx)
    small = _small(ctx)
    result = BenchResult("check", [figure, cold, large, rss, small], details={
        "workspace": ws.to_json(),
        "checkOutput": outcome,
        "floorPhases": {key: round(value, 6) if isinstance(value, float) else value
                        for key, value in floor_phases.items()},
        "large": large_details,
    })
    if (figure.passed is False or cold.passed is False) and ctx.settings.profile:
        ctx.log("check is over its target: profiling one run …")
        result.details["profile"] = profile_check(ctx, ws.root)
        result.notes.extend(_profile_notes(result.details["profile"]))
    return result


def _large(ctx: BenchContext) -> tuple[Figure, Figure, dict[str, Any]]:
    """check --no-cache on a workspace 10× larger: time and peak memory, each against
    the floor on the same workspace."""
    count = ctx.settings.functions * LARGE_FACTOR
    ws = ctx.workspace(count)
    verify_clean(ctx, ws.root)
    floor_argv = [ctx.python, str(FLOOR_SCRIPT), str(ws.root)]
    label = f"basedb check --json --no-cache, {count:,} functions"
    floor_label = f"floor: read + sqlglot.parse, {count:,} functions"
    runs = max(3, ctx.settings.runs // 2)
    ctx.log(f"check: {runs} runs each of check --no-cache and floor on {count:,} functions …")
    samples = compare_processes({label: check_argv(ctx, ws.root, cache=False),
                                 floor_label: floor_argv},
                                runs=runs, env=ctx.env, ok=CHECK_EXIT)
    ctx.log("check: peak memory of each …")
    check_rss = peak_rss(check_argv(ctx, ws.root, cache=False), env=ctx.env, ok=CHECK_EXIT)
    floor_rss = peak_rss(floor_argv, env=ctx.env)
    memory = Figure("check peak RSS",
                    Samples(f"peak RSS, {label}", seconds=[check_rss], unit="bytes"),
                    Samples(f"peak RSS, {floor_label}", seconds=[floor_rss], unit="bytes"),
                    RSS_TARGET)
    details = {"functions": count, "checkPeakRssBytes": check_rss,
               "floorPeakRssBytes": floor_rss}
    return Figure("check large (no cache)", samples[label], samples[floor_label],
                  COLD_TARGET), memory, details


def _small(ctx: BenchContext) -> Figure:
    """check on a 10-function workspace against a bare interpreter: what a small site's
    developer waits for on every save."""
    ws = ctx.workspace(SMALL_FUNCTIONS)
    verify_clean(ctx, ws.root)
    bare = "python -c pass"
    label = f"basedb check --json, {SMALL_FUNCTIONS} functions"
    samples = compare_processes({label: check_argv(ctx, ws.root),
                                 bare: [ctx.python, "-c", "pass"]},
                                runs=ctx.settings.startup_runs, env=ctx.env, ok=CHECK_EXIT)
    return Figure("check small", samples[label], samples[bare], SMALL_TARGET)


def verify_clean(ctx: BenchContext, root: Path) -> dict[str, Any]:
    """Run check once, capturing its report: the generated workspace must have no errors
    (a benchmark of a failing check would measure the wrong thing)."""
    _, done = run_process(check_argv(ctx, root), env=ctx.env, ok=CHECK_EXIT, capture=True)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        raise BenchError(f"basedb check --json printed no JSON report ({error})") from None
    hints: dict[str, int] = {}
    for hint in report.get("functionHints", []):
        hints[hint["code"]] = hints.get(hint["code"], 0) + 1
    errors = report.get("errors", [])
    if errors:
        shown = "; ".join(f"{e.get('code')} in {e.get('file')}" for e in errors[:3])
        raise BenchError(f"the generated workspace is not clean: basedb check reports "
                         f"{len(errors)} error(s), e.g. {shown}. Fix the generator "
                         "(bench/workload/) so that it writes what check accepts.")
    return {"ok": report.get("ok"), "errors": 0, "hints": sum(hints.values()),
            "hintsByCode": dict(sorted(hints.items()))}


def profile_check(ctx: BenchContext, root: Path) -> dict[str, Any]:
    """One check run under cProfile: time per stage and the functions with most own time."""
    stats = profile_command(check_argv(ctx, root, cache=False), out=ctx.scratch / "check.prof",
                            env=ctx.env, ok=CHECK_EXIT)
    return {"profiledSeconds": round(getattr(stats, "total_tt", 0.0), 4),
            "stages": stage_times(stats, CHECK_STAGES),
            "topFunctions": top_functions(stats)}


def _profile_notes(profile: dict[str, Any]) -> list[str]:
    lines = [f"check profile (one run under cProfile, {profile['profiledSeconds']:.3f} s "
             "profiled; cProfile inflates absolute times, compare shares):"]
    lines += [f"  {s['stage']:<30} {s['seconds']:>8.3f} s  {s['share']:>6.1%}"
              for s in profile["stages"]]
    lines.append("  functions with the most own time:")
    lines += [f"    {f['ownSeconds']:>7.3f} s own {f['cumulativeSeconds']:>7.3f} s cum "
              f"{f['calls']:>7}  {f['function']}" for f in profile["topFunctions"][:10]]
    return lines
