"""Unchanged drafts are not judged or planned again: a draft that passed `check` at a
catalog revision keeps its hints until its functions or the catalog change, and a
Database Function's indexes, once ensured at a revision, are not chosen again."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from basedb.platform import LocalPlatform
from basedb.platform.domain import deployments, draft_content, drafts
from tests.platform.conftest import Api, field_id
from tests.platform.release_support import (
    TaskSite,
    create_task,
    deploy,
    functions_body,
    list_tasks,
    task_site,
)


@pytest.fixture
def site(api: Api) -> TaskSite:
    return task_site(api)


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many functions each `check` run of the platform judged."""
    calls: list[int] = []
    real = drafts.validate

    def counting(functions: Any, catalog: Any) -> Any:
        calls.append(len(functions))
        return real(functions, catalog)

    monkeypatch.setattr(drafts, "validate", counting)
    return calls


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The functions whose queries were compiled to choose indexes."""
    calls: list[str] = []
    real = deployments._index_specs

    def counting(decl: Any, catalog: Any, timezone: str) -> Any:
        calls.append(decl.function_id)
        return real(decl, catalog, timezone)

    monkeypatch.setattr(deployments, "_index_specs", counting)
    return calls


def put(api: Api, site: TaskSite, body: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = api.ok("PUT", f"/sites/{site.app_token}/draft/functions",
                                   json=body)
    return found


def test_an_unchanged_redeploy_is_not_judged_or_planned_again(
        api: Api, site: TaskSite, judged: list[int], planned: list[str]) -> None:
    body = functions_body()
    first = put(api, site, body)
    made = deploy(api, site.app_token)
    assert judged == [3]  # the upload judged the draft; the deployment reused that
    assert planned == ["listTasks"]
    again = put(api, site, body)
    remade = deploy(api, site.app_token)
    assert judged == [3] and planned == ["listTasks"]
    assert again["functionHints"] == first["functionHints"]
    assert remade["functionHints"] == made["functionHints"]
    assert again["draftRevision"] > first["draftRevision"]  # still a write
    assert remade["deploymentId"] != made["deploymentId"]


def test_an_unchanged_redeploy_copies_the_stored_hints_without_encoding_them(
        api: Api, site: TaskSite, platform: LocalPlatform,
        monkeypatch: pytest.MonkeyPatch) -> None:
    body = functions_body()
    put(api, site, body)
    made = deploy(api, site.app_token)
    encoded: list[int] = []
    real = draft_content.hints_json

    def counting(hints: Any) -> str:
        encoded.append(len(hints))
        return real(hints)

    monkeypatch.setattr(draft_content, "hints_json", counting)
    put(api, site, body)
    remade = deploy(api, site.app_token)
    assert encoded == []
    assert remade["functionHints"] == made["functionHints"]
    with sqlite3.connect(platform.store.path) as conn:
        stored = dict(conn.execute("SELECT deployment_id, function_hints FROM deployments "
                                   "WHERE app_token = ?", (site.app_token,)).fetchall())
    assert stored[remade["deploymentId"]] == stored[made["deploymentId"]]
    assert json.loads(stored[remade["deploymentId"]]) == made["functionHints"]


def test_a_renewed_judgement_is_the_newest_one_kept(api: Api, site: TaskSite,
                                                     platform: LocalPlatform,
                                                     judged: list[int]) -> None:
    body = functions_body()
    put(api, site, body)
    others = [functions_body(mutations=[create_task(f"create{number}")])
              for number in range(draft_content.JUDGEMENTS_KEPT - 1)]
    for other in others:
        put(api, site, other)
    put(api, site, body)  # found, and renewed: now the newest of the site's judgements
    put(api, site, functions_body(mutations=[create_task("oneMore")]))  # drops the oldest
    judged.clear()
    put(api, site, body)
    assert judged == []  # still kept: not judged again
    put(api, site, others[0])
    assert judged == [3]  # the oldest was dropped


def test_drafts_changed_while_a_deployment_is_judged_are_what_it_deploys(
        api: Api, site: TaskSite, platform: LocalPlatform,
        monkeypatch: pytest.MonkeyPatch) -> None:
    put(api, site, functions_body())
    real = deployments._judge
    judged_states: list[int] = []

    def judge_then_change(state: Any) -> Any:
        hints = real(state)
        judged_states.append(state.revisions[0])
        if len(judged_states) == 1:  # between the deployment's read and its write
            with platform.store.write() as conn:
                drafts.save_exclude(conn, site.app_token, ["listTasks"])
        return hints

    monkeypatch.setattr(deployments, "_judge", judge_then_change)
    changed = deploy(api, site.app_token)
    unchanged = deploy(api, site.app_token)
    with sqlite3.connect(platform.store.path) as conn:
        excludes = dict(conn.execute("SELECT deployment_id, exclude FROM deployments "
                                     "WHERE app_token = ?", (site.app_token,)).fetchall())
    assert json.loads(excludes[changed["deploymentId"]]) == ["listTasks"]
    assert json.loads(excludes[unchanged["deploymentId"]]) == ["listTasks"]
    # Judged again in the write for the first deployment; once for the second.
    assert len(judged_states) == 3 and judged_states[1] == judged_states[0] + 1


def test_a_changed_function_is_judged_and_only_it_is_planned(
        api: Api, site: TaskSite, judged: list[int], planned: list[str]) -> None:
    put(api, site, functions_body(database_functions=[list_tasks(["Open"])]))
    deploy(api, site.app_token)
    both = [list_tasks(["Open"]), list_tasks(["Open"], function_id="openTasks")]
    put(api, site, functions_body(database_functions=both))
    deploy(api, site.app_token)
    assert len(judged) == 2
    assert planned == ["listTasks", "openTasks"]


def test_a_catalog_change_judges_and_plans_again(
        api: Api, site: TaskSite, judged: list[int], planned: list[str]) -> None:
    body = functions_body(database_functions=[list_tasks(["Open"])], mutations=[])
    put(api, site, body)
    deploy(api, site.app_token)
    table = api.ok("GET", f"/bases/{site.base_token}/tables/{site.table_id}")
    title = field_id(table, "Title")
    api.ok("PUT", f"/bases/{site.base_token}/tables/{site.table_id}/fields/{title}",
           json={"name": "Title", "type": "text", "description": "renamed nothing"})
    put(api, site, body)
    deploy(api, site.app_token)
    assert len(judged) == 2 and planned == ["listTasks", "listTasks"]


def test_a_judgement_is_not_reused_for_a_broken_catalog(
        api: Api, site: TaskSite, judged: list[int]) -> None:
    body = functions_body(database_functions=[list_tasks(["Open"])], mutations=[])
    put(api, site, body)
    table = api.ok("GET", f"/bases/{site.base_token}/tables/{site.table_id}")
    title = field_id(table, "Title")
    api.ok("PUT", f"/bases/{site.base_token}/tables/{site.table_id}/fields/{title}",
           json={"name": "Name", "type": "text"})
    response = api.call("PUT", f"/sites/{site.app_token}/draft/functions", json=body)
    assert response.status_code == 400
    assert "SQL_UNKNOWN_FIELD" in {e["code"] for e in response.json()["data"]["errors"]}


def test_a_site_keeps_few_judgements(api: Api, site: TaskSite,
                                     platform: LocalPlatform) -> None:
    for number in range(draft_content.JUDGEMENTS_KEPT + 3):
        put(api, site, functions_body(mutations=[create_task(f"create{number}")]))
    with sqlite3.connect(platform.store.path) as conn:
        count = conn.execute("SELECT COUNT(*) FROM draft_judgements WHERE app_token = ?",
                             (site.app_token,)).fetchone()[0]
    assert count == draft_content.JUDGEMENTS_KEPT


def test_content_hashes_tell_functions_apart() -> None:
    one = drafts.DraftFunction("database_function", "a", {"name": "a"}, "SELECT 1")
    assert one.content_hash == drafts.DraftFunction(
        "database_function", "a", {"name": "a"}, "SELECT 1", position=3).content_hash
    for other in (drafts.DraftFunction("database_function", "b", {"name": "a"}, "SELECT 1"),
                  drafts.DraftFunction("database_function", "a", {"name": "b"}, "SELECT 1"),
                  drafts.DraftFunction("database_function", "a", {"name": "a"}, "SELECT 2"),
                  drafts.DraftFunction("faas", "a", {"name": "a"}, None, "SELECT 1")):
        assert other.content_hash != one.content_hash
