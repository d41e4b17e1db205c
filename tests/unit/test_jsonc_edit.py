"""Surgical JSONC edits: the value at a path changes, every other byte stays."""

from __future__ import annotations

import json5
import pytest

from basedb.workspace.jsonc_edit import JsoncEditError, merge_string_array, set_string

TABLE_IDS = ("binding", "tableIds")

COMMENTED = """\
// Site workspace configuration.
{
  "appToken": "PrjA",
  "binding": {
    "baseToken": "basB", // the Base
    /* tables the functions use */
    "tableIds": [
      "tbl1", // members
      "tbl2",
    ],
  },
  // read forms in this zone
  "timezone": "Asia/Shanghai",
}
"""


def test_items_are_appended_one_per_line_with_the_trailing_comma_style() -> None:
    text, added = merge_string_array(COMMENTED, TABLE_IDS, ["tbl2", "tbl3", "tbl4"])
    assert added == ["tbl3", "tbl4"]
    assert text == COMMENTED.replace('      "tbl2",\n',
                                     '      "tbl2",\n      "tbl3",\n      "tbl4",\n')


def test_nothing_missing_returns_the_text_unchanged() -> None:
    text, added = merge_string_array(COMMENTED, TABLE_IDS, ["tbl1", "tbl2"])
    assert added == [] and text is COMMENTED


def test_a_comment_after_the_last_item_stays_on_its_line() -> None:
    source = '{\n  binding: {\n    tableIds: [\n      \'tbl1\' // only\n    ]\n  }\n}\n'
    text, added = merge_string_array(source, TABLE_IDS, ["tbl9"])
    assert added == ["tbl9"]
    assert text == ('{\n  binding: {\n    tableIds: [\n      \'tbl1\', // only\n'
                    '      "tbl9"\n    ]\n  }\n}\n')
    assert json5.loads(text)["binding"]["tableIds"] == ["tbl1", "tbl9"]


def test_crlf_line_ends_are_kept() -> None:
    source = COMMENTED.replace("\n", "\r\n")
    text, _ = merge_string_array(source, TABLE_IDS, ["tbl3"])
    assert text == source.replace('      "tbl2",\r\n', '      "tbl2",\r\n      "tbl3",\r\n')
    assert "\n" not in text.replace("\r\n", "")


@pytest.mark.parametrize(("source", "expected"), [
    ('{"binding": {"tableIds": ["a"]}}', '{"binding": {"tableIds": ["a", "b"]}}'),
    ('{"binding": {"tableIds": ["a",]}}', '{"binding": {"tableIds": ["a", "b",]}}'),
    ('{"binding": {"tableIds": []}}', '{"binding": {"tableIds": ["b"]}}'),
    ('{"binding": {"tableIds": [ /* none */ ]}}', '{"binding": {"tableIds": ["b" /* none */ ]}}'),
    ('{"binding": {"tableIds": "${tableIds}"}}', '{"binding": {"tableIds": ["b"]}}'),
    ('{"binding": {"tableIds": null}}', '{"binding": {"tableIds": ["b"]}}'),
    ('{"binding": {"baseToken": "x"}}', '{"binding": {"baseToken": "x", "tableIds": ["b"]}}'),
    ('{"binding": {}}', '{"binding": {"tableIds": ["b"]}}'),
    ('{"appToken": "p"}', '{"appToken": "p", "binding": {"tableIds": ["b"]}}'),
    ('{"appToken": "p",}', '{"appToken": "p", "binding": {"tableIds": ["b"]},}'),
])
def test_single_line_documents(source: str, expected: str) -> None:
    existing = json5.loads(source).get("binding", {}).get("tableIds")
    values = ["a", "b"] if isinstance(existing, list) and "a" in existing else ["b"]
    text, _ = merge_string_array(source, TABLE_IDS, values)
    assert text == expected


def test_a_missing_member_goes_on_its_own_line_in_a_multi_line_object() -> None:
    source = '{\r\n  "appToken": "p",\r\n  "binding": {\r\n    "baseToken": "x"\r\n  }\r\n}\r\n'
    text, added = merge_string_array(source, TABLE_IDS, ["t1", "t2"])
    assert added == ["t1", "t2"]
    assert text == ('{\r\n  "appToken": "p",\r\n  "binding": {\r\n    "baseToken": "x",\r\n'
                    '    "tableIds": ["t1", "t2"]\r\n  }\r\n}\r\n')


def test_repeated_keys_edit_the_last_one_as_json5_reads_it() -> None:
    source = '{"binding": {"tableIds": ["old"]}, "binding": {"tableIds": ["a"]}}'
    text, _ = merge_string_array(source, TABLE_IDS, ["z"])
    assert text == '{"binding": {"tableIds": ["old"]}, "binding": {"tableIds": ["a", "z"]}}'


def test_strings_with_brackets_and_comment_markers_are_not_structure() -> None:
    source = '{"title": "a [b] {c} // d /* e */", "binding": {"tableIds": ["x"]}}'
    text, _ = merge_string_array(source, TABLE_IDS, ["y"])
    assert text == '{"title": "a [b] {c} // d /* e */", "binding": {"tableIds": ["x", "y"]}}'


def test_unicode_values_are_written_as_text() -> None:
    text, _ = merge_string_array('{"binding": {"tableIds": []}}', TABLE_IDS, ["表一"])
    assert text == '{"binding": {"tableIds": ["表一"]}}'


def test_set_string_replaces_or_inserts() -> None:
    assert set_string(COMMENTED, ("binding", "baseToken"), "basNew") == COMMENTED.replace(
        '"basB"', '"basNew"')
    assert set_string('{"binding": {"tableIds": []}}', ("binding", "baseToken"), "b") == (
        '{"binding": {"tableIds": [], "baseToken": "b"}}')


@pytest.mark.parametrize("source", [
    '{"binding": []}', '{"binding": "x"}', "[1, 2]", '{"binding": {', "{} trailing",
])
def test_unusable_documents_raise(source: str) -> None:
    with pytest.raises(JsoncEditError):
        merge_string_array(source, TABLE_IDS, ["t"])


# ------------------------------------------------------------------ removing items

HAND_WRITTEN = """\
// notes
{
  "binding": {
    "tableIds": [
      "t1", // first
      "t2",
      "t3",
    ],
  },
}
"""


@pytest.mark.parametrize(("remove", "left"), [
    (["t1"], ["t2", "t3"]), (["t2"], ["t1", "t3"]), (["t3"], ["t1", "t2"]),
    (["t2", "t3"], ["t1"]), (["t1", "t2", "t3"], []), (["nope"], ["t1", "t2", "t3"]),
])
def test_remove_strings_keeps_layout_and_comments(remove: list[str], left: list[str]) -> None:
    from basedb.workspace.files import parse_jsonc
    from basedb.workspace.jsonc_edit import remove_strings

    text, removed = remove_strings(HAND_WRITTEN, ("binding", "tableIds"), remove)
    assert parse_jsonc(text, label="x")["binding"]["tableIds"] == left
    assert removed == [v for v in ("t1", "t2", "t3") if v in remove]
    assert text.startswith("// notes\n")
    if "t1" not in remove:
        assert '"t1", // first' in text
    inline = '{"binding": {"tableIds": ["t1", "t2", "t3"]}}'
    text, _ = remove_strings(inline, ("binding", "tableIds"), remove)
    assert parse_jsonc(text, label="x")["binding"]["tableIds"] == left


def test_set_string_array_replaces_the_list() -> None:
    from basedb.workspace.files import parse_jsonc
    from basedb.workspace.jsonc_edit import set_string_array

    text = set_string_array(HAND_WRITTEN, ("binding", "tableIds"), ["x"])
    assert parse_jsonc(text, label="x")["binding"]["tableIds"] == ["x"]
    assert text.startswith("// notes\n")
