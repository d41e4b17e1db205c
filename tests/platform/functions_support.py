"""A site for the Agent OpenAPI tests, built and released through the platform's own
endpoints: a Base with Projects and Tasks, sample records, Database Functions,
Mutations, a FaaS and an AI Function as drafts, an agent-tools policy, a preview
deployment and its promotion to prod."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from cachetools import TTLCache

from basedb.core.paths import API_PREFIX
from basedb.platform.domain.runtimes import sql_inline
from tests.platform.conftest import Api, make_table

STATUSES = ["Open", "Doing", "Done"]
TAGS = ["ui", "api", "urgent"]


def sql_function(function_id: str, sql: str, params: list[dict[str, Any]] | None = None,
                 description: str = "") -> dict[str, Any]:
    return {"functionId": function_id, "sql": sql, "declaration": {
        "name": function_id,
        "description": description or f"{function_id}: a query used by the tests",
        "meta": {"params": params or []}}}


def mutation(function_id: str, spec: dict[str, Any], description: str = "") -> dict[str, Any]:
    return {"functionId": function_id, "declaration": {
        "name": function_id,
        "description": description or f"{function_id}: a write used by the tests",
        "spec": {"table": "Tasks", **spec}}}


def param(name: str, kind: str, description: str = "", **extra: Any) -> dict[str, Any]:
    return {"name": name, "kind": kind,
            "description": description or f"The {name} value of the call", **extra}


DATABASE_FUNCTIONS = [
    sql_function("listTasks", 'SELECT record_id AS task_id, "Title", "Status", "Tags", '
                 '"Points", "Due", "Assignees", "Project" FROM "Tasks" WHERE "Status" = $1 '
                 'ORDER BY "Title"',
                 [param("status", "TEXT", "Status of the tasks to list", enum=STATUSES)],
                 "Tasks of one status, by title. Use listProjects for projects."),
    sql_function("tasksByStatusText", 'SELECT "Title" FROM "Tasks" WHERE "Status" = $1 '
                 'ORDER BY "Title"', [param("status", "TEXT", "Status name of the tasks")]),
    sql_function("tasksWithTags", 'SELECT "Title" FROM "Tasks" WHERE "Tags" = ANY($1) '
                 'ORDER BY "Title" LIMIT $2',
                 [param("tags", "TEXT[]", "Tags of which a task has at least one", enum=TAGS),
                  param("limit", "INT", "How many tasks at most")]),
    sql_function("tasksOfProject", 'SELECT "Title" FROM "Tasks" WHERE "Project" = $1 '
                 'ORDER BY "Title"',
                 [param("projectId", "TEXT", "Record id of the project; call listProjects "
                        "and pass rows[].project_id")]),
    sql_function("tasksDueBefore", 'SELECT "Title", "Due" FROM "Tasks" WHERE "Due" < $1 '
                 'ORDER BY "Due"', [param("before", "DATETIME", "Only tasks due before this")]),
    sql_function("tasksDueOn", 'SELECT "Title" FROM "Tasks" WHERE date("Due") = $1',
                 [param("day", "DATE", "The day the tasks are due")]),
    sql_function("myTasks", 'SELECT "Title", "Owner" FROM "Tasks" WHERE "Owner" = '
                 'CURRENT_USER_ID() ORDER BY "Title"'),
    sql_function("listProjects", 'SELECT record_id AS project_id, "Name" FROM "Projects" '
                 'ORDER BY "Name"'),
    sql_function("heavyPoints", 'SELECT "Title" FROM "Tasks" WHERE "Points" > $1 AND '
                 '"Done" = $2', [param("above", "NUMBER", "Lower bound of the points"),
                                 param("done", "BOOL", "Whether the task is done")]),
    sql_function("statusOrAll", 'SELECT "Title" FROM "Tasks" WHERE ($1 IS NULL OR "Status" = $1) '
                 'ORDER BY "Title"',
                 [param("status", "TEXT", "Status to keep; leave out for every task",
                        required=False, enum=STATUSES)]),
    sql_function("countForever", 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 '
                 'FROM r) SELECT count(*) AS c FROM r, "Tasks"'),
    sql_function("taskCount", 'SELECT count(*) AS n FROM "Tasks"'),
]

MUTATIONS = [
    mutation("createTask", {
        "action": "create",
        "params": [param("title", "TEXT", "Title of the new task"),
                   param("status", "TEXT", "Status of the new task", enum=STATUSES),
                   param("tags", "TEXT", "Tags of the task", list=True, required=False,
                         enum=TAGS),
                   param("points", "NUMBER", "Story points", required=False),
                   param("projectId", "RECORD_ID", "Project of the task; call listProjects",
                         required=False),
                   param("due", "DATETIME", "When the task is due", required=False)],
        "set": {"Title": "$title", "Status": "$status", "Tags": "$tags", "Points": "$points",
                "Project": "$projectId", "Due": "$due", "Owner": "@current_user"}}),
    mutation("updateTask", {
        "action": "update", "recordId": "$taskId",
        "params": [param("taskId", "RECORD_ID", "Record id of the task; call listTasks"),
                   param("title", "TEXT", "New title of the task", required=False),
                   param("remark", "TEXT", "Remark; missing or null keeps the old one",
                         required=False),
                   param("clearRemark", "BOOL", "True clears the remark", required=False)],
        "set": {"Title": "$title", "Remark": "$remark"},
        "clear": {"Remark": "$clearRemark"}}),
    mutation("finishMyTasks", {
        "action": "update", "recordId": "$taskIds",
        "params": [param("taskIds", "RECORD_ID", "Record ids of my tasks; call myTasks",
                         list=True)],
        "set": {"Status": "Done", "Done": True},
        "precondition": {"Owner": "@current_user", "Status": "Doing"}}),
    mutation("assignTask", {
        "action": "update", "recordId": "$taskId",
        "params": [param("taskId", "RECORD_ID", "Record id of the task; call listTasks"),
                   param("assignees", "USER_ID", "Users to assign", list=True)],
        "set": {"Assignees": "$assignees"}}),
    mutation("deleteTasks", {
        "action": "delete", "recordId": "$taskIds",
        "params": [param("taskIds", "RECORD_ID", "Record ids of the tasks; call listTasks",
                         list=True)]}),
]

FAAS = [{"functionId": "pingTasks", "declaration": {
    "name": "pingTasks", "description": "Answer with the input (used by the tests)",
    "inputSchema": {"type": "object", "properties": {
        "text": {"type": "string", "description": "Text to echo back"}},
        "required": ["text"], "additionalProperties": False}},
    "handler": "export default async function (input) {\n"
               "  return {code: 0, msg: 'ok', data: {echo: input.text}};\n}\n"},
    {"functionId": "legacyHook", "declaration": {
        "name": "legacyHook", "description": "A FaaS without an input schema"},
     "handler": "export default async function (input) {\n"
                "  return {code: 0, msg: 'ok', data: {got: input}};\n}\n"}]

AI_FUNCTIONS = [{"key": "summarizeTasks", "declaration": {
    "name": "summarizeTasks", "description": "Summarize tasks for a weekly report",
    "capability": "text", "prompt": "Summarize: {{text}}",
    "inputSchema": {"type": "object", "properties": {
        "text": {"type": "string", "description": "The tasks to summarize"}},
        "required": ["text"]}}}]

EXCLUDE = ["taskCount"]


@dataclass
class TaskSite:
    api: Api
    app_token: str
    base_token: str
    tasks_table: str
    projects_table: str
    projects: dict[str, str] = field(default_factory=dict)  # name -> record id
    tasks: dict[str, str] = field(default_factory=dict)  # title -> record id
    deployment_id: str = ""

    def url(self, suffix: str = "") -> str:
        return f"/sites/{self.app_token}/functions{suffix}"

    def invoke(self, function_id: str, params: Any = None, *, api: Api | None = None,
               env: str = "prod", **query: Any) -> Any:
        body = {} if params is None else {"params": params}
        return (api or self.api).ok("POST", self.url(f"/{function_id}/invoke"), json=body,
                                    params={"env": env, **query})

    def invoke_fails(self, function_id: str, params: Any, *, code: int,
                     api: Api | None = None, env: str = "prod", **query: Any) -> str:
        return (api or self.api).fail("POST", self.url(f"/{function_id}/invoke"),
                                      json={"params": params}, code=code,
                                      params={"env": env, **query})

    def describe(self, function_id: str, *, api: Api | None = None, **query: Any) -> Any:
        found = (api or self.api).ok("GET", self.url(f"/{function_id}"),
                                     params={"env": "prod", **query})
        return found["function"]

    def records(self, table_id: str) -> dict[str, dict[str, Any]]:
        page = self.api.ok("GET", f"/bases/{self.base_token}/tables/{table_id}/records",
                           params={"limit": 200})
        return {rid: dict(zip(page["fields"], row, strict=True))
                for rid, row in zip(page["record_id_list"], page["data"], strict=True)}


def build_site(api: Api) -> TaskSite:
    base = api.ok("POST", "/bases", json={"name": "Work"})["base_token"]
    projects = make_table(api, base, "Projects", [{"name": "Name", "type": "text"}])
    tasks = make_table(api, base, "Tasks", [
        {"name": "Title", "type": "text"},
        {"name": "Status", "type": "select", "options": [{"name": s} for s in STATUSES]},
        {"name": "Tags", "type": "select", "multiple": True,
         "options": [{"name": t} for t in TAGS]},
        {"name": "Owner", "type": "user"},
        {"name": "Assignees", "type": "user", "multiple": True},
        {"name": "Project", "type": "link", "link_table": projects["id"]},
        {"name": "Points", "type": "number"},
        {"name": "Done", "type": "checkbox"},
        {"name": "Due", "type": "datetime"},
        {"name": "Remark", "type": "text"},
    ])
    app = api.ok("POST", "/sites/create", json={"title": "Tasks"})["appToken"]
    api.ok("POST", f"/sites/{app}/bind_base",
           json={"baseToken": base, "tableIds": [projects["id"], tasks["id"]]})
    site = TaskSite(api, app, base, tasks["id"], projects["id"])
    me = api.ok("GET", "/users/me")["user_id"]
    for name in ("Portal", "Platform"):
        created = api.ok("POST", f"/bases/{base}/tables/{projects['id']}/records",
                         json={"Name": name})
        site.projects[name] = created["record_id"]
    rows = [
        ("Write API", "Doing", ["api"], 3, "Platform", "2025-03-01 10:00:00", True),
        ("Draw pages", "Open", ["ui", "urgent"], 5, "Portal", "2025-03-05 09:00:00", True),
        ("Fix bug", "Doing", ["urgent"], 8, "Platform", "2025-02-20 18:00:00", False),
        ("Write docs", "Done", None, None, None, None, False),
    ]
    for title, status, tags, points, project, due, mine in rows:
        cells: dict[str, Any] = {"Title": title, "Status": status, "Tags": tags,
                                 "Done": status == "Done",
                                 "Points": points, "Due": due,
                                 "Project": [{"id": site.projects[project]}] if project else None,
                                 "Owner": [{"id": me}] if mine else None,
                                 "Assignees": [{"id": me}] if mine else None}
        created = api.ok("POST", f"/bases/{base}/tables/{tasks['id']}/records",
                         json=cells)
        site.tasks[title] = created["record_id"]
    return site


def save_drafts(site: TaskSite, *, database_functions: list[dict[str, Any]] | None = None,
                mutations: list[dict[str, Any]] | None = None,
                faas: list[dict[str, Any]] | None = None,
                ai_functions: list[dict[str, Any]] | None = None,
                exclude: list[str] | None = None) -> None:
    api, app = site.api, site.app_token
    api.ok("PUT", f"/sites/{app}/draft/functions", json={
        "databaseFunctions": DATABASE_FUNCTIONS if database_functions is None
        else database_functions,
        "mutations": MUTATIONS if mutations is None else mutations,
        "faas": FAAS if faas is None else faas})
    api.ok("PUT", f"/sites/{app}/draft/ai-functions",
           json={"aiFunctions": AI_FUNCTIONS if ai_functions is None else ai_functions})
    api.ok("PUT", f"/sites/{app}/draft/agent-tools",
           json={"exclude": EXCLUDE if exclude is None else exclude})


def site_zip(files: dict[str, bytes]) -> tuple[bytes, str]:
    """site.zip with its manifest, and its fingerprint, as `basedb deploy` builds them."""
    entries = [{"path": path, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
               for path, data in sorted(files.items())]
    canonical = json.dumps({"files": entries}, ensure_ascii=False, sort_keys=True,
                           separators=(",", ":"))
    fingerprint = "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(".basedb/manifest.json",
                         json.dumps({"fingerprint": fingerprint, "files": entries}))
        for path, data in sorted(files.items()):
            archive.writestr(path, data)
    return buffer.getvalue(), fingerprint


def deploy(site: TaskSite, *, promote: bool = True) -> str:
    """A preview of the current drafts (promoted to prod unless told otherwise)."""
    archive, fingerprint = site_zip({"src/index.html": b"<!doctype html><title>Tasks</title>",
                                     "README.md": site.deployment_id.encode() or b"tasks"})
    api = site.api
    response = api.client.post(
        f"{API_PREFIX}/sites/{site.app_token}/deployments",
        headers={"Authorization": f"Bearer {api.token}"}, data={"fingerprint": fingerprint},
        files={"artifact": ("site.zip", archive, "application/zip")})
    body = response.json()
    assert response.status_code == 200 and body["code"] == 0, body
    deployment_id = str(body["data"]["deploymentId"])
    if promote:
        api.ok("POST", f"/sites/{site.app_token}/deployments/{deployment_id}/promote")
    site.deployment_id = deployment_id
    return deployment_id


def released_site(api: Api, **drafts: Any) -> TaskSite:
    site = build_site(api)
    save_drafts(site, **drafts)
    deploy(site)
    return site


def add_member(site: TaskSite, name: str, role: str = "member") -> tuple[Api, str]:
    """A new platform user with `role` on the site: (their Api, their user id)."""
    created = site.api.ok("POST", "/users", json={"name": name})
    site.api.ok("POST", f"/sites/{site.app_token}/members",
                json={"userId": created["user_id"], "role": role})
    return site.api.as_user(created["token"]), str(created["user_id"])


@pytest.fixture
def fresh_loop_budget(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No backoff or waste window of the event loop's statement budget ends while a test
    runs, however slow the machine (`usefixtures` it, or import it as an autouse one)."""
    monkeypatch.setattr(sql_inline, "_off_loop", TTLCache(maxsize=64, ttl=3600))
    monkeypatch.setattr(sql_inline, "LOOP_WINDOW_S", 3600.0)
    sql_inline.reset_loop_state()
    yield
    sql_inline.reset_loop_state()
