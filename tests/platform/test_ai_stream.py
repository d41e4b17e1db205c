"""AI Functions the three ways a page calls them, against a real OpenAI-compatible server
on loopback (tests/ai_stub.py): aggregate, streamed end to end (the platform relays each
piece as the model writes it), and media tasks polled by `data.status`; and without an
endpoint, each answers 800004011 with its Fix."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from basedb.platform import LocalPlatform
from basedb.platform.domain.runtimes.ai_media import SITE_RUNNING_MAX
from basedb.protocol import Code
from tests.ai_stub import IMAGE_URL, MODEL, PIECES, OpenAIStub
from tests.platform.conftest import Api
from tests.platform.release_support import TaskSite, deploy, functions_body, summarize, task_site
from tests.platform.test_pages import server  # noqa: F401 - the uvicorn fixture

DRAW = {"key": "drawCover", "declaration": {
    "name": "drawCover", "description": "Draw a cover image for a task title",
    "capability": "image", "prompt": "A flat illustration for the task {{title}}"}}
GUARD_S = 60  # a guard against a hang, not a window


@pytest.fixture
def released(api: Api) -> TaskSite:
    site = task_site(api)
    api.ok("PUT", f"/sites/{site.app_token}/draft/functions", json=functions_body())
    api.ok("PUT", f"/sites/{site.app_token}/draft/ai-functions",
           json={"aiFunctions": [summarize(), DRAW]})
    deployment = deploy(api, site.app_token)["deploymentId"]
    api.ok("POST", f"/sites/{site.app_token}/deployments/{deployment}/promote")
    return site


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStub]:
    with OpenAIStub() as running:
        monkeypatch.setenv("BASEDB_AI_BASE_URL", running.base_url)
        monkeypatch.delenv("BASEDB_AI_API_KEY", raising=False)
        monkeypatch.setenv("BASEDB_AI_MODEL", MODEL)
        yield running


def path(site: TaskSite, function_id: str, action: str) -> str:
    return f"/sites/{site.app_token}/functions/{function_id}/{action}"


def events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    name = ""
    for line in lines:
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            yield name, json.loads(line[5:])


def test_a_stream_is_relayed_as_the_model_writes_it(
        server: str, api: Api, platform: LocalPlatform, released: TaskSite,  # noqa: F811
        stub: OpenAIStub) -> None:
    url = f"{server}/open-apis/base/v3{path(released, 'summarize', 'stream')}"
    seen: list[tuple[str, dict[str, Any]]] = []
    with httpx.stream("POST", url, params={"env": "prod"}, json={"params": {"text": "ship"}},
                      headers={"Authorization": f"Bearer {platform.owner_token}"},
                      timeout=GUARD_S) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-tt-logid"]
        for name, data in events(response.iter_lines()):
            seen.append((name, data))
            if len(seen) == 1:
                # The model has written one piece and waits: the page has it already.
                assert not stub.release.is_set() and (name, data) == (
                    "delta", {"delta": PIECES[0]})
                stub.release.set()
    assert [data["delta"] for name, data in seen if name == "delta"] == list(PIECES)
    assert seen[-1] == ("done", {"text": "".join(PIECES), "model": MODEL,
                                 "usage": {"total_tokens": 9}})
    sent = stub.requests[-1][1]
    assert sent["stream"] is True and sent["messages"][0]["content"] == "Summarize: ship"


def test_a_stream_cut_short_ends_with_an_error_event(
        server: str, api: Api, platform: LocalPlatform, released: TaskSite,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAIStub(cut=True) as stub:
        monkeypatch.setenv("BASEDB_AI_BASE_URL", stub.base_url)
        url = f"{server}/open-apis/base/v3{path(released, 'summarize', 'stream')}"
        with httpx.stream("POST", url, params={"env": "prod"},
                          json={"params": {"text": "ship"}}, timeout=GUARD_S,
                          headers={"Authorization": f"Bearer {platform.owner_token}"}
                          ) as response:
            seen = list(events(response.iter_lines()))
            log_id = response.headers["x-tt-logid"]
    assert seen[0] == ("delta", {"delta": PIECES[0]})
    name, error = seen[-1]
    assert name == "error" and len(seen) == 2
    assert error["code"] == Code.EXECUTION_FAILED and error["logId"] == log_id
    assert "Fix:" in error["msg"] and log_id in error["msg"]


def test_aggregate_answers_the_whole_text(api: Api, released: TaskSite,
                                          stub: OpenAIStub) -> None:
    data = api.ok("POST", path(released, "summarize", "invoke"),
                  json={"params": {"text": "ship"}}, params={"env": "prod"})
    assert data == {"text": "".join(PIECES), "model": MODEL, "usage": {"total_tokens": 9}}


def test_a_media_task_is_polled_to_its_result(api: Api, released: TaskSite,
                                              stub: OpenAIStub) -> None:
    started = api.ok("POST", path(released, "drawCover", "invoke"),
                     json={"params": {"title": "Launch"}}, params={"env": "prod"})
    assert set(started) == {"taskId", "status"} and started["status"] in ("pending", "running")
    task_path = f"/sites/{released.app_token}/ai-tasks/{started['taskId']}"
    deadline = time.monotonic() + GUARD_S
    task = api.ok("GET", task_path, params={"env": "prod"})
    while task["status"] in ("pending", "running"):
        assert time.monotonic() < deadline, task
        time.sleep(0.02)
        task = api.ok("GET", task_path, params={"env": "prod"})
    assert task["status"] == "succeeded" and task["errCode"] == 0
    assert task["result"] == {"media": [{"url": IMAGE_URL, "type": "image"}]}
    assert stub.requests[-1] == ("/v1/images/generations", {
        "model": MODEL, "prompt": "A flat illustration for the task Launch", "n": 1})
    # Only its starter sees it, in the env it was started in.
    other = api.call("GET", task_path, params={"env": "preview"}).json()
    assert other["code"] == Code.FUNCTION_NOT_FOUND and "Fix:" in other["msg"]


def wait_for_end(api: Api, site: TaskSite, task_id: str) -> dict[str, Any]:
    task_path = f"/sites/{site.app_token}/ai-tasks/{task_id}"
    deadline = time.monotonic() + GUARD_S
    task: dict[str, Any] = api.ok("GET", task_path, params={"env": "prod"})
    while task["status"] in ("pending", "running"):
        assert time.monotonic() < deadline, task
        time.sleep(0.02)
        task = api.ok("GET", task_path, params={"env": "prod"})
    return task


def test_a_site_runs_at_most_its_share_of_media_tasks(
        api: Api, released: TaskSite, monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAIStub(hold_images=True) as stub:
        monkeypatch.setenv("BASEDB_AI_BASE_URL", stub.base_url)
        started = [api.ok("POST", path(released, "drawCover", "invoke"),
                          json={"params": {"title": str(n)}}, params={"env": "prod"})
                   for n in range(SITE_RUNNING_MAX)]
        refused = api.call("POST", path(released, "drawCover", "invoke"),
                           json={"params": {"title": "one more"}}, params={"env": "prod"})
        assert refused.status_code == 429
        assert refused.json()["code"] == Code.RATE_LIMITED
        assert "retry later" in refused.json()["msg"]
        stub.release.set()
        for task in started:
            assert wait_for_end(api, released, task["taskId"])["status"] == "succeeded"
    # Once they ended, the site may start another.
    with OpenAIStub() as stub:
        monkeypatch.setenv("BASEDB_AI_BASE_URL", stub.base_url)
        again = api.ok("POST", path(released, "drawCover", "invoke"),
                       json={"params": {"title": "again"}}, params={"env": "prod"})
        assert wait_for_end(api, released, again["taskId"])["status"] == "succeeded"


def test_a_media_task_that_fails_carries_err_code(api: Api, released: TaskSite,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAIStub() as stub:  # answers 404 for images under another root
        monkeypatch.setenv("BASEDB_AI_BASE_URL", stub.base_url.replace("/v1", "/v0"))
        started = api.ok("POST", path(released, "drawCover", "invoke"),
                         json={"params": {"title": "x"}}, params={"env": "prod"})
        task = wait_for_end(api, released, started["taskId"])
    assert task["status"] == "failed" and task["errCode"] == Code.EXECUTION_FAILED
    assert "HTTP 404" in task["errMessage"] and task["result"] is None
    assert task["logId"] and task["logId"] in task["errMessage"]


def test_without_an_endpoint_each_kind_answers_800004011_with_a_fix(
        api: Api, released: TaskSite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BASEDB_AI_BASE_URL", raising=False)
    for function_id, action in (("summarize", "invoke"), ("summarize", "stream"),
                                ("drawCover", "invoke")):
        response = api.call("POST", path(released, function_id, action),
                            json={"params": {"text": "x", "title": "x"}},
                            params={"env": "prod"})
        body = response.json()
        assert response.headers["content-type"].startswith("application/json")
        assert body["code"] == Code.AI_FUNCTION_NOT_ENABLED, (function_id, action, body)
        assert "BASEDB_AI_BASE_URL" in body["msg"] and "Fix:" in body["msg"]


def test_only_text_ai_functions_stream(api: Api, released: TaskSite,
                                       stub: OpenAIStub) -> None:
    for function_id in ("listTasks", "drawCover"):
        body = api.call("POST", path(released, function_id, "stream"),
                        json={"params": {}}, params={"env": "prod"}).json()
        assert body["code"] in (Code.BAD_REQUEST, Code.PARAMETER_INVALID), body
        assert "Fix:" in body["msg"]
    assert not any(p == "/v1/chat/completions" for p, _ in stub.requests)
