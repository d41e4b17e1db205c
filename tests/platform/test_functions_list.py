"""GET /sites/{app}/functions: what each caller sees, in which order, page by page,
and how schemaStatus follows the live catalog."""

from __future__ import annotations

from typing import Any

import pytest

from basedb.platform import LocalPlatform
from basedb.platform.domain.revision import catalog_revision
from basedb.protocol import Code
from tests.platform.conftest import Api, field_id
from tests.platform.functions_support import (
    AI_FUNCTIONS,
    DATABASE_FUNCTIONS,
    FAAS,
    MUTATIONS,
    TaskSite,
    add_member,
    build_site,
    deploy,
    released_site,
    save_drafts,
    sql_function,
)

ALL_IDS = sorted([f["functionId"] for f in (*DATABASE_FUNCTIONS, *MUTATIONS, *FAAS)]
                 + [f["key"] for f in AI_FUNCTIONS])
OPEN_IDS = [f for f in ALL_IDS if f != "taskCount"]


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


def listing(site: TaskSite, api: Api | None = None, **query: Any) -> dict[str, Any]:
    data: dict[str, Any] = (api or site.api).ok("GET", site.url(),
                                                params={"env": "prod", **query})
    return data


def test_lists_open_functions_in_stable_order_with_types_and_statuses(site: TaskSite) -> None:
    data = listing(site, pageSize=200)
    items = {f["functionId"]: f for f in data["functions"]}
    assert [f["functionId"] for f in data["functions"]] == OPEN_IDS
    assert data["hasMore"] is False and data["pageToken"] is None
    assert data["env"] == "prod" and data["deploymentId"] == site.deployment_id
    assert items["listTasks"] == {
        "functionId": "listTasks", "name": "listTasks",
        "description": "Tasks of one status, by title. Use listProjects for projects.",
        "functionType": "database_function", "schemaStatus": "ready", "statusHint": None,
        "table": "Tasks"}
    assert {f["functionType"] for f in data["functions"]} == {
        "database_function", "mutation", "faas", "ai_function"}
    assert items["createTask"]["functionType"] == "mutation"
    assert items["summarizeTasks"]["functionType"] == "ai_function"
    legacy = items["legacyHook"]
    assert legacy["schemaStatus"] == "missing"
    assert "declares no inputSchema" in legacy["statusHint"]
    assert all(f["schemaStatus"] == "ready" for k, f in items.items() if k != "legacyHook")
    assert listing(site) == listing(site)  # same answer every time


def test_env_defaults_to_prod(site: TaskSite) -> None:
    assert site.api.ok("GET", site.url())["env"] == "prod"


def test_excluded_functions_need_include_internal_and_a_manager(site: TaskSite) -> None:
    assert "taskCount" not in [f["functionId"] for f in listing(site)["functions"]]
    shown = listing(site, includeInternal="true", pageSize=200)["functions"]
    assert [f["functionId"] for f in shown] == ALL_IDS
    internal = [f for f in shown if f.get("internal")]
    assert [f["functionId"] for f in internal] == ["taskCount"]
    admin, _ = add_member(site, "Ada", "admin")
    assert "taskCount" in [f["functionId"] for f in listing(
        site, admin, includeInternal="true", pageSize=200)["functions"]]
    member, _ = add_member(site, "Mo")
    seen = listing(site, member, includeInternal="true", pageSize=200)["functions"]
    assert [f["functionId"] for f in seen] == OPEN_IDS  # members just do not see them


def test_pages_follow_the_token_until_has_more_is_false(site: TaskSite) -> None:
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        query: dict[str, Any] = {"pageSize": 4}
        if token:
            query["pageToken"] = token
        page = listing(site, **query)
        pages += 1
        assert len(page["functions"]) <= 4
        seen += [f["functionId"] for f in page["functions"]]
        if not page["hasMore"]:
            assert page["pageToken"] is None
            break
        token = page["pageToken"]
        assert isinstance(token, str) and token
    assert seen == OPEN_IDS
    assert pages == -(-len(OPEN_IDS) // 4)


def test_a_bad_page_token_or_size_is_refused(site: TaskSite) -> None:
    msg = site.api.fail("GET", site.url(), code=Code.BAD_REQUEST, params={"pageToken": "garbage!"})
    assert "Parameter: ?pageToken" in msg
    prod_token = listing(site, pageSize=2)["pageToken"]
    site.api.fail("GET", site.url(), code=Code.BAD_REQUEST,
                  params={"env": "preview", "pageToken": prod_token})
    site.api.fail("GET", site.url(), code=Code.BAD_REQUEST, params={"pageSize": 0})
    site.api.fail("GET", site.url(), code=Code.BAD_REQUEST, params={"pageSize": 201})


def test_bad_env_and_flag_values_are_refused(site: TaskSite) -> None:
    msg = site.api.fail("GET", site.url(), code=Code.BAD_REQUEST, params={"env": "staging"})
    assert "Parameter: ?env" in msg and "Candidates: prod, preview" in msg
    for value in ("yes", "", "1", "TRUE"):  # "" once meant false, "1" and "TRUE" true
        site.api.fail("GET", site.url(), code=Code.BAD_REQUEST, params={"includeInternal": value})


def test_preview_is_for_owners_and_admins(site: TaskSite) -> None:
    assert listing(site, env="preview")["deploymentId"] == site.deployment_id
    admin, _ = add_member(site, "Ada", "admin")
    assert listing(site, admin, env="preview")["functions"]
    member, _ = add_member(site, "Mo")
    msg = member.fail("GET", site.url(), code=Code.PERMISSION_DENIED, status=403,
                      params={"env": "preview"})
    assert "env=prod" in msg
    assert listing(site, member)["functions"]  # prod is open to members


def test_strangers_are_refused(site: TaskSite, api: Api) -> None:
    created = api.ok("POST", "/users", json={"name": "Stranger"})
    stranger = api.as_user(created["token"])
    hidden = stranger.fail("GET", site.url(), code=Code.BAD_REQUEST, status=404)
    nope = stranger.fail("GET", "/sites/PrjNope/functions", code=Code.BAD_REQUEST, status=404)
    assert hidden.replace(site.app_token, "PrjNope") == nope


def test_a_site_without_a_prod_deployment_says_how_to_publish(api: Api) -> None:
    site = build_site(api)
    msg = api.fail("GET", site.url(), code=Code.SCHEMA_NOT_READY, status=409)
    assert "no prod deployment" in msg and "basedb deploy" in msg
    assert "Retry: retry after publishing." in msg
    api.fail("GET", site.url(), code=Code.SCHEMA_NOT_READY, params={"env": "preview"})
    member, _ = add_member(site, "Mo")  # cannot publish: told whom to ask instead
    told = member.fail("GET", site.url(), code=Code.SCHEMA_NOT_READY, status=409)
    assert told == (f"Site {site.app_token} has no prod deployment yet. Fix: ask the site's "
                    "owner or an admin to publish it to production. Executed: no. Retry: "
                    "retry after publishing.")
    save_drafts(site)
    deploy(site, promote=False)
    api.fail("GET", site.url(), code=Code.SCHEMA_NOT_READY)
    assert listing(site, env="preview")["deploymentId"] == site.deployment_id


def test_prod_keeps_its_snapshot_until_a_new_promotion(site: TaskSite) -> None:
    first = site.deployment_id
    extra = sql_function("listDone", 'SELECT "Title" FROM "Tasks" WHERE "Status" = \'Done\'')
    save_drafts(site, database_functions=[*DATABASE_FUNCTIONS, extra])
    second = deploy(site, promote=False)
    assert "listDone" not in [f["functionId"] for f in listing(site, pageSize=200)["functions"]]
    assert listing(site)["deploymentId"] == first
    preview = listing(site, env="preview", pageSize=200)
    assert preview["deploymentId"] == second
    assert "listDone" in [f["functionId"] for f in preview["functions"]]
    site.api.ok("POST", f"/sites/{site.app_token}/deployments/{second}/promote")
    assert "listDone" in [f["functionId"] for f in listing(site, pageSize=200)["functions"]]


def statuses(site: TaskSite) -> dict[str, tuple[str, str | None]]:
    return {f["functionId"]: (f["schemaStatus"], f["statusHint"])
            for f in listing(site, pageSize=200, includeInternal="true")["functions"]}


def test_a_removed_field_makes_dependent_functions_unavailable(site: TaskSite) -> None:
    api, base = site.api, site.base_token
    table = api.ok("GET", f"/bases/{base}/tables/{site.tasks_table}")
    remark = field_id(table, "Remark")
    api.ok("DELETE", f"/bases/{base}/tables/{site.tasks_table}/fields/{remark}")
    found = statuses(site)
    status, hint = found["updateTask"]
    assert status == "unavailable"
    assert hint is not None and "Remark" in hint and "redeploy" in hint
    assert found["listTasks"] == ("ready", None)
    assert {k for k, (s, _) in found.items() if s == "unavailable"} == {"updateTask"}


def test_a_removed_option_makes_functions_that_rely_on_it_unavailable(site: TaskSite) -> None:
    api, base = site.api, site.base_token
    table = api.ok("GET", f"/bases/{base}/tables/{site.tasks_table}")
    status_field = field_id(table, "Status")
    path = f"/bases/{base}/tables/{site.tasks_table}/fields/{status_field}"
    api.ok("PUT", path, json={"options": [{"name": "Open"}, {"name": "Done"}]})
    found = statuses(site)
    # listTasks declares "Doing" in its enum; finishMyTasks requires Status = "Doing".
    assert found["listTasks"][0] == "unavailable" and "Doing" in str(found["listTasks"][1])
    assert found["finishMyTasks"][0] == "unavailable"
    assert found["tasksByStatusText"] == ("ready", None)  # no enum: nothing to disagree
    # Putting the option back makes them callable again, with no redeploy.
    api.ok("PUT", path, json={"options": [{"name": s} for s in ("Open", "Doing", "Done")]})
    assert statuses(site)["listTasks"] == ("ready", None)


def test_unbinding_a_table_makes_its_functions_unavailable(site: TaskSite) -> None:
    site.api.ok("POST", f"/sites/{site.app_token}/unbind_base",
                json={"tableIds": [site.projects_table]})
    found = statuses(site)
    assert found["listProjects"][0] == "unavailable"
    assert found["listTasks"][0] == "ready"


def test_the_catalog_revision_moves_with_schema_changes_only(site: TaskSite,
                                                             platform: LocalPlatform) -> None:
    def revision() -> int:
        with platform.store.read() as conn:
            return catalog_revision(conn)

    api, base, tasks = site.api, site.base_token, site.tasks_table
    start = revision()
    api.ok("POST", f"/bases/{base}/tables/{tasks}/records", json={"Title": "More"})
    site.invoke("createTask", {"title": "Again", "status": "Open"})
    assert revision() == start  # record writes (auto numbers included) do not count
    created = api.ok("POST", f"/bases/{base}/tables/{tasks}/fields",
                     json={"name": "Size", "type": "number"})
    after_add = revision()
    assert after_add > start
    api.ok("PUT", f"/bases/{base}/tables/{tasks}/fields/{created['id']}",
           json={"name": "Effort"})
    after_rename = revision()
    assert after_rename > after_add
    api.ok("PATCH", f"/bases/{base}/tables/{tasks}", json={"name": "Work items"})
    assert revision() > after_rename
    before_unbind = revision()
    api.ok("POST", f"/sites/{site.app_token}/unbind_base",
           json={"tableIds": [site.projects_table]})
    assert revision() > before_unbind


def test_an_excluded_function_is_explained_to_managers_only(site: TaskSite) -> None:
    """Owners and admins debugging learn the function is excluded and how to reach it;
    members are told no more than about a function that does not exist."""
    for api in (site.api, add_member(site, "Ada", "admin")[0]):
        for path, method in ((site.url("/taskCount"), "GET"),
                             (site.url("/taskCount/invoke"), "POST")):
            msg = api.fail(method, path, code=Code.FUNCTION_NOT_FOUND, status=404,
                           params={"env": "prod"})
            assert msg.startswith('Function "taskCount" is excluded from agents by '
                                  "agent-tools.json in the prod deployment"), msg
            assert """--params '{"env":"prod","includeInternal":true}'""" in msg
    member, _ = add_member(site, "Mo")
    hidden = member.fail("POST", site.url("/taskCount/invoke"), code=Code.FUNCTION_NOT_FOUND,
                         params={"env": "prod", "includeInternal": "true"})
    unknown = member.fail("POST", site.url("/noSuchThing/invoke"), code=Code.FUNCTION_NOT_FOUND,
                          params={"env": "prod"})
    assert "agent-tools" not in hidden and "includeInternal" not in hidden
    assert hidden.split(". Parameter:")[0] == unknown.split(". Parameter:")[0].replace(
        "noSuchThing", "taskCount")
