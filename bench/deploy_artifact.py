"""How long the deploy pipeline spends on its inputs: listing and reading every input file,
fingerprinting them, and building the deterministic site.zip, for a generated workspace
of N functions (a mix of Database Functions, Mutations and FaaS, plus a Page).

    python -m bench.deploy_artifact [--functions 200] [--repeats 5]

`measure_fingerprint_and_zip()` returns the best time of `repeats` runs for each step and
for the whole, with the workspace's size, as a JSON-ready dict.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from basedb.core.site_zip import build_site_zip, fingerprint
from basedb.workspace.inputs import collect_inputs

_FIELDS = [("Title", "text"), ("Status", "select"), ("Owner", "user"), ("Due", "datetime"),
           ("Points", "number"), ("Done", "checkbox")]


def write_generated_workspace(root: Path, function_count: int) -> Path:
    """A workspace with `function_count` functions: 60% SQL, 25% Mutation, 15% FaaS."""
    tables = [{"tableId": f"tbl{t:04d}", "name": f"Table{t}",
               "fields": [{"fieldId": f"fld{t:04d}{i}", "name": name, "type": kind}
                          for i, (name, kind) in enumerate(_FIELDS)]} for t in range(20)]
    _write(root / "base-database.jsonc", json.dumps({
        "appToken": "app_bench", "title": "Bench",
        "binding": {"baseToken": "bas_bench", "tableIds": [t["tableId"] for t in tables]}}))
    _write(root / "catalog.json", json.dumps({"baseToken": "bas_bench", "tables": tables},
                                             indent=2))
    _write(root / "README.md", "# Bench site\n\nGenerated for benchmarks.\n")
    for number in range(function_count):
        table = f"Table{number % 20}"
        params = [{"name": "status", "kind": "TEXT", "description": "Status to filter by"}]
        declaration = {"name": f"fn{number}", "description": f"Benchmark function {number} "
                       f"reading {table} by status.", "meta": {"params": params}}
        share = number % 20
        if share < 12:
            folder = root / "database-functions" / f"fn{number}"
            _write(folder / "main.sql", f'SELECT "Title", "Due" FROM "{table}"\n'
                                        f'WHERE "Status" = $1 ORDER BY "Due" LIMIT 100\n')
        elif share < 17:
            folder = root / "mutations" / f"fn{number}"
            declaration = {"name": f"fn{number}", "description": "Creates a record.",
                           "spec": {"table": table, "action": "create",
                                    "params": [{"name": "title", "kind": "TEXT",
                                                "description": "Title of the record"}],
                                    "set": {"Title": "$title"}}}
        else:
            folder = root / "faas" / f"fn{number}"
            declaration = {"name": f"fn{number}", "description": "Runs a server step.",
                           "inputSchema": {"type": "object", "properties": {
                               "id": {"type": "string", "description": "Record id"}}}}
            _write(folder / "index.mjs", "export default async function (input, ctx) {\n"
                                         "  return { code: 0, msg: 'ok', data: input };\n}\n")
        _write(folder / "function.json", json.dumps(declaration, indent=2))
    _write(root / "src" / "index.html", "<!doctype html>\n<main id=app></main>\n" * 20)
    _write(root / "src" / "app.js", "export const rows = [];\n" * 2000)
    _write(root / "src" / "style.css", "main { display: grid; }\n" * 500)
    return root


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def measure_fingerprint_and_zip(function_count: int = 200, *, repeats: int = 5,
                                root: Path | None = None) -> dict[str, Any]:
    """Best-of-`repeats` seconds for collect, fingerprint, zip, and all three together."""
    with tempfile.TemporaryDirectory(prefix="basedb-bench-") as scratch:
        workspace = write_generated_workspace(root or Path(scratch) / "ws", function_count)
        best = {"collectSeconds": float("inf"), "fingerprintSeconds": float("inf"),
                "zipSeconds": float("inf"), "totalSeconds": float("inf")}
        fingerprints: set[str] = set()
        archives: set[bytes] = set()
        for _ in range(repeats):
            started = time.perf_counter()
            inputs = collect_inputs(workspace)
            listed = time.perf_counter()
            value = fingerprint(inputs)
            hashed = time.perf_counter()
            archive = build_site_zip(inputs, value)
            done = time.perf_counter()
            for key, seconds in (("collectSeconds", listed - started),
                                 ("fingerprintSeconds", hashed - listed),
                                 ("zipSeconds", done - hashed),
                                 ("totalSeconds", done - started)):
                best[key] = min(best[key], seconds)
            fingerprints.add(value)
            archives.add(archive)
        if len(fingerprints) != 1 or len(archives) != 1:
            raise AssertionError("fingerprint or site.zip differed between identical runs")
        return {"functions": function_count, "files": len(inputs),
                "inputBytes": sum(item.size for item in inputs), "zipBytes": len(archive),
                "repeats": repeats, **{key: round(v, 6) for key, v in best.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--functions", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps(measure_fingerprint_and_zip(args.functions, repeats=args.repeats),
                     indent=2))


if __name__ == "__main__":
    main()
