"""GET /sites/{app}/functions/{id}: the generated inputSchema, parameters[], request
example, call command and output schema; schemaStatus for legacy declarations."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from basedb.platform.domain.schemas import param_specs, schema_from_specs
from basedb.platform.domain.snapshots import FunctionSnapshot, Snapshot, make_snapshot
from basedb.protocol import Code
from basedb.workspace.declarations import build_declaration
from basedb.workspace.model import Catalog, Field, Table
from tests.platform.conftest import Api, field_id
from tests.platform.functions_support import STATUSES, TAGS, TaskSite, released_site


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


def test_describes_a_database_function(site: TaskSite) -> None:
    described = site.describe("listTasks")
    assert described["schemaStatus"] == "ready" and described["statusHint"] is None
    assert described["deploymentId"] == site.deployment_id
    assert described["inputSchema"] == {
        "type": "object", "title": "listTasks",
        "description": "Tasks of one status, by title. Use listProjects for projects.",
        "properties": {"status": {"type": "string", "enum": STATUSES,
                                  "description": "Status of the tasks to list"}},
        "required": ["status"], "additionalProperties": False}
    assert described["parameters"] == [{"name": "status", "type": "TEXT", "required": True,
                                        "description": "Status of the tasks to list",
                                        "enum": STATUSES, "examples": STATUSES}]
    assert described["requestExample"] == {"params": {"status": "Open"}}
    assert described["replacePaths"] == ["/params/status"]
    assert described["callCommand"] == (
        f"basedb api POST /open-apis/base/v3/sites/{site.app_token}/functions/listTasks/invoke "
        "--params '{\"env\":\"prod\"}' --data @body.json --as user")
    output = described["outputSchema"]
    rows = output["properties"]["rows"]["items"]["properties"]
    assert list(rows) == ["task_id", "Title", "Status", "Tags", "Points", "Due", "Assignees",
                          "Project"]
    assert rows["Tags"]["type"] == ["array", "null"]
    assert rows["Points"]["type"] == ["number", "null"]
    assert rows["Title"]["description"] == "Tasks.Title (text)"


def test_kinds_become_json_schema_types(site: TaskSite) -> None:
    tags = site.describe("tasksWithTags")["inputSchema"]["properties"]
    assert tags["tags"]["type"] == "array"
    assert tags["tags"]["items"] == {"type": "string", "enum": TAGS}
    assert tags["limit"]["type"] == "integer"
    points = site.describe("heavyPoints")["inputSchema"]["properties"]
    assert points["above"]["type"] == "number" and points["done"]["type"] == "boolean"
    due = site.describe("tasksDueOn")["inputSchema"]["properties"]["day"]
    assert due["type"] == "string" and due["format"] == "date"
    optional = site.describe("statusOrAll")["inputSchema"]
    assert optional["required"] == []
    assert optional["properties"]["status"]["type"] == ["string", "null"]
    assert optional["properties"]["status"]["enum"] == [*STATUSES, None]
    param = site.describe("statusOrAll")["parameters"][0]
    assert param["required"] is False and param["enum"] == STATUSES


def test_option_fields_without_enum_get_a_bounded_summary(site: TaskSite) -> None:
    described = site.describe("tasksByStatusText")
    prop = described["inputSchema"]["properties"]["status"]
    assert prop["description"] == ("[Options of Tasks.Status (may change): Open, Doing, Done] "
                                   "Status name of the tasks")
    assert described["parameters"][0]["optionSummary"] == {
        "table": "Tasks", "field": "Status", "options": STATUSES, "truncated": False}
    # A params with an enum gets neither.
    assert "optionSummary" not in site.describe("listTasks")["parameters"][0]


def test_an_option_summary_is_truncated_at_twenty(site: TaskSite) -> None:
    api, base = site.api, site.base_token
    table = api.ok("GET", f"/bases/{base}/tables/{site.tasks_table}")
    options = [*STATUSES, *(f"Stage {i}" for i in range(22))]
    api.ok("PUT", f"/bases/{base}/tables/{site.tasks_table}/fields/"
           f"{field_id(table, 'Status')}", json={"options": [{"name": o} for o in options]})
    described = site.describe("tasksByStatusText")
    summary = described["parameters"][0]["optionSummary"]
    assert summary["truncated"] is True and summary["options"] == options[:20]
    text = described["inputSchema"]["properties"]["status"]["description"]
    assert text.startswith("[First 20 of 25 options of Tasks.Status, not all of them: Open,")


def test_reference_params_keep_the_author_description(site: TaskSite) -> None:
    [project] = site.describe("tasksOfProject")["parameters"]
    text = "Record id of the project; call listProjects and pass rows[].project_id"
    assert project["description"] == text and project["valueHint"] == text
    assert project["reference"] == {"table": "Tasks", "field": "Project", "value": "record",
                                    "recordTable": "Projects"}
    described = site.describe("tasksOfProject")
    assert described["inputSchema"]["properties"]["projectId"]["description"] == text
    assert described["requestExample"] == {"params": {"projectId": "recExample"}}
    update = {p["name"]: p for p in site.describe("updateTask")["parameters"]}
    assert update["taskId"]["reference"] == {"table": "Tasks", "field": "record_id",
                                             "value": "record", "recordTable": "Tasks"}
    assign = {p["name"]: p for p in site.describe("assignTask")["parameters"]}
    assert assign["assignees"]["reference"]["value"] == "user"
    assert assign["assignees"]["type"] == "USER_ID[]"
    assert site.describe("assignTask")["requestExample"]["params"]["assignees"] == [
        "ou_example"]


def test_describes_a_mutation_with_its_output_schema(site: TaskSite) -> None:
    described = site.describe("createTask")
    schema = described["inputSchema"]
    assert schema["required"] == ["title", "status"]
    assert schema["properties"]["tags"] == {
        "type": ["array", "null"], "items": {"type": "string", "enum": TAGS},
        "description": "Tags of the task"}
    assert schema["properties"]["projectId"]["type"] == ["string", "null"]
    assert described["requestExample"] == {"params": {"title": "<title>", "status": "Open"}}
    assert described["replacePaths"] == ["/params/title", "/params/status"]
    output = described["outputSchema"]
    assert set(output["required"]) == {"recordIds", "affected", "record_not_found",
                                       "ignored_fields", "precondition_failed"}


def test_describes_faas_and_ai_functions_from_their_declared_schema(site: TaskSite) -> None:
    ping = site.describe("pingTasks")
    assert ping["inputSchema"] == {"type": "object", "properties": {
        "text": {"type": "string", "description": "Text to echo back"}},
        "required": ["text"], "additionalProperties": False}
    assert ping["parameters"] == [{"name": "text", "type": "string", "required": True,
                                   "description": "Text to echo back"}]
    assert ping["requestExample"] == {"params": {"text": "<text>"}}
    assert "outputSchema" not in ping
    legacy = site.describe("legacyHook")
    assert legacy["schemaStatus"] == "missing" and legacy["inputSchema"] is None
    assert legacy["requestExample"] == {"params": {}} and legacy["callCommand"]
    ai = site.describe("summarizeTasks")
    assert ai["functionType"] == "ai_function" and ai["inputSchema"]["required"] == ["text"]


def test_every_schema_is_valid_and_accepts_its_own_example(site: TaskSite) -> None:
    listing = site.api.ok("GET", site.url(), params={"pageSize": 200,
                                                     "includeInternal": "true"})
    for item in listing["functions"]:
        described = site.describe(item["functionId"], includeInternal="true")
        schema = described["inputSchema"]
        if schema is None:
            continue
        Draft202012Validator.check_schema(schema)
        example = described["requestExample"]["params"]
        assert Draft202012Validator(schema).is_valid(example), item["functionId"]
        for path in described["replacePaths"]:
            assert path.split("/")[2] in example


def test_an_internal_function_is_described_only_with_include_internal(site: TaskSite) -> None:
    site.api.fail("GET", site.url("/taskCount"), code=Code.FUNCTION_NOT_FOUND, status=404)
    described = site.describe("taskCount", includeInternal="true")
    assert described["internal"] is True
    assert '"includeInternal":true' in described["callCommand"]


def test_an_unknown_function_suggests_close_ids(site: TaskSite) -> None:
    msg = site.api.fail("GET", site.url("/listTask"), code=Code.FUNCTION_NOT_FOUND, status=404)
    assert "Candidates: listTasks" in msg
    assert "Parameter: /path/function_id" in msg


# --------------------------------------------------------------- legacy snapshots


def _legacy_snapshot(site: TaskSite) -> Snapshot:
    declaration = {"name": "legacyList", "description": "Tasks of one status (old CLI)",
                   "meta": {"params": [{"kind": "TEXT"}]}}
    sql = 'SELECT "Title" FROM "Tasks" WHERE "Status" = $1'
    return make_snapshot(
        deployment_id="dplLegacy" + site.app_token, app_token=site.app_token,
        fingerprint="sha256:" + "0" * 64, exclude=frozenset(), created_at="2025-01-01",
        functions=({"legacyList": FunctionSnapshot(
            "legacyList", "database_function", declaration, sql=sql)}))


def test_legacy_positional_params_need_an_upgrade(site: TaskSite,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    legacy = _legacy_snapshot(site)
    monkeypatch.setattr("basedb.platform.domain.invoke.load_snapshot", lambda *a: legacy)
    [item] = site.api.ok("GET", site.url())["functions"]
    assert item["schemaStatus"] == "needs_upgrade"
    assert "name and a description" in item["statusHint"]
    described = site.describe("legacyList")
    assert described["inputSchema"] is None and described["parameters"] == []
    assert described["callCommand"] is None
    msg = site.invoke_fails("legacyList", {"x": "Open"}, code=Code.SCHEMA_NOT_READY)
    assert "needs_upgrade" in msg and "Executed: no." in msg


# ------------------------------------------------------- schemas of declarations


def test_schemas_for_declarations_directly() -> None:
    from basedb.sql.analysis import analyze_sql

    status = Field("fldS", "Status", "select", options=("Open", "Done"))
    catalog = Catalog("basX", (Table("tblT", "Tasks", (Field("fldT", "Title", "text"),
                                                       status)),))
    decl, findings = build_declaration("database_function", "byStatus", {
        "name": "byStatus", "description": "Tasks by status",
        "meta": {"params": [{"name": "s", "kind": "TEXT", "description": "Status name"}]}},
        sql='SELECT "Title" FROM "Tasks" WHERE "Status" = $1')
    assert decl is not None and decl.sql is not None and not findings
    bound = analyze_sql(decl.sql, catalog, 1)
    schema = schema_from_specs(decl, param_specs(decl, catalog, bound.bindings))
    assert schema["properties"]["s"]["description"].startswith("[Options of Tasks.Status")
    # Without bindings there is no option summary.
    unbound = analyze_sql('SELECT "Title" FROM "Tasks"', catalog, 1)
    plain = schema_from_specs(decl, param_specs(decl, catalog, unbound.bindings))
    assert plain["properties"]["s"]["description"] == "Status name"
    assert json.loads(json.dumps(plain)) == plain


def test_statuses_of_other_legacy_or_broken_declarations(
        site: TaskSite, monkeypatch: pytest.MonkeyPatch) -> None:
    broken_schema = {"type": "object", "properties": {"a": {"type": 5, "description": "A"}}}
    functions = {
        "brokenHook": FunctionSnapshot("brokenHook", "faas", {
            "name": "brokenHook", "description": "A FaaS whose schema is not JSON Schema",
            "inputSchema": broken_schema}, handler="export default async () => ({code: 0})"),
        "freeText": FunctionSnapshot("freeText", "ai_function", {
            "name": "freeText", "description": "An AI Function without an input schema",
            "capability": "text", "prompt": "Answer"}),
        "oldCreate": FunctionSnapshot("oldCreate", "mutation", {
            "name": "oldCreate", "description": "Create a task (old CLI)",
            "spec": {"table": "Tasks", "action": "create",
                     "params": [{"name": "title", "kind": "TEXT"}],
                     "set": {"Title": "$title"}}}),
        "goneTable": FunctionSnapshot("goneTable", "mutation", {
            "name": "goneTable", "description": "Writes a table that is not bound",
            "spec": {"table": "Archive", "action": "create",
                     "params": [{"name": "title", "kind": "TEXT", "description": "Title"}],
                     "set": {"Title": "$title"}}}),
    }
    snapshot = make_snapshot(deployment_id="dplOdd" + site.app_token, app_token=site.app_token,
                        fingerprint="sha256:" + "2" * 64, exclude=frozenset(),
                        created_at="2025-01-01", functions=(functions))
    monkeypatch.setattr("basedb.platform.domain.invoke.load_snapshot", lambda *a: snapshot)
    found = {f["functionId"]: f for f in site.api.ok("GET", site.url())["functions"]}
    assert found["brokenHook"]["schemaStatus"] == "unavailable"
    assert "not a valid JSON Schema" in found["brokenHook"]["statusHint"]
    assert found["freeText"]["schemaStatus"] == "missing"
    assert found["oldCreate"]["schemaStatus"] == "needs_upgrade"
    assert found["goneTable"]["schemaStatus"] == "unavailable"
    assert "Archive" in found["goneTable"]["statusHint"]
    msg = site.invoke_fails("oldCreate", {"title": "x"}, code=Code.SCHEMA_NOT_READY)
    assert "needs_upgrade" in msg
    assert len(site.records(site.tasks_table)) == 4
