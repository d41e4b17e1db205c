"""Change one value of a JSONC document and keep every other byte as it was.

`basedb catalog pull` merges table ids into `binding.tableIds` of base-database.jsonc, a
file people write by hand: comments, trailing commas, CRLF line ends, single-quoted
strings and unquoted keys (json5) all have to survive. Re-serialising the parsed
document would lose them, so this module scans the text once for the spans of objects,
arrays and their members, and splices new text in where it belongs:

    merge_string_array(text, ("binding", "tableIds"), ["tbl1", "tbl2"])
        appends the values the array lacks, in the array's own layout (one per line when
        its items are one per line, with a trailing comma when it has one); creates the
        array, and any missing parent object, when absent; replaces a value that is not
        an array.
    set_string(text, ("binding", "baseToken"), "bas…")
        replaces or inserts one string member.

Every edit is checked by parsing the result and comparing the value at the path; a text
that would not come out right raises `JsoncEditError` instead of being returned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from basedb.workspace.files import FileProblem, parse_jsonc

__all__ = ["JsoncEditError", "merge_string_array", "set_string"]

_SKIP = re.compile(r"(?:[ \t\n\r\ufeff\u00a0\u2028\u2029]+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
_STRING = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'", re.DOTALL)
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_SCALAR = re.compile(r"[^\s,\]\}/:]+")
_MAX_DEPTH = 200


class JsoncEditError(ValueError):
    """The text cannot be edited as asked (malformed, or a parent is not an object)."""


@dataclass(slots=True)
class _Value:
    """A value's span; containers also know their brackets and entries."""

    start: int
    end: int
    kind: str  # "object", "array" or "scalar"
    entries: list[_Entry] = field(default_factory=list)

    @property
    def close(self) -> int:
        """Offset of the closing bracket of a container."""
        return self.end - 1


@dataclass(slots=True)
class _Entry:
    """An array item or an object member: where it starts, its value, and the offset just
    after the comma that follows it (None when no comma does)."""

    start: int
    value: _Value
    key: str | None = None
    comma_end: int | None = None


# ----------------------------------------------------------------------------- scanning


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text

    def skip(self, pos: int) -> int:
        match = _SKIP.match(self.text, pos)
        return match.end() if match else pos

    def fail(self, pos: int, what: str) -> JsoncEditError:
        line = self.text.count("\n", 0, pos) + 1
        return JsoncEditError(f"{what} at line {line}")

    def value(self, pos: int, depth: int) -> _Value:
        if depth > _MAX_DEPTH:
            raise self.fail(pos, "nesting too deep")
        text = self.text
        if pos >= len(text):
            raise self.fail(pos, "unexpected end of text")
        char = text[pos]
        if char in "{[":
            return self.container(pos, depth)
        match = _STRING.match(text, pos) or _SCALAR.match(text, pos)
        if match is None:
            raise self.fail(pos, f"unexpected {char!r}")
        return _Value(pos, match.end(), "scalar")

    def container(self, pos: int, depth: int) -> _Value:
        text = self.text
        is_object = text[pos] == "{"
        closer = "}" if is_object else "]"
        node = _Value(pos, pos, "object" if is_object else "array")
        at = self.skip(pos + 1)
        while True:
            if at >= len(text):
                raise self.fail(at, f"missing {closer!r}")
            if text[at] == closer:
                node.end = at + 1
                return node
            start = at
            key = None
            if is_object:
                key, at = self.key(at)
                at = self.skip(at)
                if at >= len(text) or text[at] != ":":
                    raise self.fail(at, "expected ':'")
                at = self.skip(at + 1)
            item = self.value(at, depth + 1)
            entry = _Entry(start, item, key)
            node.entries.append(entry)
            at = self.skip(item.end)
            if at < len(text) and text[at] == ",":
                entry.comma_end = at + 1
                at = self.skip(at + 1)
            elif at < len(text) and text[at] != closer:
                raise self.fail(at, f"expected ',' or {closer!r}")

    def key(self, pos: int) -> tuple[str, int]:
        match = _STRING.match(self.text, pos)
        if match is not None:
            return _decode_string(match.group()), match.end()
        match = _IDENTIFIER.match(self.text, pos)
        if match is not None:
            return match.group(), match.end()
        raise self.fail(pos, "expected a member name")


def _decode_string(raw: str) -> str:
    if raw.startswith('"'):
        try:
            return str(json.loads(raw))
        except ValueError:
            pass  # escapes JSON lacks (json5 allows \' and line continuations)
    # Lazy: json5 loads only for escapes plain JSON lacks.
    import json5  # noqa: PLC0415

    return str(json5.loads(raw))


def _load(text: str) -> Any:
    try:
        return parse_jsonc(text, label="the text")
    except FileProblem as problem:
        raise JsoncEditError(problem.message.rstrip(".")) from None


def _parse(text: str) -> _Value:
    scanner = _Scanner(text)
    start = scanner.skip(0)
    root = scanner.value(start, 0)
    if scanner.skip(root.end) != len(text):
        raise scanner.fail(root.end, "unexpected text after the document")
    if root.kind != "object":
        raise JsoncEditError("the document is not an object")
    return root


# ------------------------------------------------------------------------------ editing


@dataclass(frozen=True, slots=True)
class _Splice:
    at: int
    end: int
    text: str


def _apply(text: str, splices: list[_Splice]) -> str:
    for splice in sorted(splices, key=lambda s: (s.at, s.end), reverse=True):
        text = text[:splice.at] + splice.text + text[splice.end:]
    return text


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _append_entries(text: str, container: _Value, pieces: list[str]) -> list[_Splice]:
    """Splices adding `pieces` (rendered entries) at the end of a container, in its style."""
    if not pieces:
        return []
    if not container.entries:
        return [_Splice(container.start + 1, container.start + 1, ", ".join(pieces))]
    first, last = container.entries[0], container.entries[-1]
    first_line = _line_start(text, first.start)
    prefix = text[first_line:first.start]
    multiline = first_line > container.start and prefix.strip(" \t") == ""
    trailing = last.comma_end is not None
    nl = _newline(text)
    if multiline:
        close_line = _line_start(text, container.close)
        close_alone = (close_line > last.value.end
                       and text[close_line:container.close].strip(" \t") == "")
        if close_alone:
            lines = [prefix + piece + ("," if trailing or index < len(pieces) - 1 else "")
                     for index, piece in enumerate(pieces)]
            splices = [_Splice(close_line, close_line, "".join(line + nl for line in lines))]
            if not trailing:
                splices.append(_Splice(last.value.end, last.value.end, ","))
            return splices
        separator = nl + prefix
    else:
        separator = " "
    if trailing:
        assert last.comma_end is not None
        added = "".join(separator + piece + "," for piece in pieces)
        return [_Splice(last.comma_end, last.comma_end, added)]
    added = "".join("," + separator + piece for piece in pieces)
    return [_Splice(last.value.end, last.value.end, added)]


def _member(container: _Value, key: str) -> _Entry | None:
    found = [entry for entry in container.entries if entry.key == key]
    return found[-1] if found else None  # json5 keeps the last of repeated keys


def _nested(path: Sequence[str], value: Any) -> Any:
    for key in reversed(path):
        value = {key: value}
    return value


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _locate(text: str, path: Sequence[str]) -> tuple[_Value, int, _Entry | None]:
    """(the deepest existing object on `path`, how many keys of `path` it consumed, the
    member for the next key when it exists)."""
    if not path:
        raise JsoncEditError("the path is empty")
    node = _parse(text)
    for depth, key in enumerate(path):
        entry = _member(node, key)
        if entry is None or depth == len(path) - 1:
            return node, depth, entry
        if entry.value.kind != "object":
            where = ".".join(path[:depth + 1])
            raise JsoncEditError(f"{where} is not an object")
        node = entry.value
    raise AssertionError("unreachable")


def _value_at(doc: Any, path: Sequence[str]) -> Any:
    for key in path:
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc


def _verified(text: str, path: Sequence[str], expected: Any) -> str:
    try:
        doc = _load(text)
    except JsoncEditError as exc:  # a bug here, never the user's text: that parsed before
        raise JsoncEditError(f"the edited text does not parse ({exc})") from None
    if _value_at(doc, path) != expected:
        raise JsoncEditError(f"the edit did not produce the expected {'.'.join(path)}")
    return text


def _replace_or_insert(text: str, path: Sequence[str], value: Any) -> str:
    node, depth, entry = _locate(text, path)
    if entry is not None and depth == len(path) - 1:
        splices = [_Splice(entry.value.start, entry.value.end, _dump(value))]
    else:
        member = f"{_dump(path[depth])}: {_dump(_nested(path[depth + 1:], value))}"
        splices = _append_entries(text, node, [member])
    return _verified(_apply(text, splices), path, value)


def set_string(text: str, path: Sequence[str], value: str) -> str:
    """`text` with the member at `path` set to the string `value` (inserted if absent)."""
    return _replace_or_insert(text, path, value)


def merge_string_array(text: str, path: Sequence[str], values: Sequence[str],
                       ) -> tuple[str, list[str]]:
    """`text` with the strings of `values` the array at `path` lacks appended to it, and
    those appended values. Unchanged text when nothing is missing."""
    doc = _load(text)
    current = _value_at(doc, path)
    existing = list(current) if isinstance(current, list) else None
    added: list[str] = []
    for value in values:
        if value not in added and (existing is None or value not in existing):
            added.append(value)
    if existing is not None and not added:
        return text, []
    _node, depth, entry = _locate(text, path)
    if entry is not None and depth == len(path) - 1 and entry.value.kind == "array":
        assert existing is not None
        splices = _append_entries(text, entry.value, [_dump(v) for v in added])
        return _verified(_apply(text, splices), path, existing + added), added
    return _replace_or_insert(text, path, added), added
