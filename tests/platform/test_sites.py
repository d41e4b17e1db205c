"""Sites: binding, the live catalog, members and what each role may do."""

from __future__ import annotations

from typing import Any

import pytest

from basedb.protocol import Code
from basedb.workspace.catalog import build_catalog
from tests.platform.conftest import Api, make_table


@pytest.fixture
def site(api: Api) -> str:
    created = api.ok("POST", "/sites/create", json={"title": "Team leave"})
    assert created["title"] == "Team leave" and created["appToken"].startswith("Prj")
    return str(created["appToken"])


def new_user(api: Api, name: str) -> tuple[str, Api]:
    created = api.ok("POST", "/users", json={"name": name})
    return created["user_id"], api.as_user(created["token"])


def test_get_and_list_sites(api: Api, site: str) -> None:
    got = api.ok("GET", f"/sites/{site}")
    assert got["appToken"] == site and got["role"] == "owner"
    assert got["binding"] == {"baseToken": None, "tableIds": []}
    listed = api.ok("GET", "/sites/list")
    assert listed == {"sites": [{"appToken": site, "title": "Team leave", "role": "owner",
                                 "baseToken": None}], "hasMore": False}
    api.fail("GET", "/sites/PrjNope", code=9499, status=404)
    api.fail("POST", "/sites/create", json={"title": ""}, code=9499)


def test_sites_list_pages_with_page_token(api: Api, site: str) -> None:
    made = [site] + [api.ok("POST", "/sites/create", json={"title": f"S{i}"})["appToken"]
                     for i in range(4)]
    seen: list[str] = []
    params: dict[str, Any] = {"pageSize": 2}
    pages = 0
    while True:
        page = api.ok("GET", "/sites/list", params=params)
        pages += 1
        seen += [s["appToken"] for s in page["sites"]]
        if not page["hasMore"]:
            assert "pageToken" not in page
            break
        params = {"pageSize": 2, "pageToken": page["pageToken"]}
    assert sorted(seen) == sorted(made) and len(seen) == len(set(seen)) and pages == 3
    msg = api.fail("GET", "/sites/list", params={"pageToken": "bm90LWEtdG9rZW4"}, code=9499)
    assert "pageToken" in msg
    api.fail("GET", "/sites/list", params={"pageSize": 0}, code=9499)


@pytest.mark.parametrize("size", ["", " 2", "1_0", "\u0663", "2.0"])
def test_an_integer_query_parameter_is_digits_only(api: Api, site: str, size: str) -> None:
    # The document says integer; "" once meant the default and "1_0" meant 10.
    msg = api.fail("GET", "/sites/list", params={"pageSize": size}, code=9499, status=400)
    assert "?pageSize" in msg


def test_batch_create_answers_the_rows_as_lark_cli_reads_them(api: Api, base: str) -> None:
    table = make_table(api, base, "T", [{"name": "Title", "type": "text"},
                                        {"name": "N", "type": "number"}])
    created = api.ok("POST", f"/bases/{base}/tables/{table['id']}/records/batch_create",
                     json={"fields": ["N", "Title"], "rows": [[1, "a"], [None, "b"]]})
    assert created["fields"] == ["N", "Title"]
    assert created["field_id_list"] == [table["fields"][1]["id"], table["fields"][0]["id"]]
    assert created["data"] == [[1, "a"], [None, "b"]]
    assert len(created["record_id_list"]) == 2
    listed = api.ok("GET", f"/bases/{base}/tables")
    assert listed["tables"] == [{"id": table["id"], "name": "T"}] and listed["total"] == 1
    got = api.ok("GET", f"/bases/{base}/tables/{table['id']}")
    assert got["id"] == table["id"] and got["primary_field"] == table["fields"][0]["id"]


def test_bind_appends_and_dedupes(api: Api, base: str, site: str) -> None:
    a = make_table(api, base, "A", [{"name": "x", "type": "text"}])["id"]
    b = make_table(api, base, "B", [])["id"]
    bound = api.ok("POST", f"/sites/{site}/bind_base", json={"baseToken": base, "tableIds": [a]})
    assert bound == {"appToken": site, "baseToken": base, "tableIds": [a]}
    bound = api.ok("POST", f"/sites/{site}/bind_base",
                   json={"baseToken": base, "tableIds": [b, a, b]})
    assert bound["tableIds"] == [a, b]
    assert api.ok("GET", f"/sites/{site}")["binding"] == {"baseToken": base, "tableIds": [a, b]}

    msg = api.fail("POST", f"/sites/{site}/bind_base", code=9499, status=404,
                   json={"baseToken": base, "tableIds": ["tblNope"]})
    assert "/tableIds/0" in msg
    other = api.ok("POST", "/bases", json={"name": "Other"})["base_token"]
    c = make_table(api, other, "C", [])["id"]
    msg = api.fail("POST", f"/sites/{site}/bind_base", code=9499,
                   json={"baseToken": other, "tableIds": [c]})
    assert "binds one Base" in msg
    msg = api.fail("POST", f"/sites/{site}/bind_base", code=9499,
                   json={"baseToken": base, "tableIds": []})
    assert "/tableIds" in msg

    left = api.ok("POST", f"/sites/{site}/unbind_base", json={"tableIds": [a]})
    assert left == {"appToken": site, "baseToken": base, "tableIds": [b]}
    left = api.ok("POST", f"/sites/{site}/unbind_base")
    assert left == {"appToken": site, "baseToken": None, "tableIds": []}
    # Unbound from everything, the site may now bind another Base.
    api.ok("POST", f"/sites/{site}/bind_base", json={"baseToken": other, "tableIds": [c]})


def test_catalog_is_the_catalog_json_shape(api: Api, base: str, site: str) -> None:
    people = make_table(api, base, "People", [{"name": "Name", "type": "text"}])
    tasks = make_table(api, base, "Tasks", [
        {"name": "Title", "type": "text", "description": "Short title"},
        {"name": "Status", "type": "select", "options": [{"name": "Open"}, {"name": "Done"}]},
        {"name": "Owners", "type": "user", "multiple": True},
        {"name": "People", "type": "link", "link_table": people["id"]},
        {"name": "Due", "type": "datetime"},
    ])
    api.ok("POST", f"/sites/{site}/bind_base",
           json={"baseToken": base, "tableIds": [tasks["id"], people["id"]]})
    doc: dict[str, Any] = api.ok("GET", f"/sites/{site}/catalog")
    assert doc["baseToken"] == base
    assert [t["name"] for t in doc["tables"]] == ["Tasks", "People"]
    fields = {f["name"]: f for f in doc["tables"][0]["fields"]}
    assert fields["Status"] == {"fieldId": tasks["fields"][1]["id"], "name": "Status",
                                "type": "select", "multiple": False,
                                "options": [{"name": "Open"}, {"name": "Done"}]}
    assert fields["Owners"]["multiple"] is True
    assert fields["People"]["linkTable"] == people["id"]
    assert fields["Title"]["description"] == "Short title"
    catalog, findings = build_catalog(doc)
    assert findings == [] and catalog.table("Tasks") is not None

    # A deleted table leaves the binding; a site with no tables left is unbound.
    api.ok("DELETE", f"/bases/{base}/tables/{tasks['id']}")
    assert [t["name"] for t in api.ok("GET", f"/sites/{site}/catalog")["tables"]] == ["People"]
    api.ok("DELETE", f"/bases/{base}/tables/{people['id']}")
    assert api.ok("GET", f"/sites/{site}/catalog") == {"baseToken": "", "tables": []}


def test_members_and_roles(api: Api, base: str, site: str) -> None:
    table = make_table(api, base, "T", [{"name": "x", "type": "text"}])["id"]
    api.ok("POST", f"/sites/{site}/bind_base", json={"baseToken": base, "tableIds": [table]})
    ada_id, ada = new_user(api, "Ada")
    bob_id, bob = new_user(api, "Bob")
    cy_id, cy = new_user(api, "Cy")

    assert api.ok("POST", f"/sites/{site}/members", json={"userId": ada_id, "role": "admin"}) \
        == {"userId": ada_id, "role": "admin"}
    api.ok("POST", f"/sites/{site}/members", json={"userId": bob_id})
    members = api.ok("GET", f"/sites/{site}/members")["members"]
    assert [(m["name"], m["role"]) for m in members][1:] == [("Ada", "admin"), ("Bob", "member")]
    assert members[0]["role"] == "owner"

    # Base access: owners and admins of a bound site, not plain members or strangers
    # (to whom the Base, and to strangers the site, is not there).
    assert ada.ok("GET", f"/bases/{base}/tables")["total"] == 1
    bob.fail("GET", f"/bases/{base}/tables", code=9499, status=404)
    cy.fail("GET", f"/sites/{site}", code=9499, status=404)
    assert bob.ok("GET", f"/sites/{site}")["role"] == "member"
    assert [t["name"] for t in bob.ok("GET", f"/sites/{site}/catalog")["tables"]] == ["T"]
    bob.fail("POST", f"/sites/{site}/bind_base", code=Code.PERMISSION_DENIED,
             json={"baseToken": base, "tableIds": [table]})
    bob.fail("POST", f"/sites/{site}/members", json={"userId": cy_id}, code=Code.PERMISSION_DENIED)

    # Admins add members but only the owner grants or revokes admin.
    ada.ok("POST", f"/sites/{site}/members", json={"userId": cy_id})
    ada.fail("POST", f"/sites/{site}/members", json={"userId": cy_id, "role": "admin"},
             code=Code.PERMISSION_DENIED)
    api.fail("POST", f"/sites/{site}/members", json={"userId": ada_id, "role": "owner"},
             code=9499)
    owner_id = api.ok("GET", "/users/me")["user_id"]
    ada.fail("POST", f"/sites/{site}/members", json={"userId": owner_id, "role": "member"},
             code=9499)
    api.fail("POST", f"/sites/{site}/members", json={"userId": "ou_ghost"}, code=9499,
             status=404)

    # Removal: admins remove members, members may leave, nobody removes the owner.
    ada.ok("DELETE", f"/sites/{site}/members", json={"userId": cy_id})
    assert bob.ok("DELETE", f"/sites/{site}/members", params={"userId": bob_id}) \
        == {"userId": bob_id, "removed": True}
    api.fail("DELETE", f"/sites/{site}/members", json={"userId": owner_id}, code=9499)
    api.fail("DELETE", f"/sites/{site}/members", json={"userId": cy_id}, code=9499, status=404)
    api.fail("DELETE", f"/sites/{site}/members", code=9499)
    api.ok("DELETE", f"/sites/{site}/members", json={"userId": ada_id})
    ada.fail("GET", f"/bases/{base}/tables", code=9499, status=404)
    assert [s["appToken"] for s in bob.ok("GET", "/sites/list")["sites"]] == []


def test_binding_needs_access_to_the_base(api: Api, site: str) -> None:
    _, eve = new_user(api, "Eve")
    her_base = eve.ok("POST", "/bases", json={"name": "Eve's"})["base_token"]
    her_table = make_table(eve, her_base, "Secrets", [])["id"]
    api.fail("POST", f"/sites/{site}/bind_base", code=9499, status=404,
             json={"baseToken": her_base, "tableIds": [her_table]})
