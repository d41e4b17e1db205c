"""Attacks on the platform log routes (GET /sites/APP/logs, GET /logs) and on site deletion
(DELETE /sites/APP): a curious member reading handler output or others' calls, an outsider
reading or deleting another site, a site author flooding the log, hostile query values.
The platform stays healthy and answers others meanwhile."""

from __future__ import annotations

import pytest

from basedb.platform.storage import platform_log
from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.functions_support import TaskSite, add_member, released_site


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


def outsider(site: TaskSite, name: str = "Otto") -> Api:
    created = site.api.ok("POST", "/users", json={"name": name})
    return site.api.as_user(created["token"])


def logs_path(site: TaskSite) -> str:
    return f"/sites/{site.app_token}/logs"


def test_an_outsider_cannot_read_a_sites_log(site: TaskSite) -> None:
    site.invoke("listTasks", {"status": "Open"})
    stranger = outsider(site)
    # The one answer for "no such site or not yours": nothing says the site exists.
    message = stranger.fail("GET", logs_path(site), code=Code.BAD_REQUEST, status=404)
    assert "was not found" in message
    stranger.fail("GET", "/logs", code=Code.PERMISSION_DENIED)
    # Nor by guessing a LogID through their own site.
    own = stranger.ok("POST", "/sites/create", json={"title": "Mine"})["appToken"]
    log_id = site.api.ok("GET", logs_path(site))["entries"][0]["logId"]
    assert stranger.ok("GET", f"/sites/{own}/logs", params={"logId": log_id})["entries"] == []


def test_a_member_never_reads_details_or_other_peoples_calls(site: TaskSite) -> None:
    member, member_id = add_member(site, "Mia")
    site.invoke("listTasks", {"status": "Open"})  # the owner's call
    site.api.fail("POST", site.url("/nope/invoke"), json={"params": {}},
                  params={"env": "prod"}, code=Code.FUNCTION_NOT_FOUND)
    member_view = member.ok("GET", logs_path(site), params={"kind": "detail"})
    assert member_view["entries"] == []
    site.invoke("listTasks", {"status": "Open"}, api=member)
    mine = member.ok("GET", logs_path(site))["entries"]
    assert {e["userId"] for e in mine} == {member_id}
    assert all(e["kind"] == "call" for e in mine)


def test_a_calls_entry_does_not_follow_the_caller_to_a_site_they_do_not_belong_to(
        site: TaskSite) -> None:
    stranger = outsider(site)
    stranger.fail("POST", site.url("/listTasks/invoke"), json={"params": {"status": "Open"}},
                  params={"env": "prod"}, code=Code.BAD_REQUEST, status=404)
    entries = site.api.ok("GET", logs_path(site))["entries"]
    assert entries == []  # a stranger's request cannot write into the site's log


def test_only_the_owner_deletes_a_site(site: TaskSite) -> None:
    admin, _ = add_member(site, "Ada", role="admin")
    member, _ = add_member(site, "Mia")
    stranger = outsider(site)
    for who in (admin, member):
        who.fail("DELETE", f"/sites/{site.app_token}", code=Code.PERMISSION_DENIED)
    stranger.fail("DELETE", f"/sites/{site.app_token}", code=Code.BAD_REQUEST, status=404)
    assert site.invoke("listTasks", {"status": "Open"})  # still serving
    deleted = site.api.ok("DELETE", f"/sites/{site.app_token}")
    assert deleted == {"appToken": site.app_token, "deleted": True,
                       "baseToken": site.base_token}
    site.api.fail("GET", f"/sites/{site.app_token}", code=Code.BAD_REQUEST, status=404)
    site.api.fail("POST", site.url("/listTasks/invoke"), json={"params": {"status": "Open"}},
                  params={"env": "prod"}, code=Code.BAD_REQUEST, status=404)
    # The Base and its records are kept.
    assert site.records(site.tasks_table)


def test_hostile_query_values_are_refused_with_the_parameter(site: TaskSite) -> None:
    for params, parameter in (({"after": "1 OR 1=1"}, "?after"),
                              ({"after": "9" * 40}, "?after"),
                              ({"limit": "100000"}, "limit"),
                              ({"wait": "3600"}, "wait"),
                              ({"kind": "call' --"}, "?kind")):
        message = site.api.fail("GET", logs_path(site), params=params, code=Code.BAD_REQUEST)
        assert parameter in message, (params, message)
    assert site.api.ok("GET", logs_path(site), params={"logId": "x' OR '1'='1"})[
        "entries"] == []


def test_a_flood_of_calls_keeps_the_log_bounded(site: TaskSite,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform_log, "ENTRIES_KEPT", 3)
    monkeypatch.setattr(platform_log, "_PRUNE_EVERY", 1)
    for _ in range(10):
        site.invoke("listTasks", {"status": "Open"})
    entries = site.api.ok("GET", logs_path(site))["entries"]
    assert len(entries) == 3
    assert entries == site.api.ok("GET", logs_path(site), params={"tail": 3})["entries"]
    assert site.invoke("listTasks", {"status": "Open"})  # healthy afterwards


def test_a_long_poll_does_not_block_other_requests(site: TaskSite) -> None:
    import threading

    done: list[object] = []
    newest = site.api.ok("GET", logs_path(site), params={"tail": 1})["cursor"]
    waiter = threading.Thread(target=lambda: done.append(site.api.ok(
        "GET", logs_path(site), params={"after": newest, "wait": 25})))
    waiter.start()
    assert site.invoke("listTasks", {"status": "Open"})  # answered while the poll waits
    waiter.join(timeout=30)
    assert done and done[0]["entries"]  # type: ignore[index]
