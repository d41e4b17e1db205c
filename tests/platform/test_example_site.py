"""The example template as a live site on the local platform.

The Base is created from templates/example/_template.json through the Open API, the
template's declarations and page are deployed as a preview, and every function is
invoked as the site's owner, who plays the sample member bound to `@current_user`.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from typing import Any

import pytest

from basedb.core.resources import TEMPLATE_SCHEMA_FILE, template_dir
from basedb.workspace.scaffold import load_template_schema
from basedb.workspace.template_schema import CURRENT_USER, TemplateSchema, user_reference_name
from tests.platform.conftest import Api
from tests.platform.release_support import site_zip, upload

EXAMPLE = template_dir("example")
EXCLUDED = "debugSubmissionIntegrity"


@dataclass
class ExampleSite:
    api: Api
    app_token: str
    keys: dict[tuple[str, str], str]  # (table name, sample _key) -> record id

    def invoke(self, function_id: str, params: dict[str, Any]) -> dict[str, Any]:
        response = self.api.call("POST", f"/sites/{self.app_token}/functions/{function_id}/invoke",
                                 json={"params": params}, params={"env": "preview"})
        body: dict[str, Any] = response.json()
        return body

    def data(self, function_id: str, params: dict[str, Any]) -> Any:
        body = self.invoke(function_id, params)
        assert body["code"] == 0, body
        return body["data"]

    def rows(self, function_id: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.data(function_id, params)["rows"]
        return rows


def _create_base(api: Api, schema: TemplateSchema) -> tuple[str, dict[str, str], dict[Any, str]]:
    me = api.ok("GET", "/users/me")["user_id"]
    users = {name: api.ok("POST", "/users", json={"name": name})["user_id"]
             for name in schema.sample_user_names()}
    base = api.ok("POST", "/bases", json={"name": schema.title})["base_token"]
    table_ids: dict[str, str] = {}
    for table in schema.tables:  # the template lists linked tables first
        fields = []
        for f in table.fields:
            doc: dict[str, Any] = {"name": f.name, "type": f.type}
            if f.type in ("select", "user"):
                doc["multiple"] = f.multiple
            if f.options:
                doc["options"] = [{"name": o} for o in f.options]
            if f.link_table:
                doc["link_table"] = table_ids[f.link_table]
            fields.append(doc)
        created = api.ok("POST", f"/bases/{base}/tables", json={"name": table.name,
                                                                "fields": fields})
        table_ids[table.name] = created["id"]
    keys: dict[Any, str] = {}
    for table in schema.tables:
        for index, record in enumerate(schema.records_of(table.name)):
            body = {}
            for name, value in record.values.items():
                field = table.field(name)
                assert field is not None
                if field.type == "link":
                    value = [{"id": keys[(field.link_table, key)]} for key in value]
                elif field.type == "user":
                    value = [{"id": me if value == CURRENT_USER
                              else users[user_reference_name(value) or ""]}]
                body[name] = value
            created = api.ok("POST", f"/bases/{base}/tables/{table_ids[table.name]}/records",
                             json=body)
            keys[(table.name, record.key or f"#{index}")] = created["record_id"]
    return base, table_ids, keys


def _declaration(kind_dir: str, function_id: str) -> Any:
    return json.loads((EXAMPLE / kind_dir / function_id / "function.json").read_text("utf-8"))


def _ids(kind_dir: str) -> list[str]:
    return sorted(p.name for p in (EXAMPLE / kind_dir).iterdir() if p.is_dir())


@pytest.fixture
def site(api: Api) -> ExampleSite:
    schema = load_template_schema(EXAMPLE / TEMPLATE_SCHEMA_FILE)
    base, table_ids, keys = _create_base(api, schema)
    app = api.ok("POST", "/sites/create", json={"title": schema.title})["appToken"]
    api.ok("POST", f"/sites/{app}/bind_base",
           json={"baseToken": base, "tableIds": list(table_ids.values())})
    drafts = api.ok("PUT", f"/sites/{app}/draft/functions", json={
        "databaseFunctions": [
            {"functionId": fid, "declaration": _declaration("database-functions", fid),
             "sql": (EXAMPLE / "database-functions" / fid / "main.sql").read_text("utf-8")}
            for fid in _ids("database-functions")],
        "mutations": [{"functionId": fid, "declaration": _declaration("mutations", fid)}
                      for fid in _ids("mutations")],
        "faas": [{"functionId": fid, "declaration": _declaration("faas", fid),
                  "handler": (EXAMPLE / "faas" / fid / "index.mjs").read_text("utf-8")}
                 for fid in _ids("faas")],
    })
    assert drafts.get("functionHints") == []
    api.ok("PUT", f"/sites/{app}/draft/ai-functions", json={"aiFunctions": [
        {"key": key, "declaration": _declaration("ai", key)} for key in _ids("ai")]})
    policy = json.loads((EXAMPLE / "agent-tools.json").read_text("utf-8"))
    api.ok("PUT", f"/sites/{app}/draft/agent-tools", json=policy)
    files = {p.relative_to(EXAMPLE).as_posix(): p.read_bytes()
             for p in sorted(EXAMPLE.rglob("*"))
             if p.is_file() and p.name != TEMPLATE_SCHEMA_FILE}
    response = upload(api, app, *site_zip(files)).json()
    assert response["code"] == 0 and response["data"]["functionHints"] == [], response
    return ExampleSite(api, app, keys)


def test_reads_answer_with_the_sample_data(site: ExampleSite) -> None:
    periods = site.rows("listPeriods", {})
    assert [p["status"] for p in periods] == ["开放", "开放", "已关闭"]
    assert len(site.rows("listMembers", {})) == 7  # 周敏 is no longer 在职
    year_end = site.keys[("报备周期", "p2")]
    team = site.rows("listTeamLeave", {"periodId": year_end, "offset": 0})
    assert len(team) == 6
    assert site.rows("listTeamLeave", {"periodId": year_end, "offset": 200}) == []
    on_leave = site.rows("listLeaveByIntent", {"intentName": "需要休假", "offset": 0})
    assert {r["intent"] for r in on_leave} == {"需要休假"} and len(on_leave) == 12
    stats = site.rows("leaveStatsByDepartment", {"periodId": site.keys[("报备周期", "p3")]})
    assert {r["department"]: r["total_days"] for r in stats} == {
        "产品部": 5, "研发部": 5, "设计部": 3, "运营部": 2}


def test_the_owner_plays_the_member_bound_to_current_user(site: ExampleSite) -> None:
    [mine] = site.rows("getMySubmission", {"periodId": site.keys[("报备周期", "p2")]})
    assert mine["member_name"] == "林晓" and mine["days"] == 4
    [empty] = site.rows("getMySubmission", {"periodId": site.keys[("报备周期", "p3")]})
    assert empty["member_name"] == "林晓" and empty["submission_id"] is None


def test_the_diagnostic_query_is_hidden_from_agents(site: ExampleSite) -> None:
    assert site.invoke(EXCLUDED, {})["code"] == 800004001
    listed = site.api.ok("GET", f"/sites/{site.app_token}/functions",
                         params={"env": "preview"})["functions"]
    assert EXCLUDED not in {f["functionId"] for f in listed}


def test_a_submission_round_trip_through_the_mutations(site: ExampleSite) -> None:
    spring = site.keys[("报备周期", "p3")]
    [me] = site.rows("getMySubmission", {"periodId": spring})
    created = site.data("submitLeave", {
        "periodId": spring, "memberId": me["member_id"], "intent": "需要休假",
        "startDate": "2027-02-15", "endDate": "2027-02-17", "days": 3, "remark": "节后三天"})
    [submission_id] = created["recordIds"]
    [mine] = site.rows("getMySubmission", {"periodId": spring})
    assert (mine["submission_id"], mine["start_date"], mine["remark"]) == (
        submission_id, "2027-02-15 00:00:00", "节后三天")

    kept = site.data("updateLeaveRemark", {"recordId": submission_id, "remark": None})
    assert kept["ignored_fields"] == ["备注"]
    site.data("updateLeaveRemark", {"recordId": submission_id, "clearRemark": True})
    assert site.rows("getMySubmission", {"periodId": spring})[0]["remark"] is None

    site.data("deleteSubmissions", {"recordIds": [submission_id]})
    assert site.rows("getMySubmission", {"periodId": spring})[0]["submission_id"] is None


def test_registering_writes_the_current_user(site: ExampleSite) -> None:
    site.data("registerMember", {"name": "新同事", "department": "设计部"})
    names = [m["name"] for m in site.rows("listMembers", {})]
    assert "新同事" in names


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_manage_period_creates_validates_and_closes(site: ExampleSite) -> None:
    created = site.data("managePeriod", {"action": "create", "title": "2027 清明节休假报备",
                                         "start": "2027-04-01", "end": "2027-04-10"})
    assert created["days"] == 10
    titles = [p["title"] for p in site.rows("listPeriods", {})]
    assert "2027 清明节休假报备" in titles

    refused = site.invoke("managePeriod", {"action": "create", "title": "x",
                                           "start": "2027-04-10", "end": "2027-04-01"})
    assert refused["code"] == 800004003
    assert refused["data"]["error"]["upstream_code"] == 40001
    assert refused["msg"].startswith("结束日期早于开始日期. Parameter: /params/end")

    year_end = site.keys[("报备周期", "p2")]
    closed = site.data("managePeriod", {"action": "close", "periodId": year_end})
    assert closed["changed"] is True
    status = {p["period_id"]: p["status"] for p in site.rows("listPeriods", {})}
    assert status[year_end] == "已关闭"
