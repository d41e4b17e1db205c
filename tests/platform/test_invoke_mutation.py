"""Invoking Mutations: set semantics, clear, batches, preconditions, missing records,
cell validation and atomicity."""

from __future__ import annotations

from typing import Any

import pytest

from basedb.platform import LocalPlatform
from basedb.platform.domain.runtimes.mutation import MAX_BATCH
from basedb.protocol import Code
from tests.platform.conftest import Api, field_id
from tests.platform.functions_support import TaskSite, add_member, released_site


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


def task(site: TaskSite, record_id: str) -> dict[str, Any]:
    return site.records(site.tasks_table)[record_id]


def test_create_writes_every_given_field(site: TaskSite) -> None:
    me = site.api.ok("GET", "/users/me")["user_id"]
    result = site.invoke("createTask", {
        "title": "Ship it", "status": "Open", "tags": ["ui", "api", "ui"], "points": 2.5,
        "projectId": site.projects["Portal"], "due": "2025-04-01T08:30:00"})
    [record_id] = result["recordIds"]
    assert result == {"recordIds": [record_id], "affected": 1, "record_not_found": [],
                      "ignored_fields": [], "precondition_failed": []}
    created = task(site, record_id)
    assert created["Title"] == "Ship it" and created["Status"] == "Open"
    assert created["Tags"] == ["ui", "api"] and created["Points"] == 2.5
    assert created["Project"] == [{"id": site.projects["Portal"]}]
    assert created["Due"] == "2025-04-01 08:30:00"
    assert created["Owner"] == [{"id": me}]  # "@current_user"


def test_missing_or_null_optional_params_skip_their_fields(site: TaskSite) -> None:
    result = site.invoke("createTask", {"title": "Bare", "status": "Open", "tags": None})
    assert result["ignored_fields"] == ["Tags", "Points", "Project", "Due"]
    created = task(site, result["recordIds"][0])
    assert created["Tags"] is None and created["Points"] is None


def test_update_keeps_what_it_is_not_given(site: TaskSite) -> None:
    record_id = site.tasks["Fix bug"]
    result = site.invoke("updateTask", {"taskId": record_id, "remark": "Needs a test"})
    assert result["recordIds"] == [record_id] and result["ignored_fields"] == ["Title"]
    assert task(site, record_id)["Title"] == "Fix bug"
    assert task(site, record_id)["Remark"] == "Needs a test"
    site.invoke("updateTask", {"taskId": record_id, "title": "Fix the bug", "remark": None})
    assert task(site, record_id)["Remark"] == "Needs a test"  # null skips, never clears
    assert task(site, record_id)["Title"] == "Fix the bug"


def test_clear_empties_a_field_only_when_its_flag_is_true(site: TaskSite) -> None:
    record_id = site.tasks["Fix bug"]
    site.invoke("updateTask", {"taskId": record_id, "remark": "keep"})
    site.invoke("updateTask", {"taskId": record_id, "clearRemark": False})
    assert task(site, record_id)["Remark"] == "keep"
    result = site.invoke("updateTask", {"taskId": record_id, "remark": "ignored",
                                        "clearRemark": True})
    assert task(site, record_id)["Remark"] is None
    assert result["ignored_fields"] == ["Title"]


def test_update_reports_records_that_do_not_exist(site: TaskSite) -> None:
    result = site.invoke("updateTask", {"taskId": "recMissing", "title": "x"})
    assert result == {"recordIds": [], "affected": 0, "record_not_found": ["recMissing"],
                      "ignored_fields": ["Remark"], "precondition_failed": []}


def test_a_batch_writes_only_records_that_meet_the_precondition(site: TaskSite) -> None:
    mine_doing, theirs_doing = site.tasks["Write API"], site.tasks["Fix bug"]
    mine_open = site.tasks["Draw pages"]
    ids = [mine_doing, theirs_doing, mine_open, "recGone", mine_doing]
    result = site.invoke("finishMyTasks", {"taskIds": ids})
    assert result == {"recordIds": [mine_doing], "affected": 1,
                      "record_not_found": ["recGone"], "ignored_fields": [],
                      "precondition_failed": [theirs_doing, mine_open]}
    records = site.records(site.tasks_table)
    assert records[mine_doing]["Status"] == "Done" and records[mine_doing]["Done"] is True
    assert records[theirs_doing]["Status"] == "Doing"
    assert records[mine_open]["Status"] == "Open"


def test_the_precondition_follows_the_caller(site: TaskSite) -> None:
    member, member_id = add_member(site, "Mo")
    site.invoke("assignTask", {"taskId": site.tasks["Fix bug"], "assignees": [member_id]})
    result = site.invoke("finishMyTasks", {"taskIds": [site.tasks["Write API"]]}, api=member)
    assert result["precondition_failed"] == [site.tasks["Write API"]]
    created = site.invoke("createTask", {"title": "Mine", "status": "Open"}, api=member)
    assert task(site, created["recordIds"][0])["Owner"] == [{"id": member_id}]


def test_delete_removes_existing_records_and_reports_the_rest(site: TaskSite) -> None:
    doomed = [site.tasks["Write docs"], site.tasks["Draw pages"]]
    result = site.invoke("deleteTasks", {"taskIds": [*doomed, "recNope"]})
    assert result == {"recordIds": doomed, "affected": 2, "record_not_found": ["recNope"],
                      "ignored_fields": [], "precondition_failed": []}
    assert set(site.records(site.tasks_table)) == {site.tasks["Write API"],
                                                   site.tasks["Fix bug"]}


def test_user_id_lists_are_written_as_users(site: TaskSite) -> None:
    _, member_id = add_member(site, "Mo")
    me = site.api.ok("GET", "/users/me")["user_id"]
    site.invoke("assignTask", {"taskId": site.tasks["Fix bug"],
                               "assignees": [me, member_id]})
    assert task(site, site.tasks["Fix bug"])["Assignees"] == [{"id": me}, {"id": member_id}]
    msg = site.invoke_fails("assignTask", {"taskId": site.tasks["Fix bug"],
                                           "assignees": [me, "ou_nobody"]},
                            code=Code.PARAMETER_INVALID)
    assert "Parameter: /params/assignees/1 (received \"ou_nobody\")" in msg


def test_a_bad_cell_names_the_param_and_writes_nothing(site: TaskSite,
                                                       platform: LocalPlatform) -> None:
    before = site.records(site.tasks_table)
    msg = site.invoke_fails("createTask", {"title": "x", "status": "Open",
                                           "projectId": "recNotAProject"},
                            code=Code.PARAMETER_INVALID)
    # Worded for the caller, who may not read the linked table through the Base API.
    assert msg == ('No record "recNotAProject" exists in the table that field "Project" links '
                   'to. Parameter: /params/projectId (received "recNotAProject"). Fix: pass '
                   "the id of an existing record, obtained the way the parameter's "
                   "description says (describe the function); a title, a name or an id of "
                   "another table does not work. Executed: no. Retry: retry after fixing.")
    msg = site.invoke_fails("updateTask", {"taskId": site.tasks["Fix bug"],
                                           "title": "t" * 100_001}, code=Code.PARAMETER_INVALID)
    assert "Parameter: /params/title" in msg
    assert site.records(site.tasks_table) == before


def test_batches_are_bounded(site: TaskSite) -> None:
    ids = [f"rec{i:05d}" for i in range(MAX_BATCH + 1)]
    msg = site.invoke_fails("deleteTasks", {"taskIds": ids}, code=Code.PARAMETER_INVALID)
    assert f"at most {MAX_BATCH}" in msg and "/params/taskIds" in msg
    assert len(site.records(site.tasks_table)) == 4
    # The limit is in the published inputSchema, so a caller learns it before calling.
    schema = site.describe("deleteTasks")["inputSchema"]["properties"]["taskIds"]
    assert schema["type"] == "array" and schema["maxItems"] == MAX_BATCH


def test_schema_validation_comes_first(site: TaskSite) -> None:
    msg = site.invoke_fails("createTask", {"title": "x", "status": "Open",
                                           "tags": ["ui", "nope"]}, code=Code.PARAMETER_INVALID)
    assert "/params/tags/1" in msg
    msg = site.invoke_fails("createTask", {"title": "x"}, code=Code.PARAMETER_INVALID)
    assert "Required parameter \"status\"" in msg
    msg = site.invoke_fails("deleteTasks", {"taskIds": ["", "recX"]}, code=Code.PARAMETER_INVALID)
    assert "must not be empty" in msg and "/params/taskIds/0" in msg
    assert len(site.records(site.tasks_table)) == 4


def test_a_mutation_whose_field_is_gone_is_refused(site: TaskSite) -> None:
    api, base = site.api, site.base_token
    table = api.ok("GET", f"/bases/{base}/tables/{site.tasks_table}")
    api.ok("DELETE", f"/bases/{base}/tables/{site.tasks_table}/fields/"
           f"{field_id(table, 'Remark')}")
    msg = site.invoke_fails("updateTask", {"taskId": site.tasks["Fix bug"], "title": "x"},
                            code=Code.SCHEMA_NOT_READY)
    assert "Remark" in msg
    assert task(site, site.tasks["Fix bug"])["Title"] == "Fix bug"
    assert site.invoke("createTask", {"title": "Still fine", "status": "Open"})["affected"] == 1


def test_a_schema_change_during_the_call_is_seen_by_the_write(
        site: TaskSite, platform: LocalPlatform, monkeypatch: pytest.MonkeyPatch) -> None:
    from basedb.platform.domain import bases, invoke

    checked = invoke.checked_input
    changed: list[bool] = []

    def check_then_drop_remark(plan: Any, params: dict[str, Any],
                               **kwargs: Any) -> dict[str, Any]:
        result = checked(plan, params, **kwargs)
        if not changed:  # the table changes after the call was resolved, before it writes
            changed.append(True)
            with platform.store.write() as conn:
                table = bases.require_table(conn, site.base_token, site.tasks_table)
                remark = table.field("Remark")
                assert remark is not None
                bases.delete_field(conn, table, remark)
        return result

    monkeypatch.setattr(invoke, "checked_input", check_then_drop_remark)
    site.invoke_fails("updateTask", {"taskId": site.tasks["Fix bug"], "title": "Renamed"},
                      code=Code.SCHEMA_NOT_READY)
    assert changed and task(site, site.tasks["Fix bug"])["Title"] == "Fix bug"


def test_params_null_is_refused_and_absent_params_are_none(site: TaskSite) -> None:
    # The document types params as an object; null was once read as "no parameters".
    msg = site.invoke_fails("listTasks", None, code=9499)
    assert "params must be a JSON object" in msg
    assert "rows" in site.invoke("myTasks")
