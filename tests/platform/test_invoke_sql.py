"""Invoking Database Functions: results, parameter binding and normalisation, validation
messages, the caller's identity, limits and failures."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import pytest

from basedb.platform import LocalPlatform
from basedb.platform.domain.runtimes import sql as sql_runtime
from basedb.platform.storage import physical
from basedb.protocol import Code
from tests.platform.conftest import Api, assert_error_shape, field_id
from tests.platform.functions_support import TaskSite, add_member, released_site


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


def titles(result: dict[str, Any]) -> list[str]:
    return [row["Title"] for row in result["rows"]]


def test_rows_come_back_decoded_by_field(site: TaskSite) -> None:
    me = site.api.ok("GET", "/users/me")["user_id"]
    result = site.invoke("listTasks", {"status": "Doing"})
    assert result["rowCount"] == 2 and result["truncated"] is False
    assert result["columns"] == [
        {"name": "task_id", "type": "record_id"}, {"name": "Title", "type": "text"},
        {"name": "Status", "type": "select"}, {"name": "Tags", "type": "select"},
        {"name": "Points", "type": "number"}, {"name": "Due", "type": "datetime"},
        {"name": "Assignees", "type": "user"}, {"name": "Project", "type": "link"}]
    fix_bug, write_api = result["rows"]
    assert write_api == {"task_id": site.tasks["Write API"], "Title": "Write API",
                         "Status": "Doing", "Tags": ["api"], "Points": 3,
                         "Due": "2025-03-01 10:00:00", "Assignees": [me],
                         "Project": [site.projects["Platform"]]}
    assert fix_bug["Assignees"] is None and fix_bug["Tags"] == ["urgent"]


def test_computed_columns_keep_their_sqlite_values(site: TaskSite) -> None:
    result = site.invoke("taskCount", {}, includeInternal="true")
    assert result == {"rows": [{"n": 4}], "columns": [{"name": "n"}], "rowCount": 1,
                      "truncated": False}


def test_an_optional_param_missing_or_null_binds_null(site: TaskSite) -> None:
    everything = ["Draw pages", "Fix bug", "Write API", "Write docs"]
    assert titles(site.invoke("statusOrAll", {})) == everything
    assert titles(site.invoke("statusOrAll", {"status": None})) == everything
    assert titles(site.invoke("statusOrAll", {"status": "Done"})) == ["Write docs"]
    assert titles(site.invoke("statusOrAll")) == everything  # no params at all


def test_array_params_match_any_element(site: TaskSite) -> None:
    assert titles(site.invoke("tasksWithTags", {"tags": ["urgent"], "limit": 10})) == [
        "Draw pages", "Fix bug"]
    assert titles(site.invoke("tasksWithTags", {"tags": ["api", "ui"], "limit": 1})) == [
        "Draw pages"]
    assert site.invoke("tasksWithTags", {"tags": [], "limit": 10})["rows"] == []
    msg = site.invoke_fails("tasksWithTags", {"tags": ["api", "urgnt"], "limit": 5},
                            code=Code.PARAMETER_INVALID)
    assert "Parameter: /params/tags/1 (received \"urgnt\")" in msg
    assert "Candidates: urgent" in msg and msg.endswith("Executed: no. Retry: retry after "
                                                        "fixing.")


def test_link_and_user_fields_compare_as_ids(site: TaskSite) -> None:
    project = site.projects["Platform"]
    assert titles(site.invoke("tasksOfProject", {"projectId": project})) == ["Fix bug",
                                                                            "Write API"]
    me = site.api.ok("GET", "/users/me")["user_id"]
    mine = site.invoke("myTasks")
    assert titles(mine) == ["Draw pages", "Write API"]
    assert {row["Owner"] for row in mine["rows"]} == {me}
    member, _ = add_member(site, "Mo")
    assert site.invoke("myTasks", api=member)["rows"] == []  # CURRENT_USER_ID() is the caller


def test_dates_and_times_are_normalised(site: TaskSite) -> None:
    def due_before(value: str) -> list[str]:
        return titles(site.invoke("tasksDueBefore", {"before": value}))

    assert due_before("2025-03-01 10:00:00") == ["Fix bug"]
    assert due_before("2025-03-01T10:00:01") == ["Fix bug", "Write API"]
    assert due_before("2025-03-01") == ["Fix bug"]
    assert due_before("2025-03-01T10:00:00.500") == ["Fix bug"]
    # An explicit offset is converted to the platform's local time, as cells are stored.
    moment = datetime(2025, 3, 5, 9, 0, 1).astimezone()
    utc = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert due_before(utc) == ["Fix bug", "Write API", "Draw pages"]
    assert titles(site.invoke("tasksDueOn", {"day": "2025-03-05"})) == ["Draw pages"]
    msg = site.invoke_fails("tasksDueOn", {"day": "2025-02-30"}, code=Code.PARAMETER_INVALID)
    assert "not a real calendar date" in msg and "/params/day" in msg
    msg = site.invoke_fails("tasksDueBefore", {"before": "next week"}, code=Code.PARAMETER_INVALID)
    assert "must be a date and time" in msg
    site.invoke_fails("tasksDueBefore", {"before": "2025-13-01T00:00"}, code=Code.PARAMETER_INVALID)


def test_numbers_and_booleans_bind_as_values(site: TaskSite) -> None:
    assert titles(site.invoke("heavyPoints", {"above": 4, "done": False})) == ["Draw pages",
                                                                              "Fix bug"]
    assert titles(site.invoke("heavyPoints", {"above": 4.5, "done": True})) == []
    # A value of the wrong JSON type is a malformed request (9499), as upstream's
    # troubleshooting says; the message still names the parameter and the fix.
    msg = site.invoke_fails("heavyPoints", {"above": "4", "done": False},
                            code=Code.BAD_REQUEST)
    assert 'Parameter "above" must be a number' in msg and "not a string" in msg
    msg = site.invoke_fails("heavyPoints", {"above": 4, "done": "false"},
                            code=Code.BAD_REQUEST)
    assert "true or false" in msg
    msg = site.invoke_fails("tasksWithTags", {"tags": ["ui"], "limit": 2**70},
                            code=Code.PARAMETER_INVALID)
    assert "64-bit integer" in msg
    site.invoke_fails("tasksWithTags", {"tags": ["ui"], "limit": 1.5}, code=Code.BAD_REQUEST)
    msg = site.invoke_fails("tasksWithTags", {"tags": ["ui"], "limit": "3"},
                            code=Code.BAD_REQUEST)
    assert msg.startswith('Parameter "limit" must be a whole number. Parameter: /params/limit '
                          '(received "3"). Fix: send a JSON integer such as 3')
    assert "Executed: no." in msg
    assert titles(site.invoke("tasksWithTags", {"tags": ["ui"], "limit": 1.0})) == [
        "Draw pages"]


def test_validation_messages_name_the_parameter(site: TaskSite) -> None:
    msg = site.invoke_fails("listTasks", {}, code=Code.PARAMETER_INVALID)
    assert msg == ('Required parameter "status" is missing. Parameter: /params/status. Fix: '
                   "send status: Status of the tasks to list. Executed: no. Retry: retry "
                   "after fixing.")
    msg = site.invoke_fails("listTasks", {"status": "Doen"}, code=Code.PARAMETER_INVALID)
    assert "(received \"Doen\")" in msg and "Candidates: Done, Doing" in msg
    msg = site.invoke_fails("listTasks", {"status": "Open", "stauts": 1},
                            code=Code.PARAMETER_INVALID)
    assert "Unknown parameter \"stauts\"" in msg and "Candidates: status" in msg
    msg = site.invoke_fails("listTasks", {"status": None}, code=Code.BAD_REQUEST)
    assert "Parameter: /params/status (received null)" in msg
    long_value = "x" * 500
    msg = site.invoke_fails("listTasks", {"status": long_value}, code=Code.PARAMETER_INVALID)
    assert long_value not in msg and len(msg) <= 500


def test_the_body_must_carry_a_params_object(site: TaskSite) -> None:
    url = site.url("/listTasks/invoke")
    for body in ([1, 2], {"params": ["Open"]}, {"params": "Open"}, {"status": "Open"}):
        response = site.api.call("POST", url, json=body)
        assert_error_shape(response)
        assert response.json()["code"] == Code.BAD_REQUEST, body
    response = site.api.call("POST", url, content=b"{nope")
    assert response.json()["code"] == Code.BAD_REQUEST


def test_the_row_cap_truncates(site: TaskSite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sql_runtime, "ROW_CAP", 3)
    result = site.invoke("statusOrAll", {})
    assert result["rowCount"] == 3 and result["truncated"] is True
    assert titles(result) == ["Draw pages", "Fix bug", "Write API"]
    assert site.invoke("listTasks", {"status": "Doing"})["truncated"] is False


def test_a_query_that_never_ends_hits_the_time_limit(site: TaskSite,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sql_runtime, "TIME_LIMIT_S", 0.3)
    msg = site.invoke_fails("countForever", {}, code=Code.EXECUTION_FAILED)
    assert "longer than 0.3 s" in msg  # and it ends with the LogID (checked by fail())
    # The connection is usable again afterwards.
    assert site.invoke("listTasks", {"status": "Done"})["rowCount"] == 1


def test_a_runtime_error_answers_a_safe_message(site: TaskSite, platform: LocalPlatform,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    table = site.api.ok("GET", f"/bases/{site.base_token}/tables/{site.tasks_table}")
    column = physical.column_name(field_id(table, "Tags"))
    with platform.store.write() as conn:  # a cell no write path would produce
        conn.execute(f"UPDATE {physical.table_name(site.tasks_table)} SET {column} = 'oops'")
    response = site.api.call("POST", site.url("/tasksWithTags/invoke"),
                             json={"params": {"tags": ["ui"], "limit": 3}})
    assert_error_shape(response)
    body = response.json()
    assert body["code"] == Code.EXECUTION_FAILED
    assert body["msg"].endswith(f"LogID: {body['error']['log_id']}")
    assert "json" not in body["msg"].lower() and "t_tbl" not in body["msg"]
    assert body["error"]["log_id"] in capsys.readouterr().err


def test_an_unavailable_function_is_refused_before_running(site: TaskSite) -> None:
    api, base = site.api, site.base_token
    table = api.ok("GET", f"/bases/{base}/tables/{site.tasks_table}")
    api.ok("DELETE", f"/bases/{base}/tables/{site.tasks_table}/fields/"
           f"{field_id(table, 'Points')}")
    msg = site.invoke_fails("heavyPoints", {"above": 1, "done": False}, code=Code.SCHEMA_NOT_READY)
    assert "unavailable" in msg and "Points" in msg and "Retry: retry after publishing." in msg
    assert site.invoke("listProjects")["rowCount"] == 2


def test_preview_runs_the_latest_deployment(site: TaskSite) -> None:
    assert site.invoke("listTasks", {"status": "Open"}, env="preview")["rowCount"] == 1
    member, _ = add_member(site, "Mo")
    member.fail("POST", site.url("/listTasks/invoke"), code=99991672,
                json={"params": {"status": "Open"}}, params={"env": "preview"})


def test_concurrent_invokes_are_consistent(site: TaskSite) -> None:
    failures: list[Any] = []

    def work() -> None:
        try:
            for _ in range(20):
                assert titles(site.invoke("listTasks", {"status": "Doing"})) == ["Fix bug",
                                                                                 "Write API"]
        except BaseException as exc:  # collected for the main thread
            failures.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
