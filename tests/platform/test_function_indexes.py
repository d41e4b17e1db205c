"""Deploying a preview indexes the filters and orders of its Database Functions; the
indexes change plans, never results, and never stand in the way of dropping a field."""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from basedb.platform import LocalPlatform
from basedb.platform.domain import bases
from basedb.platform.storage import indexes, physical
from basedb.platform.storage.sql_compile import compile_for_sqlite
from basedb.sql.analysis import analyze_sql
from basedb.sql.sqlite.query import CompiledQuery
from basedb.workspace.catalog import build_catalog
from tests.platform.conftest import Api
from tests.platform.functions_support import (
    TaskSite,
    build_site,
    deploy,
    param,
    save_drafts,
    sql_function,
)

BY_STATUS_AND_TITLE = sql_function(
    "byStatusAndTitle", 'SELECT "Title" FROM "Tasks" WHERE "Status" = $1 AND "Title" = $2 '
    'ORDER BY "Title"', [param("status", "TEXT", "Status of the tasks"),
                         param("title", "TEXT", "Exact title of the task")])


def release(api: Api, *database_functions: dict[str, Any]) -> TaskSite:
    site = build_site(api)
    save_drafts(site, database_functions=list(database_functions), mutations=[], faas=[],
                ai_functions=[], exclude=[])
    deploy(site)
    return site


def platform_indexes(platform: LocalPlatform) -> dict[str, set[tuple[str, ...]]]:
    """{physical table: {indexed columns}} of the platform's function indexes."""
    with platform.store.read() as conn:
        found: dict[str, set[tuple[str, ...]]] = {}
        for name, table in conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE "
                                        "type = 'index' AND name LIKE 'bdx%'"):
            columns = tuple(row[2] for row in conn.execute(f"PRAGMA index_info({name})"))
            found.setdefault(table, set()).add(columns)
        return found


def columns_of(site: TaskSite, *names: str) -> tuple[str, ...]:
    fields = {f["name"]: f["id"] for f in site.api.ok(
        "GET", f"/bases/{site.base_token}/tables/{site.tasks_table}/fields")["fields"]}
    return tuple(physical.column_name(fields[name]) for name in names)


def compiled(site: TaskSite, sql: str, params: int) -> CompiledQuery:
    catalog, problems = build_catalog(site.api.ok("GET", f"/sites/{site.app_token}/catalog"))
    assert problems == []
    return compile_for_sqlite(analyze_sql(sql, catalog, params), catalog)


def test_a_deployed_filter_gets_an_index_that_its_query_uses(api: Api,
                                                             platform: LocalPlatform) -> None:
    site = release(api, BY_STATUS_AND_TITLE)
    table = physical.table_name(site.tasks_table)
    assert platform_indexes(platform) == {table: {columns_of(site, "Status", "Title")}}
    query = compiled(site, BY_STATUS_AND_TITLE["sql"], 2)
    with platform.store.read() as conn:
        plan = " ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + query.sql,
                                                       query.parameters(["Doing", "x"], None)))
    assert re.search(r"USING (COVERING )?INDEX bdx_", plan), plan
    # The same answers as before: the index changes the plan only.
    rows = site.invoke("byStatusAndTitle", {"status": "Doing", "title": "Fix bug"})["rows"]
    assert rows == [{"Title": "Fix bug"}]
    assert site.invoke("byStatusAndTitle", {"status": "Done", "title": "Fix bug"})["rows"] == []


def test_only_plain_comparisons_are_indexed(api: Api, platform: LocalPlatform) -> None:
    site = release(api,
                   sql_function("anyOf", 'SELECT "Title" FROM "Tasks" WHERE "Status" = $1 OR '
                                '"Title" = $2', [param("status", "TEXT"), param("title", "TEXT")]),
                   sql_function("tagged", 'SELECT "Title" FROM "Tasks" WHERE "Tags" = $1',
                                [param("tag", "TEXT")]),
                   sql_function("ofProject", 'SELECT "Title" FROM "Tasks" WHERE "Project" = $1',
                                [param("projectId", "TEXT")]),
                   sql_function("dueOn", 'SELECT "Title" FROM "Tasks" WHERE date("Due") = $1',
                                [param("day", "DATE")]),
                   sql_function("heavy", 'SELECT "Title" FROM "Tasks" WHERE "Points" > $1',
                                [param("above", "NUMBER")]),
                   sql_function("mine", 'SELECT "Title" FROM "Tasks" WHERE "Owner" = '
                                'CURRENT_USER_ID()'))
    # OR, multi-valued fields (json_each) and expressions get nothing; a range and the
    # caller's own records (a single-user field) do, covering the title they read.
    table = physical.table_name(site.tasks_table)
    assert platform_indexes(platform) == {table: {columns_of(site, "Owner", "Title"),
                                                  columns_of(site, "Points", "Title")}}
    assert sorted(row["Title"] for row in site.invoke("mine")["rows"]) == [
        "Draw pages", "Write API"]


def test_redeploys_add_no_index_that_one_already_covers(api: Api,
                                                       platform: LocalPlatform) -> None:
    by_status = sql_function("byStatus", 'SELECT "Title" FROM "Tasks" WHERE "Status" = $1',
                             [param("status", "TEXT")])
    by_title = sql_function("byTitle", 'SELECT "Title" FROM "Tasks" WHERE $1 = "Title"',
                            [param("title", "TEXT")])
    site = release(api, BY_STATUS_AND_TITLE, by_status)
    table = physical.table_name(site.tasks_table)
    # (Status, Title) serves a filter on Status alone.
    assert platform_indexes(platform) == {table: {columns_of(site, "Status", "Title")}}
    save_drafts(site, database_functions=[BY_STATUS_AND_TITLE, by_status, by_title],
                mutations=[], faas=[], ai_functions=[], exclude=[])
    deploy(site)
    deploy(site)
    assert platform_indexes(platform) == {table: {columns_of(site, "Status", "Title"),
                                                  columns_of(site, "Title")}}


def test_an_indexed_field_can_be_deleted(api: Api, platform: LocalPlatform) -> None:
    site = release(api, BY_STATUS_AND_TITLE,
                   sql_function("mine", 'SELECT "Points" FROM "Tasks" WHERE "Owner" = '
                                'CURRENT_USER_ID()'))
    owner = columns_of(site, "Owner", "Points")
    status = api.ok("GET", f"/bases/{site.base_token}/tables/{site.tasks_table}/fields")
    status_id = next(f["id"] for f in status["fields"] if f["name"] == "Status")
    api.ok("DELETE", f"/bases/{site.base_token}/tables/{site.tasks_table}/fields/{status_id}")
    table = physical.table_name(site.tasks_table)
    assert platform_indexes(platform) == {table: {owner}}
    assert len(site.records(site.tasks_table)) == 4


def test_rebuilding_a_table_to_drop_a_column_keeps_its_other_indexes(
        api: Api, platform: LocalPlatform) -> None:
    site = release(api, BY_STATUS_AND_TITLE,
                   sql_function("mine", 'SELECT "Points" FROM "Tasks" WHERE "Owner" = '
                                'CURRENT_USER_ID()'))
    status_column = columns_of(site, "Status")[0]
    with platform.store.write() as conn:  # the path for SQLite before 3.35
        bases.drop_column(conn, site.tasks_table, status_column, native=False)
    assert platform_indexes(platform) == {physical.table_name(site.tasks_table):
                                          {columns_of(site, "Owner", "Points")}}


def query(sql: str) -> CompiledQuery:
    return CompiledQuery(sql=sql, slots=(), columns=(), tables=frozenset())


def test_filter_indexes_resolve_aliases_per_select() -> None:
    specs = indexes.plan_indexes(query(
        'SELECT "t".c_a FROM t_tblOne AS "t" JOIN t_tblTwo AS o ON o.c_k = "t".c_k '
        'WHERE "t".c_a = ? AND 3 = o.c_b AND ("t".c_c = ? OR "t".c_d = ?) AND "t".c_e > ? '
        'AND "t".c_f IS NULL AND "t".c_g IN (?, ?) AND "t".c_h = o.c_h '
        'AND "t".record_id = ? AND x.c_z = ?'))
    # Equality first, then the range; the join reads too much of t_tblOne for a covering
    # index, but only two more columns of t_tblTwo.
    assert specs == [indexes.IndexSpec("t_tblOne", ("c_a", "c_e")),
                     indexes.IndexSpec("t_tblTwo", ("c_b", "c_k", "c_h"))]
    nested = indexes.plan_indexes(query(
        'WITH cte_1 AS (SELECT "p".c_a FROM t_tblOne AS "p" WHERE "p".c_b = ?) '
        'SELECT "q".c_c FROM t_tblOne AS "q" WHERE "q".c_a = ? AND "q".c_a = ? AND '
        '"q".c_b = 1 AND "q".c_c = ? AND "q".c_d = ? AND "q".c_e = ?'))
    # One index per SELECT (the CTE's filter is its own), at most 4 equality columns
    # each; the fifth comes last, only so that the index covers the query.
    assert sorted(spec.columns for spec in nested) == [("c_a", "c_b", "c_c", "c_d", "c_e"),
                                                      ("c_b", "c_a")]
    assert indexes.plan_indexes(query("SELECT 1 FROM t_tblOne WHERE c_a = ?")) == []


def test_index_names_are_stable_and_distinct() -> None:
    first = indexes.IndexSpec("t_tblOne", ("c_a", "c_b"))
    assert first.name == indexes.IndexSpec("t_tblOne", ("c_a", "c_b")).name
    assert first.name.startswith("bdx_t_tblOne_")
    assert first.name != indexes.IndexSpec("t_tblOne", ("c_b", "c_a")).name
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t_tblOne (c_a TEXT, c_b TEXT)")
    assert indexes.ensure_indexes(conn, [first, first]) == [first.name]
    assert indexes.ensure_indexes(conn, [indexes.IndexSpec("t_tblOne", ("c_a",))]) == []


def test_a_star_or_a_record_id_read_makes_no_covering_index() -> None:
    assert indexes.plan_indexes(query(
        'SELECT "t".record_id, "t".c_b FROM t_tblOne AS "t" WHERE "t".c_a = ?')) == [
        indexes.IndexSpec("t_tblOne", ("c_a",))]
    assert indexes.plan_indexes(query(
        'SELECT * FROM t_tblOne AS "t" WHERE "t".c_a = ?')) == [
        indexes.IndexSpec("t_tblOne", ("c_a",))]


def test_order_by_follows_equality_and_a_range_on_its_column() -> None:
    def planned(sql: str) -> list[tuple[str, ...]]:
        return [spec.columns for spec in indexes.plan_indexes(query(sql))]

    base = 'SELECT "t".c_x AS "X", "t".c_y AS "Y", "t".c_z AS "Z" FROM t_tblOne AS "t" '
    # ORDER BY an alias resolves to its column; one direction only.
    assert planned(base + 'WHERE "t".c_a = ? ORDER BY "Y" DESC NULLS FIRST, "t".c_z DESC '
                   'LIMIT 5') == [("c_a", "c_y", "c_z", "c_x")]
    assert planned(base + 'WHERE "t".c_a = ? ORDER BY "Y" NULLS LAST, "Z" DESC LIMIT 5'
                   ) == [("c_a", "c_y", "c_x", "c_z")]
    # A range on the ORDER BY column: one index serves both.
    assert planned(base + 'WHERE "t".c_y BETWEEN ? AND ? ORDER BY "Y" LIMIT 5') == [
        ("c_y", "c_x", "c_z")]
    # A range elsewhere: equality, then the range (an index serves one or the other).
    assert planned(base + 'WHERE "t".c_a = 1 AND ? < "t".c_x ORDER BY "Y" LIMIT 5') == [
        ("c_a", "c_x", "c_y", "c_z")]
    # No filter: the order alone.
    assert planned(base + 'ORDER BY "t".c_x LIMIT 5') == [("c_x", "c_y", "c_z")]
    # An order on an expression is not indexed.
    assert planned(base + 'ORDER BY lower("t".c_x) LIMIT 5') == []


def test_a_table_gets_at_most_its_budget_of_indexes() -> None:
    conn = sqlite3.connect(":memory:")
    columns = [f"c_{n}" for n in range(indexes.MAX_PER_TABLE + 2)]
    conn.execute(f"CREATE TABLE t_tblOne ({', '.join(columns)})")
    created = indexes.ensure_indexes(conn, [indexes.IndexSpec("t_tblOne", (column,))
                                            for column in columns])
    assert len(created) == indexes.MAX_PER_TABLE


PAGED = [
    # (function, its SQL, its parameters): the shapes of issue-sized paged reads
    sql_function("statusByDue", 'SELECT "Title", "Due" FROM "Tasks" WHERE "Status" = $1 '
                 'ORDER BY "Due" DESC LIMIT 20', [param("status", "TEXT")]),
    sql_function("pointsBetween", 'SELECT "Title", "Points" FROM "Tasks" WHERE "Points" '
                 '>= $1 AND "Points" < $2 ORDER BY "Points" LIMIT 20',
                 [param("low", "NUMBER"), param("high", "NUMBER")]),
    sql_function("dueAfter", 'SELECT "Title" FROM "Tasks" WHERE "Due" > $1 ORDER BY "Due" '
                 'DESC LIMIT 20', [param("after", "DATETIME")]),
    sql_function("byTitle", 'SELECT "Title", "Points" FROM "Tasks" ORDER BY "Title" LIMIT 20'),
]


def test_paged_shapes_neither_scan_nor_sort(api: Api, platform: LocalPlatform) -> None:
    site = release(api, *PAGED)
    arguments = {"statusByDue": ["Doing"], "pointsBetween": [1, 9],
                 "dueAfter": ["2025-01-01 00:00:00"], "byTitle": []}
    for function in PAGED:
        name = function["functionId"]
        query = compiled(site, function["sql"], len(arguments[name]))
        with platform.store.read() as conn:
            plan = [row[3] for row in conn.execute(
                "EXPLAIN QUERY PLAN " + query.sql, query.parameters(arguments[name], None))]
        assert not any(step.startswith("SCAN") and "INDEX" not in step for step in plan), (
            name, plan)
        assert not any("TEMP B-TREE" in step for step in plan), (name, plan)
    # The answers are those of the unindexed query.
    assert [row["Title"] for row in site.invoke("statusByDue", {"status": "Doing"})["rows"]
            ] == ["Write API", "Fix bug"]
    assert [row["Title"] for row in site.invoke("pointsBetween", {"low": 1, "high": 9})[
        "rows"]] == ["Write API", "Draw pages", "Fix bug"]
    assert [row["Title"] for row in site.invoke("byTitle")["rows"]] == [
        "Draw pages", "Fix bug", "Write API", "Write docs"]
