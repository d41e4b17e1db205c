"""Deployments: immutable preview snapshots, the catalog judged at deploy time, promote
and rollback, the artifact and its verification, roles."""

from __future__ import annotations

import hashlib
import io
import sqlite3
import zipfile
from typing import Any

import pytest

from basedb.platform import LocalPlatform
from basedb.platform.domain.snapshots import (
    SnapshotMemo,
    load_deployment_snapshot,
    load_snapshot,
    snapshot_catalog,
)
from basedb.protocol import Code
from basedb.workspace.model import DatabaseFunction, FaaS, Mutation
from tests.platform.conftest import Api, assert_error_shape, field_id
from tests.platform.release_support import (
    MANIFEST,
    SITE_FILES,
    TaskSite,
    close_task,
    create_task,
    deploy,
    functions_body,
    list_tasks,
    site_zip,
    summarize,
    task_site,
    upload,
)


@pytest.fixture
def site(api: Api) -> TaskSite:
    found = task_site(api)
    api.ok("PUT", f"/sites/{found.app_token}/draft/functions", json=functions_body())
    api.ok("PUT", f"/sites/{found.app_token}/draft/ai-functions",
           json={"aiFunctions": [summarize()]})
    api.ok("PUT", f"/sites/{found.app_token}/draft/agent-tools",
           json={"exclude": ["summarize"]})
    return found


def memos(platform: LocalPlatform) -> SnapshotMemo:
    """The snapshot memo of the platform's app (what its routes read through)."""
    memo: SnapshotMemo = platform.app.state.context.caches.snapshots
    return memo


def deployments_of(site: TaskSite) -> str:
    return f"/sites/{site.app_token}/deployments"


def refused(response: Any, code: int) -> str:
    assert_error_shape(response)
    body = response.json()
    assert body["code"] == code, body
    return str(body["msg"])


# ---------------------------------------------------------------------- create


def test_deploy_creates_a_ready_preview(api: Api, site: TaskSite,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BASEDB_PUBLIC_URL", raising=False)
    created = deploy(api, site.app_token)
    assert created["env"] == "preview" and created["status"] == "ready"
    assert created["deploymentId"].startswith("dpl")
    # The site's own page origin, on the address the request came to (http://localhost).
    label = site.app_token.lower()
    assert created["baseAppUrl"] == \
        f"http://{label}.localhost/sites/{site.app_token}/preview/"
    assert created["fingerprint"] == site_zip(SITE_FILES)[1]
    monkeypatch.setenv("BASEDB_PUBLIC_URL", "http://127.0.0.1:9000/")
    again = deploy(api, site.app_token)
    assert again["baseAppUrl"] == \
        f"http://{label}.localhost:9000/sites/{site.app_token}/preview/"
    monkeypatch.setenv("BASEDB_PUBLIC_URL", "https://basedb.example.com")
    named = api.ok("GET", deployments_of(site) + "/" + again["deploymentId"])["baseAppUrl"]
    assert named == f"https://{label}.basedb.example.com/sites/{site.app_token}/preview/"
    listed = api.ok("GET", deployments_of(site))
    assert [d["deploymentId"] for d in listed["deployments"]] == [again["deploymentId"],
                                                                  created["deploymentId"]]
    assert listed["previewDeploymentId"] == again["deploymentId"]
    assert listed["prodDeploymentId"] is None


def test_deploy_returns_the_function_hints(api: Api, site: TaskSite) -> None:
    short = create_task()
    short["declaration"]["description"] = "Create"
    api.ok("PUT", f"/sites/{site.app_token}/draft/functions",
           json=functions_body(mutations=[short]))
    created = deploy(api, site.app_token)
    assert [(h["code"], h["functionId"]) for h in created["functionHints"]] == [
        ("function_description_short", "createTask")]
    got = api.ok("GET", f"{deployments_of(site)}/{created['deploymentId']}")
    assert got["functionHints"] == created["functionHints"]


def test_the_snapshot_holds_everything_the_release_runs(api: Api, site: TaskSite,
                                                        platform: LocalPlatform) -> None:
    created = deploy(api, site.app_token)
    with platform.store.read() as conn:
        snapshot = load_snapshot(conn, site.app_token, "preview", memos(platform))
        assert load_snapshot(conn, site.app_token, "prod", memos(platform)) is None
        catalog = snapshot_catalog(conn, created["deploymentId"])
    assert snapshot is not None and snapshot.deployment_id == created["deploymentId"]
    assert snapshot.fingerprint == created["fingerprint"]
    assert snapshot.exclude == frozenset({"summarize"})
    assert {f: s.kind for f, s in snapshot.functions.items()} == {
        "listTasks": "database_function", "createTask": "mutation", "closeTask": "faas",
        "summarize": "ai_function"}
    assert snapshot.functions["listTasks"].sql == list_tasks()["sql"]
    assert snapshot.functions["closeTask"].handler == close_task()["handler"]
    declarations = snapshot.declarations
    assert isinstance(declarations["listTasks"], DatabaseFunction)
    assert isinstance(declarations["createTask"], Mutation)
    assert isinstance(declarations["closeTask"], FaaS)
    assert catalog is not None and catalog.table("Tasks") is not None
    got = api.ok("GET", f"{deployments_of(site)}/{created['deploymentId']}")
    assert got["functions"] == {"database_function": ["listTasks"], "mutation": ["createTask"],
                                "faas": ["closeTask"], "ai_function": ["summarize"]}
    assert got["agentTools"] == {"exclude": ["summarize"]}
    assert got["isPreview"] and not got["isProd"]


def test_changing_drafts_after_deploy_leaves_the_snapshot(api: Api, site: TaskSite,
                                                          platform: LocalPlatform) -> None:
    created = deploy(api, site.app_token)
    api.ok("PUT", f"/sites/{site.app_token}/draft/agent-tools", json={"exclude": []})
    api.ok("PUT", f"/sites/{site.app_token}/draft/functions", json=functions_body(
        database_functions=[list_tasks(["Open"], function_id="openTasks")], faas=[]))
    got = api.ok("GET", f"{deployments_of(site)}/{created['deploymentId']}")
    assert got["functions"]["database_function"] == ["listTasks"]
    assert got["functions"]["faas"] == ["closeTask"]
    assert got["agentTools"] == {"exclude": ["summarize"]}
    with platform.store.read() as conn:
        snapshot = load_deployment_snapshot(conn, created["deploymentId"], memos(platform))
    assert snapshot is not None and set(snapshot.functions) == {
        "listTasks", "createTask", "closeTask", "summarize"}
    # The tables refuse changes, whoever tries.
    with pytest.raises(sqlite3.IntegrityError, match="immutable"), \
            platform.store.write() as conn:
        conn.execute("UPDATE deployment_functions SET sql = 'SELECT 1' "
                     "WHERE deployment_id = ?", (created["deploymentId"],))


def test_a_catalog_change_after_saving_is_caught_at_deploy(api: Api, site: TaskSite) -> None:
    table = api.ok("GET", f"/bases/{site.base_token}/tables/{site.table_id}")
    status = field_id(table, "Status")
    api.ok("PUT", f"/bases/{site.base_token}/tables/{site.table_id}/fields/{status}",
           json={"name": "Status", "type": "select", "options": [{"name": "Open"}]})
    archive, fingerprint = site_zip(SITE_FILES)
    response = upload(api, site.app_token, archive, fingerprint)
    msg = refused(response, Code.BAD_REQUEST)
    assert "at deploy time" in msg and "ENUM_OUT_OF_DOMAIN" in msg
    assert [e["code"] for e in response.json()["data"]["errors"]] == ["ENUM_OUT_OF_DOMAIN"]
    # A draft valid against today's catalog, then a field it reads is renamed.
    api.ok("PUT", f"/sites/{site.app_token}/draft/functions",
           json=functions_body(database_functions=[list_tasks(["Open"])], mutations=[]))
    title = field_id(table, "Title")
    api.ok("PUT", f"/bases/{site.base_token}/tables/{site.table_id}/fields/{title}",
           json={"name": "Name", "type": "text"})
    response = upload(api, site.app_token, archive, fingerprint)
    refused(response, Code.BAD_REQUEST)
    assert "SQL_UNKNOWN_FIELD" in {e["code"] for e in response.json()["data"]["errors"]}
    assert api.ok("GET", deployments_of(site))["deployments"] == []


def test_a_policy_naming_a_removed_function_blocks_deploy(api: Api, site: TaskSite) -> None:
    api.ok("PUT", f"/sites/{site.app_token}/draft/ai-functions", json={"aiFunctions": []})
    archive, fingerprint = site_zip(SITE_FILES)
    msg = refused(upload(api, site.app_token, archive, fingerprint),
                  Code.AGENT_TOOLS_POLICY_INVALID)
    assert "'summarize'" in msg
    api.ok("PUT", f"/sites/{site.app_token}/draft/agent-tools", json={"exclude": []})
    deploy(api, site.app_token)


def test_an_ai_key_may_not_reuse_a_function_id(api: Api, site: TaskSite) -> None:
    api.ok("PUT", f"/sites/{site.app_token}/draft/ai-functions",
           json={"aiFunctions": [summarize("listTasks"), summarize()]})
    archive, fingerprint = site_zip(SITE_FILES)
    response = upload(api, site.app_token, archive, fingerprint)
    refused(response, Code.BAD_REQUEST)
    assert [e["code"] for e in response.json()["data"]["errors"]] == ["FUNCTION_ID_DUPLICATE"]


# ------------------------------------------------------------------------ prod


def test_promote_and_rollback(api: Api, site: TaskSite, platform: LocalPlatform) -> None:
    first = deploy(api, site.app_token)["deploymentId"]
    promoted = api.ok("POST", f"{deployments_of(site)}/{first}/promote")
    assert promoted == {"deploymentId": first, "env": "prod",
                        "baseAppUrl": f"http://{site.app_token.lower()}.localhost/sites/"
                        f"{site.app_token}/"}
    second = deploy(api, site.app_token)["deploymentId"]
    msg = refused(api.call("POST", f"{deployments_of(site)}/{first}/promote"),
                  Code.DEPLOYMENT_CONFLICT)
    assert "stale preview" in msg and second in msg
    api.ok("POST", f"{deployments_of(site)}/{second}/promote")
    listed = api.ok("GET", deployments_of(site))
    assert listed["prodDeploymentId"] == second
    assert [(d["isProd"], d["promotedAt"] is not None) for d in listed["deployments"]] == [
        (True, True), (False, True)]

    assert api.ok("POST", f"{deployments_of(site)}/{first}/rollback")["deploymentId"] == first
    with platform.store.read() as conn:
        prod = load_snapshot(conn, site.app_token, "prod", memos(platform))
        preview = load_snapshot(conn, site.app_token, "preview", memos(platform))
    assert prod is not None and prod.deployment_id == first
    assert preview is not None and preview.deployment_id == second
    got = api.ok("GET", f"{deployments_of(site)}/{first}")
    assert got["isProd"] and got["baseAppUrl"].endswith(f"/sites/{site.app_token}/")
    # Promoting or rolling back to the current prod changes nothing.
    api.ok("POST", f"{deployments_of(site)}/{first}/rollback")
    third = deploy(api, site.app_token)["deploymentId"]
    msg = refused(api.call("POST", f"{deployments_of(site)}/{third}/rollback"),
                  Code.DEPLOYMENT_CONFLICT)
    assert "never in production" in msg
    assert api.ok("GET", f"{deployments_of(site)}/{second}")["baseAppUrl"] is None


def test_unknown_or_foreign_deployments_conflict(api: Api, site: TaskSite) -> None:
    other = task_site(api)
    api.ok("PUT", f"/sites/{other.app_token}/draft/functions", json=functions_body())
    foreign = deploy(api, other.app_token)["deploymentId"]
    for deployment_id in ("dplNope", foreign):
        for action in ("promote", "rollback"):
            response = api.call("POST", f"{deployments_of(site)}/{deployment_id}/{action}")
            assert response.status_code == 409
            assert "Parameter: /path/deployment_id" in refused(response, Code.DEPLOYMENT_CONFLICT)
        refused(api.call("GET", f"{deployments_of(site)}/{deployment_id}"),
                Code.DEPLOYMENT_CONFLICT)
        refused(api.call("GET", f"{deployments_of(site)}/{deployment_id}/artifact"),
                Code.DEPLOYMENT_CONFLICT)


def test_promote_takes_no_body_properties(api: Api, site: TaskSite) -> None:
    first = deploy(api, site.app_token)["deploymentId"]
    refused(api.call("POST", f"{deployments_of(site)}/{first}/promote",
                     json={"fingerprint": "sha256:x"}), Code.BAD_REQUEST)
    api.ok("POST", f"{deployments_of(site)}/{first}/promote", json={})


# -------------------------------------------------------------------- artifact


def test_the_artifact_round_trips(api: Api, site: TaskSite) -> None:
    archive, fingerprint = site_zip(SITE_FILES)
    created = upload(api, site.app_token, archive, fingerprint).json()["data"]
    response = api.call("GET", f"{deployments_of(site)}/{created['deploymentId']}/artifact")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/zip"
    assert response.content == archive  # type: ignore[attr-defined]
    got = api.ok("GET", f"{deployments_of(site)}/{created['deploymentId']}")
    assert got["artifact"] == {"sha256": hashlib.sha256(archive).hexdigest(),
                               "size": len(archive)}


def tampered(files: dict[str, bytes]) -> tuple[bytes, str]:
    """site.zip of `files` with its manifest, but src/index.html changed afterwards."""
    original, fingerprint = site_zip(files)
    source = zipfile.ZipFile(io.BytesIO(original))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info in source.infolist():
            changed = info.filename == "src/index.html"
            archive.writestr(info.filename, b"changed" if changed else source.read(info))
    return buffer.getvalue(), fingerprint


@pytest.mark.parametrize(("make", "expected"), [
    (lambda: (b"not a zip", site_zip(SITE_FILES)[1]), "is not a readable zip file"),
    (lambda: (site_zip(SITE_FILES)[0], site_zip({"README.md": b"x"})[1]),
     "not the one in the fingerprint form field"),
    (lambda: site_zip(SITE_FILES, manifest={"fingerprint": site_zip(SITE_FILES)[1],
                                            "files": []}),
     "has a fingerprint that does not match its file list"),
    (lambda: site_zip(SITE_FILES, extra_entries={"src/extra.js": b"1"}),
     f"'src/extra.js' is not listed in {MANIFEST}"),
    (lambda: site_zip(SITE_FILES, extra_entries={"../evil.js": b"1"}), "'..' path segment"),
    (lambda: tampered(SITE_FILES),
     f"'src/index.html' does not match the size and SHA-256 recorded in {MANIFEST}"),
    # What `basedb pull` could not restore is refused at upload, too.
    (lambda: site_zip(SITE_FILES, extra_entries={".git/hooks/post-checkout": b"1"}),
     "would write into .git/"),
    (lambda: site_zip(SITE_FILES, extra_entries={"src/APP.js": b"1"}),
     "only in case or Unicode form"),
    (lambda: (site_zip(SITE_FILES)[0], "sha256:abc"), "64 lowercase hex digits"),
    (lambda: (site_zip(SITE_FILES)[0], None), "64 lowercase hex digits"),
])
def test_bad_artifacts_are_refused(api: Api, site: TaskSite, make: Any, expected: str) -> None:
    archive, fingerprint = make()
    msg = refused(upload(api, site.app_token, archive, fingerprint), Code.BAD_REQUEST)
    assert expected in msg
    assert api.ok("GET", deployments_of(site))["deployments"] == []


def test_the_manifest_must_be_there(api: Api, site: TaskSite) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("src/index.html", b"x")
    msg = refused(upload(api, site.app_token, buffer.getvalue(), site_zip(SITE_FILES)[1]),
                  Code.BAD_REQUEST)
    assert f"has no {MANIFEST}" in msg


def test_the_form_must_be_multipart_with_known_fields(api: Api, site: TaskSite) -> None:
    archive, fingerprint = site_zip(SITE_FILES)
    assert "Unknown form field note" in refused(
        upload(api, site.app_token, archive, fingerprint, note="hi"), Code.BAD_REQUEST)
    msg = refused(api.client.post(f"/open-apis/base/v3{deployments_of(site)}",
                                  headers={"Authorization": f"Bearer {api.token}",
                                           "Content-Type": "text/plain"},
                                  content=fingerprint.encode()), Code.BAD_REQUEST)
    assert "multipart/form-data" in msg
    # Without site.zip the fields may come as JSON (what lark-cli can carry), and only
    # the form's own fields.
    assert "The artifact file is missing" in refused(
        api.call("POST", deployments_of(site), json={"fingerprint": fingerprint}),
        Code.BAD_REQUEST)
    assert "Unknown field note" in refused(
        api.call("POST", deployments_of(site), json={"fingerprint": fingerprint, "note": 1}),
        Code.BAD_REQUEST)
    response = api.client.post(f"/open-apis/base/v3{deployments_of(site)}",
                               headers={"Authorization": f"Bearer {api.token}"},
                               files={"fingerprint": (None, fingerprint)})
    assert "The artifact file is missing" in refused(response, Code.BAD_REQUEST)


# ----------------------------------------------------------------------- roles


def test_only_owners_and_admins_deploy(api: Api, site: TaskSite) -> None:
    first = deploy(api, site.app_token)["deploymentId"]
    tokens = {}
    for role in ("admin", "member"):
        created = api.ok("POST", "/users", json={"name": role})
        api.ok("POST", f"/sites/{site.app_token}/members",
               json={"userId": created["user_id"], "role": role})
        tokens[role] = created["token"]
    member, admin = api.as_user(tokens["member"]), api.as_user(tokens["admin"])
    archive, fingerprint = site_zip(SITE_FILES)
    assert upload(member, site.app_token, archive, fingerprint).json()["code"] == \
        Code.PERMISSION_DENIED
    for path in (deployments_of(site), f"{deployments_of(site)}/{first}",
                 f"{deployments_of(site)}/{first}/artifact"):
        member.fail("GET", path, code=Code.PERMISSION_DENIED, status=403)
    member.fail("POST", f"{deployments_of(site)}/{first}/promote", code=Code.PERMISSION_DENIED)
    second = deploy(admin, site.app_token)["deploymentId"]
    admin.ok("POST", f"{deployments_of(site)}/{second}/promote")
    created_by = {d["deploymentId"]: d["createdBy"]
                  for d in api.ok("GET", deployments_of(site))["deployments"]}
    assert created_by[second] != created_by[first]


def test_a_new_deployment_is_answered_as_documented(api: Api, site: TaskSite) -> None:
    # Every property of the answer is in its documented response schema, and none that
    # is required is missing.
    from jsonschema import Draft202012Validator

    from basedb.platform.web.openapi import current_document

    created = deploy(api, site.app_token)
    document = current_document()
    operation = document["paths"]["/open-apis/base/v3/sites/{app_token}/deployments"]
    envelope = operation["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    ref = envelope["allOf"][1]["properties"]["data"]["$ref"]
    schema = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(created) <= set(schema["properties"]), set(created) - set(schema["properties"])
    Draft202012Validator({"$ref": ref, "components": document["components"]}).validate(created)
