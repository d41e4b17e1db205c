"""`python -m bench`: run the registered benchmarks, print a table, write results.json.

    python -m bench [--only check,contracts,startup] [--quick] [--json]
                    [--functions N] [--runs N] [--seed N] [--keep] [--no-profile]

Benchmarks are measurements, not tests: a missed target is reported (table, JSON) but
does not change the exit status. The status is 1 only when a benchmark could not be
measured (a command failed, or the generated workspace did not pass `basedb check`), and
2 for bad options.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.generate import DEFAULT_SEED, MIN_FUNCTIONS
from bench.machine import machine_info
from bench.registry import REGISTRY, BenchContext, BenchError, BenchResult, Settings
from bench.report import RESULTS_FILE, render_table, results_document, write_results

DEFAULTS = {"functions": 1000, "runs": 7, "startup_runs": 30}
QUICK = {"functions": 200, "runs": 3, "startup_runs": 20}
MIN_STARTUP_RUNS = 20


def _parser() -> argparse.ArgumentParser:
    import bench.suites  # noqa: F401  (registers the benchmarks)

    names = ", ".join(REGISTRY)
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Measure basedb against floors and peers timed in the same run.",
        epilog=f"Benchmarks: {names}. Results: {RESULTS_FILE}.")
    parser.add_argument("--only", metavar="NAMES",
                        help=f"comma-separated benchmarks to run (default: all of {names})")
    parser.add_argument("--quick", action="store_true",
                        help=f"smaller workspace ({QUICK['functions']} functions) and fewer "
                             f"runs ({QUICK['runs']}; start-up {QUICK['startup_runs']})")
    parser.add_argument("--json", action="store_true",
                        help="print the results as JSON instead of the table")
    parser.add_argument("--functions", type=int,
                        help=f"functions in the generated workspace (default "
                             f"{DEFAULTS['functions']})")
    parser.add_argument("--runs", type=int,
                        help=f"fresh-process runs per measure (default {DEFAULTS['runs']}); "
                             f"start-up always uses at least {MIN_STARTUP_RUNS}")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help=f"seed of the generated workspace (default {DEFAULT_SEED})")
    parser.add_argument("--keep", action="store_true",
                        help="keep the scratch directory (generated workspaces, profiles)")
    parser.add_argument("--no-profile", action="store_true",
                        help="do not profile figures that miss their target")
    return parser


def parse_settings(argv: list[str] | None) -> tuple[argparse.Namespace, Settings, list[str]]:
    parser = _parser()
    args = parser.parse_args(argv)
    selected = list(REGISTRY)
    if args.only:
        selected = [name.strip() for name in args.only.split(",") if name.strip()]
        unknown = [name for name in selected if name not in REGISTRY]
        if unknown or not selected:
            parser.error(f"--only: unknown benchmark {', '.join(unknown) or '(none given)'}; "
                         f"choose from {', '.join(REGISTRY)}")
        selected = [name for name in REGISTRY if name in selected]  # table order
    base = QUICK if args.quick else DEFAULTS
    functions = args.functions if args.functions is not None else base["functions"]
    runs = args.runs if args.runs is not None else base["runs"]
    if functions < MIN_FUNCTIONS:
        parser.error(f"--functions must be at least {MIN_FUNCTIONS}")
    if runs < 1:
        parser.error("--runs must be at least 1")
    settings = Settings(functions=functions, runs=runs,
                        startup_runs=max(MIN_STARTUP_RUNS, base["startup_runs"], runs),
                        seed=args.seed, quick=args.quick, profile=not args.no_profile)
    return args, settings, selected


def run_benchmarks(ctx: BenchContext, selected: list[str],
                   ) -> tuple[list[BenchResult], dict[str, str]]:
    from basedb.core.errors import BasedbError

    results: list[BenchResult] = []
    errors: dict[str, str] = {}
    for name in selected:
        ctx.log(f"{name}: {REGISTRY[name].summary}")
        try:
            results.append(REGISTRY[name].run(ctx))
        except (BenchError, BasedbError) as error:
            # A refusal of basedb's own (a draft the platform rejects, say) stops this
            # benchmark with its message, not the run with a traceback.
            errors[name] = str(error)
            ctx.log(f"{name}: not measured: {error}")
    return results, errors


def missing_requirements() -> str | None:
    """Why this interpreter cannot run the benchmarks, or None when it can."""
    import importlib.util

    missing = [name for name in ("basedb", "sqlglot") if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (f"{' and '.join(missing)} cannot be imported by {sys.executable}. Run the "
            "benchmarks with the Python where basedb is installed, e.g. activate its "
            "virtualenv or run `PYTHON=/path/to/venv/bin/python bench/run`.")


def main(argv: list[str] | None = None) -> int:
    args, settings, selected = parse_settings(argv)
    problem = missing_requirements()
    if problem is not None:
        print(f"bench: {problem}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    started_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    machine = machine_info()
    scratch = Path(tempfile.mkdtemp(prefix="basedb-bench-"))
    try:
        ctx = BenchContext(settings, scratch)
        results, errors = run_benchmarks(ctx, selected)
        meta: dict[str, Any] = {
            "startedAt": started_at,
            "durationSeconds": round(time.perf_counter() - started, 2),
            "command": ["python", "-m", "bench", *(argv if argv is not None else sys.argv[1:])],
            "settings": {"benchmarks": selected, "functions": settings.functions,
                         "runs": settings.runs, "startupRuns": settings.startup_runs,
                         "seed": settings.seed, "quick": settings.quick},
            "machine": machine,
            "basedbCommand": ctx.basedb,
            "bytecodeCache": ctx.env["PYTHONPYCACHEPREFIX"],
            "workspaces": {str(n): ws.to_json() for n, ws in ctx.workspaces.items()},
        }
        document = results_document(results, errors, meta=meta)
        path = write_results(document)
    finally:
        if args.keep:
            print(f"[bench] kept {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        sqlglot = machine["sqlglot"]
        build = "compiled (sqlglotc)" if sqlglot["compiled"] else "pure Python"
        print(f"basedb benchmarks — {machine['usableCpus']} CPUs, Python "
              f"{machine['python']['version']}, sqlglot {sqlglot['version']} {build}; "
              f"{settings.functions} functions, {settings.runs} runs "
              f"(start-up {settings.startup_runs}), medians\n")
        print(render_table(results, errors), end="")
        summary = document["targets"]
        print(f"\ntargets met: {summary['met']} of {summary['met'] + summary['missed']}; "
              f"results written to {path}")
    return 1 if errors else 0
