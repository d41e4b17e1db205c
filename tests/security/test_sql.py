"""Hostile input against the Agent OpenAPI: an injection corpus through every parameter
kind, Database Functions that try to write or read outside their tables (refused by the
check at save time, by re-validation at run time, and by the read-only connection and
authorizer underneath), and the error envelope of every failure."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from basedb.core.paths import API_PREFIX
from basedb.platform import LocalPlatform
from basedb.platform.domain.revision import catalog_revision
from basedb.platform.domain.runtimes.sql import run_query
from basedb.platform.domain.snapshots import FunctionSnapshot, Snapshot, make_snapshot
from basedb.platform.storage import physical
from basedb.platform.storage.read_only import read_only_pool
from basedb.protocol import ApiFailure, Code
from basedb.sql.sqlite.query import MAX_VALUE_BYTES, CompiledQuery
from tests.platform.conftest import Api, assert_error_shape
from tests.platform.functions_support import (
    DATABASE_FUNCTIONS,
    TaskSite,
    add_member,
    released_site,
    sql_function,
)

CORPUS: list[Any] = [
    "'", "''", '"', "\\", "'; DROP TABLE t_x; --", "' OR '1'='1", "1 OR 1=1",
    "Robert'); DELETE FROM users;--", "$1", "?", ":p", "@current_user", "%s%n", "*/ --",
    "\x00", "nul\x00byte", "é中文🙂", "\u202eevil", "\ufeff", "", " ", "x" * 1_000_000,
    0, -1, 2**63, -(2**63) - 1, 1e308, 0.1, True, False, None, [], [None], [[["deep"]]],
    [{"$ne": 1}], [{"id": "x"}], {"a": 1}, {"__proto__": {"x": 1}}, ["x"] * 5_000,
    "2025-01-01", "2025-01-01'; --", "recExample",
]


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


def fingerprint(platform: LocalPlatform) -> dict[str, Any]:
    """Everything an attack could change: the schema, and the rows of every table."""
    with platform.store.read() as conn:
        schema = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name"
                              ).fetchall()
        counts = {name: conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0]
                  for _, name, _ in schema if _ == "table"}
        tokens = conn.execute("SELECT token_hash FROM tokens ORDER BY 1").fetchall()
    return {"schema": schema, "counts": counts, "tokens": tokens}


@pytest.mark.slow
def test_an_injection_corpus_through_every_parameter_finds_nothing(
        site: TaskSite, platform: LocalPlatform) -> None:
    me = site.api.ok("GET", "/users/me")["user_id"]
    listing = site.api.ok("GET", site.url(), params={"pageSize": 200})["functions"]
    # Queries first, while the tables hold only the sample records.
    targets = [f["functionId"] for kind in ("database_function", "mutation")
               for f in listing if f["functionType"] == kind]
    writes = {"createTask", "updateTask", "finishMyTasks", "assignTask", "deleteTasks"}
    calls = 0
    for function_id in targets:
        described = site.describe(function_id)
        example = described["requestExample"]["params"]
        for param in described["parameters"]:
            for value in CORPUS:
                params = {**example, param["name"]: value}
                if function_id == "deleteTasks":
                    params = {"taskIds": value}  # nothing real to delete
                response = site.api.call("POST", site.url(f"/{function_id}/invoke"),
                                         json={"params": params})
                body = response.json()
                calls += 1
                # refused as a wrong type (9499) or another broken rule (800004002)
                assert body["code"] in (0, Code.PARAMETER_INVALID, Code.BAD_REQUEST), (
                    function_id, param, body)
                if body["code"]:
                    assert_error_shape(response)
                elif function_id not in writes and isinstance(value, str):
                    # No string in the corpus is a real value of these tables, so a
                    # query that matched anything would have been rewritten by it.
                    assert body["data"]["rows"] == [], (function_id, param["name"], value)
    assert calls > 500
    # Strings reach the database as values, never as SQL: the records are all still there
    # (plus what the write functions created), and written text is stored verbatim.
    titles = {r["Title"] for r in site.records(site.tasks_table).values()}
    assert {"Write API", "Draw pages", "Fix bug", "Write docs"} <= titles
    assert "'; DROP TABLE t_x; --" in titles and "Robert'); DELETE FROM users;--" in titles
    assert "nul\x00byte" in titles
    assert site.api.ok("GET", "/users/me")["user_id"] == me
    with platform.store.read() as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_quotes_in_a_text_param_match_literally(site: TaskSite) -> None:
    for value in ("' OR '1'='1", "Open' --", "Open\x00"):
        assert site.invoke("tasksByStatusText", {"status": value})["rows"] == []
    assert site.invoke("tasksByStatusText", {"status": "Open"})["rowCount"] == 1


def test_values_python_parses_but_json_cannot_carry_are_refused(site: TaskSite) -> None:
    url = API_PREFIX + site.url("/tasksByStatusText/invoke")
    headers = {"Authorization": f"Bearer {site.api.token}",
               "Content-Type": "application/json"}
    for raw in (b'{"params": {"status": "\\ud800x"}}', b'{"params": {"\\udfff": "a"}}'):
        response = site.api.client.post(url, content=raw, headers=headers)
        assert_error_shape(response)
        assert response.json()["code"] == Code.PARAMETER_INVALID
        assert "unpaired UTF-16 surrogate" in response.json()["msg"]
    url = API_PREFIX + site.url("/heavyPoints/invoke")
    for number in (b"NaN", b"Infinity", b"-Infinity"):
        response = site.api.client.post(
            url, content=b'{"params": {"above": ' + number + b', "done": false}}',
            headers=headers)
        assert_error_shape(response)
        assert "not a finite number" in response.json()["msg"]


WRITING_SQL = {
    "cte_delete": 'WITH gone AS (DELETE FROM "Tasks" RETURNING *) SELECT * FROM gone',
    "trigger": 'CREATE TRIGGER wipe AFTER INSERT ON "Tasks" BEGIN DELETE FROM "Tasks"; END',
    "pragma_table_function": "SELECT name FROM pragma_table_info('t_x'), \"Tasks\"",
    "load_extension": "SELECT load_extension('/tmp/evil.so') FROM \"Tasks\"",
    "sqlite_master": 'SELECT sql FROM sqlite_master, "Tasks"',
    "attach": "ATTACH DATABASE '/tmp/evil.db' AS evil",
    "second_statement": 'SELECT "Title" FROM "Tasks"; DELETE FROM "Tasks"',
    "pragma": "PRAGMA writable_schema = ON",
    "insert": "INSERT INTO \"Tasks\" (\"Title\") VALUES ('x')",
    "update": "UPDATE \"Tasks\" SET \"Title\" = 'x'",
    "select_into": 'SELECT * INTO stolen FROM "Tasks"',
    "platform_tables": 'SELECT token_hash FROM tokens, "Tasks"',
    "readfile": "SELECT readfile('/etc/passwd') FROM \"Tasks\"",
}


@pytest.mark.parametrize("name", sorted(WRITING_SQL))
def test_functions_that_try_to_write_are_refused_at_save(name: str, site: TaskSite,
                                                         platform: LocalPlatform) -> None:
    before = fingerprint(platform)
    body = {"databaseFunctions": [*DATABASE_FUNCTIONS, sql_function("evil", WRITING_SQL[name])],
            "mutations": [], "faas": []}
    response = site.api.call("PUT", f"/sites/{site.app_token}/draft/functions", json=body)
    # (The message may quote the author's own SQL, such as "sqlite_master", back to them.)
    assert response.status_code == 400 and response.json()["code"] == Code.BAD_REQUEST
    codes = {e["code"] for e in response.json()["data"]["errors"]}
    assert codes & {"SQL_NOT_READ_ONLY", "SQL_PARSE_ERROR", "SQL_UNKNOWN_TABLE"}, codes
    assert fingerprint(platform) == before


def _poisoned(site: TaskSite, sql: str) -> Snapshot:
    declaration = {"name": "evil", "description": "Looks harmless", "meta": {"params": []}}
    return make_snapshot(deployment_id=f"dplEvil{abs(hash(sql))}", app_token=site.app_token,
                    fingerprint="sha256:" + "1" * 64, exclude=frozenset(),
                    created_at="2025-01-01", functions=({
                        "evil": FunctionSnapshot("evil", "database_function", declaration,
                                                 sql=sql)}))


@pytest.mark.parametrize("name", sorted(WRITING_SQL))
def test_a_deployment_with_such_sql_is_judged_again_and_never_runs(
        name: str, site: TaskSite, platform: LocalPlatform,
        monkeypatch: pytest.MonkeyPatch) -> None:
    poisoned = _poisoned(site, WRITING_SQL[name])
    monkeypatch.setattr("basedb.platform.domain.invoke.load_snapshot", lambda *a: poisoned)
    before = fingerprint(platform)
    [item] = site.api.ok("GET", site.url())["functions"]
    assert item["schemaStatus"] == "unavailable"
    site.invoke_fails("evil", {}, code=Code.SCHEMA_NOT_READY)
    assert fingerprint(platform) == before


def _tables(site: TaskSite) -> tuple[str, str]:
    return physical.table_name(site.tasks_table), physical.table_name(site.projects_table)


def test_the_runtime_refuses_writes_even_in_a_compiled_statement(
        site: TaskSite, platform: LocalPlatform) -> None:
    tasks, projects = _tables(site)
    statements = [
        f"DELETE FROM {tasks}", f"UPDATE {tasks} SET record_id = 'x'",
        f"INSERT INTO {tasks} (record_id, _seq, _created_at, _updated_at) "
        "VALUES ('r', 99, '', '')",
        f"DROP TABLE {tasks}", "CREATE TABLE stolen (x)",
        f"CREATE TRIGGER wipe AFTER INSERT ON {tasks} BEGIN DELETE FROM {tasks}; END",
        "ATTACH DATABASE ':memory:' AS evil", "PRAGMA writable_schema = ON",
        "SELECT load_extension('/tmp/evil.so')", "SELECT sql FROM sqlite_master",
        f"SELECT name FROM pragma_table_info('{tasks}')", "SELECT token_hash FROM tokens",
        "SELECT * FROM users", f"SELECT * FROM {projects}",
        f"WITH x AS (SELECT 1) DELETE FROM {tasks}", "SELECT readfile('/etc/passwd')",
        "SELECT changes()", f"VACUUM INTO '/tmp/stolen-{site.app_token}.db'",
    ]
    before = fingerprint(platform)
    with platform.store.read() as conn:
        revision = catalog_revision(conn)
    for sql in statements:
        compiled = CompiledQuery(sql=sql, slots=(), columns=(), tables=frozenset({tasks}))
        with pytest.raises(ApiFailure) as refused:
            run_query(platform.store.path, compiled, [], catalog_revision=revision,
                      user_id="ou_x", function_id="evil", log_id="L1")
        assert refused.value.code == Code.EXECUTION_FAILED, sql
        assert sql not in refused.value.msg and "sqlite" not in refused.value.msg.lower()
    assert fingerprint(platform) == before


def test_the_read_only_connection_refuses_writes_without_any_authorizer(
        site: TaskSite, platform: LocalPlatform) -> None:
    tasks, _ = _tables(site)
    with read_only_pool(platform.store).transaction() as conn:
        assert conn.execute("PRAGMA query_only").fetchone()[0] == 1
        with pytest.raises(sqlite3.Error):
            conn.execute(f"DELETE FROM {tasks}")
    conn = read_only_pool(platform.store).connection()
    conn.execute("PRAGMA query_only = OFF")  # even then the file is opened read-only
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute(f"DELETE FROM {tasks}")
    finally:
        conn.execute("PRAGMA query_only = ON")
    assert len(site.records(site.tasks_table)) == 4


def test_every_failure_of_these_routes_is_an_envelope(site: TaskSite, api: Api) -> None:
    member, _ = add_member(site, "Mo")
    invoke = site.url("/listTasks/invoke")
    failures: list[tuple[Api, str, str, dict[str, Any], int]] = [
        (api.as_user(None), "GET", site.url(), {}, Code.TOKEN_MISSING),
        (api.as_user("bdb_not_a_token"), "POST", invoke, {}, Code.TOKEN_INVALID),
        (member, "GET", site.url(), {"params": {"env": "preview"}}, Code.PERMISSION_DENIED),
        (api, "GET", site.url("/nope"), {}, Code.FUNCTION_NOT_FOUND),
        (api, "POST", site.url("/nope/invoke"), {"json": {}}, Code.FUNCTION_NOT_FOUND),
        (api, "GET", site.url(), {"params": {"env": "x"}}, Code.BAD_REQUEST),
        (api, "GET", site.url(), {"params": {"pageToken": "x"}}, Code.BAD_REQUEST),
        (api, "POST", invoke, {"json": {"params": []}}, Code.BAD_REQUEST),
        (api, "POST", invoke, {"json": {"params": {"status": 1}}}, Code.BAD_REQUEST),
        (api, "POST", site.url("/legacyHook/invoke"), {"json": {"params": {}},
                                                       "params": {"env": "nope"}},
         Code.BAD_REQUEST),
        (api, "GET", "/sites/PrjNope/functions", {}, 404),
    ]
    for caller, method, path, kwargs, code in failures:
        response = caller.call(method, path, **kwargs)
        assert_error_shape(response)
        body = response.json()
        if code == 404:
            assert response.status_code == 404
        else:
            assert body["code"] == code, (path, body)
        json.dumps(body)  # plain JSON all the way down


def test_a_body_nested_beyond_reason_is_a_bad_request(site: TaskSite) -> None:
    depth = 100_000
    raw = b'{"params": {"status": ' + b"[" * depth + b"]" * depth + b"}}"
    response = site.api.client.post(API_PREFIX + site.url("/listTasks/invoke"), content=raw,
                                    headers={"Authorization": f"Bearer {site.api.token}"})
    assert_error_shape(response)
    assert response.json()["code"] == Code.BAD_REQUEST and "too deeply" in response.json()["msg"]


# A hostile author's query that builds huge values from small ones: SQLite's own string
# functions (replace, ||) would grow a value to a gigabyte before giving up.
GROWING_SQL = {
    "replace": "SELECT replace(repeat('x', 1000000), 'x', repeat('y', 1000000)) AS v "
               'FROM "Tasks" LIMIT 1',
    "concatenation": "SELECT length(a || a || a || a || a || a || a || a || a || a || a || a "
                     "|| a || a || a || a || a || a || a || a || a || a || a || a || a || a "
                     "|| a || a || a || a || a || a || a || a || a || a) AS v FROM (SELECT "
                     "repeat(repeat('x', 1000000) || repeat('y', 1000000), 1) AS a "
                     'FROM "Tasks") AS s',
}


@pytest.mark.parametrize("name", sorted(GROWING_SQL))
def test_a_query_that_grows_a_value_without_bound_fails_the_call_not_the_server(
        name: str, api: Api, platform: LocalPlatform) -> None:
    site = released_site(api, database_functions=[
        *DATABASE_FUNCTIONS, sql_function("grow", GROWING_SQL[name])])
    site.invoke_fails("grow", {}, code=Code.EXECUTION_FAILED)
    assert site.invoke("listTasks", {"status": "Open"})["rows"]
    conn = read_only_pool(platform.store).connection()
    assert conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) == MAX_VALUE_BYTES
