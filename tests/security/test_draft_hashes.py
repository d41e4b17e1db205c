"""Attacks on content named by hash: PUT draft/functions items `{functionId,
contentHash}`, GET draft/hashes, and deployments that leave site.zip out.

A hash names content only within the site whose draft holds it: another site's author
who knows (or guesses) the exact content of a function, and so its hash, gets nothing of
it; a member cannot read the hashes; a malformed or oversized request is refused without
hurting the server."""

from __future__ import annotations

import time
from typing import Any

from basedb.core.content_hash import function_content_hash
from basedb.core.paths import API_PREFIX
from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.functions_support import (
    DATABASE_FUNCTIONS,
    TaskSite,
    add_member,
    build_site,
    deploy,
    save_drafts,
)

SECRET_SQL = DATABASE_FUNCTIONS[0]["sql"]
HASH_AT = "/databaseFunctions/0/contentHash"


def reference(item: dict[str, Any], kind: str = "database_function") -> dict[str, str]:
    return {"functionId": item["functionId"], "contentHash": function_content_hash(
        kind, item["functionId"], item["declaration"], item.get("sql"), item.get("handler"))}


def victim(api: Api) -> TaskSite:
    site = build_site(api)
    save_drafts(site)
    deploy(site)
    return site


def stranger_site(api: Api, name: str) -> tuple[Api, str]:
    """Another user of the platform, with a site of their own (no tables bound)."""
    created = api.ok("POST", "/users", json={"name": name})
    stranger = api.as_user(created["token"])
    app = stranger.ok("POST", "/sites/create", json={"title": "Mine"})["appToken"]
    return stranger, str(app)


def test_another_sites_author_gets_nothing_for_a_known_hash(api: Api) -> None:
    site = victim(api)
    stranger, app = stranger_site(api, "mallory")
    body = {"databaseFunctions": [reference(item) for item in DATABASE_FUNCTIONS]}
    response = stranger.call("PUT", f"/sites/{app}/draft/functions", json=body)
    answer = response.json()
    assert answer["code"] == Code.BAD_REQUEST
    assert len(answer["data"]["resend"]) == len(DATABASE_FUNCTIONS)
    assert SECRET_SQL not in response.text and "FROM" not in answer["msg"]
    stored = stranger.ok("GET", f"/sites/{app}/draft/functions")
    assert stored["databaseFunctions"] == []
    # Nor can the stranger read the victim's hashes, or use them there: to an outsider
    # the site does not exist.
    for method, path, sent in (("GET", "hashes", None), ("PUT", "functions", body)):
        message = stranger.fail(method, f"/sites/{site.app_token}/draft/{path}", json=sent,
                                code=Code.BAD_REQUEST, status=404)
        assert "was not found" in message


def test_another_sites_fingerprint_does_not_lend_its_site_zip(api: Api) -> None:
    site = victim(api)
    fingerprint = api.ok("GET", f"/sites/{site.app_token}/draft/hashes")["fingerprints"][0]
    stranger, app = stranger_site(api, "mallory")
    response = stranger.client.post(f"{API_PREFIX}/sites/{app}/deployments",
                                    headers={"Authorization": f"Bearer {stranger.token}"},
                                    files={"fingerprint": (None, fingerprint)})
    answer = response.json()
    assert answer["code"] == Code.BAD_REQUEST and answer["data"]["resend"] == ["/artifact"]
    assert stranger.ok("GET", f"/sites/{app}/deployments")["deployments"] == []


def test_a_member_can_neither_read_nor_use_hashes(api: Api) -> None:
    site = victim(api)
    member, _ = add_member(site, "curious")
    member.fail("GET", f"/sites/{site.app_token}/draft/hashes", code=Code.PERMISSION_DENIED)
    member.fail("PUT", f"/sites/{site.app_token}/draft/functions",
                json={"databaseFunctions": [reference(DATABASE_FUNCTIONS[0])]},
                code=Code.PERMISSION_DENIED)
    api.as_user(None).fail("GET", f"/sites/{site.app_token}/draft/hashes",
                           code=Code.TOKEN_MISSING)


def test_a_hash_names_one_function_of_one_kind(api: Api) -> None:
    site = victim(api)
    url = f"/sites/{site.app_token}/draft/functions"
    before = api.ok("GET", url)
    renamed = {**reference(DATABASE_FUNCTIONS[0]), "functionId": "copyOfListTasks"}
    as_mutation = reference(DATABASE_FUNCTIONS[0])
    for body in ({"databaseFunctions": [renamed]}, {"mutations": [as_mutation]}):
        answer = api.call("PUT", url, json=body).json()
        assert answer["code"] == Code.BAD_REQUEST and answer["data"]["resend"], answer
    assert api.ok("GET", url)["databaseFunctions"] == before["databaseFunctions"]


def test_malformed_references_are_refused_with_a_pointer(api: Api) -> None:
    site = victim(api)
    url = f"/sites/{site.app_token}/draft/functions"
    good = reference(DATABASE_FUNCTIONS[0])
    cases = [
        ({**good, "contentHash": good["contentHash"].upper()}, f"{HASH_AT}"),
        ({**good, "contentHash": good["contentHash"] + "0"}, f"{HASH_AT}"),
        ({**good, "contentHash": 7}, f"{HASH_AT}"),
        ({**good, "sql": "SELECT 1"}, "/databaseFunctions/0/sql"),
        ({"contentHash": good["contentHash"]}, "/databaseFunctions/0/functionId"),
    ]
    for item, pointer in cases:
        message = api.fail("PUT", url, json={"databaseFunctions": [item]},
                           code=Code.BAD_REQUEST)
        assert f"Parameter: {pointer}" in message, message


def test_a_flood_of_references_is_refused_and_the_server_stays_healthy(api: Api) -> None:
    site = victim(api)
    url = f"/sites/{site.app_token}/draft/functions"
    flood = [{"functionId": f"f{n}", "contentHash": f"{n:064x}"} for n in range(10_001)]
    started = time.monotonic()
    message = api.fail("PUT", url, json={"databaseFunctions": flood}, code=Code.BAD_REQUEST)
    assert "at most 10000" in message
    unknown = api.call("PUT", url, json={"databaseFunctions": flood[:5_000]}).json()
    assert unknown["code"] == Code.BAD_REQUEST and len(unknown["data"]["resend"]) == 5_000
    assert time.monotonic() - started < 60
    assert api.ok("GET", f"/sites/{site.app_token}/draft/hashes")["databaseFunctions"]
