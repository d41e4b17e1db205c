"""The Database Functions of the template and of the test workspaces, as written, on
PostgreSQL and on the local platform.

Each workspace's catalog is loaded on both engines (a PostgreSQL schema of its own) with
rows generated from its field types (`dataset.generated_cells`), and each main.sql runs
with several sets of parameters of its declared kinds: all NULL, then values taken from
the data (record ids, option names, texts, dates; an enum's own values), every other
set leaving the optional ones out, so that joins, filters and pages return rows. Every
outcome must agree, as in test_differential.py.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from basedb.sql.sqlite.query import prepare_connection
from basedb.workspace.catalog import build_catalog
from basedb.workspace.loader import load_workspace
from basedb.workspace.model import Catalog, DatabaseFunction
from basedb.workspace.scaffold import catalog_from_schema
from basedb.workspace.template_schema import load_template_schema
from tests.differential import dataset
from tests.differential.conftest import SUMMARIES
from tests.differential.engines import Case, setup_session
from tests.differential.runner import Tally, run_corpus

REPO = Path(__file__).resolve().parents[2]
WORKSPACES = sorted([REPO / "templates" / "example"] + [
    p for p in (REPO / "tests" / "cases" / "positive").iterdir()
    if (p / "database-functions").is_dir()])
COMBINATIONS = 6  # parameter sets per function, after the all-NULL one


def _pools(catalog: Catalog, cells: dataset.Cells) -> dict[str, list[Any]]:
    """Parameter values by kind, drawn from the data so that they match rows."""
    record_ids = [rows[i][0] for rows in cells.values() for i in (0, 3) if i < len(rows)]
    options = [o for t in catalog.tables for f in t.fields if f.type == "select"
               for o in f.options[:2]]
    texts = [*record_ids, *options, dataset.CALLER, "Write API", "école"]
    dates = ["2024-03-01", "2024-01-31", "2025-01-01"]
    stamps = ["2024-05-17 10:30:00", "2024-01-31 00:00:00", "2024-12-31 23:00:00"]
    return {
        "TEXT": texts, "INT": [0, 1, 2, 200, 5], "NUMBER": [1.5, 0, -2, 100],
        "BOOL": [True, False], "DATE": dates, "DATETIME": stamps,
        "TEXT[]": [texts[i:i + 2] for i in range(0, len(texts), 2)] + [[]],
        "INT[]": [[1, 2], [], [3]], "NUMBER[]": [[1.5, 2.5], [], [0]],
    }


def _cases(function: DatabaseFunction, pools: dict[str, list[Any]]) -> list[Case]:
    assert function.sql is not None
    kinds = [str(p.kind) for p in function.params]
    cases = [Case(function.sql, tuple((k, None) for k in kinds))]
    for n in range(COMBINATIONS):
        params = []
        for index, (param, kind) in enumerate(zip(function.params, kinds, strict=True)):
            if param.required is False and n % 2:  # every other set leaves it out
                params.append((kind, None))
                continue
            enum = list(param.enum) if param.has_enum and param.enum else []
            pool = enum or pools[kind]
            params.append((kind, pool[(n + index) % len(pool)]))
        cases.append(Case(function.sql, tuple(params), note=function.function_id))
    return cases


@pytest.fixture(scope="module")
def sqlite_connections() -> Iterator[list[sqlite3.Connection]]:
    opened: list[sqlite3.Connection] = []
    yield opened
    for conn in opened:
        conn.close()


@pytest.mark.parametrize("root", WORKSPACES, ids=lambda p: p.name)
def test_a_workspace_runs_as_on_postgresql(engines: Any, root: Path,
                                           sqlite_connections: list[Any]) -> None:
    workspace = load_workspace(root)
    catalog = workspace.catalog
    if not workspace.catalog_loaded:  # a template: its catalog comes from _template.json
        schema_doc = catalog_from_schema(load_template_schema(root / "_template.json"),
                                         base_token="basTemplate")
        catalog, findings = build_catalog(schema_doc)
        assert not findings, findings
    functions = [d for d in workspace.of_kind("database_function")
                 if isinstance(d, DatabaseFunction) and d.sql is not None]
    assert functions, f"{root} has no Database Function"
    cells = dataset.generated_cells(catalog)
    schema = f"ws_{root.parent.name}_{root.name}"
    pg = engines.postgres
    pg.execute(f"CREATE SCHEMA {dataset.pg_ident(schema)}")
    local = sqlite3.connect(":memory:", isolation_level=None)
    sqlite_connections.append(local)
    dataset.load_sqlite(local, catalog, cells)
    prepare_connection(local)
    dataset.load_postgres(pg, catalog, cells, schema=schema)
    pg.execute(f"SET search_path = basedb_pin, {dataset.pg_ident(schema)}, pg_catalog")
    try:
        pools = _pools(catalog, cells)
        cases = [case for function in functions for case in _cases(function, pools)]
        target = type(engines)(sqlite=local, postgres=pg, catalog=catalog,
                               zone=engines.zone)
        tally: Tally = run_corpus(target, cases)
    finally:
        setup_session(pg, engines.zone)
    SUMMARIES.append(tally.summary(f"workspace {root.relative_to(REPO)} "
                                   f"({len(functions)} functions)"))
    details = "\n\n".join(str(d) for d in tally.differences[:10])
    assert not tally.differences, f"{tally.summary(root.name)}\n\n{details}"
    assert tally.with_rows, "no query of the workspace returned a row: the comparison is empty"
