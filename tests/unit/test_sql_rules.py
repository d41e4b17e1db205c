from __future__ import annotations

from pathlib import Path
from typing import Any

from basedb.check.context import CheckContext
from basedb.check.sql.rules import RELEASE_EVERY, check_database_functions
from basedb.sql.model import SqlAnalysis
from basedb.workspace.declarations import build_database_function
from basedb.workspace.model import EMPTY_CATALOG, AgentToolsConfig, Catalog, Workspace
from tests.unit._sql_fixture import make_catalog

DESC = "Lists the tasks of one status; read-only."


def param(name: Any, description: str = "Status of the tasks to list", **extra: Any,
          ) -> dict[str, Any]:
    return {"name": name, "kind": "TEXT", "description": description, **extra}


def run(functions: dict[str, tuple[list[Any], str | None]], *,
        catalog: Catalog | None = None, loaded: bool = True, keep: bool = True,
        ) -> CheckContext:
    declarations: dict[str, Any] = {}
    for function_id, (params, sql) in functions.items():
        doc = {"name": function_id, "description": DESC, "meta": {"params": params}}
        decl, _ = build_database_function(function_id, doc, sql)
        assert decl is not None
        declarations[function_id] = decl
    ws = Workspace(root=Path("/nonexistent"), config=None,
                   catalog=catalog or (make_catalog() if loaded else EMPTY_CATALOG),
                   declarations=declarations,
                   ids={fid: ["database_function"] for fid in functions},
                   agent_tools=AgentToolsConfig(present=False), load_findings=[],
                   catalog_loaded=loaded)
    ctx = CheckContext(workspace=ws, keep_analyses=keep)
    check_database_functions(ctx)
    return ctx


def test_analyses_not_kept_give_the_same_findings() -> None:
    # More queries than one release period, so the released analyses are collected
    # while the batch runs.
    functions = {f"list{n}": ([param("status")], f'SELECT "标题" FROM "任务" WHERE "状x" = $1 '
                              f"LIMIT {n + 1}") for n in range(RELEASE_EVERY + 3)}
    kept, released = run(functions), run(functions, keep=False)
    assert len(kept.analyses) == len(functions)
    assert released.analyses == {}
    assert released.errors == kept.errors and released.hints == kept.hints
    assert len(released.errors) == len(functions)


def test_sql_problems_become_findings_on_main_sql() -> None:
    ctx = run({"listTasks": ([param("status")],
                             'SELECT "标题"\nFROM "任务"\nWHERE "状x" = $1 AND points > $2')})
    found = sorted((f.code, f.file, f.pointer, f.function_id, f.line, f.column)
                   for f in ctx.errors)
    assert found == [
        ("SQL_PARAM_UNDECLARED", "database-functions/listTasks/main.sql", "", "listTasks", 3,
         30),
        ("SQL_UNKNOWN_FIELD", "database-functions/listTasks/main.sql", "", "listTasks", 3, 7),
    ]
    assert all(f.fix for f in ctx.errors)
    assert isinstance(ctx.analyses["listTasks"], SqlAnalysis)
    # No hints for a function whose SQL has errors.
    assert ctx.hints == []


def test_empty_main_sql() -> None:
    ctx = run({"empty": ([], "  \n"), "comments": ([], "-- nothing here\n")})
    by_function = {f.function_id: (f.code, f.message) for f in ctx.errors}
    assert by_function["empty"] == ("SQL_PARSE_ERROR", "main.sql is empty.")
    assert by_function["comments"][0] == "SQL_PARSE_ERROR"


def test_function_without_sql_is_skipped() -> None:
    ctx = run({"noSql": ([], None)})
    assert ctx.errors == [] and ctx.analyses == {}


def test_hostile_sql_is_refused() -> None:
    ctx = run({"evil": ([], "SELECT 1; DROP TABLE t_tblTask")})
    assert [f.code for f in ctx.errors] == ["SQL_NOT_READ_ONLY"]


def test_param_unused_hint() -> None:
    ctx = run({"listTasks": ([param("status"), param("limit", kind="INT")],
                             "SELECT 标题 FROM 任务 WHERE 状态 = $1")})
    assert ctx.errors == []
    unused = [h for h in ctx.hints if h.code == "param_unused"]
    assert [(h.param, h.file, h.pointer, h.function_id) for h in unused] == [
        ("limit", "database-functions/listTasks/function.json", "/meta/params/1", "listTasks")]
    assert "$2" in unused[0].message


def test_invalid_param_entries_still_count_positionally() -> None:
    # The first entry is broken (not an object, no name) but it still is $1.
    ctx = run({"fn": (["not a param", {"kind": "TEXT", "description": "the status value"}],
                      "SELECT 标题 FROM 任务 WHERE 标题 = $1 AND 状态 = $2")})
    assert [f.code for f in ctx.errors] == []
    ctx = run({"fn": (["not a param"], "SELECT 标题 FROM 任务 WHERE 标题 = $1 AND 状态 = $2")})
    assert [f.code for f in ctx.errors] == ["SQL_PARAM_UNDECLARED"]


def test_enum_out_of_domain_where_binding_is_provable() -> None:
    ctx = run({"fn": ([param("status", enum=["进行中", "已取消"])],
                      "SELECT 标题 FROM 任务 WHERE 状态 = $1")})
    assert [(f.code, f.pointer, f.file) for f in ctx.errors] == [
        ("ENUM_OUT_OF_DOMAIN", "/meta/params/0/enum/1",
         "database-functions/fn/function.json")]


def test_enum_unchecked_for_optional_filter() -> None:
    ctx = run({"fn": ([param("status", enum=["进行中", "已取消"])],
                      "SELECT 标题 FROM 任务 WHERE $1 IS NULL OR 状态 = $1")})
    assert ctx.errors == []
    assert [h.code for h in ctx.hints] == ["enum_unchecked"]


def test_option_field_unconstrained_and_reference_hints() -> None:
    ctx = run({"fn": ([param("status"), param("project", "the project to filter on")],
                      "SELECT 标题 FROM 任务 WHERE 状态 = $1 AND 项目 = $2")})
    assert sorted(h.code for h in ctx.hints) == ["option_field_unconstrained",
                                                 "reference_value_hint"]


def test_without_catalog_names_are_not_checked_but_params_are() -> None:
    ctx = run({"fn": ([param("status")], "SELECT x FROM unknown WHERE y = $1 AND z = $2")},
              loaded=False)
    assert [f.code for f in ctx.errors] == ["SQL_PARAM_UNDECLARED"]
    ctx = run({"fn": ([param("status"), param("other")], "SELECT x FROM unknown WHERE y = $1")},
              loaded=False)
    assert ctx.errors == []
    assert [h.param for h in ctx.hints if h.code == "param_unused"] == ["other"]


def test_reference_hint_is_silenced_by_naming_a_supplier_function() -> None:
    ctx = run({
        "tasksOfProject": ([param("project", "project record id; call listProjects first")],
                           "SELECT 标题 FROM 任务 WHERE 项目 = $1"),
        "listProjects": ([], "SELECT record_id, 名称 FROM 项目"),
    })
    assert [h.code for h in ctx.hints] == []
    ctx = run({
        "tasksOfProject": ([param("project", "project record id; call listProjectsX first")],
                           "SELECT 标题 FROM 任务 WHERE 项目 = $1"),
        "listProjects": ([], "SELECT record_id, 名称 FROM 项目"),
    })
    assert [h.code for h in ctx.hints] == ["reference_value_hint"]
