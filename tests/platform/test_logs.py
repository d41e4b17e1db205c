"""The platform log through the API: every function call leaves a `call` entry, failures
leave `detail` entries under their LogID, and readers see what their role allows."""

from __future__ import annotations

from typing import Any

import pytest

from basedb.core.node import node_version
from basedb.platform.storage import platform_log
from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.functions_support import TaskSite, add_member, released_site

needs_node = pytest.mark.skipif(
    int((node_version() or "0").split(".")[0]) < 20, reason="Node.js 20+ is not installed")

CRASH = {"functionId": "crash", "handler": """
export default async function (input) {
  console.log("secret-ish handler output");
  throw new Error("handler internals");
}
""", "declaration": {"name": "crash", "description": "Always fails", "timeoutMs": 5000,
                     "inputSchema": {"type": "object", "properties": {}}}}


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


def logs(site: TaskSite, *, api: Api | None = None, **query: Any) -> dict[str, Any]:
    found: dict[str, Any] = (api or site.api).ok("GET", f"/sites/{site.app_token}/logs",
                                                 params=query)
    return found


def test_a_call_leaves_one_call_entry_with_what_the_caller_was_told(site: TaskSite) -> None:
    site.invoke("listTasks", {"status": "Open"})
    site.invoke_fails("listTasks", {"status": "Nope"}, code=Code.PARAMETER_INVALID)
    entries = logs(site, kind="call")["entries"]
    assert [(e["functionId"], e["env"], e["level"], e["code"]) for e in entries] == [
        ("listTasks", "prod", "info", 0), ("listTasks", "prod", "error", Code.PARAMETER_INVALID)]
    assert "status" in entries[1]["message"] and entries[1]["ms"] >= 0
    assert entries[0]["logId"] != entries[1]["logId"]


def test_log_id_after_and_tail_select_entries(site: TaskSite) -> None:
    for _ in range(3):
        site.invoke("listTasks", {"status": "Open"})
    everything = logs(site)["entries"]
    assert len(everything) == 3
    first = everything[0]
    assert logs(site, logId=first["logId"])["entries"] == [first]
    after = logs(site, after=first["cursor"])
    assert after["entries"] == everything[1:] and after["cursor"] == everything[-1]["cursor"]
    assert logs(site, tail=1)["entries"] == everything[-1:]
    page = logs(site, limit=2)
    assert page["hasMore"] is True and page["entries"] == everything[:2]
    assert logs(site, after=everything[-1]["cursor"]) == {
        "entries": [], "hasMore": False, "cursor": everything[-1]["cursor"]}


def test_wait_returns_at_once_when_an_entry_is_there(site: TaskSite) -> None:
    site.invoke("listTasks", {"status": "Open"})
    assert len(logs(site, wait=25)["entries"]) == 1  # would hang 25 s if it waited


def test_bad_queries_name_the_parameter(site: TaskSite) -> None:
    message = site.api.fail("GET", f"/sites/{site.app_token}/logs", params={"after": "x"},
                            code=Code.BAD_REQUEST)
    assert "?after" in message
    message = site.api.fail("GET", f"/sites/{site.app_token}/logs", params={"kind": "all"},
                            code=Code.BAD_REQUEST)
    assert "?kind" in message and "call" in message
    # Values outside the document's schema, an empty one included, are refused.
    for name, value in (("env", "0"), ("env", ""), ("kind", ""), ("tail", ""),
                        ("after", "")):
        message = site.api.fail("GET", f"/sites/{site.app_token}/logs",
                                params={name: value}, code=Code.BAD_REQUEST)
        assert f"?{name}" in message


@needs_node
def test_a_faas_failure_is_found_by_its_log_id_and_named_in_the_error(api: Api) -> None:
    site = released_site(api, faas=[CRASH])
    response = api.call("POST", site.url("/crash/invoke"), json={"params": {}})
    body = response.json()
    log_id = body["error"]["log_id"]
    assert body["code"] == Code.EXECUTION_FAILED and f"basedb logs {log_id}" in body["msg"]
    entries = logs(site, logId=log_id)["entries"]
    assert [e["kind"] for e in entries if e["kind"] == "call"] == ["call"]
    details = "\n".join(e["message"] for e in entries if e["kind"] == "detail")
    assert "secret-ish handler output" in details and "handler internals" in details


def test_a_member_reads_only_their_own_calls_never_details(site: TaskSite) -> None:
    member, member_id = add_member(site, "Mia")
    site.invoke("listTasks", {"status": "Open"})
    site.invoke("listTasks", {"status": "Open"}, api=member)
    theirs = logs(site, api=member)["entries"]
    assert [e["userId"] for e in theirs] == [member_id]
    assert len(logs(site)["entries"]) == 2  # the owner reads both


def test_the_platform_wide_log_is_the_platform_owners(site: TaskSite) -> None:
    member, _ = add_member(site, "Mia", role="admin")
    site.invoke("listTasks", {"status": "Open"})
    assert site.api.ok("GET", "/logs")["entries"]
    message = member.fail("GET", "/logs", code=Code.PERMISSION_DENIED)
    assert "platform owner" in message


def test_a_huge_entry_is_cut_and_each_request_keeps_a_bounded_number() -> None:
    scope = platform_log.LogScope("log1")
    scope.add(platform_log.Entry("detail", "error", "x" * (platform_log.MAX_ENTRY_CHARS * 3)))
    assert len(scope.entries[0].message) < platform_log.MAX_ENTRY_CHARS + 100
    for _ in range(platform_log.ENTRIES_PER_REQUEST * 2):
        scope.add(platform_log.Entry("detail", "info", "x"))
    assert len(scope.entries) == platform_log.ENTRIES_PER_REQUEST
    assert scope.dropped == platform_log.ENTRIES_PER_REQUEST + 1
