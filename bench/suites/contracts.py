"""`basedb contracts generate` on the generated workspace.

Two figures, both held to 0.5 s: the command as a fresh process, compared with the
floor's file-reading part as a fresh process (`floor_check.py --read-only`: start Python,
read and json-parse every declaration; no sqlglot), and `contracts.generate()` itself in
this process, compared with the floor's reading done in this process. The time to load
the workspace in-process is reported too, without a target.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from bench.floor_check import measure as measure_floor
from bench.registry import BenchContext, BenchResult, Figure, Target, register
from bench.timing import compare_processes, time_calls

FLOOR_SCRIPT = Path(__file__).resolve().parent.parent / "floor_check.py"
TARGET = Target(0.5, "seconds")


@register("contracts", "basedb contracts generate (fresh process and in-process) vs. "
                       "reading the declarations")
def contracts_benchmark(ctx: BenchContext) -> BenchResult:
    from basedb import contracts
    from basedb.workspace import load_workspace

    ws = ctx.workspace()
    root = ws.root
    generated_dir = root / "src" / "generated"
    had_generated = generated_dir.exists()
    try:
        ctx.log(f"contracts: {ctx.settings.runs} runs each of generate and the read floor …")
        samples = compare_processes(
            {"basedb contracts generate": [*ctx.basedb, "contracts", "generate", "-C",
                                           str(root)],
             "floor: read files": [ctx.python, str(FLOOR_SCRIPT), str(root), "--read-only"]},
            runs=ctx.settings.runs, env=ctx.env)
        loaded = load_workspace(root)
        output: dict[str, Any] = {}

        def generate() -> None:
            made = contracts.generate(loaded, lang="ts")
            output.update(bytes=len(made.data), skipped=len(made.skipped))

        in_process = time_calls("contracts.generate() in-process", generate,
                                runs=ctx.settings.runs)
        loading = time_calls("load_workspace() in-process", lambda: load_workspace(root),
                             runs=ctx.settings.runs)
        floor_read = time_calls("floor: read files in-process",
                                lambda: measure_floor(root, parse_sql=False),
                                runs=ctx.settings.runs)
    finally:
        # Leave the workspace as generated: a contracts file on disk would make later
        # `check` runs compare it (CONTRACTS_STALE), which the check figure must not do.
        if not had_generated and generated_dir.exists():
            shutil.rmtree(generated_dir)
    figures = [
        Figure("process", samples["basedb contracts generate"], samples["floor: read files"],
               TARGET),
        Figure("in-process", in_process, floor_read, TARGET),
        Figure("load", loading, floor_read),
    ]
    notes = []
    if output.get("skipped"):
        notes.append(f"contracts left out {output['skipped']} declaration(s) as unusable")
    return BenchResult("contracts", figures, details={"generatedBytes": output.get("bytes"),
                                                      "skipped": output.get("skipped")},
                       notes=notes)
