"""Bases, tables and fields, and the physical SQLite tables behind them."""

from __future__ import annotations

from typing import Any

import pytest

from basedb.platform import LocalPlatform
from basedb.platform.domain import bases
from basedb.platform.storage import physical
from tests.platform.conftest import Api, field_id, make_table


def columns(platform: LocalPlatform, table_id: str) -> list[str]:
    conn = platform.store.connection()
    return [r[1] for r in conn.execute(f"PRAGMA table_info({physical.table_name(table_id)})")]


def test_create_list_get_rename_delete_table(api: Api, base: str,
                                             platform: LocalPlatform) -> None:
    table = make_table(api, base, "Tasks", [
        {"name": "Title", "type": "text", "description": "What to do"},
        {"name": "Status", "type": "select", "options": [{"name": "Open"}, {"name": "Done"}]},
        {"name": "Owners", "type": "user", "multiple": True},
    ])
    assert table["id"].startswith("tbl")
    assert [f["name"] for f in table["fields"]] == ["Title", "Status", "Owners"]
    status = table["fields"][1]
    assert status["type"] == "select" and status["multiple"] is False
    assert status["options"] == [{"name": "Open"}, {"name": "Done"}]
    assert table["fields"][0]["description"] == "What to do"
    assert columns(platform, table["id"]) == [
        "record_id", "_seq", *physical.SYSTEM_COLUMNS,
        *(physical.column_name(f["id"]) for f in table["fields"])]

    make_table(api, base, "People", [])
    listed = api.ok("GET", f"/bases/{base}/tables")
    assert [t["name"] for t in listed["tables"]] == ["Tasks", "People"]
    assert listed["total"] == 2 and listed["has_more"] is False
    page = api.ok("GET", f"/bases/{base}/tables", params={"limit": 1})
    assert page["has_more"] is True and len(page["tables"]) == 1

    tid = table["id"]
    assert api.ok("GET", f"/bases/{base}/tables/{tid}") == table
    renamed = api.ok("PATCH", f"/bases/{base}/tables/{tid}", json={"name": "Todo"})
    assert renamed["name"] == "Todo" and renamed["fields"] == table["fields"]
    msg = api.fail("PATCH", f"/bases/{base}/tables/{tid}", json={"name": "People"}, code=9499)
    assert "already exists" in msg and "Parameter: /name" in msg

    assert api.ok("DELETE", f"/bases/{base}/tables/{tid}") == {"id": tid, "deleted": True}
    api.fail("GET", f"/bases/{base}/tables/{tid}", code=9499, status=404)
    assert physical.table_name(tid) not in {r[0] for r in platform.store.connection().execute(
        "SELECT name FROM sqlite_master WHERE type='table'")}


def test_field_add_and_remove_alter_the_physical_table(api: Api, base: str,
                                                       platform: LocalPlatform) -> None:
    table = make_table(api, base, "T", [{"name": "A", "type": "text"}])
    tid = table["id"]
    added = api.ok("POST", f"/bases/{base}/tables/{tid}/fields",
                   json={"name": "Score", "type": "number"})
    assert added["id"].startswith("fld")
    assert physical.column_name(added["id"]) in columns(platform, tid)
    conn = platform.store.connection()
    info = {r[1]: r[2] for r in conn.execute(f"PRAGMA table_info({physical.table_name(tid)})")}
    assert info[physical.column_name(added["id"])] == "REAL"

    fields = api.ok("GET", f"/bases/{base}/tables/{tid}/fields")
    assert [f["name"] for f in fields["fields"]] == ["A", "Score"] and fields["total"] == 2
    assert api.ok("GET", f"/bases/{base}/tables/{tid}/fields/{added['id']}") == added

    api.ok("DELETE", f"/bases/{base}/tables/{tid}/fields/{added['id']}")
    assert physical.column_name(added["id"]) not in columns(platform, tid)
    api.fail("GET", f"/bases/{base}/tables/{tid}/fields/{added['id']}", code=9499,
             status=404)


def test_drop_column_fallback_rebuilds_the_table(api: Api, base: str,
                                                 platform: LocalPlatform) -> None:
    table = make_table(api, base, "T", [{"name": "A", "type": "text"},
                                        {"name": "B", "type": "number"}])
    tid = table["id"]
    record = api.ok("POST", f"/bases/{base}/tables/{tid}/records", json={"A": "x", "B": 2})
    with platform.store.write() as conn:
        bases.drop_column(conn, tid, physical.column_name(field_id(table, "A")), native=False)
        conn.execute("DELETE FROM fields WHERE field_id = ?", (field_id(table, "A"),))
    assert physical.column_name(field_id(table, "A")) not in columns(platform, tid)
    got = api.ok("GET", f"/bases/{base}/tables/{tid}/records/{record['record_id']}")
    assert got["fields"] == {"B": 2}
    api.ok("POST", f"/bases/{base}/tables/{tid}/records", json={"B": 3})


def test_put_field_updates_options_and_clears_removed_ones(api: Api, base: str) -> None:
    table = make_table(api, base, "T", [
        {"name": "One", "type": "select", "options": [{"name": "a"}, {"name": "b"}]},
        {"name": "Many", "type": "select", "multiple": True,
         "options": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
    ])
    tid = table["id"]
    path = f"/bases/{base}/tables/{tid}"
    r1 = api.ok("POST", f"{path}/records", json={"One": "a", "Many": ["a", "b"]})["record_id"]
    r2 = api.ok("POST", f"{path}/records", json={"One": "b", "Many": ["b"]})["record_id"]
    one, many = field_id(table, "One"), field_id(table, "Many")
    updated = api.ok("PUT", f"{path}/fields/{one}",
                     json={"name": "Single", "options": [{"name": "a"}, {"name": "z"}]})
    assert updated["name"] == "Single" and updated["options"] == [{"name": "a"}, {"name": "z"}]
    api.ok("PUT", f"{path}/fields/{many}", json={"options": [{"name": "a"}, {"name": "c"}]})
    assert api.ok("GET", f"{path}/records/{r1}")["fields"] == {"Single": "a", "Many": ["a"]}
    assert api.ok("GET", f"{path}/records/{r2}")["fields"] == {"Single": None, "Many": None}

    # Switching multiple converts the stored cells.
    api.ok("PUT", f"{path}/fields/{one}", json={"multiple": True})
    assert api.ok("GET", f"{path}/records/{r1}")["fields"]["Single"] == ["a"]
    api.ok("PUT", f"{path}/fields/{many}", json={"multiple": False})
    assert api.ok("GET", f"{path}/records/{r1}")["fields"]["Many"] == "a"


@pytest.mark.parametrize("fields", [False, None, 0, ""])
def test_fields_of_a_new_table_must_be_an_array(api: Api, base: str, fields: Any) -> None:
    # false, null, 0 and "" once created a table without fields.
    msg = api.fail("POST", f"/bases/{base}/tables", json={"name": "T", "fields": fields},
                   code=9499, status=400)
    assert "/fields" in msg


def test_a_field_name_taken_in_the_table_is_a_conflict(api: Api, base: str) -> None:
    # As a table name taken in the Base: the request is sound, the table's state is not.
    table = make_table(api, base, "T", [{"name": "A", "type": "text"},
                                        {"name": "B", "type": "text"}])
    fields = f"/bases/{base}/tables/{table['id']}/fields"
    assert "already has a field named" in api.fail(
        "POST", fields, json={"name": "A", "type": "text"}, code=9499, status=409)
    assert "already has a field named" in api.fail(
        "PUT", f"{fields}/{table['fields'][1]['id']}", json={"name": "A"}, code=9499,
        status=409)


@pytest.mark.parametrize(("body", "expected"), [
    ({"name": "X", "type": "formula"}, "not supported by the local platform"),
    ({"name": "X", "type": "rich"}, "Unknown field type"),
    ({"name": "X", "type": [None, None]}, "Unknown field type"),  # once a 500
    ({"name": "", "type": "text"}, "name is missing or empty"),
    ({"name": "record_id", "type": "text"}, "reserved"),
    ({"name": "X", "type": "text", "multiple": True}, "multiple applies to select and user"),
    ({"name": "X", "type": "text", "options": [{"name": "a"}]}, "options apply to select"),
    ({"name": "X", "type": "select", "options": [{"name": "a"}, {"name": "a"}]},
     "listed twice"),
    ({"name": "X", "type": "link"}, "needs link_table"),
    ({"name": "X", "type": "link", "link_table": "tblNope"}, "needs link_table"),
    ({"name": "X", "type": "text", "colour": "red"}, "Unknown field property"),
])
def test_invalid_field_definitions(api: Api, base: str, body: dict[str, Any],
                                   expected: str) -> None:
    table = make_table(api, base, "T", [{"name": "A", "type": "text"}])
    msg = api.fail("POST", f"/bases/{base}/tables/{table['id']}/fields", json=body,
                   code=9499, status=400)
    assert expected in msg and "Executed: no." in msg


def test_field_type_and_link_table_cannot_change(api: Api, base: str) -> None:
    other = make_table(api, base, "Other", [])
    table = make_table(api, base, "T", [
        {"name": "A", "type": "text"},
        {"name": "L", "type": "link", "link_table": other["id"]},
    ])
    path = f"/bases/{base}/tables/{table['id']}/fields"
    msg = api.fail("PUT", f"{path}/{field_id(table, 'A')}", json={"type": "number"}, code=9499)
    assert "type" in msg
    api.fail("PUT", f"{path}/{field_id(table, 'L')}", json={"link_table": table["id"]},
             code=9499)


def test_duplicate_field_names_in_table_creation(api: Api, base: str) -> None:
    msg = api.fail("POST", f"/bases/{base}/tables", code=9499, json={
        "name": "T", "fields": [{"name": "A", "type": "text"}, {"name": "A", "type": "number"}]})
    assert "/fields/1/name" in msg
    assert api.ok("GET", f"/bases/{base}/tables")["total"] == 0  # nothing was created


def test_deleting_a_linked_table_is_refused(api: Api, base: str) -> None:
    target = make_table(api, base, "People", [{"name": "Name", "type": "text"}])
    make_table(api, base, "Tasks", [{"name": "Who", "type": "link",
                                      "link_table": target["id"]}])
    msg = api.fail("DELETE", f"/bases/{base}/tables/{target['id']}", code=9499)
    assert "Tasks.Who" in msg
    selfish = make_table(api, base, "Tree", [{"name": "Name", "type": "text"}])
    api.ok("POST", f"/bases/{base}/tables/{selfish['id']}/fields",
           json={"name": "Parent", "type": "link", "link_table": selfish["id"]})
    api.ok("DELETE", f"/bases/{base}/tables/{selfish['id']}")  # a self link is fine


def test_bases_are_private_to_their_owner(api: Api, base: str) -> None:
    other = api.as_user(api.ok("POST", "/users", json={"name": "Bob"})["token"])
    table = make_table(api, base, "T", [])
    # To another user the Base is not there: the answer for a Base that does not exist.
    hidden = other.fail("GET", f"/bases/{base}/tables", code=9499, status=404)
    other.fail("GET", f"/bases/{base}/tables/{table['id']}/records", code=9499,
               status=404)
    nope = api.fail("GET", "/bases/basNope/tables", code=9499, status=404)
    assert hidden.replace(base, "basNope") == nope
    mine = other.ok("POST", "/bases", json={"name": "Bob's"})["base_token"]
    api.fail("POST", f"/bases/{mine}/tables", json={"name": "X"}, code=9499, status=404)
