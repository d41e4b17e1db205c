"""Defensive file reading and the JSONC fast path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import json5
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from basedb.workspace import files
from basedb.workspace.files import Contents, FileProblem, FileReader, parse_jsonc, read_text
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


@pytest.mark.parametrize("data", [b"x" * 11, b"a\x00b", b"caf\xe9", b"\xef\xbb\xbfok", b"ok"])
def test_a_file_already_read_is_judged_as_it_is_on_disk(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "f.txt").write_bytes(data)
    from_disk = FileReader(tmp_path)
    from_memory = FileReader(tmp_path, Contents({"dir/f.txt": data}))

    def outcome(reader: FileReader) -> str | tuple[str, str, int | None]:
        try:
            return reader.text("dir/f.txt", limit=10)
        except FileProblem as problem:
            return problem.message, problem.fix, problem.line

    assert outcome(from_memory) == outcome(from_disk)


def test_a_reader_uses_what_it_was_given_and_reads_the_rest(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"on": "disk"}', encoding="utf-8")
    (tmp_path / "b.json").write_text('{"b": 1}', encoding="utf-8")
    reader = FileReader(tmp_path, Contents({"a.json": b'{"in": "memory"}'}))
    assert reader.json("a.json", limit=100) == {"in": "memory"}
    assert reader.json("b.json", limit=100) == {"b": 1}
    assert reader.is_file("b.json") and not reader.is_file("c.json")
    assert reader.present("a.json") and not reader.present("c.json")


def test_contents_decode_and_parse_each_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    contents = Contents({"a.json": b'{"a": 1}', "bad.json": b"{", "b.txt": b"caf\xe9"})
    parsed: list[str] = []
    real = files.parse_json
    monkeypatch.setattr(files, "parse_json", lambda text, *, label: (
        parsed.append(label), real(text, label=label))[1])
    reader = FileReader(Path("/nonexistent"), contents)
    first = reader.json("a.json", limit=100)
    assert contents.document("a.json") is first and contents.text("a.json") == '{"a": 1}'
    assert parsed == ["a.json"]
    with pytest.raises(FileProblem, match=r"bad\.json is not valid JSON"):
        contents.document("bad.json")
    with pytest.raises(FileProblem, match=r"b\.txt is not valid UTF-8"):
        contents.text("b.txt")
    with pytest.raises(KeyError):
        contents.text("elsewhere.txt")
    with pytest.raises(FileProblem, match="at most 4 bytes"):
        reader.json("a.json", limit=4)  # the loader's limits hold for what was read


def test_a_file_that_grows_while_it_is_read_is_read_to_the_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.txt"
    path.write_text("0123456789", encoding="utf-8")
    real_fstat = os.fstat
    monkeypatch.setattr(os, "fstat", lambda fd: os.stat_result(
        (*real_fstat(fd)[:6], 4, *real_fstat(fd)[7:])))  # as if it had 4 bytes then
    assert read_text(path, label="f.txt", limit=100) == "0123456789"
    with pytest.raises(FileProblem, match="larger than 8 bytes"):
        read_text(path, label="f.txt", limit=8)
