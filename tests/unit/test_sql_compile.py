from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from basedb.platform.storage.sql_compile import compile_for_sqlite
from basedb.sql.analysis import analyze_sql
from basedb.sql.sqlite.query import (
    CompiledQuery,
    CompileError,
    prepare_connection,
    read_only_authorizer,
)
from tests.unit._sql_fixture import make_catalog, make_database

CATALOG = make_catalog()


@pytest.fixture(scope="module")
def db() -> Iterator[sqlite3.Connection]:
    conn = make_database(CATALOG)
    prepare_connection(conn)
    yield conn
    conn.close()


def compile_sql(sql: str, params: int) -> CompiledQuery:
    analysis = analyze_sql(sql, CATALOG, params)
    assert analysis.problems == (), analysis.problems
    return compile_for_sqlite(analysis, CATALOG)


def run(db: sqlite3.Connection, sql: str, values: Sequence[Any] = (), *,
        user: str | None = "ou_ann") -> tuple[list[str], list[tuple[Any, ...]]]:
    compiled = compile_sql(sql, len(values))
    db.set_authorizer(read_only_authorizer(compiled))
    try:
        cursor = db.execute(compiled.sql, compiled.parameters(values, user))
        rows = cursor.fetchall()
        names = [d[0] for d in cursor.description]
    finally:
        db.set_authorizer(None)
    assert names == [c.name for c in compiled.columns]
    return names, rows


def titles(db: sqlite3.Connection, where: str, values: Sequence[Any] = ()) -> list[str]:
    _, rows = run(db, f'SELECT "标题" FROM "任务" WHERE {where} ORDER BY "标题"', values)
    return [r[0] for r in rows]


# ---------------------------------------------------------------- shape


def test_names_become_physical_and_output_names_stay() -> None:
    compiled = compile_sql('SELECT "标题", t."状态" AS s FROM "任务" t WHERE "状态" = $1', 1)
    assert "t_tblTask" in compiled.sql and "c_fldTitle" in compiled.sql
    assert "任务" not in compiled.sql.replace('AS "任务"', "")
    assert [c.name for c in compiled.columns] == ["标题", "s"]
    assert compiled.slots == (1,)
    assert compiled.tables == frozenset({"t_tblTask"})


def test_star_expands_in_catalog_order(db: sqlite3.Connection) -> None:
    names, rows = run(db, "SELECT * FROM 项目 ORDER BY 名称")
    assert names == ["名称", "Lead"]
    assert rows == [("平台", "ou_ann"), ("门户", "ou_bob")]
    names, _ = run(db, "SELECT p.*, t.标题 FROM 项目 p JOIN 任务 t ON t.项目 = p.record_id")
    assert names == ["名称", "Lead", "标题"]


def test_columns_carry_fields_for_decoding() -> None:
    compiled = compile_sql("SELECT 标签, 标题, count(*) AS n FROM 任务 GROUP BY 1, 2", 0)
    assert [(c.name, c.field.field_id if c.field else None) for c in compiled.columns] == [
        ("标签", "fldTags"), ("标题", "fldTitle"), ("n", None)]
    assert compiled.columns[0].field is not None and compiled.columns[0].field.is_multi_valued


def test_parameters_are_placeholders_in_textual_order() -> None:
    compiled = compile_sql("SELECT 标题 FROM 任务 WHERE 标题 = $2 AND (状态 = $1 OR $2 IS NULL) "
                           "AND 负责人 = CURRENT_USER_ID() LIMIT $3", 3)
    assert compiled.sql.count("?") == 5
    assert compiled.slots == (2, 1, 2, "current_user", 3)
    assert compiled.parameters(["a", "b", 10], "ou_x") == ["b", "a", "b", "ou_x", 10]


def test_parameters_convert_arrays_and_booleans() -> None:
    compiled = compile_sql("SELECT 标题 FROM 任务 WHERE 状态 = ANY($1) AND 已完成 = $2", 2)
    assert compiled.parameters([["进行中", "完成"], True], None) == ['["进行中", "完成"]', 1]
    assert compiled.parameters([], None) == [None, None]


def test_string_values_never_reach_the_sql_text() -> None:
    evil = "x'); DROP TABLE t_tblTask; --"
    compiled = compile_sql("SELECT 标题 FROM 任务 WHERE 标题 = $1", 1)
    assert evil not in compiled.sql and "?" in compiled.sql


def test_a_query_with_problems_is_not_compiled() -> None:
    analysis = analyze_sql("SELECT nope FROM 任务", CATALOG, 0)
    with pytest.raises(CompileError):
        compile_for_sqlite(analysis, CATALOG)
    unresolved = analyze_sql("SELECT 标题 FROM 任务", CATALOG, 0, resolve=False)
    with pytest.raises(CompileError):
        compile_for_sqlite(unresolved, CATALOG)


# ---------------------------------------------------------------- results


def test_join_across_cjk_tables(db: sqlite3.Connection) -> None:
    _, rows = run(db, 'SELECT p."名称", t."标题" FROM "任务" t JOIN "项目" p '
                      'ON p.record_id = t."项目" ORDER BY 1, 2')
    assert rows == [("平台", "写接口"), ("平台", "画页面"), ("门户", "修缺陷"), ("门户", "画页面")]
    _, rows = run(db, "SELECT n.body, t.标题 FROM Notes n JOIN 任务 t ON n.task = t.record_id "
                      "ORDER BY 1")
    assert rows == [("first", "写接口"), ("second", "画页面")]


def test_join_using(db: sqlite3.Connection) -> None:
    _, rows = run(db, "SELECT a.标题 FROM 任务 a JOIN 任务 b USING (标题) WHERE 标题 = $1",
                  ["写文档"])
    assert rows == [("写文档",)]


def test_ctes(db: sqlite3.Connection) -> None:
    names, rows = run(db, 'WITH open AS (SELECT "标题", "状态" AS s FROM "任务" WHERE "状态" = $1) '
                          "SELECT * FROM open ORDER BY 标题", ["进行中"])
    assert names == ["标题", "s"]
    assert rows == [("修缺陷", "进行中"), ("写接口", "进行中")]
    _, rows = run(db, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r "
                      "WHERE n < 3) SELECT n, 标题 FROM r JOIN 任务 ON 任务.points = r.n")
    assert rows == [(3, "写接口")]


def test_cte_named_like_a_physical_table_does_not_shadow_it(db: sqlite3.Connection) -> None:
    _, rows = run(db, "WITH t_tblProject AS (SELECT 'fake' AS 名称) "
                      "SELECT 名称 FROM 项目 ORDER BY 1")
    assert rows == [("平台",), ("门户",)]


def test_subqueries(db: sqlite3.Connection) -> None:
    assert titles(db, "项目 = (SELECT record_id FROM 项目 WHERE 名称 = $1)", ["门户"]) == [
        "修缺陷", "画页面"]
    assert titles(db, "points > (SELECT avg(points) FROM 任务)") == ["修缺陷"]
    _, rows = run(db, "SELECT s.t FROM (SELECT 标题 AS t, points FROM 任务) s "
                      "WHERE s.points >= $1 ORDER BY s.t", [5])
    assert rows == [("修缺陷",), ("画页面",)]
    _, rows = run(db, "SELECT x.a FROM (SELECT 标题, 状态 FROM 任务) AS x(a, b) "
                      "WHERE x.b = $1", ["完成"])
    assert rows == [("画页面",)]
    _, rows = run(db, "SELECT t.标题 FROM 任务 t WHERE EXISTS (SELECT 1 FROM 项目 p "
                      "WHERE p.record_id = t.项目 AND p.Lead = $1) ORDER BY 1", ["ou_bob"])
    assert rows == [("修缺陷",), ("画页面",)]


# ---------------------------------------------------------------- multi-valued fields


def test_multi_valued_equals_means_any_element(db: sqlite3.Connection) -> None:
    assert titles(db, "标签 = $1", ["紧急"]) == ["修缺陷", "画页面"]
    assert titles(db, "$1 = 标签", ["后端"]) == ["写接口"]
    assert titles(db, "关注人 = CURRENT_USER_ID()") == ["画页面"]
    assert titles(db, "项目 = $1", ["recP2"]) == ["修缺陷", "画页面"]


def test_multi_valued_not_equals_means_no_element(db: sqlite3.Connection) -> None:
    # 写文档's tags are empty (NULL): `x <> ALL(NULL)` is NULL, so it is left out.
    assert titles(db, "标签 <> $1", ["紧急"]) == ["写接口"]


def test_an_empty_multi_valued_field_compares_as_null(db: sqlite3.Connection) -> None:
    # As in PostgreSQL: `x = ANY(NULL)` is NULL, and so is its NOT; 修缺陷's watchers
    # are stored as [] and 写文档's as NULL, both empty.
    assert titles(db, "NOT (标签 = $1)", ["紧急"]) == ["写接口"]
    assert titles(db, "NOT (关注人 = $1)", ["ou_ann"]) == ["写接口"]
    assert titles(db, "(关注人 = $1) IS NULL", ["ou_ann"]) == ["修缺陷", "写文档"]
    assert titles(db, "NOT (标签 IN ($1, $2))", ["前端", "后端"]) == ["修缺陷"]
    assert titles(db, "NOT (标签 = ANY($1))", [["前端"]]) == ["修缺陷", "写接口"]
    assert titles(db, "(关注人 IN (SELECT 负责人 FROM 任务 WHERE false)) IS FALSE") == [
        "修缺陷", "写接口", "写文档", "画页面"]  # IN an empty set is false, even for NULL


def test_a_null_among_the_values_makes_no_match_null(db: sqlite3.Connection) -> None:
    assert titles(db, "标签 NOT IN ($1, NULL)", ["前端"]) == []
    assert titles(db, "标签 IN ($1, NULL)", ["前端"]) == ["画页面"]
    assert titles(db, "(标签 IN ($1, NULL)) IS NULL", ["前端"]) == ["修缺陷", "写接口", "写文档"]
    assert titles(db, "标签 <> ALL($1)", [["后端", None]]) == []
    assert titles(db, "(标签 = ANY($1)) IS NULL", [None]) == ["修缺陷", "写接口", "写文档",
                                                              "画页面"]
    assert titles(db, "(状态 = ANY($1)) IS NULL", [None]) == ["修缺陷", "写接口", "写文档",
                                                              "画页面"]


def test_multi_valued_in_and_not_in(db: sqlite3.Connection) -> None:
    assert titles(db, "标签 IN ($1, $2)", ["前端", "后端"]) == ["写接口", "画页面"]
    assert titles(db, "标签 NOT IN ($1, $2)", ["前端", "后端"]) == ["修缺陷"]
    assert titles(db, "项目 IN (SELECT record_id FROM 项目 WHERE 名称 = $1)", ["平台"]) == [
        "写接口", "画页面"]


def test_multi_valued_any_and_all_with_array_params(db: sqlite3.Connection) -> None:
    assert titles(db, "标签 = ANY($1)", [["前端", "后端"]]) == ["写接口", "画页面"]
    assert titles(db, "标签 = ANY($1::text[])", [["紧急"]]) == ["修缺陷", "画页面"]
    assert titles(db, "标签 <> ALL($1)", [["紧急", "后端"]]) == []
    assert titles(db, "标签 <> ALL($1)", [["后端"]]) == ["修缺陷", "画页面"]
    assert titles(db, "标签 = ANY($1)", [[]]) == []


def test_multi_valued_is_null_covers_empty_arrays(db: sqlite3.Connection) -> None:
    assert sorted(titles(db, "关注人 IS NULL")) == sorted(["写文档", "修缺陷"])
    assert sorted(titles(db, "关注人 IS NOT NULL")) == sorted(["写接口", "画页面"])


def test_multi_valued_through_a_cte_column(db: sqlite3.Connection) -> None:
    _, rows = run(db, "WITH c AS (SELECT 标题 AS t, 标签 AS tags FROM 任务) "
                      "SELECT t FROM c WHERE tags = $1 ORDER BY t", ["紧急"])
    assert rows == [("修缺陷",), ("画页面",)]


def test_scalar_fields_with_array_params(db: sqlite3.Connection) -> None:
    assert titles(db, "状态 = ANY($1)", [["完成", "搁置"]]) == ["写文档", "画页面"]
    assert titles(db, "状态 <> ALL($1)", [["完成", "搁置"]]) == ["修缺陷", "写接口"]
    assert titles(db, "record_id = ANY($1)", [["recT1", "recX"]]) == ["写接口"]
    assert titles(db, "cardinality($1::text[]) = 2 AND points = 3", [["a", "b"]]) == ["写接口"]


# ---------------------------------------------------------------- filters and shaping


def test_current_user(db: sqlite3.Connection) -> None:
    _, rows = run(db, "SELECT 标题 FROM 任务 WHERE 负责人 = CURRENT_USER_ID() ORDER BY 1",
                  user="ou_ann")
    assert rows == [("写接口",), ("写文档",)]
    _, rows = run(db, "SELECT 标题 FROM 任务 WHERE 负责人 = CURRENT_USER_ID()", user=None)
    assert rows == []


def test_optional_filter(db: sqlite3.Connection) -> None:
    where = "($1::text IS NULL OR 状态 = $1)"
    assert titles(db, where, [None]) == ["修缺陷", "写接口", "写文档", "画页面"]
    assert titles(db, where, ["进行中"]) == ["修缺陷", "写接口"]


def test_limit_and_offset_params(db: sqlite3.Connection) -> None:
    _, rows = run(db, "SELECT 标题 FROM 任务 ORDER BY record_id LIMIT $1 OFFSET $2", [2, 1])
    assert rows == [("画页面",), ("写文档",)]
    _, rows = run(db, "SELECT 标题 FROM 任务 ORDER BY record_id OFFSET $1", [3])
    assert rows == [("修缺陷",)]


def test_null_limit_and_offset_mean_no_limit_and_zero(db: sqlite3.Connection) -> None:
    # As in PostgreSQL: an optional paging param that is left out does not fail the query.
    _, rows = run(db, "SELECT 标题 FROM 任务 ORDER BY record_id LIMIT $1 OFFSET $2",
                  [None, None])
    assert len(rows) == 4
    _, rows = run(db, "SELECT 标题 FROM 任务 ORDER BY record_id LIMIT $1::int OFFSET $2",
                  [None, 3])
    assert rows == [("修缺陷",)]


def test_aggregates_group_by_output_alias_and_order(db: sqlite3.Connection) -> None:
    names, rows = run(db, "SELECT 状态 AS s, count(*) AS n, sum(points) AS total FROM 任务 "
                          "GROUP BY s HAVING count(*) >= $1 ORDER BY n DESC, s", [1])
    assert names == ["s", "n", "total"]
    assert rows == [("进行中", 2, 11.0), ("完成", 1, 5.0), ("搁置", 1, None)]
    _, rows = run(db, "SELECT 状态, count(*) FROM 任务 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1")
    assert rows == [("进行中", 2)]


def test_order_by_nulls_like_postgresql(db: sqlite3.Connection) -> None:
    _, rows = run(db, "SELECT 标题 FROM 任务 ORDER BY points")
    assert rows[-1] == ("写文档",)  # NULLs sort last ascending, as in PostgreSQL
    _, rows = run(db, "SELECT 标题 FROM 任务 ORDER BY points DESC")
    assert rows[0] == ("写文档",)


def test_checkbox_compares_with_booleans(db: sqlite3.Connection) -> None:
    assert titles(db, "已完成 = true") == ["画页面"]
    assert titles(db, "NOT 已完成 AND 已完成 = $1", [False]) == ["修缺陷", "写接口", "写文档"]


def test_postgresql_functions_and_operators(db: sqlite3.Connection) -> None:
    _, rows = run(db, "SELECT 标题 || '/' || 状态, concat(标题, '-', points), "
                      "date_trunc('month', 截止), EXTRACT(year FROM 截止), "
                      "coalesce(points, 0) FROM 任务 WHERE 标题 ILIKE $1", ["%接口%"])
    assert rows == [("写接口/进行中", "写接口-3", "2024-05-01 00:00:00", 2024, 3.0)]
    assert titles(db, "截止 >= '2024-05-19'::timestamp - INTERVAL '1 day'") == ["修缺陷",
                                                                                "画页面"]
    assert titles(db, "截止 < '2024-05-11'::date + INTERVAL '1 week'") == ["写接口"]
    _, rows = run(db, "SELECT date_trunc('week', 截止), EXTRACT(dow FROM 截止) FROM 任务 "
                      "WHERE record_id = $1", ["recT1"])
    assert rows == [("2024-05-13 00:00:00", 5)]


# ---------------------------------------------------------------- safety


SAFETY_CORPUS = [
    "SELECT * FROM 任务",
    "WITH c AS (SELECT * FROM 项目) SELECT * FROM c",
    "SELECT 标题 FROM 任务 WHERE 标签 = ANY($1) AND 项目 IN (SELECT record_id FROM 项目)",
    "SELECT n.body FROM Notes n WHERE EXISTS (SELECT 1 FROM 任务 t WHERE t.record_id = n.task)",
    "SELECT DISTINCT ON (状态) 状态, 标题 FROM 任务 ORDER BY 状态, 标题",
]


@pytest.mark.parametrize("sql", SAFETY_CORPUS)
def test_compiled_sql_reads_only_physical_tables_ctes_and_json_each(sql: str) -> None:
    compiled = compile_sql(sql, 1 if "$1" in sql else 0)
    tree = sqlglot.parse_one(compiled.sql, read="sqlite")
    ctes = {cte.alias for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if isinstance(table.this, exp.Anonymous):
            assert str(table.this.this).lower() == "json_each"
        else:
            assert table.name in compiled.tables or table.name in ctes, table.name


def test_base_names_cannot_inject(db: sqlite3.Connection) -> None:
    _, rows = run(db, 'SELECT "say ""hi""" AS "a"" b" FROM "Notes" ORDER BY 1')
    assert rows == [("x",), ("y",)]


def test_authorizer_refuses_other_tables_and_functions(db: sqlite3.Connection) -> None:
    compiled = compile_sql("SELECT 名称 FROM 项目", 0)
    db.set_authorizer(read_only_authorizer(compiled))
    try:
        with pytest.raises(sqlite3.DatabaseError):
            db.execute("SELECT * FROM t_tblTask").fetchall()
        with pytest.raises(sqlite3.DatabaseError):
            db.execute("SELECT name FROM sqlite_master").fetchall()
        with pytest.raises(sqlite3.DatabaseError):
            db.execute("SELECT changes() FROM t_tblProject").fetchall()
        with pytest.raises(sqlite3.DatabaseError):
            db.execute("DELETE FROM t_tblProject")
        assert db.execute(compiled.sql).fetchall()
    finally:
        db.set_authorizer(None)


def test_constructs_that_passed_check_but_failed_to_compile_now_run_or_fail_check(
        db: sqlite3.Connection) -> None:
    # NATURAL JOIN joins on the columns both sides have (here record_id).
    _, rows = run(db, "WITH a AS (SELECT record_id, 标题 FROM 任务), b AS (SELECT record_id, "
                      "状态 FROM 任务) SELECT a.标题, b.状态 FROM a NATURAL JOIN b ORDER BY 1")
    assert rows == [("修缺陷", "进行中"), ("写接口", "进行中"), ("写文档", "搁置"),
                    ("画页面", "完成")]
    _, rows = run(db, "SELECT date_trunc('quarter', 截止) FROM 任务 WHERE record_id = $1",
                  ["recT2"])
    assert rows == [("2024-04-01 00:00:00",)]
    for sql in ("SELECT 标题 FROM 任务 WHERE 状态 < ANY($1)",
                "SELECT t.标题 FROM 任务 t, LATERAL (SELECT 名称 FROM 项目) x"):
        analysis = analyze_sql(sql, CATALOG, 1 if "$1" in sql else 0)
        assert [p.code for p in analysis.problems] == ["SQL_UNSUPPORTED"], sql
        with pytest.raises(CompileError):
            compile_for_sqlite(analysis, CATALOG)


def test_distinct_aggregates_run_with_and_without_order_by(db: sqlite3.Connection) -> None:
    # They passed check and failed to compile (ORDER BY), or failed in SQLite (a
    # DISTINCT group_concat with a separator). Without ORDER BY, PostgreSQL sorts a
    # DISTINCT aggregate's input: the values come in their own order.
    _, rows = run(db, "SELECT string_agg(DISTINCT 状态, '|' ORDER BY 状态 DESC) AS s, "
                      "array_agg(DISTINCT 状态 ORDER BY 状态) AS a, "
                      "string_agg(DISTINCT 状态, ',') AS u, array_agg(DISTINCT points) AS p "
                      "FROM 任务")
    assert rows == [("进行中|搁置|完成", '["完成","搁置","进行中"]', "完成,搁置,进行中",
                     "[3.0,5.0,8.0,null]")]


def test_unnest_in_a_select_list_gives_a_row_per_element(db: sqlite3.Connection) -> None:
    # check called the IN "values of different types" and unnest() unsupported.
    assert titles(db, "record_id IN (SELECT unnest(task) FROM Notes)") == ["写接口", "画页面"]
    assert titles(db, "record_id NOT IN (SELECT unnest(task) FROM Notes)") == ["修缺陷", "写文档"]
    _, rows = run(db, "SELECT 标题, unnest(标签) AS tag FROM 任务 ORDER BY 1, 2")
    assert rows == [("修缺陷", "紧急"), ("写接口", "后端"), ("画页面", "前端"), ("画页面", "紧急")]
    _, rows = run(db, "SELECT unnest($1::text[]) FROM 项目 WHERE 名称 = '平台'", [["a", "b"]])
    assert rows == [("a",), ("b",)]


def test_user_aliases_cannot_collide_with_generated_names(db: sqlite3.Connection) -> None:
    _, rows = run(db, "SELECT _mv1.标题 FROM 任务 AS _mv1 WHERE _mv1.标签 = $1 ORDER BY 1",
                  ["紧急"])
    assert rows == [("修缺陷",), ("画页面",)]
    _, rows = run(db, "WITH cte_1 AS (SELECT 名称 FROM 项目) SELECT cte_1.名称, c.标题 "
                      "FROM cte_1 JOIN 任务 AS c ON c.项目 = $1 WHERE cte_1.名称 = $2",
                  ["recP1", "平台"])
    assert sorted(rows) == [("平台", "写接口"), ("平台", "画页面")]


def test_parenthesized_joins(db: sqlite3.Connection) -> None:
    _, rows = run(db, "SELECT p.名称, t.标题 FROM (任务 t JOIN 项目 p ON p.record_id = t.项目) "
                      "WHERE p.名称 = $1 ORDER BY 2", ["门户"])
    assert rows == [("门户", "修缺陷"), ("门户", "画页面")]
