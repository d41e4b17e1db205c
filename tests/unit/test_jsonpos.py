"""basedb.workspace.jsonpos: positions of JSON Pointer targets in JSON and JSONC text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from basedb.protocol.findings import pointer
from basedb.workspace.jsonpos import _build_index, locate

DECLARATION = """{
  "name": "listTasks",
  "description": "List tasks",
  "meta": {"params": [
    {"name": "status", "kind": "TEXT", "enum": ["Todo", "Doing"]},
    {"name": "limit", "kind": "INT", "description": "page size"}
  ]}
}
"""


def position_of(text: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """Where the `occurrence`-th `needle` starts, computed independently of the scanner."""
    offset = -1
    for _ in range(occurrence):
        offset = text.index(needle, offset + 1)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


@pytest.mark.parametrize(("ptr", "needle"), [
    ("", "{"),
    ("/name", '"listTasks"'),
    ("/meta", '{"params"'),
    ("/meta/params", "[\n"),
    ("/meta/params/0", '{"name": "status"'),
    ("/meta/params/0/enum", '["Todo"'),
    ("/meta/params/0/enum/1", '"Doing"'),
    ("/meta/params/1/description", '"page size"'),
])
def test_locates_values(ptr: str, needle: str) -> None:
    assert locate(DECLARATION, ptr) == position_of(DECLARATION, needle)


@pytest.mark.parametrize(("ptr", "ancestor"), [
    ("/meta/params/0/description", '{"name": "status"'),  # a missing member
    ("/meta/params/7", "[\n"),  # an index past the end
    ("/meta/params/-", "[\n"),  # "-" names no existing element
    ("/meta/params/01", "[\n"),  # leading zeros are not an index
    ("/meta/params/0/enum/0/deeper", '"Todo"'),  # below a scalar
    ("/nothing/here", "{"),
])
def test_missing_paths_give_the_nearest_existing_ancestor(ptr: str, ancestor: str) -> None:
    assert locate(DECLARATION, ptr) == position_of(DECLARATION, ancestor)


def test_escaped_tokens() -> None:
    text = '{"a/b": {"c~d": {"~1": 1, "x": 2}}}'
    assert locate(text, "/a~1b/c~0d/~01") == position_of(text, "1,")
    assert locate(text, pointer("a/b", "c~d", "x")) == position_of(text, "2}")


def test_unicode_and_escapes_in_keys_and_values() -> None:
    text = '{\n  "标题": "任务一", "k\\u00e9y": "\\"quoted\\" \\u4e2d", "after": [true]\n}'
    assert locate(text, "/标题") == (2, 9)  # columns count characters, not bytes
    assert locate(text, "/kéy") == position_of(text, '"\\"quoted')
    assert locate(text, "/after/0") == position_of(text, "true")


def test_repeated_member_names_point_at_the_last_one() -> None:
    text = '{"a": 1, "a": 2}'
    assert locate(text, "/a") == position_of(text, "2")


def test_byte_order_mark_is_not_a_column() -> None:
    assert locate('\ufeff{"a": 1}', "/a") == (1, 7)


def test_jsonc_comments_and_trailing_commas() -> None:
    text = """// workspace
{
  /* the site */ "appToken": "app_1", // trailing note
  "binding": {
    "baseToken": "bas_1",
    "tableIds": ["tbl_a", "tbl_b",], // a comma before ]
  },
}
"""
    assert locate(text, "/appToken", jsonc=True) == position_of(text, '"app_1"')
    assert locate(text, "/binding/tableIds/1", jsonc=True) == position_of(text, '"tbl_b"')
    assert locate(text, "/binding/missing", jsonc=True) == position_of(text, "{\n    \"base")
    assert locate(text, "/appToken") is None  # not strict JSON


def test_jsonc_accepts_what_json5_accepts_in_configs() -> None:
    text = "{appToken: 'app', 'title': 'It\\'s', binding: {tableIds: [+1, .5, 0x1F]}}"
    assert locate(text, "/title", jsonc=True) == position_of(text, "'It")
    assert locate(text, "/binding/tableIds/2", jsonc=True) == position_of(text, "0x1F")


@pytest.mark.parametrize("text", [
    "", "   ", "{", '{"a": }', '{"a" 1}', '{"a": 1,}', "[1 2]", '{"a": NaN}', "[1,,2]",
    '{"a": 1} trailing', '{"a": "unterminated}', '{"a": "tab\there"}', "{'a': 1}", "[01]",
    "/* only a comment */", "\x00", "[" * 1000,
])
def test_malformed_text_gives_none(text: str) -> None:
    assert locate(text, "") is None
    assert locate(text, "/a") is None


def test_malformed_pointer_gives_none() -> None:
    assert locate("{}", "a") is None


@pytest.mark.slow
def test_deep_nesting_does_not_overflow() -> None:
    depth = 100_000
    text = "[" * depth + "]" * depth
    assert locate(text, "/0/0/0") == (1, 4)
    assert locate(text, "/0" * 10) == (1, 11)
    assert locate("[" * depth, "") is None


def test_large_documents_are_scanned_once() -> None:
    doc = {"tables": [{"name": f"表{i}", "fields": [{"name": f"字段{j}", "type": "text"}
                                                   for j in range(40)]} for i in range(300)]}
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    assert locate(text, "/tables/299/fields/39/type") == position_of(text, '"text"', 300 * 40)
    _build_index.cache_clear()
    for i in range(500):
        assert locate(text, f"/tables/{i % 300}/fields/{i % 40}/name") is not None
    assert _build_index.cache_info().misses == 1  # cached: no rescan per lookup


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=25,
)


def _paths(value: object, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out += _paths(child, (*prefix, i))
    return out


@settings(max_examples=150, deadline=None)
@given(value=json_values, indent=st.sampled_from([None, 2]), ascii_only=st.booleans())
def test_every_path_of_generated_documents_is_found(value: object, indent: int | None,
                                                    ascii_only: bool) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    lines = text.split("\n")
    for path in _paths(value):
        found = locate(text, pointer(*path))
        assert found is not None
        line, column = found
        # The value found there re-parses to the value at that path.
        rest = "\n".join([lines[line - 1][column - 1:], *lines[line:]])
        expected = value
        for token in path:
            expected = expected[token]  # type: ignore[index]
        decoded, _ = json.JSONDecoder().raw_decode(rest)
        assert decoded == expected


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet='{}[]",:/*\\ \n0-9aeflnrstu~\'', max_size=60),
       ptr=st.text(alphabet="/~01ab", max_size=8), jsonc=st.booleans())
def test_never_raises_on_arbitrary_text(text: str, ptr: str, jsonc: bool) -> None:
    found = locate(text, ptr, jsonc=jsonc)
    assert found is None or (found[0] >= 1 and found[1] >= 1)
