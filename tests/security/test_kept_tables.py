"""The records routes keep a table's fields between requests (by catalog revision). What
is kept must never stand in for the caller's access: every request checks it again, a
table reached through another Base's token is not the kept one, and access taken away
ends at once, though the catalog (and so the kept table) has not changed."""

from __future__ import annotations

from tests.platform.conftest import Api, make_table


def user(api: Api, name: str) -> tuple[Api, str]:
    created = api.ok("POST", "/users", json={"name": name})
    return api.as_user(created["token"]), str(created["user_id"])


def records(base: str, table: str, suffix: str = "") -> str:
    return f"/bases/{base}/tables/{table}/records{suffix}"


def test_a_kept_table_is_no_key_to_it(api: Api) -> None:
    olivia, _ = user(api, "Olivia")
    rex, rex_id = user(api, "Rex")
    base = olivia.ok("POST", "/bases", json={"name": "Payroll"})["base_token"]
    table = make_table(olivia, base, "Salaries", [{"name": "Name", "type": "text"}])["id"]
    # Olivia's writes and reads keep the table.
    olivia.ok("POST", records(base, table), json={"Name": "Olivia"})
    olivia.ok("POST", records(base, table, "/batch_create"),
              json={"fields": ["Name"], "rows": [["Ann"]]})
    assert olivia.ok("GET", records(base, table))["total"] == 2

    def refused() -> None:
        rex.fail("GET", records(base, table), code=9499, status=404)
        rex.fail("POST", records(base, table), json={"Name": "Rex"}, code=9499, status=404)
        rex.fail("POST", records(base, table, "/batch_create"), code=9499, status=404,
                 json={"fields": ["Name"], "rows": [["Rex"]]})

    refused()
    # Through a Base of his own, Olivia's table is not found either.
    own = rex.ok("POST", "/bases", json={"name": "Mine"})["base_token"]
    rex.fail("POST", records(own, table, "/batch_create"), code=9499, status=404,
             json={"fields": ["Name"], "rows": [["Rex"]]})
    rex.fail("GET", records(own, table), code=9499, status=404)
    # Granted, he may write; the grant taken back, he may not, at the very next request.
    grants = f"/bases/{base}/grants"
    olivia.ok("POST", grants, json={"user_id": rex_id})
    rex.ok("POST", records(base, table, "/batch_create"),
           json={"fields": ["Name"], "rows": [["Rex"]]})
    olivia.ok("DELETE", grants, json={"user_id": rex_id})
    refused()
    names = [row[0] for row in olivia.ok("GET", records(base, table))["data"]]
    assert names == ["Olivia", "Ann", "Rex"]


def test_fields_of_one_table_do_not_leak_into_another(api: Api) -> None:
    """Two tables with the same field names: each write resolves against its own."""
    owner = api
    base = owner.ok("POST", "/bases", json={"name": "Two"})["base_token"]
    first = make_table(owner, base, "A", [{"name": "Name", "type": "text"}])["id"]
    second = make_table(owner, base, "B", [{"name": "Name", "type": "number"}])["id"]
    owner.ok("POST", records(base, first, "/batch_create"),
             json={"fields": ["Name"], "rows": [["text"]]})
    owner.fail("POST", records(base, second, "/batch_create"), code=9499,
               json={"fields": ["Name"], "rows": [["text"]]})
    written = owner.ok("POST", records(base, second, "/batch_create"),
                       json={"fields": ["Name"], "rows": [[2]]})
    assert written["data"] == [[2]]
