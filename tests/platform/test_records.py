"""Records: CRUD, listing, batches and their limits, bookkeeping fields, link integrity."""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

import pytest
from starlette.testclient import TestClient

from basedb.client.client import EMBEDDED_BASE_URL, Client
from basedb.client.transport import InProcessTransport
from basedb.platform import LocalPlatform, open_platform
from basedb.platform.storage import physical
from basedb.platform.storage.store import DATABASE_FILE
from tests.platform.conftest import Api, field_id, make_table


@pytest.fixture
def tasks(api: Api, base: str) -> dict[str, Any]:
    people = make_table(api, base, "People", [{"name": "Name", "type": "text"}])
    return make_table(api, base, "Tasks", [
        {"name": "Title", "type": "text"},
        {"name": "Status", "type": "select", "options": [{"name": "Open"}, {"name": "Done"}]},
        {"name": "Points", "type": "number"},
        {"name": "Assignees", "type": "link", "link_table": people["id"]},
        {"name": "No", "type": "auto_number"},
        {"name": "Created by", "type": "created_by"},
        {"name": "Updated", "type": "updated_at"},
    ]) | {"people": people["id"]}


def path(base: str, table: dict[str, Any], suffix: str = "") -> str:
    return f"/bases/{base}/tables/{table['id']}/records{suffix}"


def test_record_crud(api: Api, base: str, tasks: dict[str, Any]) -> None:
    me = api.ok("GET", "/users/me")["user_id"]
    created = api.ok("POST", path(base, tasks), json={"Title": "Write", "Status": "Open",
                                                      field_id(tasks, "Points"): 3})
    rid = created["record_id"]
    assert rid.startswith("rec")
    fields = created["fields"]
    assert fields["Title"] == "Write" and fields["Status"] == "Open" and fields["Points"] == 3
    assert fields["No"] == 1 and fields["Created by"] == [{"id": me}]
    assert fields["Assignees"] is None and isinstance(fields["Updated"], str)
    assert api.ok("GET", path(base, tasks, f"/{rid}")) == created

    patched = api.ok("PATCH", path(base, tasks, f"/{rid}"), json={"Status": "Done",
                                                                  "Points": None})
    assert patched["fields"]["Status"] == "Done" and patched["fields"]["Points"] is None
    assert patched["fields"]["Title"] == "Write"

    assert api.ok("DELETE", path(base, tasks, f"/{rid}")) == {"record_id": rid, "deleted": True}
    api.fail("GET", path(base, tasks, f"/{rid}"), code=9499, status=404)
    api.fail("PATCH", path(base, tasks, f"/{rid}"), json={"Title": "x"}, code=9499, status=404)
    api.fail("DELETE", path(base, tasks, f"/{rid}"), code=9499, status=404)


def test_list_is_column_oriented_and_paged(api: Api, base: str, tasks: dict[str, Any]) -> None:
    ids = api.ok("POST", path(base, tasks, "/batch_create"), json={
        "fields": ["Title", "Points"], "rows": [[f"t{i}", i] for i in range(5)]})["record_id_list"]
    page = api.ok("GET", path(base, tasks), params={"offset": 1, "limit": 2})
    assert page["fields"] == [f["name"] for f in tasks["fields"]]
    assert page["field_id_list"] == [f["id"] for f in tasks["fields"]]
    assert page["record_id_list"] == ids[1:3]
    assert [row[0] for row in page["data"]] == ["t1", "t2"]
    assert [row[page["fields"].index("No")] for row in page["data"]] == [2, 3]
    assert page["has_more"] is True and page["total"] == 5
    last = api.ok("GET", path(base, tasks), params={"offset": 4})
    assert last["has_more"] is False and last["record_id_list"] == ids[4:]
    for bad in ({"limit": 201}, {"limit": 0}, {"offset": -1}, {"limit": "ten"}):
        msg = api.fail("GET", path(base, tasks), params=bad, code=9499, status=400)
        assert "Query parameter" in msg


def test_page_tokens_page_by_insertion_order_and_survive_deletes(
        api: Api, base: str, tasks: dict[str, Any]) -> None:
    ids = api.ok("POST", path(base, tasks, "/batch_create"), json={
        "fields": ["Title"], "rows": [[f"t{i}"] for i in range(7)]})["record_id_list"]
    first = api.ok("GET", path(base, tasks), params={"limit": 3})
    assert first["record_id_list"] == ids[:3] and first["has_more"] is True
    # A record of the page just read goes away: the next page still starts after it,
    # where an offset would skip a record.
    api.ok("DELETE", path(base, tasks, f"/{ids[1]}"))
    second = api.ok("GET", path(base, tasks), params={"limit": 3,
                                                      "page_token": first["page_token"],
                                                      "offset": 50})  # ignored
    assert second["record_id_list"] == ids[3:6] and second["total"] == 6
    last = api.ok("GET", path(base, tasks), params={"limit": 3,
                                                    "page_token": second["page_token"]})
    assert last["record_id_list"] == ids[6:]
    assert last["has_more"] is False and "page_token" not in last
    # A page that ends exactly at the last record says there is no more.
    exact = api.ok("GET", path(base, tasks), params={"limit": 6})
    assert exact["has_more"] is False and "page_token" not in exact
    for bad in ("", "seq", "seq-1", "12", "seq1x", "seq" + "9" * 19):
        msg = api.fail("GET", path(base, tasks), params={"page_token": bad}, code=9499,
                       status=400)
        assert "page_token" in msg


def test_the_client_follows_page_tokens_to_the_end(platform: LocalPlatform, base: str,
                                                   tasks: dict[str, Any], api: Api) -> None:
    ids = api.ok("POST", path(base, tasks, "/batch_create"), json={
        "fields": ["Title"], "rows": [[f"t{i}"] for i in range(5)]})["record_id_list"]
    with Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                transport=InProcessTransport(platform.app)) as client:
        merged = client.paginate("GET", path(base, tasks), params={"limit": 2})
    assert merged["data"]["record_id_list"] == ids and merged["data"]["has_more"] is False


def test_batch_limits_and_shapes(api: Api, base: str, tasks: dict[str, Any]) -> None:
    rows = [[f"t{i}"] for i in range(200)]
    assert len(api.ok("POST", path(base, tasks, "/batch_create"),
                      json={"fields": ["Title"], "rows": rows})["record_id_list"]) == 200
    msg = api.fail("POST", path(base, tasks, "/batch_create"), code=9499,
                   json={"fields": ["Title"], "rows": [*rows, ["extra"]]})
    assert "1 to 200 rows" in msg and "201 rows" in msg
    api.fail("POST", path(base, tasks, "/batch_create"), code=9499,
             json={"fields": ["Title"], "rows": []})
    msg = api.fail("POST", path(base, tasks, "/batch_create"), code=9499,
                   json={"fields": ["Title", "Points"], "rows": [["a", 1], ["b"]]})
    assert "/rows/1" in msg
    msg = api.fail("POST", path(base, tasks, "/batch_create"), code=9499,
                   json={"fields": ["Title", "Nope"], "rows": [["a", 1]]})
    assert "/fields/1" in msg
    msg = api.fail("POST", path(base, tasks, "/batch_create"), code=9499,
                   json={"fields": ["Title", "Points"], "rows": [["a", 1], ["b", "2"]]})
    assert "/rows/1/1" in msg
    assert api.ok("GET", path(base, tasks), params={"limit": 1})["total"] == 200  # unchanged


def test_batch_update(api: Api, base: str, tasks: dict[str, Any]) -> None:
    ids = api.ok("POST", path(base, tasks, "/batch_create"),
                 json={"fields": ["Title"], "rows": [["a"], ["b"], ["c"]]})["record_id_list"]
    done = api.ok("POST", path(base, tasks, "/batch_update"),
                  json={"record_id_list": ids[:2] + ids[:1], "patch": {"Status": "Done"}})
    assert done == {"record_id_list": ids[:2], "update": {"Status": "Done"}}
    page = api.ok("GET", path(base, tasks))
    status = page["fields"].index("Status")
    assert [row[status] for row in page["data"]] == ["Done", "Done", None]
    msg = api.fail("POST", path(base, tasks, "/batch_update"), code=9499, status=404,
                   json={"record_id_list": [ids[0], "recMissing"], "patch": {"Title": "x"}})
    assert "/record_id_list/1" in msg
    msg = api.fail("POST", path(base, tasks, "/batch_update"), code=9499,
                   json={"record_id_list": ids, "patch": {"Status": "Later"}})
    assert "/patch/Status" in msg
    api.fail("POST", path(base, tasks, "/batch_update"), code=9499,
             json={"record_id_list": [f"rec{i}" for i in range(201)], "patch": {"Title": "x"}})
    api.fail("POST", path(base, tasks, "/batch_update"), code=9499,
             json={"record_id_list": ids, "patch": {}})


def test_links_must_exist_and_follow_deletes(api: Api, base: str,
                                             tasks: dict[str, Any]) -> None:
    people = f"/bases/{base}/tables/{tasks['people']}/records"
    ada = api.ok("POST", people, json={"Name": "Ada"})["record_id"]
    bob = api.ok("POST", people, json={"Name": "Bob"})["record_id"]
    msg = api.fail("POST", path(base, tasks), code=9499,
                   json={"Assignees": [{"id": ada}, {"id": "recGhost"}]})
    assert "recGhost" in msg and "/Assignees/1" in msg
    task = api.ok("POST", path(base, tasks),
                  json={"Assignees": [{"id": ada}, {"id": bob}, {"id": ada}]})
    assert task["fields"]["Assignees"] == [{"id": ada}, {"id": bob}]
    api.ok("DELETE", f"{people}/{ada}")
    got = api.ok("GET", path(base, tasks, f"/{task['record_id']}"))
    assert got["fields"]["Assignees"] == [{"id": bob}]
    api.ok("DELETE", f"{people}/{bob}")
    got = api.ok("GET", path(base, tasks, f"/{task['record_id']}"))
    assert got["fields"]["Assignees"] is None


def test_bookkeeping_fields_added_later_show_true_values(
        api: Api, base: str, tasks: dict[str, Any], platform: LocalPlatform) -> None:
    first = api.ok("POST", path(base, tasks), json={"Title": "a"})["record_id"]
    api.ok("POST", path(base, tasks), json={"Title": "b"})
    api.ok("DELETE", path(base, tasks, f"/{first}"))
    api.ok("POST", path(base, tasks), json={"Title": "c"})
    added = api.ok("POST", f"/bases/{base}/tables/{tasks['id']}/fields",
                   json={"name": "Seq", "type": "auto_number"})
    created_at = api.ok("POST", f"/bases/{base}/tables/{tasks['id']}/fields",
                        json={"name": "Since", "type": "created_at"})
    page = api.ok("GET", path(base, tasks))
    seq, since = page["fields"].index("Seq"), page["fields"].index("Since")
    assert [row[seq] for row in page["data"]] == [1, 2]
    assert all(row[since] for row in page["data"])
    new = api.ok("POST", path(base, tasks), json={"Title": "d"})
    assert new["fields"]["Seq"] == 3 and new["fields"]["No"] == 4
    conn = platform.store.connection()
    column = physical.column_name(added["id"])
    assert conn.execute(f"SELECT typeof({column}) FROM {physical.table_name(tasks['id'])} "
                        "LIMIT 1").fetchone()[0] == "integer"
    assert created_at["type"] == "created_at"


def test_updated_fields_follow_writes(api: Api, base: str, tasks: dict[str, Any]) -> None:
    bob = api.ok("POST", "/users", json={"name": "Bob"})
    site = api.ok("POST", "/sites/create", json={"title": "S"})["appToken"]
    api.ok("POST", f"/sites/{site}/bind_base",
           json={"baseToken": base, "tableIds": [tasks["id"]]})
    api.ok("POST", f"/sites/{site}/members", json={"userId": bob["user_id"], "role": "admin"})
    api.ok("POST", f"/bases/{base}/tables/{tasks['id']}/fields",
           json={"name": "Editor", "type": "updated_by"})
    rid = api.ok("POST", path(base, tasks), json={"Title": "a"})["record_id"]
    as_bob = api.as_user(bob["token"])
    got = as_bob.ok("PATCH", path(base, tasks, f"/{rid}"), json={"Title": "b"})
    assert got["fields"]["Editor"] == [{"id": bob["user_id"]}]
    assert got["fields"]["Created by"] != [{"id": bob["user_id"]}]


def test_checkbox_is_stored_as_zero_when_unticked_or_cleared(
        api: Api, base: str, platform: LocalPlatform) -> None:
    table = make_table(api, base, "Todos", [{"name": "Title", "type": "text"},
                                            {"name": "Done", "type": "checkbox"}])
    fresh = api.ok("POST", path(base, table), json={"Title": "a"})["record_id"]
    cleared = api.ok("POST", path(base, table), json={"Title": "b", "Done": True})["record_id"]
    api.ok("PATCH", path(base, table, f"/{cleared}"), json={"Done": None})
    column = physical.column_name(field_id(table, "Done"))
    with platform.store.read() as conn:
        stored = dict(conn.execute(
            f"SELECT record_id, {column} FROM {physical.table_name(table['id'])}"))
    # Never NULL, so a Database Function's `"Done" = false` matches both records.
    assert stored == {fresh: 0, cleared: 0}


def test_a_batch_answers_what_a_read_returns(api: Api, base: str) -> None:
    """batch_create answers from the values it wrote, without reading them back: the same
    cells as reading the records, for every kind of writable field (numbers stored as
    REAL, checkboxes, JSON cells, ids)."""
    people = make_table(api, base, "People", [{"name": "Name", "type": "text"}])
    ada = api.ok("POST", f"/bases/{base}/tables/{people['id']}/records",
                 json={"Name": "Ada"})["record_id"]
    me = api.ok("GET", "/users/me")["user_id"]
    table = make_table(api, base, "Everything", [
        {"name": "Title", "type": "text"},
        {"name": "Points", "type": "number"},
        {"name": "Done", "type": "checkbox"},
        {"name": "Status", "type": "select", "options": [{"name": "Open"}, {"name": "Done"}]},
        {"name": "Tags", "type": "select", "multiple": True,
         "options": [{"name": "a"}, {"name": "b"}]},
        {"name": "Due", "type": "datetime"},
        {"name": "Owner", "type": "user"},
        {"name": "Watchers", "type": "user", "multiple": True},
        {"name": "People", "type": "link", "link_table": people["id"]},
        {"name": "Files", "type": "attachment"},
        {"name": "Where", "type": "location"},
        {"name": "No", "type": "auto_number"},
        {"name": "Created", "type": "created_at"},
        {"name": "By", "type": "created_by"},
        {"name": "Updated", "type": "updated_at"},
        {"name": "Changed by", "type": "updated_by"},
    ])
    writable = ["Title", "Points", "Done", "Status", "Tags", "Due", "Owner", "Watchers",
                "People", "Files", "Where"]
    rows = [
        ["t1", 3, True, "Open", ["b", "a", "b"], "2025-01-31", [{"id": me}], [{"id": me}],
         [{"id": ada}], [{"file_token": "f", "name": "a.png", "size": 1}],
         {"location": "1,2", "full_address": "x"}],
        ["", 2.5, False, None, [], 1738281600000, None, [], [], [], None],
        [None, -0.0, None, "Done", None, "2025-02-01 08:30:00", [], None, None, None,
         {"location": "3,4"}],
        ["t4", 2**53, True, None, ["a"], None, [{"id": me}], None, [{"id": ada}, {"id": ada}],
         None, None],
    ]
    records_path = f"/bases/{base}/tables/{table['id']}/records"
    answer = api.ok("POST", f"{records_path}/batch_create",
                    json={"fields": writable, "rows": rows})
    page = api.ok("GET", records_path, params={"limit": 200})
    read = {rid: dict(zip(page["fields"], row, strict=True))
            for rid, row in zip(page["record_id_list"], page["data"], strict=True)}
    assert answer["fields"] == writable
    for record_id, row in zip(answer["record_id_list"], answer["data"], strict=True):
        assert dict(zip(writable, row, strict=True)) == {
            name: read[record_id][name] for name in writable}
    # The fields the platform maintains were written alongside.
    written = [read[rid] for rid in answer["record_id_list"]]
    assert [r["No"] for r in written] == [1, 2, 3, 4]
    assert all(r["By"] == r["Changed by"] == [{"id": me}] and r["Created"] == r["Updated"]
               for r in written)


def test_writes_follow_table_changes_made_through_another_connection(
        platform: LocalPlatform, api: Api, base: str) -> None:
    """A table's fields are kept between writes only while the catalog revision stands:
    a field renamed, added or deleted, or the table deleted, through another platform on
    the same database, is seen by the very next write."""
    table = make_table(api, base, "Notes", [{"name": "Title", "type": "text"},
                                            {"name": "Size", "type": "number"}])
    records_path = f"/bases/{base}/tables/{table['id']}/records"
    api.ok("POST", f"{records_path}/batch_create", json={"fields": ["Title"], "rows": [["a"]]})
    api.ok("POST", records_path, json={"Title": "b"})
    other = open_platform(platform.data_dir)
    try:
        with TestClient(other.app, base_url="http://localhost") as other_client:
            elsewhere = Api(other_client, other.owner_token)
            fields = f"/bases/{base}/tables/{table['id']}/fields"
            elsewhere.ok("PUT", f"{fields}/{field_id(table, 'Title')}",
                         json={"name": "Heading", "type": "text"})
            added = elsewhere.ok("POST", fields, json={"name": "Extra", "type": "text"})
            elsewhere.ok("DELETE", f"{fields}/{field_id(table, 'Size')}")
            failed = api.fail("POST", f"{records_path}/batch_create",
                              json={"fields": ["Title"], "rows": [["c"]]}, code=9499)
            assert '"Title"' in failed
            assert '"Size"' in api.fail("POST", records_path, json={"Size": 1}, code=9499)
            written = api.ok("POST", f"{records_path}/batch_create",
                             json={"fields": ["Heading", "Extra"], "rows": [["d", "e"]]})
            assert written["field_id_list"] == [field_id(table, "Title"), added["id"]]
            page = api.ok("GET", records_path)
            assert page["fields"] == ["Heading", "Extra"]
            assert [row[0] for row in page["data"]] == ["a", "b", "d"]
            elsewhere.ok("DELETE", f"/bases/{base}/tables/{table['id']}")
            api.fail("POST", f"{records_path}/batch_create",
                     json={"fields": ["Heading"], "rows": [["f"]]}, code=9499, status=404)
    finally:
        other.close()


def test_sequence_numbers_follow_insertion_order_across_writers(
        platform: LocalPlatform, api: Api, base: str) -> None:
    """Single records take the next sequence number inside their INSERT, batches read it
    first: mixed, and from several threads at once, every record still gets the next
    number in the order it was written, and lists in that order."""
    table = make_table(api, base, "Log", [{"name": "Title", "type": "text"}])
    records_path = f"/bases/{base}/tables/{table['id']}/records"
    api.ok("POST", records_path, json={"Title": "first"})
    api.ok("POST", f"{records_path}/batch_create",
           json={"fields": ["Title"], "rows": [["b1"], ["b2"]]})
    api.ok("POST", records_path, json={"Title": "after"})
    with Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                transport=InProcessTransport(platform.app)) as client:
        def write(number: int) -> None:
            for index in range(8):
                if index % 4 == 3:
                    client.request("POST", f"{records_path}/batch_create", json={
                        "fields": ["Title"], "rows": [[f"t{number}-{index}a"],
                                                      [f"t{number}-{index}b"]]})
                else:
                    client.request("POST", records_path, json={"Title": f"t{number}-{index}"})

        threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    tname = physical.table_name(table["id"])
    with sqlite3.connect(platform.data_dir / DATABASE_FILE) as conn:
        written = conn.execute(f"SELECT _seq FROM {tname} ORDER BY rowid").fetchall()
    assert [seq for (seq,) in written] == list(range(1, 5 + 4 * 10))
    page = api.ok("GET", records_path, params={"limit": 100})
    assert [row[0] for row in page["data"][:4]] == ["first", "b1", "b2", "after"]


def test_auto_numbers_and_bookkeeping_follow_mixed_writes(
        api: Api, base: str, tasks: dict[str, Any]) -> None:
    """Batches fill their columns at once; single records one row at a time: auto numbers
    still count on from one to the other, and every record gets its creator."""
    me = api.ok("GET", "/users/me")["user_id"]
    api.ok("POST", path(base, tasks), json={"Title": "one"})
    api.ok("POST", path(base, tasks, "/batch_create"),
           json={"fields": ["Title", "Status"], "rows": [["two", "Open"], ["three", None],
                                                         ["four", "Done"]]})
    api.ok("POST", path(base, tasks), json={"Title": "five"})
    page = api.ok("GET", path(base, tasks))
    rows = [dict(zip(page["fields"], row, strict=True)) for row in page["data"]]
    assert [row["Title"] for row in rows] == ["one", "two", "three", "four", "five"]
    assert [row["No"] for row in rows] == [1, 2, 3, 4, 5]
    assert [row["Status"] for row in rows] == [None, "Open", None, "Done", None]
    assert all(row["Created by"] == [{"id": me}] for row in rows)
    assert all(isinstance(row["Updated"], str) for row in rows)
