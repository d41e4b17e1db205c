"""Defensive file reading and the JSONC fast path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import json5
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from basedb.workspace.files import FileProblem, parse_jsonc, read_text
from basedb.workspace.jsonc import plain_json, scan


def test_plain_json_drops_comments_and_trailing_commas_outside_strings() -> None:
    text = '// head\n{"url": "http://a//b", /* c\n */ "s": "q\\"//", "a": [1, 2,],}\n'
    plain = plain_json(text, scan(text, jsonc=True))
    assert plain is not None
    assert json.loads(plain) == {"url": "http://a//b", "s": 'q"//', "a": [1, 2]}
    # What only JSON5 reads is left to JSON5.
    assert plain_json("{a: 1}", scan("{a: 1}", jsonc=True)) is None
    assert plain_json("{'a': 0x1}", scan("{'a': 0x1}", jsonc=True)) is None


def test_parse_jsonc_falls_back_to_json5_for_its_extensions() -> None:
    assert parse_jsonc("{unquoted: 'single', n: +1,}", label="x.jsonc") == {
        "unquoted": "single", "n": 1}


def test_parse_jsonc_reports_the_file() -> None:
    with pytest.raises(FileProblem, match=r"x\.jsonc is not valid JSONC"):
        parse_jsonc('{"a": ', label="x.jsonc")


def test_parse_jsonc_says_where_in_the_words_of_parse_json() -> None:
    with pytest.raises(FileProblem) as caught:
        parse_jsonc('// settings\n{"a": 1,\n "b": [1 2]}', label="x.jsonc")
    problem = caught.value
    assert problem.message == 'x.jsonc is not valid JSONC: unexpected "2" at line 3 column 10.'
    assert (problem.line, problem.column) == (3, 10)
    assert "<string>" not in problem.message


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=10)


@settings(max_examples=200, deadline=None)
@given(json_values, st.sampled_from(["", " // c\n", "/* c */", ","]))
def test_fast_path_agrees_with_json5(value: object, noise: str) -> None:
    text = json.dumps(value, indent=1, ensure_ascii=False)
    # Sprinkle comments (or a trailing comma) before every closing bracket.
    noisy = text.replace("\n]", noise + "\n]").replace("\n}", noise + "\n}")
    try:
        expected = json5.loads(noisy)
    except ValueError:
        return
    assert parse_jsonc(noisy, label="x") == expected


def test_read_text_refuses_directories_and_large_files(tmp_path: Path) -> None:
    with pytest.raises(FileProblem, match="not a regular file"):
        read_text(tmp_path, label="dir", limit=10)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    with pytest.raises(FileProblem, match="at most 10 bytes"):
        read_text(big, label="big", limit=10)
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    with pytest.raises(FileProblem, match="symlink loop"):
        read_text(loop, label="loop", limit=10)
