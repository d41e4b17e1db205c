"""Helpers for the draft, deployment and page tests: a site bound to a Tasks table,
draft payloads, and site.zip archives built the way `basedb deploy` builds them."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from typing import Any

from basedb.core.paths import API_PREFIX
from tests.platform.conftest import Api, Response, make_table

MANIFEST = ".basedb/manifest.json"


@dataclass(frozen=True)
class TaskSite:
    app_token: str
    base_token: str
    table_id: str


def task_site(api: Api) -> TaskSite:
    """A site bound to one table: Tasks(Title text, Status select Open/Done, Owner user)."""
    base = api.ok("POST", "/bases", json={"name": "Work"})["base_token"]
    table = make_table(api, base, "Tasks", [
        {"name": "Title", "type": "text"},
        {"name": "Status", "type": "select", "options": [{"name": "Open"}, {"name": "Done"}]},
        {"name": "Owner", "type": "user"},
    ])
    site = api.ok("POST", "/sites/create", json={"title": "Tasks"})["appToken"]
    api.ok("POST", f"/sites/{site}/bind_base",
           json={"baseToken": base, "tableIds": [table["id"]]})
    return TaskSite(site, base, table["id"])


def list_tasks(enum: list[Any] | None = None, *, function_id: str = "listTasks",
               description: str = "Tasks of one status, newest first") -> dict[str, Any]:
    param: dict[str, Any] = {"name": "status", "kind": "TEXT",
                             "description": "Status of the tasks to list"}
    if enum is not None:
        param["enum"] = enum
    return {"functionId": function_id,
            "declaration": {"name": function_id, "description": description,
                            "meta": {"params": [param]}},
            "sql": 'SELECT "Title", "Status" FROM "Tasks" WHERE "Status" = $1'}


def create_task(function_id: str = "createTask") -> dict[str, Any]:
    return {"functionId": function_id, "declaration": {
        "name": function_id, "description": "Create a task with a title",
        "spec": {"table": "Tasks", "action": "create",
                 "params": [{"name": "title", "kind": "TEXT",
                             "description": "Title of the new task"}],
                 "set": {"Title": "$title", "Owner": "@current_user"}}}}


def close_task(function_id: str = "closeTask") -> dict[str, Any]:
    return {"functionId": function_id,
            "declaration": {"name": function_id, "description": "Close a task and notify",
                            "inputSchema": {"type": "object", "properties": {
                                "taskId": {"type": "string",
                                           "description": "Record id of the task"}},
                                "required": ["taskId"]}},
            "handler": "export default async function (input, ctx) {\n"
                       "  return {code: 0, msg: 'ok', data: {closed: input.taskId}};\n}\n"}


def summarize(key: str = "summarize") -> dict[str, Any]:
    return {"key": key, "declaration": {"name": key, "description": "Summarize the tasks",
                                        "capability": "text", "prompt": "Summarize: {{text}}"}}


def functions_body(*, database_functions: list[dict[str, Any]] | None = None,
                   mutations: list[dict[str, Any]] | None = None,
                   faas: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"databaseFunctions": database_functions if database_functions is not None
            else [list_tasks(["Open", "Done"])],
            "mutations": mutations if mutations is not None else [create_task()],
            "faas": faas if faas is not None else [close_task()]}


# ------------------------------------------------------------------------ site.zip


def fingerprint_of(files: dict[str, bytes]) -> str:
    entries = [{"path": path, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
               for path, data in sorted(files.items())]
    canonical = json.dumps({"files": entries}, ensure_ascii=False, sort_keys=True,
                           separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def site_zip(files: dict[str, bytes], *, manifest: Any = None,
             extra_entries: dict[str, bytes] | None = None) -> tuple[bytes, str]:
    """(site.zip bytes, fingerprint); `manifest` overrides the one computed from files."""
    fingerprint = fingerprint_of(files)
    if manifest is None:
        manifest = {"fingerprint": fingerprint, "files": [
            {"path": path, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
            for path, data in sorted(files.items())]}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MANIFEST, json.dumps(manifest))
        for path, data in sorted({**files, **(extra_entries or {})}.items()):
            archive.writestr(path, data)
    return buffer.getvalue(), fingerprint


SITE_FILES: dict[str, bytes] = {
    "base-database.jsonc": b'{"appToken": "x", "title": "Tasks"}',
    "src/index.html": b"<!doctype html><title>Tasks</title><script type=module "
                      b"src=./app.js></script>",
    "src/app.js": b"import {invokeDatabaseFunction} from '/_basedb/runtime.js';\n",
    "src/style.css": b"body{margin:0}",
    "src/docs/index.html": b"<p>docs</p>",
    "src/data/logo.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>",
}


def upload(api: Api, site: str, archive: bytes, fingerprint: str | None,
           **fields: str) -> Response:
    headers = {"Authorization": f"Bearer {api.token}"} if api.token else {}
    data = dict(fields)
    if fingerprint is not None:
        data["fingerprint"] = fingerprint
    return api.client.post(f"{API_PREFIX}/sites/{site}/deployments", headers=headers,
                           data=data, files={"artifact": ("site.zip", archive,
                                                          "application/zip")})


def deploy(api: Api, site: str, files: dict[str, bytes] | None = None) -> dict[str, Any]:
    archive, fingerprint = site_zip(SITE_FILES if files is None else files)
    response = upload(api, site, archive, fingerprint)
    body = response.json()
    assert response.status_code == 200 and body["code"] == 0, body
    data: dict[str, Any] = body["data"]
    return data
