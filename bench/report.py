"""Render results: the table on stdout and the JSON document (bench/out/results.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.registry import BenchResult, Figure
from bench.timing import Samples

RESULTS_FILE = Path(__file__).resolve().parent / "out" / "results.json"
SCHEMA = "basedb-bench/1"
HEADERS = ("benchmark", "measure", "median", "compared with", "median", "ratio", "target",
           "result")


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.3f} s"


def _value(samples: Samples) -> str:
    if samples.unit == "bytes":
        return f"{samples.median / 2**20:.1f} MB"
    if samples.unit == "tokens":
        return f"{samples.median:,.0f} tok"
    return _duration(samples.median)


def _row(benchmark: str, figure: Figure) -> tuple[str, ...]:
    ratio = figure.ratio
    passed = figure.passed
    return (benchmark, figure.measure.label, _value(figure.measure),
            figure.peer.label if figure.peer else "",
            _value(figure.peer) if figure.peer else "",
            f"{ratio:.2f}×" if ratio is not None else "",
            figure.target.text if figure.target else "",
            "" if passed is None else "pass" if passed else "MISS")


def render_table(results: list[BenchResult], errors: dict[str, str]) -> str:
    rows = [_row(r.name, f) for r in results for f in r.figures]
    rows += [(name, f"not measured: {message.splitlines()[0]}", "", "", "", "", "", "ERROR")
             for name, message in errors.items()]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(HEADERS)]
    right = {2, 4, 5}  # numbers line up on the right

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out = [line(HEADERS), line(tuple("-" * w for w in widths)), *map(line, rows)]
    for result in results:
        if result.notes:
            out.append("")
            out.extend(result.notes)
    for name, message in errors.items():
        out += ["", f"{name}: {message}"]
    return "\n".join(out) + "\n"


def targets_summary(results: list[BenchResult]) -> dict[str, Any]:
    judged = [(r.name, f) for r in results for f in r.figures if f.target is not None]
    return {"met": sum(1 for _, f in judged if f.passed),
            "missed": sum(1 for _, f in judged if not f.passed),
            "list": [{"benchmark": name, "figure": f.name, "target": f.target.text
                      if f.target else None, "passed": f.passed,
                      "value": round(f.ratio if f.target and f.target.on == "ratio" and f.ratio
                                     is not None else f.measure.median, 4)}
                     for name, f in judged]}


def results_document(results: list[BenchResult], errors: dict[str, str], *,
                     meta: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        **meta,
        "benchmarks": {r.name: {"figures": [f.to_json() for f in r.figures],
                                "details": r.details, "notes": r.notes} for r in results},
        "errors": errors,
        "targets": targets_summary(results),
    }


def write_results(document: dict[str, Any], path: Path = RESULTS_FILE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return path
