from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basedb.sql import functions
from basedb.sql.analysis import analyze_sql
from basedb.sql.model import SqlAnalysis
from basedb.workspace.model import EMPTY_CATALOG
from tests.unit._sql_fixture import make_catalog

CATALOG = make_catalog()


def analyze(sql: str, params: int = 0, **kwargs: bool) -> SqlAnalysis:
    return analyze_sql(sql, CATALOG, params, **kwargs)


def codes(sql: str, params: int = 0) -> list[str]:
    return [p.code for p in analyze(sql, params).problems]


def ok(sql: str, params: int = 0) -> SqlAnalysis:
    analysis = analyze(sql, params)
    assert analysis.problems == (), analysis.problems
    return analysis


def bindings(sql: str, params: int) -> set[tuple[int, str, bool]]:
    return {(b.param_index, b.field.name, b.provable) for b in ok(sql, params).bindings}


# ---------------------------------------------------------------- read-only gate


@pytest.mark.parametrize("sql", [
    "SELECT 1; DROP TABLE x",
    "SELECT * FROM 任务; SELECT * FROM 项目",
    "WITH d AS (DELETE FROM 任务 RETURNING *) SELECT * FROM d",
    "WITH d AS (INSERT INTO 任务 (标题) VALUES ('x') RETURNING *) SELECT * FROM d",
    "WITH d AS (UPDATE 任务 SET 标题 = 'x' RETURNING *) SELECT * FROM d",
    "SELECT * FROM pragma_table_info('x')",
    "SELECT load_extension('x')",
    "SELECT readfile('/etc/passwd')",
    "SELECT writefile('x', 'y') FROM 任务",
    "SELECT fts3_tokenizer('simple')",
    "SELECT sqlite_version()",
    "SELECT pg_sleep(10) FROM 任务",
    "ATTACH DATABASE 'x.db' AS other",
    "DETACH other",
    "PRAGMA writable_schema=1",
    "pragma query_only = 0",
    "VACUUM",
    "BEGIN",
    "COMMIT",
    "INSERT INTO 任务 (标题) VALUES ('x')",
    "UPDATE 任务 SET 标题 = 'x'",
    "DELETE FROM 任务",
    "CREATE TABLE x (a int)",
    "EXPLAIN SELECT * FROM 任务",
    "SELECT * FROM sqlite_master",
    "SELECT * FROM 任务 WHERE 标题 IN (SELECT name FROM sqlite_schema)",
    "SELECT * FROM sqlite_temp_master",
    "SELECT * INTO copy FROM 任务",
    "SELECT * FROM 任务 FOR UPDATE",
    "SELECT * FROM 任务 FOR SHARE",
    "VALUES (1)",
])
def test_anything_but_one_select_is_not_read_only(sql: str) -> None:
    analysis = analyze_sql(sql, CATALOG, 1)
    assert [p.code for p in analysis.problems] == ["SQL_NOT_READ_ONLY"], analysis.problems
    problem = analysis.problems[0]
    assert problem.fix and "SELECT" in problem.fix


def test_read_only_problem_names_what_and_where() -> None:
    problem = analyze("SELECT 1;\nDROP TABLE x").problems[0]
    assert "2 statements" in problem.message
    assert (problem.line, problem.column) == (2, 1)
    problem = analyze("SELECT 标题 FROM 任务 WHERE load_extension('x') = 1").problems[0]
    assert "load_extension" in problem.message and problem.column == 25


@pytest.mark.parametrize("sql", [
    "SELECT 标题 FROM 任务;",
    "  -- a comment\nSELECT 标题 FROM 任务 -- trailing\n;\n",
    "WITH c AS (SELECT 标题 FROM 任务) SELECT * FROM c",
    "SELECT 标题 FROM 任务 UNION SELECT 名称 FROM 项目",
    "SELECT 标题 FROM 任务 INTERSECT SELECT 标题 FROM 任务 EXCEPT SELECT 名称 FROM 项目",
    "(SELECT 标题 FROM 任务)",
    "SELECT lower(标题), coalesce(points, 0), cardinality(标签), strpos(标题, 'a') "
    "FROM 任务",
])
def test_selects_are_allowed(sql: str) -> None:
    ok(sql)


@pytest.mark.parametrize(("sql", "name"), [
    ("SELECT my_udf(标题) FROM 任务", "my_udf"),
    ("SELECT 标题 FROM 任务, generate_series(1, 3)", "generate_series"),
    # It only reads: outside the subset, not "not read-only".
    ("SELECT u FROM 任务, unnest($1::text[]) AS u", "unnest"),
    ("SELECT 标题 FROM 任务 WHERE 标题 ~ 'a'", "~"),
])
def test_functions_outside_the_subset_are_unsupported(sql: str, name: str) -> None:
    problems = analyze(sql, 1).problems
    assert [p.code for p in problems] == ["SQL_UNSUPPORTED"], problems
    assert problems[0].fix


def test_function_allow_list_is_shared() -> None:
    assert functions.is_sqlite_function_allowed("GLOB")
    assert functions.is_sqlite_function_allowed("bdb_lower")
    assert functions.is_sqlite_function_allowed("json_each")
    for name in ("load_extension", "readfile", "writefile", "edit", "fts3_tokenizer",
                 "sqlite_version", "pragma_table_info", "changes"):
        assert not functions.is_sqlite_function_allowed(name)
        assert functions.is_denied_function(name)
    assert functions.is_schema_table("SQLITE_MASTER")


# ---------------------------------------------------------------- parse errors


@pytest.mark.parametrize(("sql", "message"), [
    ("", "main.sql is empty"),
    ("  \n\t ", "main.sql is empty"),
    ("-- only a comment\n/* and another */", "only comments"),
    ("SELECT 'abc", "unterminated"),
    ("SELECT (1", "could not be parsed"),
    ("SELECT FROM WHERE", "could not be parsed"),
])
def test_parse_errors(sql: str, message: str) -> None:
    analysis = analyze(sql)
    assert [p.code for p in analysis.problems] == ["SQL_PARSE_ERROR"]
    assert message in analysis.problems[0].message


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT 标题 FROM 任务 WHERE", "incomplete WHERE: an expression is missing near 'WHERE'"),
    ("SELECT 标题 FROM 任务 ORDER BY", "incomplete ORDER BY"),
    ("SELECT 标题 FROM 任务 WHERE points = ", "incomplete '=': an expression is missing"),
    ("SELECT 标题 FROM 任务 WHERE points BETWEEN 1", "incomplete BETWEEN"),
    ("SELECT 标题 FROM", "Expected table name but got the end of the query"),
])
def test_parse_errors_speak_sql_not_parser_internals(sql: str, message: str) -> None:
    problem = analyze(sql).problems[0]
    assert problem.code == "SQL_PARSE_ERROR"
    assert message in problem.message
    for internal in ("<class", "sqlglot", "Required keyword", "<Token", "TokenType"):
        assert internal not in problem.message


@pytest.mark.parametrize(("sql", "line", "column"), [
    ("SELECT t.标题 FROM 任务 AS t JOIN 项目 AS p ON", 1, 26),
    ("SELECT t.标题 FROM 任务 AS t JOIN 项目 AS p", 1, 26),
    ("SELECT t.标题 FROM 任务 AS t\nLEFT JOIN 项目 AS p\nWHERE t.points > 1", 2, 6),
    ("SELECT t.标题 FROM 任务 AS t JOIN 项目 AS p USING ()", 1, 26),
    ("SELECT t.标题 FROM 任务 AS t JOIN (SELECT 名称 AS n FROM 项目) AS p", 1, 26),
    ("SELECT t.标题 FROM (任务 AS t JOIN 项目 AS p)", 1, 27),
])
def test_a_join_without_condition_is_an_error_not_a_cross_join(sql: str, line: int,
                                                               column: int) -> None:
    # sqlglot parses these as cross joins: every task paired with every project.
    for resolve in (True, False):
        problems = analyze(sql, resolve=resolve).problems
        assert [(p.code, p.line, p.column) for p in problems] == [
            ("SQL_PARSE_ERROR", line, column)]
        assert "JOIN has no join condition" in problems[0].message
        assert problems[0].fix is not None and "CROSS JOIN" in problems[0].fix


@pytest.mark.parametrize("sql", [
    "SELECT t.标题 FROM 任务 AS t, 项目 AS p",
    "SELECT t.标题 FROM 任务 AS t CROSS JOIN 项目 AS p",
    "SELECT t.标题 FROM 任务 AS t NATURAL JOIN 项目 AS p",
    "SELECT t.标题 FROM 任务 AS t JOIN 项目 AS p ON t.项目 = p.record_id",
    "SELECT t.标题 FROM 任务 AS t LEFT JOIN 项目 AS p ON TRUE, Notes AS n",
])
def test_joins_that_say_how_rows_match_are_fine(sql: str) -> None:
    ok(sql)


@pytest.mark.parametrize("sql", [
    "SELECT t.标题 FROM 任务 AS t, LATERAL (SELECT 名称 AS n FROM 项目) AS p",
    "SELECT t.标题 FROM 任务 AS t JOIN LATERAL (SELECT 名称 AS n FROM 项目) AS p ON TRUE",
])
def test_lateral_is_refused_with_what_to_write_instead(sql: str) -> None:
    [problem] = analyze(sql).problems
    assert problem.code == "SQL_UNSUPPORTED" and "LATERAL" in problem.message
    assert problem.fix is not None and "correlated subquery" in problem.fix
    assert (problem.line, problem.column) == (1, sql.index("LATERAL") + 1)


@pytest.mark.parametrize(("sql", "line", "column"), [
    ("SELECT 状态, COUNT(*) AS n FROM 任务 GROUP BY", 1, 34),
    ("SELECT 状态, COUNT(*) AS n FROM 任务 GROUP BY\nORDER BY 1", 1, 34),
    ("SELECT s FROM (SELECT 状态 AS s FROM 任务 GROUP BY) AS q", 1, 39),
])
def test_an_empty_group_by_is_an_error(sql: str, line: int, column: int) -> None:
    # SQLite would refuse it only when the function is invoked.
    problems = analyze(sql).problems
    assert [(p.code, p.line, p.column) for p in problems] == [("SQL_PARSE_ERROR", line, column)]
    assert "GROUP BY lists nothing" in problems[0].message


def test_parse_error_message_has_no_ansi_codes_and_true_position() -> None:
    sql = 'SELECT "标题",\n  $1\nFROM "任务"\nWHERE (标题 = '
    problem = analyze(sql, 1).problems[0]
    assert problem.code == "SQL_PARSE_ERROR"
    assert "\x1b" not in problem.message
    assert problem.line == 4


def test_deep_nesting_is_a_parse_error_not_a_traceback() -> None:
    sql = "SELECT " + "(" * 5000 + "1" + ")" * 5000 + " FROM 任务"
    analysis = analyze(sql)
    assert [p.code for p in analysis.problems] == ["SQL_PARSE_ERROR"]
    assert "nested too deeply" in analysis.problems[0].message


def test_long_and_chains_and_unions_do_not_recurse() -> None:
    conditions = " AND ".join(f"points <> {i}" for i in range(3000))
    ok(f"SELECT 标题 FROM 任务 WHERE {conditions}")
    union = " UNION ALL ".join(f"SELECT 标题 FROM 任务 WHERE points = {i}" for i in range(1500))
    assert [c.name for c in ok(union).columns] == ["标题"]


def test_a_200_kb_query_is_analysed() -> None:
    values = ", ".join(f"'value number {i:06d}'" for i in range(9000))
    sql = f"SELECT 标题 FROM 任务 WHERE 标题 IN ({values})"
    assert 180_000 < len(sql.encode()) < 256 * 1024
    assert [c.name for c in ok(sql).columns] == ["标题"]


def test_oversized_sql_is_refused() -> None:
    sql = "SELECT 标题 FROM 任务 WHERE 标题 = '" + "x" * 300_000 + "'"
    problem = analyze(sql).problems[0]
    assert problem.code == "SQL_PARSE_ERROR" and "too large" in problem.message


@pytest.mark.parametrize("junk", [
    "\x00\x01\x02\xff\xfe",
    "SELECT \x00 FROM 任务",
    "\ufeffSELECT 1 \x00",
    bytes(range(256)).decode("latin-1"),
    "SELECT '\\x00' || $1 FROM",
])
def test_binary_junk_gives_a_problem(junk: str) -> None:
    analysis = analyze(junk, 1)
    assert analysis.problems
    for problem in analysis.problems:
        assert problem.code.startswith("SQL_")
        assert not any(ord(ch) < 32 and ch not in "\t\n" for ch in problem.message)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("SELECT FROM WHERE()$1,;'\"*.=<>任务标题 \n-/"
                                               "ANDORNOTINULLUNIONWITH")), max_size=80))
def test_fuzzed_sql_never_raises(sql: str) -> None:
    analysis = analyze_sql(sql, CATALOG, 2)
    assert isinstance(analysis, SqlAnalysis)
    for problem in analysis.problems:
        assert problem.message and problem.code.startswith("SQL_")


# ---------------------------------------------------------------- resolution


def test_unknown_table_suggests_close_names() -> None:
    problem = analyze('SELECT 1 FROM "任物"').problems[0]
    assert problem.code == "SQL_UNKNOWN_TABLE"
    assert '"任务"' in problem.message and problem.fix
    assert (problem.line, problem.column) == (1, 15)
    assert codes("SELECT * FROM Note") == ["SQL_UNKNOWN_TABLE"]


def test_unknown_field_suggests_fields_of_that_table_with_position() -> None:
    sql = 'SELECT "标题",\n  $2\nFROM "任务"\nWHERE "状x" = $1'
    problem = analyze(sql, 2).problems[0]
    assert problem.code == "SQL_UNKNOWN_FIELD"
    assert '"状态"' in problem.message and '"任务"' in problem.message
    assert (problem.line, problem.column) == (4, 7)
    assert codes('SELECT p."标题" FROM "项目" p') == ["SQL_UNKNOWN_FIELD"]


def test_ambiguous_field_asks_to_qualify() -> None:
    problem = analyze("SELECT 标题 FROM 任务 a JOIN 任务 b ON a.record_id = b.record_id"
                      ).problems[0]
    assert problem.code == "SQL_UNKNOWN_FIELD"
    assert "ambiguous" in problem.message and "Qualify" in (problem.fix or "")
    assert codes("SELECT record_id FROM 任务, 项目") == ["SQL_UNKNOWN_FIELD"]


def test_qualifier_must_name_a_from_item() -> None:
    assert codes('SELECT x."标题" FROM "任务" t') == ["SQL_UNKNOWN_TABLE"]
    # Once aliased, the table is known by its alias only.
    assert codes('SELECT "任务"."标题" FROM "任务" t') == ["SQL_UNKNOWN_TABLE"]


def test_no_bound_table() -> None:
    assert codes("SELECT 1") == ["SQL_NO_BOUND_TABLE"]
    assert codes("WITH c AS (SELECT 1 AS n) SELECT n FROM c") == ["SQL_NO_BOUND_TABLE"]
    assert codes("SELECT * FROM nothere") == ["SQL_UNKNOWN_TABLE"]


@pytest.mark.parametrize("sql", [
    'SELECT "标题", t."状态", t.record_id FROM "任务" AS t',
    "SELECT 标题 FROM tblTask",
    "SELECT tblTask.标题 FROM tblTask",
    "SELECT body, notes.Body FROM notes",
    'SELECT "say ""hi""" FROM "Notes"',
    "SELECT t.标题, p.名称 FROM 任务 t JOIN 项目 p ON p.record_id = t.项目",
    "SELECT t.标题 FROM 任务 t LEFT JOIN 任务 u USING (标题)",
    "SELECT 标题 FROM 任务 a JOIN 任务 b USING (标题, record_id)",
    # CTEs: column lists, shadowing a catalog table name, chaining
    "WITH 项目 AS (SELECT 标题 AS 名字 FROM 任务) SELECT 名字 FROM 项目",
    "WITH a(x, y) AS (SELECT 标题, 状态 FROM 任务), b AS (SELECT x FROM a) SELECT x FROM b",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
    "SELECT n, 标题 FROM r, 任务",
    "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
    "SELECT r.n FROM r JOIN 任务 ON 任务.points = r.n",
    # derived tables, correlated subqueries
    "SELECT s.a FROM (SELECT 标题 AS a FROM 任务) s",
    "SELECT x.a, x.b FROM (SELECT 标题, 状态 FROM 任务) AS x(a, b)",
    "SELECT 标题 FROM 任务 t WHERE EXISTS (SELECT 1 FROM 项目 p WHERE p.record_id = t.项目)",
    "SELECT 标题, (SELECT count(*) FROM Notes n WHERE n.task = t.record_id) FROM 任务 t",
    "SELECT 标题 FROM 任务 WHERE points > (SELECT avg(points) FROM 任务)",
    "SELECT v.n FROM (VALUES (1), (2)) AS v(n) JOIN 任务 ON points = v.n",
    # stars, output names
    "SELECT * FROM 任务",
    "SELECT t.*, p.名称 FROM 任务 t JOIN 项目 p ON true",
    "SELECT 状态 AS s, count(*) AS n FROM 任务 GROUP BY s HAVING count(*) > 1 ORDER BY n DESC",
    "SELECT 状态, sum(points) AS total FROM 任务 GROUP BY 1 ORDER BY total",
    "SELECT 标题 AS title FROM 任务 UNION SELECT 名称 FROM 项目 ORDER BY title",
])
def test_names_resolve(sql: str) -> None:
    ok(sql)


def test_tables_and_output_columns() -> None:
    analysis = ok('SELECT t."标题", t."标签" AS tags, count(*) AS "N", p.* '
                  'FROM "任务" t JOIN "项目" p ON p.record_id = t."项目" '
                  "GROUP BY 1, 2, p.record_id")
    assert [t.name for t in analysis.tables] == ["任务", "项目"]
    cols = [(c.name, c.field.name if c.field else None) for c in analysis.columns]
    assert cols == [("标题", "标题"), ("tags", "标签"), ("N", None), ("名称", "名称"),
                    ("Lead", "Lead")]
    star = ok("SELECT * FROM 项目")
    assert [c.name for c in star.columns] == ["名称", "Lead"]


def test_output_columns_through_cte_keep_source_field() -> None:
    analysis = ok("WITH c AS (SELECT 标签, 标题 AS t FROM 任务) SELECT c.标签, t, upper(t) FROM c")
    fields = [c.field.name if c.field else None for c in analysis.columns]
    assert fields == ["标签", "标题", None]
    assert [c.name for c in analysis.columns] == ["标签", "t", "upper"]


def test_unquoted_names_fold_like_postgresql() -> None:
    analysis = ok("SELECT count(*) AS Total, body AS \"Mixed\", BODY FROM Notes GROUP BY body")
    assert [c.name for c in analysis.columns] == ["total", "Mixed", "body"]


def test_cte_shadows_catalog_table() -> None:
    analysis = ok("WITH 项目 AS (SELECT 标题 FROM 任务) SELECT 标题 FROM 项目")
    assert [t.name for t in analysis.tables] == ["任务"]
    assert codes("WITH 项目 AS (SELECT 标题 FROM 任务) SELECT 名称 FROM 项目") == [
        "SQL_UNKNOWN_FIELD"]


def test_derived_table_columns_come_from_projections() -> None:
    assert codes("SELECT s.标题 FROM (SELECT 标题 AS a FROM 任务) s") == ["SQL_UNKNOWN_FIELD"]
    assert codes("SELECT 状态 FROM (SELECT 标题 FROM 任务) s") == ["SQL_UNKNOWN_FIELD"]


def test_correlated_subquery_sees_outer_scope_only_when_correlated() -> None:
    ok("SELECT 标题 FROM 任务 t WHERE EXISTS (SELECT 1 FROM 项目 WHERE 名称 = t.标题)")
    assert codes("SELECT 名称 FROM 项目 WHERE EXISTS (SELECT 1 FROM 任务) AND 标题 = 'x'") == [
        "SQL_UNKNOWN_FIELD"]


def test_using_requires_the_field_on_both_sides() -> None:
    assert codes("SELECT 1 FROM 任务 JOIN 项目 USING (标题)") == ["SQL_UNKNOWN_FIELD"]


# ---------------------------------------------------------------- parameters


def test_parameters_used_and_undeclared() -> None:
    assert ok("SELECT 标题 FROM 任务 WHERE 标题 = $2 OR 标题 > $2", 3).params == {2}
    analysis = analyze("SELECT 标题 FROM 任务 WHERE 标题 = $3 AND points > $0", 2)
    assert [p.code for p in analysis.problems] == ["SQL_PARAM_UNDECLARED"] * 2
    assert "$3" in analysis.problems[0].message or "$3" in analysis.problems[1].message
    assert {p.column for p in analysis.problems} == {30, 46}
    assert codes("SELECT 标题 FROM 任务 WHERE 标题 = ?", 1) == ["SQL_PARAM_UNDECLARED"]
    assert codes("SELECT 标题 FROM 任务 WHERE 标题 = :name", 1) == ["SQL_PARAM_UNDECLARED"]


@pytest.mark.parametrize(("sql", "written", "column"), [
    ("SELECT 标题 FROM 任务 WHERE 标题 = ?", "?", 30),
    ("SELECT 标题 FROM 任务 WHERE 标题 = :name", ":name", 30),
    ("SELECT 标题 FROM 任务 WHERE 标题 = %(name)s", "%(name)s", 30),
    ("SELECT 标题 FROM 任务 WHERE 标题 = %s", "%s", 30),
])
def test_foreign_placeholders_are_named_as_written_and_placed(sql: str, written: str,
                                                               column: int) -> None:
    [problem] = analyze(sql, 1).problems
    assert problem.code == "SQL_PARAM_UNDECLARED"
    assert problem.message.startswith(f"Placeholder {written} is not supported.")
    assert (problem.line, problem.column) == (1, column)


def test_current_user_id() -> None:
    analysis = ok("SELECT 标题 FROM 任务 WHERE 负责人 = CURRENT_USER_ID()")
    assert analysis.uses_current_user
    assert not ok("SELECT 标题 FROM 任务").uses_current_user


def test_without_catalog_names_are_not_checked() -> None:
    analysis = analyze_sql("SELECT whatever FROM nowhere WHERE x = $1 AND y = $4",
                           EMPTY_CATALOG, 1, resolve=False)
    assert [p.code for p in analysis.problems] == ["SQL_PARAM_UNDECLARED"]
    assert analysis.params == {1} and not analysis.resolved
    refused = analyze_sql("DELETE FROM x", EMPTY_CATALOG, 0, resolve=False)
    assert [p.code for p in refused.problems] == ["SQL_NOT_READ_ONLY"]


# ---------------------------------------------------------------- bindings


@pytest.mark.parametrize("condition", [
    "状态 = $1", "$1 = 状态", "状态 <> $1", "状态 IN ($1, 'x')", "状态 = ANY($1)",
    "状态 <> ALL($1)", "状态 = $1::text", "状态 = CAST($1 AS text)", "(状态) = (($1))",
    "状态 = ANY($1::text[])", "points > 0 AND (状态 = $1 AND 标题 IS NOT NULL)",
])
def test_provable_bindings(condition: str) -> None:
    assert (0, "状态", True) in bindings(f"SELECT 标题 FROM 任务 WHERE {condition}", 1)


@pytest.mark.parametrize("condition", [
    "$1 IS NULL OR 状态 = $1",
    "NOT (状态 = $1)",
    "CASE WHEN 状态 = $1 THEN true ELSE false END",
    "coalesce(状态 = $1, true)",
    "points > 0 OR (状态 = $1 AND 标题 IS NOT NULL)",
    "record_id NOT IN (SELECT record_id FROM 任务 WHERE 状态 = $1)",
])
def test_unprovable_bindings(condition: str) -> None:
    assert bindings(f"SELECT 标题 FROM 任务 WHERE {condition}", 1) == {(0, "状态", False)}


def test_bindings_in_join_having_subqueries_and_ctes() -> None:
    assert (0, "名称", True) in bindings(
        "SELECT 标题 FROM 任务 t JOIN 项目 p ON p.record_id = t.项目 AND p.名称 = $1", 1)
    assert bindings("SELECT 状态, count(*) FROM 任务 GROUP BY 状态 HAVING 状态 = $1", 1) == {
        (0, "状态", True)}
    assert bindings("SELECT 标题 FROM 任务 WHERE 项目 IN (SELECT record_id FROM 项目 "
                    "WHERE 名称 = $1)", 1) == {(0, "名称", True)}
    assert bindings("WITH c AS (SELECT 状态 AS s FROM 任务) SELECT s FROM c WHERE s = $1", 1
                    ) == {(0, "状态", True)}
    assert bindings("SELECT x.s FROM (SELECT 状态 AS s FROM 任务) x WHERE x.s = $1", 1) == {
        (0, "状态", True)}
    assert bindings("SELECT 标题 FROM 任务 WHERE record_id = $1 OR 状态 = $2", 2) == {
        (0, "record_id", False), (1, "状态", False)}


def test_no_binding_for_functions_of_params_or_undeclared_params() -> None:
    assert bindings("SELECT 标题 FROM 任务 WHERE 状态 = lower($1)", 1) == set()
    assert analyze("SELECT 标题 FROM 任务 WHERE 状态 = $2", 1).bindings == ()


def test_same_binding_twice_keeps_the_provable_one() -> None:
    assert bindings("SELECT 标题 FROM 任务 WHERE 状态 = $1 AND ($1 IS NULL OR 状态 = $1)",
                    1) == {(0, "状态", True)}


# ---------------------------------------------------------------- purity


def test_analysing_twice_gives_equal_results() -> None:
    # analyze_sql keeps no state between calls: the platform memoises function plans by
    # catalog revision instead (basedb.platform.domain.caches).
    sql = "SELECT 标题 FROM 任务 WHERE 状态 = $1"
    first, again = analyze(sql, 1), analyze(sql, 1)
    assert first is not again
    assert (again.problems, again.params, again.columns, again.bindings) == (
        first.problems, first.params, first.columns, first.bindings)


def test_a_cte_sees_those_before_it_and_itself_only_when_recursive() -> None:
    # PostgreSQL's scoping of WITH, walked once for the resolver and the typer.
    assert "SQL_UNKNOWN_TABLE" in codes(
        "WITH a AS (SELECT x FROM b), b AS (SELECT 标题 AS x FROM 任务) SELECT x FROM a")
    assert "SQL_UNKNOWN_TABLE" in codes(
        "WITH r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
        "SELECT n, 标题 FROM r, 任务")
    analysis = ok("WITH RECURSIVE r(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM r WHERE k < 3)"
                  " SELECT k, 标题 FROM r, 任务")
    assert [c.type for c in analysis.columns] == ["integer", "text"]
    widened = analyze("WITH RECURSIVE r(k) AS (SELECT 1 UNION ALL SELECT k + 0.5 FROM r "
                      "WHERE k < 3) SELECT k, 标题 FROM r, 任务").problems
    assert [p.code for p in widened] == ["SQL_INVALID"]
    assert "recursive query column 1" in widened[0].message


# ---------------------------------------------------------------- DISTINCT with ORDER BY


@pytest.mark.parametrize("sql", [
    "SELECT string_agg(DISTINCT 状态, '|' ORDER BY 状态) FROM 任务",
    "SELECT string_agg(DISTINCT t.状态, '|' ORDER BY 状态 DESC) FROM 任务 t",
    "SELECT array_agg(DISTINCT lower(状态) ORDER BY (lower(t.状态))) FROM 任务 t",
    "SELECT string_agg(DISTINCT 状态, ',') FROM 任务",
    "SELECT array_agg(DISTINCT 2 ORDER BY 2) FROM 任务",
])
def test_distinct_aggregates_may_order_by_their_arguments(sql: str) -> None:
    ok(sql)


@pytest.mark.parametrize("sql", [
    "SELECT string_agg(DISTINCT 状态, '|' ORDER BY 标题) FROM 任务",
    "SELECT string_agg(DISTINCT 状态, '|' ORDER BY 状态, 标题) FROM 任务",
    "SELECT string_agg(DISTINCT 状态, '|' ORDER BY 状态, '|') FROM 任务",
    "SELECT array_agg(DISTINCT t.标题 ORDER BY p.名称) FROM 任务 t, 项目 p",
])
def test_distinct_aggregates_order_by_only_their_arguments(sql: str) -> None:
    problems = analyze(sql).problems
    assert [p.code for p in problems] == ["SQL_INVALID"], problems
    assert "ORDER BY expressions must appear in argument list" in problems[0].message
    assert "DISTINCT x, … ORDER BY x" in problems[0].fix


# ---------------------------------------------------------------- what check says of PostgreSQL


@pytest.mark.parametrize("sql", [
    "SELECT to_char(截止, 'YYYY-MM') FROM 任务",
    "SELECT to_char(截止::date, 'FMMonth DDth, YYYY') FROM 任务",
    "SELECT to_char(now(), 'HH24:MI \"o''clock\"') FROM 任务",
])
def test_to_char_with_a_literal_template_is_accepted(sql: str) -> None:
    ok(sql)


@pytest.mark.parametrize(("sql", "says"), [
    ("SELECT to_char(points, '999.9') FROM 任务", "to_char of a number"),
    ("SELECT to_char(截止, 标题) FROM 任务", "template computed at run time"),
    ("SELECT to_char(截止, 'HH24 TZ') FROM 任务", 'time zone pattern "TZ"'),
    ("SELECT to_char(截止, 'DDSP') FROM 任务", 'suffix "SP"'),
    ("SELECT to_date(标题, 'YYYY') FROM 任务", "to_date()"),
    ("SELECT format('%s', 标题) FROM 任务", "format()"),
    ("SELECT array_to_string(标签, ',') FROM 任务", "array_to_string()"),
])
def test_what_basedb_does_not_support_says_so(sql: str, says: str) -> None:
    problems = analyze(sql).problems
    assert [p.code for p in problems] == ["SQL_UNSUPPORTED"], problems
    assert says in problems[0].message and "not supported by basedb" in problems[0].message
    assert "PostgreSQL refuses" not in problems[0].message


def test_names_postgresql_lacks_are_still_invalid() -> None:
    problems = analyze("SELECT ifnull(标题, 'x') FROM 任务").problems
    assert [p.code for p in problems] == ["SQL_INVALID"]
    assert "does not exist in PostgreSQL" in problems[0].message


@pytest.mark.parametrize("sql", [
    "SELECT unnest(标签) AS tag, count(*) FROM 任务 GROUP BY 1",
    "SELECT upper(unnest(标签)) FROM 任务",
    "SELECT 标题 FROM 任务 WHERE unnest(标签) = 'x'",
    "SELECT unnest(标签), unnest(关注人) FROM 任务",
])
def test_unnest_elsewhere_than_a_whole_select_item_says_basedb_does_not_support_it(
        sql: str) -> None:
    problems = analyze(sql).problems
    assert {p.code for p in problems} == {"SQL_UNSUPPORTED"}, problems
    assert "supported by basedb only as a whole item of a SELECT list" in problems[0].message


def test_unnest_of_an_array_is_its_element_type() -> None:
    analysis = ok("SELECT record_id FROM 任务 WHERE record_id IN (SELECT unnest(task) FROM Notes)")
    assert [c.type for c in analysis.columns] == ["text"]
    assert [c.name for c in ok("SELECT unnest(标签) FROM 任务").columns] == ["unnest"]
    assert codes("SELECT unnest(标题) FROM 任务") == ["SQL_INVALID"]
