"""Base access ends with the role that gave it (issue finding 2).

While an admin of site A, a user could bind A's Base to a site of their own; after being
removed from A they kept reading and writing A's Base, because access came from "owns a
site bound to this Base". Access is now held as grants, and a binding lasts only as long
as the access it was made with.
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform
from basedb.protocol import Code
from tests.platform.conftest import Api, make_table
from tests.platform.functions_support import sql_function
from tests.platform.release_support import deploy
from tests.platform.sign_in_support import sign_in


def user(api: Api, name: str) -> tuple[Api, str]:
    created = api.ok("POST", "/users", json={"name": name})
    return api.as_user(created["token"]), str(created["user_id"])


@pytest.fixture
def olivias(api: Api) -> dict[str, Any]:
    """Olivia's Base (one table, one record) and site A bound to it."""
    olivia, olivia_id = user(api, "Olivia")
    base = olivia.ok("POST", "/bases", json={"name": "Payroll"})["base_token"]
    table = make_table(olivia, base, "Salaries", [{"name": "Name", "type": "text"}])["id"]
    olivia.ok("POST", f"/bases/{base}/tables/{table}/records", json={"Name": "Olivia"})
    site = olivia.ok("POST", "/sites/create", json={"title": "A"})["appToken"]
    olivia.ok("POST", f"/sites/{site}/bind_base", json={"baseToken": base, "tableIds": [table]})
    return {"api": olivia, "id": olivia_id, "base": base, "table": table, "site": site}


def records(base: str, table: str) -> str:
    return f"/bases/{base}/tables/{table}/records"


def binding(who: Api, site: str) -> dict[str, Any]:
    return dict(who.ok("GET", f"/sites/{site}")["binding"])


def test_a_removed_admin_loses_the_base_and_what_they_bound_with_it(
        api: Api, olivias: dict[str, Any]) -> None:
    olivia, base, table, site = olivias["api"], olivias["base"], olivias["table"], olivias["site"]
    rex, rex_id = user(api, "Rex")
    olivia.ok("POST", f"/sites/{site}/members", json={"userId": rex_id, "role": "admin"})
    own = rex.ok("POST", "/sites/create", json={"title": "Rex's"})["appToken"]
    rex.ok("POST", f"/sites/{own}/bind_base", json={"baseToken": base, "tableIds": [table]})
    assert rex.ok("GET", records(base, table))["total"] == 1
    # …and publishes a function of his own site that reads it.
    rex.ok("PUT", f"/sites/{own}/draft/functions", json={"databaseFunctions": [
        sql_function("salaries", 'SELECT "Name" FROM "Salaries"')]})
    deployment = deploy(rex, own)["deploymentId"]
    rex.ok("POST", f"/sites/{own}/deployments/{deployment}/promote")
    invoke = f"/sites/{own}/functions/salaries/invoke"
    assert rex.ok("POST", invoke, json={"params": {}})["rows"] == [{"Name": "Olivia"}]
    grants = olivia.ok("GET", f"/bases/{base}/grants")["grants"]
    assert {(g["user_id"], g["via_app_token"]) for g in grants} == {(rex_id, site),
                                                                     (rex_id, own)}

    olivia.ok("DELETE", f"/sites/{site}/members", json={"userId": rex_id})

    # Everything held through the membership is gone: the Base, and the binding made
    # with it (no access moves to anyone).
    rex.fail("GET", records(base, table), code=Code.BAD_REQUEST, status=404)
    rex.fail("POST", records(base, table), json={"Name": "Rex"}, code=Code.BAD_REQUEST,
             status=404)
    assert binding(rex, own) == {"baseToken": None, "tableIds": []}
    assert rex.ok("GET", f"/sites/{own}/catalog")["tables"] == []
    rex.fail("POST", invoke, json={"params": {}}, code=Code.SCHEMA_NOT_READY)
    rex.fail("POST", f"/sites/{own}/bind_base", json={"baseToken": base, "tableIds": [table]},
             code=Code.BAD_REQUEST, status=404)
    assert olivia.ok("GET", f"/bases/{base}/grants")["grants"] == []
    assert olivia.ok("GET", records(base, table))["total"] == 1
    assert binding(olivia, site)["tableIds"] == [table]


def test_demotion_to_member_ends_base_access_too(api: Api, olivias: dict[str, Any]) -> None:
    olivia, base, table, site = olivias["api"], olivias["base"], olivias["table"], olivias["site"]
    ada, ada_id = user(api, "Ada")
    olivia.ok("POST", f"/sites/{site}/members", json={"userId": ada_id, "role": "admin"})
    own = ada.ok("POST", "/sites/create", json={"title": "Ada's"})["appToken"]
    ada.ok("POST", f"/sites/{own}/bind_base", json={"baseToken": base, "tableIds": [table]})
    olivia.ok("POST", f"/sites/{site}/members", json={"userId": ada_id, "role": "member"})
    ada.fail("GET", records(base, table), code=Code.BAD_REQUEST, status=404)
    assert binding(ada, own)["tableIds"] == []
    assert ada.ok("GET", f"/sites/{site}")["role"] == "member"


def test_a_binding_stays_while_its_maker_has_other_access(api: Api,
                                                          olivias: dict[str, Any]) -> None:
    olivia, base, table, site = olivias["api"], olivias["base"], olivias["table"], olivias["site"]
    rex, rex_id = user(api, "Rex")
    olivia.ok("POST", f"/sites/{site}/members", json={"userId": rex_id, "role": "admin"})
    own = rex.ok("POST", "/sites/create", json={"title": "Rex's"})["appToken"]
    rex.ok("POST", f"/sites/{own}/bind_base", json={"baseToken": base, "tableIds": [table]})
    olivia.ok("POST", f"/bases/{base}/grants", json={"user_id": rex_id})
    olivia.ok("DELETE", f"/sites/{site}/members", json={"userId": rex_id})
    assert binding(rex, own)["tableIds"] == [table]  # rests on the direct grant now
    assert rex.ok("GET", records(base, table))["total"] == 1
    revoked = olivia.ok("DELETE", f"/bases/{base}/grants", params={"user_id": rex_id})
    assert revoked == {"user_id": rex_id, "revoked": True, "unbound_app_tokens": [own]}
    rex.fail("GET", records(base, table), code=Code.BAD_REQUEST, status=404)
    assert binding(rex, own)["tableIds"] == []


def test_revocation_follows_the_chain(api: Api, olivias: dict[str, Any]) -> None:
    """Rex (admin of A) binds the Base to B; Sam, admin of B, binds it to C. Removing
    Rex from A ends B's binding, hence Sam's access, hence C's binding."""
    olivia, base, table, site = olivias["api"], olivias["base"], olivias["table"], olivias["site"]
    rex, rex_id = user(api, "Rex")
    sam, sam_id = user(api, "Sam")
    olivia.ok("POST", f"/sites/{site}/members", json={"userId": rex_id, "role": "admin"})
    b = rex.ok("POST", "/sites/create", json={"title": "B"})["appToken"]
    rex.ok("POST", f"/sites/{b}/bind_base", json={"baseToken": base, "tableIds": [table]})
    rex.ok("POST", f"/sites/{b}/members", json={"userId": sam_id, "role": "admin"})
    c = sam.ok("POST", "/sites/create", json={"title": "C"})["appToken"]
    sam.ok("POST", f"/sites/{c}/bind_base", json={"baseToken": base, "tableIds": [table]})
    assert sam.ok("GET", records(base, table))["total"] == 1

    olivia.ok("DELETE", f"/sites/{site}/members", json={"userId": rex_id})
    for who in (rex, sam):
        who.fail("GET", records(base, table), code=Code.BAD_REQUEST, status=404)
    assert binding(rex, b)["tableIds"] == [] and binding(sam, c)["tableIds"] == []


def test_two_bindings_cannot_hold_each_other_up(api: Api, olivias: dict[str, Any]) -> None:
    """Rex binds the Base to B on access through A, and to C on access through A or B;
    then B and C each give Rex access through the other. Once Rex loses A, neither
    holds the other up: access must lead back to the Base's owner or a direct grant."""
    olivia, base, table, site = olivias["api"], olivias["base"], olivias["table"], olivias["site"]
    rex, rex_id = user(api, "Rex")
    olivia.ok("POST", f"/sites/{site}/members", json={"userId": rex_id, "role": "admin"})
    b = rex.ok("POST", "/sites/create", json={"title": "B"})["appToken"]
    c = rex.ok("POST", "/sites/create", json={"title": "C"})["appToken"]
    rex.ok("POST", f"/sites/{b}/bind_base", json={"baseToken": base, "tableIds": [table]})
    rex.ok("POST", f"/sites/{c}/bind_base", json={"baseToken": base, "tableIds": [table]})
    olivia.ok("DELETE", f"/sites/{site}/members", json={"userId": rex_id})
    assert binding(rex, b)["tableIds"] == [] and binding(rex, c)["tableIds"] == []
    rex.fail("GET", records(base, table), code=Code.BAD_REQUEST, status=404)


def test_leaving_a_site_ends_its_page_sessions(api: Api, olivias: dict[str, Any],
                                               platform: LocalPlatform) -> None:
    olivia, site = olivias["api"], olivias["site"]
    mo, mo_id = user(api, "Mo")
    olivia.ok("POST", f"/sites/{site}/members", json={"userId": mo_id})
    headers = {"X-Basedb-Page": "1", "Sec-Fetch-Site": "same-origin"}
    with TestClient(platform.app, base_url=f"http://{site.lower()}.localhost") as page:
        sign_in(page, str(mo.token))
        assert page.get("/_basedb/session", headers=headers).json()["code"] == 0
        mo.ok("DELETE", f"/sites/{site}/members", json={"userId": mo_id})
        after = page.get("/_basedb/session", headers=headers).json()
        assert after["code"] == Code.TOKEN_INVALID


def test_only_the_owner_manages_grants(api: Api, olivias: dict[str, Any]) -> None:
    olivia, base, site = olivias["api"], olivias["base"], olivias["site"]
    ada, ada_id = user(api, "Ada")
    _, eve_id = user(api, "Eve")
    olivia.ok("POST", f"/sites/{site}/members", json={"userId": ada_id, "role": "admin"})
    ada.fail("POST", f"/bases/{base}/grants", json={"user_id": eve_id},
             code=Code.PERMISSION_DENIED, status=403)
    olivia.fail("POST", f"/bases/{base}/grants", json={"user_id": olivias["id"]},
                code=Code.BAD_REQUEST)
    olivia.fail("DELETE", f"/bases/{base}/grants", params={"user_id": ada_id},
                code=Code.BAD_REQUEST, status=404)  # held through the site, not direct
