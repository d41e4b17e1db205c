"""GET /sites/{app}/skill and the site Skill it renders: Agent Skills names and
descriptions, valid frontmatter, functions open to agents only, production only, the
calling protocol and the digest cap."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from basedb.core.skill_spec import (
    DESCRIPTION_MAX,
    NAME_MAX,
    clip_text,
    frontmatter_problems,
    is_valid_name,
    site_skill_name,
    slugify,
    split_frontmatter,
    suffixed_name,
)
from basedb.platform.domain.site_skill import SkillFunction, render_site_skill
from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.functions_support import (
    TaskSite,
    add_member,
    build_site,
    deploy,
    mutation,
    param,
    released_site,
    save_drafts,
    sql_function,
)


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


def skill(site: TaskSite, api: Api | None = None, **query: Any) -> dict[str, Any]:
    data: dict[str, Any] = (api or site.api).ok("GET", f"/sites/{site.app_token}/skill",
                                                params=query)
    return data


def frontmatter(markdown: str) -> tuple[dict[str, Any], str]:
    assert markdown.startswith("---\n")
    head, _, body = markdown[4:].partition("\n---\n")
    front = yaml.safe_load(head)
    assert isinstance(front, dict)
    return front, body


# ------------------------------------------------------------------------ names


@pytest.mark.parametrize(("title", "expected"), [
    ("Tasks", "tasks"),
    ("Team Leave  Tracker (2025)", "team-leave-tracker-2025"),
    ("Café Orders", "cafe-orders"),
    ("--Weird__Name--", "weird-name"),
])
def test_ascii_titles_become_slugs(title: str, expected: str) -> None:
    assert site_skill_name(title, "PrjAbc123") == expected


def test_titles_in_another_script_use_the_app_token() -> None:
    name = site_skill_name("团队休假报备", "PrjGO3YpIpNliZKTyob")
    assert name == "site-prjgo3ypipnlizkt"
    assert is_valid_name(name)
    # Mixed titles would lose their meaning in a slug, so they take the token too.
    assert site_skill_name("Tasks 任务", "PrjGO3YpIpNliZKTyob") == name
    # Stable: the same token always gives the same name.
    assert site_skill_name("另一个标题", "PrjGO3YpIpNliZKTyob") == name


def test_names_without_letters_fall_back_to_the_token() -> None:
    assert site_skill_name("!!!", "Prj_x-y") == "site-prjxy"
    assert site_skill_name("!!!", "___") .startswith("site-")
    assert is_valid_name(site_skill_name("!!!", "___"))


def test_long_titles_are_cut_to_a_valid_name() -> None:
    name = site_skill_name("word " * 40, "PrjA")
    assert is_valid_name(name) and len(name) <= NAME_MAX and name.startswith("word-word")
    assert len(slugify("a" * 100)) == NAME_MAX


@pytest.mark.parametrize("name", ["", "-a", "a-", "a--b", "A", "a_b", "a b", "é", "a" * 65])
def test_invalid_names(name: str) -> None:
    assert not is_valid_name(name)


@pytest.mark.parametrize("name", ["a", "tasks", "site-abc123", "a-b-c", "a" * 64])
def test_valid_names(name: str) -> None:
    assert is_valid_name(name)


def test_suffixed_names_are_valid_distinct_and_stable() -> None:
    one, two = suffixed_name("tasks", "PrjOne"), suffixed_name("tasks", "PrjTwo")
    assert one != two and one == suffixed_name("tasks", "PrjOne")
    assert one.startswith("tasks-") and is_valid_name(one)
    long = suffixed_name("a" * 64, "PrjOne")
    assert len(long) == NAME_MAX and is_valid_name(long)


def test_clip_text_ends_at_a_boundary_within_the_limit() -> None:
    text = "one two three four five six seven eight nine ten"
    clipped = clip_text(text, 30)
    assert len(clipped) <= 30 and clipped == "one two three four five six…"
    assert clip_text("短文本", 10) == "短文本"
    assert len(clip_text("很" * 100, 20)) == 20


def test_frontmatter_problems_name_what_is_wrong() -> None:
    assert frontmatter_problems({"name": "ok", "description": "Does x."}) == []
    problems = frontmatter_problems({"name": "Bad_Name", "description": "x" * 1025,
                                     "appToken": "Prj", "metadata": {"a": 1}},
                                    directory="other")
    text = " ".join(problems)
    assert "Bad_Name" in text and "1025" in text and "appToken" in text and "metadata" in text


# ------------------------------------------------------------------- the endpoint


def test_skill_of_a_released_site(site: TaskSite) -> None:
    data = skill(site)
    assert data["name"] == "tasks" and data["title"] == "Tasks"
    assert data["appToken"] == site.app_token and data["env"] == "prod"
    assert data["deploymentId"] == site.deployment_id
    front, body = frontmatter(data["markdown"])
    assert frontmatter_problems(front, directory="tasks") == []
    assert set(front) == {"name", "description", "metadata"}
    assert front["name"] == data["name"] and front["description"] == data["description"]
    assert front["metadata"] == {"appToken": site.app_token, "endpoint": "basedb-local",
                                 "deploymentId": site.deployment_id,
                                 "generatedBy": front["metadata"]["generatedBy"]}
    assert front["metadata"]["generatedBy"].startswith("basedb ")
    assert len(data["description"]) <= DESCRIPTION_MAX
    assert '"Tasks"' in data["description"] and "confirm with the user" in data["description"]
    assert split_frontmatter(data["markdown"]) == (front, body)
    assert set(data["references"]) == {"functions.md"}


def test_functions_carry_access_and_never_the_excluded_one(site: TaskSite) -> None:
    functions = {f["functionId"]: f for f in skill(site)["functions"]}
    assert "taskCount" not in functions
    assert functions["listTasks"]["access"] == "read"
    assert functions["deleteTasks"] == {
        "functionId": "deleteTasks", "name": "deleteTasks",
        "description": "deleteTasks: a write used by the tests",
        "functionType": "mutation", "access": "write", "schemaStatus": "ready",
        "statusHint": None, "table": "Tasks", "action": "delete"}
    assert functions["createTask"]["action"] == "create"
    assert {functions[f]["access"] for f in ("pingTasks", "summarizeTasks")} == {"write"}
    assert functions["legacyHook"]["schemaStatus"] == "missing"
    reads = [f for f in skill(site)["functions"] if f["access"] == "read"]
    assert skill(site)["functions"][: len(reads)] == reads  # reads come first


def test_excluded_functions_stay_out_even_for_admins(site: TaskSite) -> None:
    admin, _ = add_member(site, "Ada", "admin")
    for caller in (site.api, admin):
        data = skill(site, caller, includeInternal="true")
        everything = data["markdown"] + data["references"]["functions.md"]
        assert "taskCount" not in everything
        assert "taskCount" not in [f["functionId"] for f in data["functions"]]


def test_members_get_the_same_skill(site: TaskSite) -> None:
    member, _ = add_member(site, "Mo")
    assert skill(site, member)["markdown"] == skill(site)["markdown"]
    outsider = site.api.as_user(site.api.ok("POST", "/users", json={"name": "Eve"})["token"])
    site.api.as_user(outsider.token).fail("GET", f"/sites/{site.app_token}/skill",
                                          code=Code.BAD_REQUEST, status=404)


def test_markdown_lists_functions_by_access_and_the_calling_protocol(site: TaskSite) -> None:
    _, body = frontmatter(skill(site)["markdown"])
    reads, writes = body.split("## Write functions")
    assert "`listTasks` (Database Function) — Tasks of one status" in reads
    assert "`deleteTasks`" not in reads
    assert "`deleteTasks` (Mutation, deletes records; cannot be undone)" in writes
    assert "`legacyHook` (FaaS, no input schema)" in writes
    app = site.app_token
    assert (f"basedb api GET /open-apis/base/v3/sites/{app}/functions "
            """--params '{"env":"prod"}' --as user""") in body
    assert f"/sites/{app}/functions/<functionId>/invoke" in body and "@body.json" in body
    assert '{"params": {"<name>": <value>}}' in body and "lark-cli api" in body
    for rule in ("Fix:", "Retry:", "record_not_found", "ignored_fields",
                 "wait for an explicit yes", "Never re-send a write", "needs_upgrade",
                 "`outputSchema` names the fields of `data`"):
        assert rule in body, rule


def test_the_skill_never_holds_parameter_schemas(site: TaskSite) -> None:
    data = skill(site)
    text = data["markdown"] + data["references"]["functions.md"]
    for declared in ("Status of the tasks to list", "Record id of the task; call listTasks",
                     '"enum"', "inputSchema\":", '"required"', "Title of the new task"):
        assert declared not in text, declared


def test_preview_is_refused(site: TaskSite) -> None:
    message = site.api.fail("GET", f"/sites/{site.app_token}/skill", params={"env": "preview"},
                            code=Code.BAD_REQUEST, status=400)
    assert "only installable from production" in message and "Parameter: ?env" in message
    site.api.fail("GET", f"/sites/{site.app_token}/skill", params={"env": "staging"},
                  code=Code.BAD_REQUEST)


def test_a_site_without_production_is_not_ready(api: Api) -> None:
    site = build_site(api)
    save_drafts(site)
    deploy(site, promote=False)
    message = api.fail("GET", f"/sites/{site.app_token}/skill", code=Code.SCHEMA_NOT_READY)
    assert "Retry: retry after publishing" in message and "prod" in message


def test_describe_names_a_mutations_action(site: TaskSite) -> None:
    assert site.describe("deleteTasks")["action"] == "delete"
    assert site.describe("updateTask")["action"] == "update"
    assert "action" not in site.describe("listTasks")


def test_a_large_site_is_indexed_by_table(api: Api) -> None:
    reads = [sql_function(f"read{i:03d}", 'SELECT "Title" FROM "Tasks"',
                          description=f"Read number {i}. " + "Long explanation. " * 40)
             for i in range(70)]
    writes = [mutation(f"write{i:03d}", {"action": "create", "params": [
        param("title", "TEXT", "Title of the new task")], "set": {"Title": "$title"}})
        for i in range(10)]
    site = released_site(api, database_functions=reads, mutations=writes, faas=[],
                         ai_functions=[], exclude=[])
    data = skill(site)
    _, body = frontmatter(data["markdown"])
    assert not [line for line in body.splitlines() if line.startswith("- `read")]
    assert "| Tasks | 70 | 10 | references/table-tasks.md |" in body
    assert "grep -n -i" in body and '"query":"<words>"' in body
    assert set(data["references"]) == {"table-tasks.md"}
    reference = data["references"]["table-tasks.md"]
    assert reference.startswith("# Functions of Tasks: table Tasks")
    assert all(f"### `read{i:03d}`" in reference for i in range(70))
    assert len(data["functions"]) == 80
    assert len(data["description"]) <= DESCRIPTION_MAX and "more." in data["description"]


def test_tables_get_files_of_their_own_and_examples_spread_over_them() -> None:
    functions = [_function(f"list{table}{i}", f"Lists {table} number {i}.", table=table)
                 for table in ("Orders", "Invoices", "报销单") for i in range(25)]
    functions.append(_function("syncAll", "Runs a sync.", "faas"))
    skill = render_site_skill(title="Shop", app_token="PrjA", deployment_id="dpl1",
                              functions=functions)
    assert set(skill.references) == {"table-orders.md", "table-invoices.md", "table-3.md",
                                     "other.md"}
    assert "### `syncAll`" in skill.references["other.md"]
    assert "| 报销单 | 25 | 0 | references/table-3.md |" in skill.markdown
    assert "| (no table) | 0 | 1 | references/other.md |" in skill.markdown
    # The frontmatter's examples come from different tables, not one prefix.
    assert all(f"list{table}0" in skill.description for table in ("Orders", "Invoices"))


# ------------------------------------------------------------------- rendering


def _function(function_id: str, description: str, function_type: str = "database_function",
              **extra: Any) -> SkillFunction:
    return SkillFunction(function_id=function_id, name=function_id, description=description,
                         function_type=function_type, schema_status=extra.pop("status",
                                                                              "ready"),
                         **extra)


def test_description_stays_within_the_limit_and_cuts_whole_items() -> None:
    functions = [_function(f"fn{i}", "说明" * 300) for i in range(50)]
    skill = render_site_skill(title="T" * 500, app_token="PrjA", deployment_id="dpl1",
                              functions=functions)
    description = skill.description
    assert len(description) <= DESCRIPTION_MAX
    assert description.endswith("confirm with the user before any write.")
    assert "more" in description and "…" in description


def test_description_of_a_site_without_functions() -> None:
    skill = render_site_skill(title="Empty", app_token="PrjA", deployment_id="dpl1",
                              functions=[])
    front, body = frontmatter(skill.markdown)
    assert frontmatter_problems(front, directory="empty") == []
    assert "(0 read, 0 write)" in skill.description and "- (none)" in body


def test_functions_that_cannot_be_called_say_so() -> None:
    skill = render_site_skill(title="Site", app_token="PrjA", deployment_id="dpl1", functions=[
        _function("old", "Legacy query", status="needs_upgrade", status_hint="Upgrade it."),
        _function("gone", "Broken query", status="unavailable", status_hint="Field X gone.")])
    assert "`old` (Database Function, not callable now: needs_upgrade)" in skill.markdown
    assert "Status: Field X gone." in skill.references["functions.md"]


def test_titles_and_descriptions_cannot_break_the_frontmatter() -> None:
    title = 'Evil"\n---\nname: other\n: ['
    skill = render_site_skill(title=title, app_token="PrjEvil", deployment_id="dpl1",
                              functions=[_function("a", "line one\n---\nmetadata: x")])
    front, body = frontmatter(skill.markdown)
    assert front["name"] == skill.name and frontmatter_problems(front) == []
    assert "\n---\nname: other" not in body
