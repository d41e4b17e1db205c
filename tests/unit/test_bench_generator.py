"""The benchmark workspace generator stays honest: what it writes passes `basedb check`.

The benchmarks measure check on a generated workspace; if a rule changes and the
generator starts writing errors, check would be timed on the wrong path. These tests
generate a small workspace and hold it to what the 1,000-function one must be: clean,
deterministic, realistic (every field type, every kind of function) and runnable (every
query compiles to SQLite and runs on the platform's physical layout).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from basedb.check.run import check_workspace
from basedb.contracts import stale_findings
from basedb.platform.storage import physical
from basedb.platform.storage.sql_compile import compile_for_sqlite
from basedb.sql.analysis import analyze_sql
from basedb.sql.sqlite.query import prepare_connection, read_only_authorizer
from basedb.workspace import Workspace, load_workspace
from basedb.workspace.model import FIELD_TYPES, DatabaseFunction, FaaS, FunctionKind, Mutation
from bench.floor_check import measure as measure_floor
from bench.generate import generate_workspace, split_counts
from bench.generate import main as generate_main

FUNCTIONS = 60
AGENT_LINT_CODES = {"description_names_closed", "description_vague_pointer",
                    "description_near_duplicate", "name_contradicts_description"}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("bench") / "ws"
    made = generate_workspace(root, functions=FUNCTIONS)
    assert made.functions == FUNCTIONS
    return load_workspace(root)


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_generated_workspace_passes_check_with_few_hints(generated: Workspace) -> None:
    result = check_workspace(generated, contracts=stale_findings)
    assert [(e.code, e.file, e.message) for e in result.errors] == []
    assert result.ok
    # Hints are allowed (real sites have some) but must stay rare. The descriptions'
    # agent-facing faults (pointers to functions the site lacks, "when it exists") are
    # left in on purpose: they are what the agent lint and the agents benchmark measure.
    authoring = [h for h in result.hints if h.code not in AGENT_LINT_CODES]
    assert len(authoring) <= FUNCTIONS // 20, Counter(h.code for h in authoring)


def test_the_split_between_kinds_is_60_30_10(generated: Workspace) -> None:
    kinds: tuple[FunctionKind, ...] = ("database_function", "mutation", "faas")
    expected = dict(zip(kinds, split_counts(FUNCTIONS), strict=True))
    assert {kind: len(generated.of_kind(kind)) for kind in expected} == expected
    assert split_counts(1000) == (600, 300, 100)


def test_the_catalog_covers_every_field_type(generated: Workspace) -> None:
    tables = generated.catalog.tables
    assert len(tables) == 50
    types = {f.type for t in tables for f in t.fields}
    assert types == set(FIELD_TYPES)
    assert any(f.type == "select" and f.multiple for t in tables for f in t.fields)
    assert any(f.type == "select" and len(f.options) > 20 for t in tables for f in t.fields)
    assert any(not t.name.isascii() for t in tables)


def test_functions_use_the_features_the_benchmark_claims(generated: Workspace) -> None:
    sql = "\n".join(d.sql or "" for d in generated.of_kind("database_function")
                    if isinstance(d, DatabaseFunction))
    for feature in ("JOIN", "WITH ", "EXISTS (", " IN (", "GROUP BY", "HAVING", "= ANY($",
                    "IS NULL OR", "CURRENT_USER_ID()", "OFFSET $", "ROW_NUMBER() OVER"):
        assert feature in sql, feature
    params = [p for d in generated.of_kind("database_function") for p in d.params]
    assert any(p.enum_values for p in params)
    assert any(p.kind == "TEXT[]" for p in params)
    specs = [d.spec for d in generated.of_kind("mutation")
             if isinstance(d, Mutation) and d.spec is not None]
    assert {s.action for s in specs} == {"create", "update", "delete"}
    assert any(s.precondition for s in specs) and any(s.clear for s in specs)
    assert any(p.list is True for s in specs for p in s.params)
    schemas = [d.input_schema for d in generated.of_kind("faas") if isinstance(d, FaaS)]
    assert any("oneOf" in s for s in schemas)
    assert all(d.has_handler for d in generated.of_kind("faas") if isinstance(d, FaaS))
    assert generated.agent_tools.present and generated.agent_tools.exclude


def test_descriptions_are_long_enough(generated: Workspace) -> None:
    for decl in generated.declarations.values():
        assert len(decl.description_str) >= 60, decl.function_id
        for param in decl.params:
            assert len(param.description_str) >= 8, (decl.function_id, param.name)


def test_every_query_compiles_and_runs_on_the_physical_layout(generated: Workspace) -> None:
    conn = sqlite3.connect(":memory:")
    for table in generated.catalog.tables:
        conn.execute(physical.record_table_ddl(table.table_id))
        for f in table.fields:
            conn.execute(f"ALTER TABLE {physical.table_name(table.table_id)} ADD COLUMN "
                         f"{physical.column_name(f.field_id)} {physical.column_affinity(f)}")
    prepare_connection(conn)
    samples = {"INT": 1, "NUMBER": 1.5, "BOOL": True, "DATE": "2026-01-01",
               "DATETIME": "2026-01-01 00:00:00"}
    for decl in generated.of_kind("database_function"):
        assert isinstance(decl, DatabaseFunction) and decl.sql is not None
        analysis = analyze_sql(decl.sql, generated.catalog, len(decl.params))
        compiled = compile_for_sqlite(analysis, generated.catalog)
        values = [["x"] if p.is_array else samples.get(p.element_kind, "x")
                  for p in decl.params]
        conn.set_authorizer(read_only_authorizer(compiled))
        try:
            assert conn.execute(compiled.sql, compiled.parameters(values, "u1")).fetchall() \
                == [] or decl.function_id
        finally:
            conn.set_authorizer(None)


def test_generation_is_deterministic(tmp_path: Path) -> None:
    first = generate_workspace(tmp_path / "a", functions=30, seed=7)
    generate_workspace(tmp_path / "b", functions=30, seed=7)
    generate_workspace(tmp_path / "c", functions=30, seed=8)
    assert tree_digest(first.root) == tree_digest(tmp_path / "b")
    assert tree_digest(first.root) != tree_digest(tmp_path / "c")


def test_the_floor_reads_what_check_reads(generated: Workspace) -> None:
    report = measure_floor(generated.root)
    assert report["declarations"] == len(generated.declarations)
    assert report["sql"] == len(generated.of_kind("database_function"))
    assert report["handlers"] == len(generated.of_kind("faas"))
    assert report["parseSeconds"] > 0


def test_the_command_line_refuses_a_directory_in_use(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        generate_main(["--functions", "20", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "not an empty directory" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
    assert generate_main(["--functions", "20", str(tmp_path / "new")]) == 0
    assert json.loads(capsys.readouterr().out)["functions"] == 20
