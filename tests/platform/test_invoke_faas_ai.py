"""FaaS and AI Functions end to end: drafts, a deployment promoted to prod, then the
invoke endpoint (the AI endpoint is mocked with respx: the platform has no model)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import respx

from basedb.core.node import node_version
from basedb.protocol import Code
from tests.platform.conftest import Api, assert_error_shape
from tests.platform.release_support import TaskSite, deploy, functions_body, summarize, task_site

needs_node = pytest.mark.skipif(
    int((node_version() or "0").split(".")[0]) < 20, reason="Node.js 20+ is not installed")

CHAT_URL = "http://127.0.0.1:9/v1/chat/completions"

HANDLER = """
export default async function (input, ctx) {
  if (input.title.trim() === "") {
    return {code: 40001, msg: "Title is blank. Parameter: /params/title (received \\"\\"). "
      + "Fix: send a title. Executed: no. Retry: retry after fixing."};
  }
  if (input.title === "explode") {
    throw new Error("handler internals: " + JSON.stringify(process.env));
  }
  const created = await ctx.records.create("Tasks", {
    Title: input.title, Status: "Open", Owner: [{id: ctx.caller.userId}]});
  return {code: 0, msg: "ok", data: {taskId: created.record_id, env: ctx.env,
                                     by: ctx.caller.name}};
}
"""

ADD_TASK = {"functionId": "addTask", "handler": HANDLER, "declaration": {
    "name": "addTask", "description": "Add an open task owned by the caller (writes)",
    "timeoutMs": 5000,
    "inputSchema": {"type": "object", "additionalProperties": False, "required": ["title"],
                    "properties": {"title": {"type": "string", "maxLength": 100,
                                             "description": "Title of the new task"}}}}}


@pytest.fixture
def released(api: Api) -> TaskSite:
    site = task_site(api)
    api.ok("PUT", f"/sites/{site.app_token}/draft/functions",
           json=functions_body(database_functions=[], mutations=[], faas=[ADD_TASK]))
    api.ok("PUT", f"/sites/{site.app_token}/draft/ai-functions",
           json={"aiFunctions": [summarize()]})
    deployment = deploy(api, site.app_token)["deploymentId"]
    api.ok("POST", f"/sites/{site.app_token}/deployments/{deployment}/promote")
    return site


def invoke_path(site: TaskSite, function_id: str) -> str:
    return f"/sites/{site.app_token}/functions/{function_id}/invoke"


def invoke(api: Api, site: TaskSite, function_id: str, params: dict[str, Any]) -> Any:
    return api.call("POST", invoke_path(site, function_id), json={"params": params},
                    params={"env": "prod"})


@needs_node
def test_faas_writes_through_its_record_routes(api: Api, released: TaskSite) -> None:
    data = api.ok("POST", invoke_path(released, "addTask"), json={"params": {"title": "Ship"}},
                  params={"env": "prod"})
    me = api.ok("GET", "/users/me")
    assert data["env"] == "prod" and data["by"] == me["name"]
    record = api.ok("GET", f"/bases/{released.base_token}/tables/{released.table_id}/records/"
                    f"{data['taskId']}")
    assert record["fields"]["Title"] == "Ship" and record["fields"]["Status"] == "Open"
    assert record["fields"]["Owner"] == [{"id": me["user_id"]}]


@needs_node
def test_faas_business_error_through_invoke(api: Api, released: TaskSite) -> None:
    response = invoke(api, released, "addTask", {"title": "  "})
    assert_error_shape(response)
    body = response.json()
    assert body["code"] == Code.FUNCTION_BUSINESS_ERROR
    assert body["data"] == {"error": {"upstream_code": 40001}}
    assert body["msg"] == ('Title is blank. Parameter: /params/title (received ""). Fix: send a '
                           "title. Executed: no. Retry: retry after fixing. Business code: "
                           f"40001. LogID: {body['error']['log_id']}")


@needs_node
def test_faas_crash_through_invoke_hides_the_stack(api: Api, released: TaskSite) -> None:
    response = invoke(api, released, "addTask", {"title": "explode"})
    assert_error_shape(response)
    body = response.json()
    assert body["code"] == Code.EXECUTION_FAILED and response.status_code == 500
    assert "handler internals" not in body["msg"] and "PATH" not in body["msg"]
    assert body["msg"].endswith(f"LogID: {body['error']['log_id']}")


def test_ai_function_not_enabled_through_invoke(api: Api, released: TaskSite,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BASEDB_AI_BASE_URL", raising=False)
    response = invoke(api, released, "summarize", {"text": "three tasks"})
    assert_error_shape(response)
    assert response.json()["code"] == Code.AI_FUNCTION_NOT_ENABLED
    assert response.json()["msg"].startswith("ai function feature is not enabled.")


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.setenv("BASEDB_AI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("BASEDB_AI_MODEL", "local-test")
    monkeypatch.delenv("BASEDB_AI_API_KEY", raising=False)
    with respx.mock(assert_all_called=False) as router:
        yield router


def test_ai_function_answers_through_invoke(api: Api, released: TaskSite,
                                            model: respx.MockRouter) -> None:
    route = model.post(CHAT_URL).respond(json={
        "model": "local-test", "usage": {"total_tokens": 12},
        "choices": [{"message": {"role": "assistant", "content": "Three tasks, all open."}}]})
    data = api.ok("POST", invoke_path(released, "summarize"),
                  json={"params": {"text": "three tasks"}}, params={"env": "prod"})
    assert data == {"text": "Three tasks, all open.", "model": "local-test",
                    "usage": {"total_tokens": 12}}
    sent = json.loads(route.calls.last.request.content)
    assert sent["messages"][0] == {"role": "system", "content": "Summarize: three tasks"}
    assert json.loads(sent["messages"][1]["content"]) == {"text": "three tasks"}
