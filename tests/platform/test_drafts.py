"""Drafts: validated like `basedb check`, full overwrites, the agent-tools policy, roles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from basedb.check.run import check_workspace
from basedb.platform.domain.drafts import MAX_FUNCTIONS
from basedb.protocol import Code
from basedb.workspace.loader import load_workspace
from tests.platform.conftest import Api, message_without_log_id
from tests.platform.release_support import (
    TaskSite,
    close_task,
    create_task,
    functions_body,
    list_tasks,
    summarize,
    task_site,
)


def drafts_of(answer: dict[str, Any]) -> dict[str, Any]:
    """A draft answer without its revision (tested on its own below)."""
    assert isinstance(answer.pop("draftRevision"), int)
    return answer


@pytest.fixture
def site(api: Api) -> TaskSite:
    return task_site(api)


def draft(site: TaskSite, what: str = "functions") -> str:
    return f"/sites/{site.app_token}/draft/{what}"


def failure(api: Api, method: str, path: str, body: Any, code: int = Code.BAD_REQUEST,
            ) -> dict[str, Any]:
    response = api.call(method, path, json=body)
    found: dict[str, Any] = response.json()
    assert found["code"] == code and response.status_code >= 400, found
    return found


def codes(body: dict[str, Any]) -> list[str]:
    return [error["code"] for error in body["data"]["errors"]]


# ------------------------------------------------------------------ functions


def test_put_then_get_returns_the_same_document(api: Api, site: TaskSite) -> None:
    body = {**functions_body(), "timezone": "Asia/Shanghai"}
    saved = api.ok("PUT", draft(site), json=body)
    assert saved["counts"] == {"database_function": 1, "mutation": 1, "faas": 1}
    assert saved["functionHints"] == []
    assert drafts_of(api.ok("GET", draft(site))) == body


def test_a_put_replaces_every_function(api: Api, site: TaskSite) -> None:
    api.ok("PUT", draft(site), json=functions_body())
    only = {"databaseFunctions": [list_tasks(["Open"], function_id="openTasks")]}
    saved = api.ok("PUT", draft(site), json=only)
    assert saved["counts"] == {"database_function": 1, "mutation": 0, "faas": 0}
    assert drafts_of(api.ok("GET", draft(site))) == {**only, "mutations": [], "faas": [],
                                                     "timezone": "UTC"}
    api.ok("PUT", draft(site), json={})
    assert drafts_of(api.ok("GET", draft(site))) == {"databaseFunctions": [], "mutations": [],
                                                     "faas": [], "timezone": "UTC"}


def test_the_time_zone_must_be_an_iana_zone(api: Api, site: TaskSite) -> None:
    for bad in ("Mars/Olympus", 8, ""):
        msg = api.fail("PUT", draft(site), json={**functions_body(), "timezone": bad},
                       code=9499)
        assert "Parameter: /timezone" in msg and "Asia/Shanghai" in msg
    assert api.ok("GET", draft(site))["timezone"] == "UTC"  # nothing was saved


def write_workspace(root: Path, catalog: dict[str, Any], body: dict[str, Any]) -> None:
    """The files `basedb check` would judge for the same draft."""
    root.mkdir()
    (root / "base-database.jsonc").write_text(json.dumps({
        "appToken": "PrjX", "title": "Tasks",
        "binding": {"baseToken": catalog["baseToken"],
                    "tableIds": [t["tableId"] for t in catalog["tables"]]}}))
    (root / "catalog.json").write_text(json.dumps(catalog))
    for kind_dir, key, extra in (("database-functions", "databaseFunctions", "sql"),
                                 ("mutations", "mutations", None), ("faas", "faas", "handler")):
        for item in body.get(key, []):
            folder = root / kind_dir / item["functionId"]
            folder.mkdir(parents=True)
            (folder / "function.json").write_text(json.dumps(item["declaration"]))
            if extra == "sql":
                (folder / "main.sql").write_text(item["sql"])
            elif extra == "handler":
                (folder / "index.mjs").write_text(item["handler"])


def check_on_disk(tmp_path: Path, api: Api, site: TaskSite,
                  body: dict[str, Any]) -> dict[str, Any]:
    catalog = api.ok("GET", f"/sites/{site.app_token}/catalog")
    write_workspace(tmp_path / "ws", catalog, body)
    return check_workspace(load_workspace(tmp_path / "ws")).to_dict()


def test_errors_are_exactly_those_of_check(api: Api, site: TaskSite, tmp_path: Path) -> None:
    unknown_field = list_tasks(["Open"], function_id="byPriority")
    unknown_field["sql"] = 'SELECT "Title" FROM "Tasks" WHERE "Priority" = $1'
    blank_param = create_task("blankParam")
    blank_param["declaration"]["spec"]["params"][0]["description"] = "  "
    no_description = close_task("noDescription")
    del no_description["declaration"]["inputSchema"]["properties"]["taskId"]["description"]
    body = functions_body(
        database_functions=[list_tasks(["Open", "Closed"]), unknown_field],
        mutations=[blank_param], faas=[no_description])
    refused = failure(api, "PUT", draft(site), body)
    expected = check_on_disk(tmp_path, api, site, body)
    assert refused["data"]["errors"] == expected["errors"]
    assert sorted(codes(refused)) == ["ENUM_OUT_OF_DOMAIN", "FAAS_PROPERTY_DESCRIPTION_MISSING",
                                      "PARAM_DESCRIPTION_MISSING", "SQL_UNKNOWN_FIELD"]
    # Nothing was stored.
    assert drafts_of(api.ok("GET", draft(site))) == {"databaseFunctions": [], "mutations": [],
                                                     "faas": [], "timezone": "UTC"}


def test_hints_are_exactly_those_of_check(api: Api, site: TaskSite, tmp_path: Path) -> None:
    unconstrained = list_tasks(None, function_id="anyStatus", description="Tasks")
    optional = list_tasks(["Open", "Done"], function_id="maybeStatus")
    optional["declaration"]["meta"]["params"][0]["required"] = False
    optional["sql"] = 'SELECT "Title" FROM "Tasks" WHERE $1 IS NULL OR "Status" = $1'
    body = functions_body(database_functions=[unconstrained, optional])
    saved = api.ok("PUT", draft(site), json=body)
    expected = check_on_disk(tmp_path, api, site, body)
    assert expected["errors"] == []
    assert saved["functionHints"] == expected["functionHints"]
    assert {h["code"] for h in saved["functionHints"]} >= {
        "function_description_short", "option_field_unconstrained", "enum_unchecked"}


def test_the_message_names_the_first_error_and_where_it_is(api: Api, site: TaskSite) -> None:
    body = functions_body(database_functions=[list_tasks(["Open", "Closed"])])
    refused = failure(api, "PUT", draft(site), body)
    msg = message_without_log_id(refused)
    assert "ENUM_OUT_OF_DOMAIN" in msg and "listTasks" in msg
    assert "Parameter: /databaseFunctions/0/declaration/meta/params/0/enum/1" in msg
    assert msg.endswith("Executed: no. Retry: retry after fixing.")
    [error] = refused["data"]["errors"]
    assert error["file"] == "database-functions/listTasks/function.json"
    assert error["pointer"] == "/meta/params/0/enum/1"


def test_bad_and_repeated_ids(api: Api, site: TaskSite) -> None:
    body = functions_body(database_functions=[list_tasks(["Open"], function_id="9lives")],
                          faas=[close_task("createTask")])
    refused = failure(api, "PUT", draft(site), body)
    assert sorted(codes(refused)) == ["FUNCTION_ID_DUPLICATE", "FUNCTION_ID_INVALID"]
    duplicate = next(e for e in refused["data"]["errors"]
                     if e["code"] == "FUNCTION_ID_DUPLICATE")
    assert "/mutations/0 and /faas/0" in duplicate["message"]


def test_missing_sql_and_handler_point_into_the_body(api: Api, site: TaskSite) -> None:
    no_sql = list_tasks(["Open"])
    del no_sql["sql"]
    refused = failure(api, "PUT", draft(site), functions_body(database_functions=[no_sql]))
    assert codes(refused) == ["DECLARATION_INVALID"]
    assert "Parameter: /databaseFunctions/0/sql" in refused["msg"]
    no_handler = close_task()
    del no_handler["handler"]
    refused = failure(api, "PUT", draft(site), functions_body(faas=[no_handler]))
    assert codes(refused) == ["DECLARATION_INVALID"]
    assert "Parameter: /faas/0/handler" in refused["msg"]


@pytest.mark.parametrize(("body", "where"), [
    ([], "Parameter: / "),
    ({"functions": []}, "Parameter: /functions"),
    ({"mutations": {}}, "Parameter: /mutations"),
    ({"mutations": ["createTask"]}, "Parameter: /mutations/0"),
    ({"mutations": [{"functionId": "x", "declaration": {}, "sql": "x"}]},
     "Parameter: /mutations/0/sql"),
    ({"mutations": [{"declaration": {}}]}, "Parameter: /mutations/0/functionId"),
    ({"mutations": [{"functionId": "x"}]}, "Parameter: /mutations/0/declaration"),
    ({"databaseFunctions": [{"functionId": "x", "declaration": {}, "sql": 1}]},
     "Parameter: /databaseFunctions/0/sql"),
])
def test_malformed_bodies(api: Api, site: TaskSite, body: Any, where: str) -> None:
    assert where in failure(api, "PUT", draft(site), body)["msg"]


def test_size_limits(api: Api, site: TaskSite) -> None:
    huge_sql = list_tasks(["Open"])
    huge_sql["sql"] += " -- " + "x" * (256 * 1024)
    msg = failure(api, "PUT", draft(site), functions_body(database_functions=[huge_sql]))["msg"]
    assert "main.sql is" in msg and "at most 262144" in msg and "/databaseFunctions/0/sql" in msg
    huge_declaration = create_task()
    huge_declaration["declaration"]["description"] = "x" * (1024 * 1024)
    msg = failure(api, "PUT", draft(site), functions_body(mutations=[huge_declaration]))["msg"]
    assert "at most 1048576" in msg and "/mutations/0/declaration" in msg
    many = [create_task(f"create{i}") for i in range(MAX_FUNCTIONS + 1)]
    msg = failure(api, "PUT", draft(site), {"mutations": many})["msg"]
    assert f"{MAX_FUNCTIONS + 1} functions; at most {MAX_FUNCTIONS}" in msg


# --------------------------------------------------------------- AI Functions


def test_ai_drafts_are_stored_without_an_ai_endpoint(api: Api, site: TaskSite,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BASEDB_AI_BASE_URL", "BASEDB_AI_API_KEY", "BASEDB_AI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    body = {"aiFunctions": [summarize("summarize"), summarize("classify")]}
    assert drafts_of(api.ok("PUT", draft(site, "ai-functions"), json=body)) == {
        "keys": ["classify", "summarize"]}
    assert drafts_of(api.ok("GET", draft(site, "ai-functions"))) == body
    # AI drafts and function drafts are separate overwrites.
    api.ok("PUT", draft(site), json=functions_body())
    assert drafts_of(api.ok("GET", draft(site, "ai-functions"))) == body
    api.ok("PUT", draft(site, "ai-functions"), json={"aiFunctions": []})
    assert drafts_of(api.ok("GET", draft(site, "ai-functions"))) == {"aiFunctions": []}
    assert len(api.ok("GET", draft(site))["mutations"]) == 1


def test_invalid_ai_drafts_are_refused(api: Api, site: TaskSite) -> None:
    broken = summarize()
    del broken["declaration"]["prompt"]
    refused = failure(api, "PUT", draft(site, "ai-functions"), {"aiFunctions": [broken]})
    assert codes(refused) == ["DECLARATION_INVALID"]
    assert "Parameter: /aiFunctions/0/declaration/prompt" in refused["msg"]
    assert "/aiFunctions/0/functionId" in failure(
        api, "PUT", draft(site, "ai-functions"),
        {"aiFunctions": [{"functionId": "x", "declaration": {}}]})["msg"]


# ---------------------------------------------------------------- agent tools


def test_agent_tools_policy(api: Api, site: TaskSite) -> None:
    assert drafts_of(api.ok("GET", draft(site, "agent-tools"))) == {"exclude": []}
    api.ok("PUT", draft(site), json=functions_body())
    api.ok("PUT", draft(site, "ai-functions"), json={"aiFunctions": [summarize()]})
    saved = api.ok("PUT", draft(site, "agent-tools"), json={"exclude": ["closeTask",
                                                                        "summarize"]})
    assert drafts_of(saved) == {"exclude": ["closeTask", "summarize"]}
    assert drafts_of(api.ok("GET", draft(site, "agent-tools"))) == saved
    # The body names the whole policy: {} is refused rather than read as "exclude nothing".
    assert "exclude is missing" in api.fail("PUT", draft(site, "agent-tools"), json={},
                                            code=9499, status=400)
    assert drafts_of(api.ok("PUT", draft(site, "agent-tools"),
                            json={"exclude": []})) == {"exclude": []}


@pytest.mark.parametrize(("policy", "expected"), [
    ({"exclude": ["listTask"]}, "'listTask', which is not a function of this workspace"),
    ({"exclude": ["closeTask", "closeTask"]}, "listed twice"),
    ({"include": ["closeTask"]}, "only \"exclude\" is supported"),
    ({"exclude": "closeTask"}, "must be an array"),
    (["closeTask"], "must contain a JSON object"),
])
def test_invalid_policies_answer_800004030(api: Api, site: TaskSite, policy: Any,
                                           expected: str) -> None:
    api.ok("PUT", draft(site), json=functions_body())
    api.ok("PUT", draft(site, "agent-tools"), json={"exclude": ["closeTask"]})
    refused = failure(api, "PUT", draft(site, "agent-tools"), policy,
                      code=Code.AGENT_TOOLS_POLICY_INVALID)
    assert expected in refused["msg"]
    assert {e["code"] for e in refused["data"]["errors"]} == {"AGENT_TOOLS_INVALID"}
    # The previous policy stays.
    assert drafts_of(api.ok("GET", draft(site, "agent-tools"))) == {"exclude": ["closeTask"]}


def test_unknown_ids_list_the_legal_ones(api: Api, site: TaskSite) -> None:
    api.ok("PUT", draft(site), json=functions_body())
    refused = failure(api, "PUT", draft(site, "agent-tools"), {"exclude": ["nope"]},
                      code=Code.AGENT_TOOLS_POLICY_INVALID)
    assert "Legal ids:" in refused["msg"] and "closeTask" in refused["msg"]
    assert "Parameter: /exclude/0" in refused["msg"]


# ----------------------------------------------------------------------- roles


def test_only_owners_and_admins_use_drafts(api: Api, site: TaskSite) -> None:
    api.ok("PUT", draft(site), json=functions_body())
    users = {}
    for role in ("admin", "member"):
        created = api.ok("POST", "/users", json={"name": role})
        api.ok("POST", f"/sites/{site.app_token}/members",
               json={"userId": created["user_id"], "role": role})
        users[role] = api.as_user(created["token"])
    outsider = api.as_user(api.ok("POST", "/users", json={"name": "outsider"})["token"])
    for what in ("functions", "ai-functions", "agent-tools"):
        users["admin"].ok("GET", draft(site, what))
        users["member"].fail("GET", draft(site, what), code=Code.PERMISSION_DENIED,
                             status=403)
        users["member"].fail("PUT", draft(site, what), json={},
                             code=Code.PERMISSION_DENIED, status=403)
        # To an outsider the site is not there.
        outsider.fail("GET", draft(site, what), code=Code.BAD_REQUEST, status=404)
        outsider.fail("PUT", draft(site, what), json={}, code=Code.BAD_REQUEST, status=404)
    users["admin"].ok("PUT", draft(site), json=functions_body(faas=[]))
    assert api.ok("GET", draft(site))["faas"] == []


def test_every_write_moves_the_revision_and_a_stale_one_is_refused(api: Api,
                                                                   site: TaskSite) -> None:
    first = api.ok("PUT", draft(site), json=functions_body())["draftRevision"]
    second = api.ok("PUT", draft(site, "ai-functions"), json={"aiFunctions": []},
                    params={"draftRevision": first})["draftRevision"]
    third = api.ok("PUT", draft(site, "agent-tools"), json={"exclude": []},
                   params={"draftRevision": second})["draftRevision"]
    assert (second, third) == (first + 1, first + 2)
    for what in ("functions", "ai-functions", "agent-tools"):
        assert api.ok("GET", draft(site, what))["draftRevision"] == third
    # A write meant to follow `first` finds the drafts moved on: nothing is written.
    msg = api.fail("PUT", draft(site, "agent-tools"), json={"exclude": ["closeTask"]},
                   params={"draftRevision": first}, code=800004020, status=409)
    assert f"changed since revision {first}" in msg and "run deploy again" in msg
    assert api.ok("GET", draft(site, "agent-tools")) == {"exclude": [], "draftRevision": third}
