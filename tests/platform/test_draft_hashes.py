"""Draft functions named by content hash (GET draft/hashes, PUT draft/functions with
`{functionId, contentHash}` items) and deployments that reuse a site.zip the site
already has."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from basedb.core.content_hash import function_content_hash
from basedb.core.paths import API_PREFIX
from basedb.platform.storage.schema import MIGRATIONS
from basedb.platform.storage.store import Store
from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.functions_support import (
    DATABASE_FUNCTIONS,
    FAAS,
    MUTATIONS,
    TaskSite,
    build_site,
    deploy,
    save_drafts,
)

LISTS = {"databaseFunctions": ("database_function", DATABASE_FUNCTIONS),
         "mutations": ("mutation", MUTATIONS), "faas": ("faas", FAAS)}


def content_hash(kind: str, item: dict[str, Any]) -> str:
    return function_content_hash(kind, item["functionId"], item["declaration"],
                                 item.get("sql"), item.get("handler"))


def references(order: slice = slice(None)) -> dict[str, list[dict[str, str]]]:
    return {key: [{"functionId": item["functionId"], "contentHash": content_hash(kind, item)}
                  for item in items[order]] for key, (kind, items) in LISTS.items()}


def drafts(site: TaskSite) -> dict[str, Any]:
    found: dict[str, Any] = site.api.ok("GET", f"/sites/{site.app_token}/draft/functions")
    found.pop("draftRevision")
    return found


def hashes_url(site: TaskSite) -> str:
    return f"/sites/{site.app_token}/draft/hashes"


def functions_url(site: TaskSite) -> str:
    return f"/sites/{site.app_token}/draft/functions"


def test_the_platform_answers_the_hashes_the_client_computes(api: Api) -> None:
    site = build_site(api)
    save_drafts(site)
    held = api.ok("GET", hashes_url(site))
    for key, (kind, items) in LISTS.items():
        assert held[key] == {item["functionId"]: content_hash(kind, item) for item in items}
    assert held["fingerprints"] == [] and held["timezone"] == "UTC"
    deploy(site, promote=False)
    fingerprints = api.ok("GET", hashes_url(site))["fingerprints"]
    assert len(fingerprints) == 1 and fingerprints[0].startswith("sha256:")


def test_a_draft_sent_by_reference_is_the_draft_sent_in_full(api: Api) -> None:
    site = build_site(api)
    save_drafts(site)
    before = drafts(site)
    revision = api.ok("GET", hashes_url(site))["draftRevision"]
    answer = api.ok("PUT", functions_url(site), json=references())
    assert answer["counts"] == {"database_function": len(DATABASE_FUNCTIONS),
                                "mutation": len(MUTATIONS), "faas": len(FAAS)}
    assert answer["draftRevision"] > revision
    assert drafts(site) == before


def test_references_reorder_drop_and_mix_with_full_functions(api: Api) -> None:
    site = build_site(api)
    save_drafts(site)
    body = references(slice(None, None, -1))
    body["databaseFunctions"].pop()  # drops the first Database Function
    changed = {**DATABASE_FUNCTIONS[1], "sql": DATABASE_FUNCTIONS[1]["sql"] + " LIMIT 2"}
    body["databaseFunctions"][-1] = changed
    api.ok("PUT", functions_url(site), json=body)
    stored = drafts(site)
    ids = [item["functionId"] for item in stored["databaseFunctions"]]
    assert ids == [item["functionId"] for item in DATABASE_FUNCTIONS[1:][::-1]]
    assert stored["databaseFunctions"][-1]["sql"].endswith("LIMIT 2")
    assert [m["functionId"] for m in stored["mutations"]] == [
        m["functionId"] for m in MUTATIONS[::-1]]
    assert stored["mutations"][0] == MUTATIONS[-1]


def test_a_reference_is_judged_again_when_the_catalog_changed(api: Api) -> None:
    site = build_site(api)
    save_drafts(site)
    fields = f"/bases/{site.base_token}/tables/{site.tasks_table}/fields"
    listed = api.ok("GET", fields)
    points = next(f for f in listed.get("fields", listed.get("items", []))
                  if f["name"] == "Points")
    api.ok("DELETE", f"{fields}/{points.get('id') or points['field_id']}")
    message = api.fail("PUT", functions_url(site), json=references(), code=Code.BAD_REQUEST)
    assert "heavyPoints" in message and "SQL_UNKNOWN_FIELD" in message


def test_an_unknown_reference_asks_for_the_function_in_full(api: Api) -> None:
    site = build_site(api)
    save_drafts(site)
    before = drafts(site)
    body = references()
    body["databaseFunctions"][2]["contentHash"] = "0" * 64
    body["faas"][0]["contentHash"] = "1" * 64
    response = api.call("PUT", functions_url(site), json=body)
    answer = response.json()
    assert answer["code"] == Code.BAD_REQUEST
    assert answer["data"]["resend"] == ["/databaseFunctions/2", "/faas/0"]
    assert "Parameter: /databaseFunctions/2/contentHash" in answer["msg"]
    assert drafts(site) == before


def test_the_development_draft_takes_functions_in_full_only(api: Api) -> None:
    site = build_site(api)
    save_drafts(site)
    message = api.fail("PUT", f"/sites/{site.app_token}/dev/functions", json=references(),
                       code=Code.BAD_REQUEST)
    assert "contentHash" in message


def post_deployment(site: TaskSite, fingerprint: str) -> Any:
    response = site.api.client.post(
        f"{API_PREFIX}/sites/{site.app_token}/deployments",
        headers={"Authorization": f"Bearer {site.api.token}"},
        files={"fingerprint": (None, fingerprint)})
    return response.json()


def test_a_deployment_reuses_the_site_zip_of_its_fingerprint(api: Api) -> None:
    site = build_site(api)
    save_drafts(site)
    first = deploy(site, promote=False)
    fingerprint = api.ok("GET", hashes_url(site))["fingerprints"][0]
    answer = post_deployment(site, fingerprint)
    assert answer["code"] == 0, answer
    second = answer["data"]["deploymentId"]
    one = api.ok("GET", f"/sites/{site.app_token}/deployments/{first}")
    two = api.ok("GET", f"/sites/{site.app_token}/deployments/{second}")
    assert one["artifact"] == two["artifact"] and one["functions"] == two["functions"]
    downloads = [api.call("GET", f"/sites/{site.app_token}/deployments/{d}/artifact").content
                 for d in (first, second)]
    assert downloads[0] == downloads[1] and downloads[0][:2] == b"PK"


def test_a_fingerprint_the_site_never_deployed_needs_the_upload(api: Api) -> None:
    site = build_site(api)
    save_drafts(site)
    answer = post_deployment(site, "sha256:" + "a" * 64)
    assert answer["code"] == Code.BAD_REQUEST and answer["data"]["resend"] == ["/artifact"]
    assert api.ok("GET", f"/sites/{site.app_token}/deployments")["deployments"] == []


def test_the_migration_gives_stored_drafts_their_hashes(tmp_path: Path) -> None:
    path = tmp_path / "platform.db"
    Store(path, migrations=[m for m in MIGRATIONS if m.version < 13]).close()
    declaration = '{"name": "q", "description": "A stored draft from before"}'
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("INSERT INTO draft_functions (app_token, kind, function_id, position, "
                     "declaration, sql, handler) VALUES ('app', 'database_function', 'q', 0, "
                     "?, 'SELECT 1', NULL)", (declaration,))
    Store(path).close()
    with sqlite3.connect(path) as conn:
        [(stored,)] = conn.execute("SELECT content_hash FROM draft_functions").fetchall()
    assert stored == function_content_hash("database_function", "q", {
        "name": "q", "description": "A stored draft from before"}, "SELECT 1", None)
