"""The floor for `basedb check`: the least work any checker of the workspace must do.

    python bench/floor_check.py WORKSPACE [--read-only]

It reads the files `basedb check` reads (base-database.jsonc, catalog.json,
agent-tools.json, every function.json parsed with `json`, every main.sql, whether each
index.mjs exists) and parses every main.sql with the same sqlglot as basedb
(`sqlglot.parse(sql, read="postgres")`), and nothing else: no name resolution, no rules,
no report. With `--read-only` it skips sqlglot entirely (the floor of commands that read
the declarations but do not parse SQL, such as `contracts generate`).

The runner times this script as a fresh process, as it times `basedb check`. It prints
one JSON object on stdout: counts, and the in-process seconds of each phase.

Only the standard library and sqlglot are imported, on purpose: this file must stay a
floor, so it never imports basedb.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

KIND_DIRS = ("database-functions", "mutations", "faas", "ai")
ROOT_FILES = ("base-database.jsonc", "catalog.json", "agent-tools.json")


def read_workspace(root: Path) -> tuple[list[str], dict[str, int]]:
    """Read every file check reads; return the SQL texts and what was read."""
    counts = {"files": 0, "bytes": 0, "declarations": 0, "sql": 0, "handlers": 0}
    for name in ROOT_FILES:
        path = root / name
        if path.exists():
            text = path.read_text(encoding="utf-8")
            counts["files"] += 1
            counts["bytes"] += len(text)
            if name.endswith(".json"):
                json.loads(text)
    sql_texts: list[str] = []
    for kind in KIND_DIRS:
        try:
            entries = sorted(os.scandir(root / kind), key=lambda e: e.name)
        except FileNotFoundError:
            continue
        for entry in entries:
            if not entry.is_dir() or entry.name.startswith("."):
                continue
            folder = Path(entry.path)
            text = (folder / "function.json").read_text(encoding="utf-8")
            json.loads(text)
            counts["files"] += 1
            counts["declarations"] += 1
            counts["bytes"] += len(text)
            if kind == "database-functions":
                sql = (folder / "main.sql").read_text(encoding="utf-8")
                sql_texts.append(sql)
                counts["files"] += 1
                counts["sql"] += 1
                counts["bytes"] += len(sql)
            elif kind == "faas" and (folder / "index.mjs").is_file():
                counts["handlers"] += 1
    return sql_texts, counts


def measure(root: Path, *, parse_sql: bool = True) -> dict[str, Any]:
    """Read (and parse) the workspace; the seconds of each phase and what was done."""
    started = time.perf_counter()
    sql_texts, counts = read_workspace(root)
    read = time.perf_counter()
    report: dict[str, Any] = {**counts, "readSeconds": read - started}
    if not parse_sql:
        return report
    import sqlglot  # imported here so that its import time is measured apart

    imported = time.perf_counter()
    for sql in sql_texts:
        sqlglot.parse(sql, read="postgres")
    parsed = time.perf_counter()
    report.update({"importSqlglotSeconds": imported - read,
                   "parseSeconds": parsed - imported, "totalSeconds": parsed - started})
    return report


def main(argv: list[str]) -> int:
    args = [a for a in argv if a != "--read-only"]
    if len(args) != 1:
        print("usage: python bench/floor_check.py WORKSPACE [--read-only]", file=sys.stderr)
        return 2
    root = Path(args[0])
    if not (root / "base-database.jsonc").is_file():
        print(f"{root} is not a workspace: base-database.jsonc is missing. Pass the "
              "directory that `python -m bench.generate` wrote.", file=sys.stderr)
        return 2
    print(json.dumps(measure(root, parse_sql="--read-only" not in argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
