"""Write validation per field type: accepted values are normalised, others refused with
9499 and a message naming the field, the pointer and what is expected."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from basedb.protocol import unexecuted_message
from tests.platform.conftest import Api, make_table

FIELDS: list[dict[str, Any]] = [
    {"name": "Text", "type": "text"},
    {"name": "Num", "type": "number"},
    {"name": "One", "type": "select", "options": [{"name": "Red"}, {"name": "Green"}]},
    {"name": "Many", "type": "select", "multiple": True,
     "options": [{"name": "Red"}, {"name": "Green"}]},
    {"name": "When", "type": "datetime"},
    {"name": "Done", "type": "checkbox"},
    {"name": "Owner", "type": "user"},
    {"name": "Owners", "type": "user", "multiple": True},
    {"name": "Files", "type": "attachment"},
    {"name": "Place", "type": "location"},
    {"name": "No", "type": "auto_number"},
    {"name": "Created", "type": "created_at"},
]


@pytest.fixture
def records_path(api: Api, base: str) -> str:
    table = make_table(api, base, "All types", FIELDS)
    return f"/bases/{base}/tables/{table['id']}/records"


def test_accepted_values_are_normalised(api: Api, records_path: str) -> None:
    me = api.ok("GET", "/users/me")["user_id"]
    ms = 1_700_000_000_000
    written = api.ok("POST", records_path, json={
        "Text": "hello", "Num": 2.5, "One": "Red", "Many": ["Green", "Red", "Green"],
        "When": ms, "Done": True, "Owner": [{"id": me}], "Owners": [{"id": me, "name": "x"}],
        "Files": [{"file_token": "box1", "name": "a.png", "size": 3, "extra": 1}],
        "Place": {"location": "1,2"},
    })["fields"]
    assert written["Text"] == "hello" and written["Num"] == 2.5
    assert written["One"] == "Red" and written["Many"] == ["Green", "Red"]
    assert written["When"] == datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")
    assert written["Done"] is True
    assert written["Owner"] == [{"id": me}] and written["Owners"] == [{"id": me}]
    assert written["Files"] == [{"file_token": "box1", "name": "a.png", "size": 3}]
    assert written["Place"] == {"location": "1,2"}
    date_only = api.ok("POST", records_path, json={"When": "2026-02-03", "Num": 7})["fields"]
    assert date_only["When"] == "2026-02-03 00:00:00" and date_only["Num"] == 7
    assert date_only["Done"] is False  # an empty checkbox reads as false
    full = api.ok("POST", records_path, json={"When": "2026-02-03 04:05:06"})["fields"]
    assert full["When"] == "2026-02-03 04:05:06"


@pytest.mark.parametrize(("values", "pointer", "expected"), [
    ({"Text": 5}, "/Text", "expects a string"),
    ({"Num": "5"}, "/Num", "expects a number"),
    ({"Num": True}, "/Num", "expects a number"),
    ({"One": "Blue"}, "/One", "expects one of its options"),
    ({"One": ["Red"]}, "/One", "one option name"),
    ({"Many": "Red"}, "/Many", "list of option names"),
    ({"Many": ["Red", "Blue"]}, "/Many/1", "option names it defines"),
    ({"When": "2026-13-01"}, "/When", "real calendar date"),
    ({"When": "03/02/2026"}, "/When", "a date and time"),
    ({"When": True}, "/When", "a date and time"),
    ({"Done": "yes"}, "/Done", "true or false"),
    ({"Owner": "ou_x"}, "/Owner", "list of user objects"),
    ({"Owner": [{"name": "x"}]}, "/Owner/0", "user objects like"),
    ({"Owner": [{"id": "ou_a"}, {"id": "ou_b"}]}, "/Owner", "a single user"),
    ({"Owners": [{"id": "ou_nobody"}]}, "/Owners/0", "does not exist"),
    ({"Files": [{"name": "a.png"}]}, "/Files/0", "file_token"),
    ({"Place": "here"}, "/Place", "location object"),
    ({"No": 5}, "/No", "read-only (auto_number)"),
    ({"Created": "2026-01-01"}, "/Created", "read-only (created_at)"),
    ({"Colour": "Red"}, "/Colour", "has no field"),
    ({"a/b": 1}, "/a~1b", "has no field"),
])
def test_refused_values(api: Api, records_path: str, values: dict[str, Any], pointer: str,
                        expected: str) -> None:
    msg = api.fail("POST", records_path, json=values, code=9499, status=400)
    assert expected in msg
    assert f"Parameter: {pointer} (received " in msg
    assert msg.endswith("Executed: no. Retry: retry after fixing.")
    assert api.ok("GET", records_path)["total"] == 0


def test_messages_offer_candidates(api: Api, records_path: str) -> None:
    msg = api.fail("POST", records_path, json={"One": "Gren"}, code=9499)
    assert "Candidates: Green" in msg
    msg = api.fail("POST", records_path, json={"Txet": "x"}, code=9499)
    assert "Candidates: Text" in msg
    msg = api.fail("POST", records_path, json={"Text": "x", "2": 1}, code=9499)
    assert 'Table "All types" has no field "2"' in msg


def test_a_field_named_twice_is_refused(api: Api, base: str) -> None:
    table = make_table(api, base, "T", [{"name": "A", "type": "text"}])
    fid = table["fields"][0]["id"]
    msg = api.fail("POST", f"/bases/{base}/tables/{table['id']}/records",
                   json={"A": "x", fid: "y"}, code=9499)
    assert "given twice" in msg


@pytest.mark.parametrize("name", ["\x1e", "Ann\x1f", "\x1cAnn", "A\x1dB"])
def test_a_name_with_an_information_separator_is_refused(api: Api, name: str) -> None:
    # str.strip() trims U+001C-U+001F as blanks; the documented pattern does not.
    msg = api.fail("POST", "/users", json={"name": name}, code=9499, status=400)
    assert "control characters" in msg or "missing or empty" in msg


def test_body_must_be_an_object(api: Api, records_path: str) -> None:
    assert "must be a JSON object" in api.fail("POST", records_path, json=[1], code=9499)
    assert "is missing" in api.fail("POST", records_path, code=9499)
    msg = api.fail("POST", records_path, content=b'{"Text": "a",}', code=9499)
    assert "not valid JSON" in msg and "line 1" in msg


def test_a_body_of_only_whitespace_is_not_an_absent_body(api: Api) -> None:
    # Unbinding takes an optional body; "\r\n\r\n" was once read as no body at all.
    site = api.ok("POST", "/sites/create", json={"title": "S"})["appToken"]
    msg = api.fail("POST", f"/sites/{site}/unbind_base", content=b"\r\n\r\n", code=9499,
                   status=400)
    assert "not valid JSON" in msg


def test_received_values_are_clipped_and_redacted() -> None:
    msg = unexecuted_message("Bad value", parameter="/x", fix="send less",
                             received="y" * 500, candidates=["a", "b", "c", "d"])
    assert '(received "' + "y" * 40 in msg and "y" * 80 not in msg
    assert "Candidates: a, b, c." in msg
    secret = unexecuted_message("Bad", parameter="/t", fix="f",
                                received="bdb_abcdefghijklmnopqrstuvwxyz")
    assert "abcdefghijkl" not in secret
    huge = unexecuted_message("R" * 600, parameter="/p", fix="F" * 600, received=1)
    assert len(huge) <= 500 and huge.endswith("Executed: no. Retry: retry after fixing.")
    assert "Parameter: /p (received 1)" in huge
