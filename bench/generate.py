"""Generate a realistic site workspace for the benchmarks.

    python -m bench.generate --functions 1000 OUT_DIR [--seed N]

The workspace has a 50-table catalog covering every Base field type, and `functions`
functions split 60 / 30 / 10 between Database Functions, Mutations and FaaS (600, 300
and 100 for 1,000), plus agent-tools.json, a README and a small Page. It is deterministic:
the same seed and count give byte-identical files. It passes `basedb check` with no
errors and a few hints (the optional select filters that real sites have), besides the
agent-facing hints its descriptions earn on purpose, as many real sites would (pointers
to functions it lacks, "when it exists", near-twin agendas); the unit test
tests/unit/test_bench_generator.py keeps it that way.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.workload.catalog import Catalog, build_catalog
from bench.workload.common import Draft, Naming
from bench.workload.database_functions import generate_database_functions
from bench.workload.faas import INTERNAL_PREFIXES, generate_faas
from bench.workload.mutations import generate_mutations

DEFAULT_SEED = 20240611
MIN_FUNCTIONS = 10
KIND_DIRS = {"database_function": "database-functions", "mutation": "mutations",
             "faas": "faas"}
COMPANION_FILES = {"database_function": "main.sql", "faas": "index.mjs"}


@dataclass(frozen=True, slots=True)
class GeneratedWorkspace:
    root: Path
    seed: int
    tables: int
    database_functions: int
    mutations: int
    faas: int
    excluded: tuple[str, ...]
    files: int
    bytes: int

    @property
    def functions(self) -> int:
        return self.database_functions + self.mutations + self.faas

    def to_json(self) -> dict[str, Any]:
        return {"root": str(self.root), "seed": self.seed, "tables": self.tables,
                "functions": self.functions, "databaseFunctions": self.database_functions,
                "mutations": self.mutations, "faas": self.faas,
                "excludedFromAgents": len(self.excluded), "files": self.files,
                "bytes": self.bytes}


def split_counts(functions: int) -> tuple[int, int, int]:
    """(Database Functions, Mutations, FaaS) for a total: 60 / 30 / 10 per cent."""
    database_functions = round(functions * 0.6)
    mutations = round(functions * 0.3)
    return database_functions, mutations, functions - database_functions - mutations


def generate_workspace(out_dir: Path | str, *, functions: int = 1000,
                       seed: int = DEFAULT_SEED) -> GeneratedWorkspace:
    """Write the workspace into `out_dir`, which must not exist or be empty."""
    if functions < MIN_FUNCTIONS:
        raise ValueError(f"functions must be at least {MIN_FUNCTIONS}, not {functions}")
    root = Path(out_dir)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise FileExistsError(f"{root} exists and is not an empty directory")
    rng = random.Random(seed)
    catalog = build_catalog(rng)
    sql_count, mutation_count, faas_count = split_counts(functions)
    # A lister per table that functions use; about four queries per table, as real sites.
    active = catalog.tables[:max(1, min(len(catalog.tables), sql_count // 4))]
    naming = Naming(catalog, active, rng)
    drafts = (generate_database_functions(naming, sql_count)
              + generate_mutations(naming, mutation_count)
              + generate_faas(naming, faas_count))
    files = _workspace_files(catalog, _with_unique_ids(drafts))
    total = 0
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        total += len(data)
    excluded = tuple(json.loads(files["agent-tools.json"])["exclude"])
    return GeneratedWorkspace(root=root, seed=seed, tables=len(catalog.tables),
                              database_functions=sql_count, mutations=mutation_count,
                              faas=faas_count, excluded=excluded, files=len(files),
                              bytes=total)


def _with_unique_ids(drafts: list[Draft]) -> list[Draft]:
    """Give repeated idents a numeric suffix (listTasks, listTasks2, …), in order."""
    seen: set[str] = set()
    for item in drafts:
        base = item.ident[:60]
        ident, n = base, 2
        while ident.lower() in seen:  # ids differing only in case confuse people and zips
            ident, n = f"{base}{n}", n + 1
        seen.add(ident.lower())
        item.ident = ident
        item.declaration["name"] = ident
    return drafts


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def _workspace_files(catalog: Catalog, drafts: list[Draft]) -> dict[str, str]:
    files: dict[str, str] = {}
    table_ids = [t.table_id for t in catalog.tables]
    files["base-database.jsonc"] = (
        "// Generated for basedb benchmarks (python -m bench.generate).\n"
        + _json({"appToken": "app_bench_workspace", "title": "Operations hub (benchmark)",
                 "binding": {"baseToken": catalog.base_token, "tableIds": table_ids},
                 "timezone": "Asia/Shanghai"}))
    files["catalog.json"] = _json(catalog.to_json())
    excluded = sorted(d.ident for d in drafts
                      if d.kind == "faas" and d.ident.startswith(INTERNAL_PREFIXES))
    files["agent-tools.json"] = _json({"exclude": excluded})
    for item in drafts:
        folder = f"{KIND_DIRS[item.kind]}/{item.ident}"
        files[f"{folder}/function.json"] = _json(item.declaration)
        if item.kind in COMPANION_FILES:
            files[f"{folder}/{COMPANION_FILES[item.kind]}"] = item.companion
    files.update(_page_files(catalog, drafts))
    return files


def _page_files(catalog: Catalog, drafts: list[Draft]) -> dict[str, str]:
    listers = [d.ident for d in drafts if d.kind == "database_function"][:8]
    counts = {kind: sum(1 for d in drafts if d.kind == kind) for kind in KIND_DIRS}
    readme = (
        "# Operations hub\n\n"
        "A generated site used by basedb's benchmarks: "
        f"{len(catalog.tables)} bound tables, {counts['database_function']} Database "
        f"Functions, {counts['mutation']} Mutations and {counts['faas']} FaaS functions.\n\n"
        "The Page lists records of the first tables; every write goes through a Mutation "
        "or a FaaS function.\n")
    buttons = "\n".join(f'    <button data-function="{name}">{name}</button>'
                        for name in listers)
    html = ("<!doctype html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n"
            "  <title>Operations hub</title>\n  <link rel=\"stylesheet\" href=\"style.css\">\n"
            "</head>\n<body>\n  <nav>\n" + buttons + "\n  </nav>\n"
            "  <main id=\"rows\"></main>\n  <script type=\"module\" src=\"app.js\"></script>\n"
            "</body>\n</html>\n")
    script = (
        "import { invokeDatabaseFunction } from \"/_basedb/runtime.js\";\n\n"
        "const main = document.querySelector(\"#rows\");\n\n"
        "async function show(functionId) {\n"
        "  const result = await invokeDatabaseFunction(functionId, { offset: 0 });\n"
        "  main.replaceChildren(...result.rows.map((row) => {\n"
        "    const item = document.createElement(\"pre\");\n"
        "    item.textContent = JSON.stringify(row);\n"
        "    return item;\n"
        "  }));\n"
        "}\n\n"
        "for (const button of document.querySelectorAll(\"button[data-function]\")) {\n"
        "  button.addEventListener(\"click\", () => show(button.dataset.function));\n"
        "}\n")
    style = ("body { font-family: system-ui, sans-serif; margin: 0; }\n"
             "nav { display: flex; flex-wrap: wrap; gap: 8px; padding: 12px; }\n"
             "main { padding: 12px; }\n")
    return {"README.md": readme, "src/index.html": html, "src/app.js": script,
            "src/style.css": style}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.generate",
        description="Generate a deterministic benchmark workspace.")
    parser.add_argument("out_dir", metavar="OUT_DIR", type=Path,
                        help="directory to create (must not exist, or be empty)")
    parser.add_argument("--functions", type=int, default=1000,
                        help="total number of functions (default: 1000)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help=f"random seed (default: {DEFAULT_SEED})")
    args = parser.parse_args(argv)
    if args.functions < MIN_FUNCTIONS:
        parser.error(f"--functions must be at least {MIN_FUNCTIONS}")
    try:
        made = generate_workspace(args.out_dir, functions=args.functions, seed=args.seed)
    except FileExistsError as error:
        parser.error(f"OUT_DIR: {error}; choose a new directory or empty it")
    except OSError as error:
        print(f"Cannot write {args.out_dir}: {error.strerror or error}.", file=sys.stderr)
        return 1
    print(json.dumps(made.to_json(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
