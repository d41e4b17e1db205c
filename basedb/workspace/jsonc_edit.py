"""Change one value of a JSONC document and keep every other byte as it was.

`basedb catalog pull` merges table ids into `binding.tableIds` of base-database.jsonc, a
file people write by hand: comments, trailing commas, CRLF line ends, single-quoted
strings and unquoted keys (json5) all have to survive. Re-serialising the parsed
document would lose them, so this module scans the text once for the spans of objects,
arrays and their members (`basedb.workspace.jsonc`, the scanner `jsonpos` uses too), and
splices new text in where it belongs:

    merge_string_array(text, ("binding", "tableIds"), ["tbl1", "tbl2"])
        appends the values the array lacks, in the array's own layout (one per line when
        its items are one per line, with a trailing comma when it has one); creates the
        array, and any missing parent object, when absent; replaces a value that is not
        an array.
    set_string(text, ("binding", "baseToken"), "bas…")
        replaces or inserts one string member.
    set_string_array(text, ("binding", "tableIds"), ["tbl1"])
        replaces (or inserts) the whole array, written on one line.
    remove_strings(text, ("binding", "tableIds"), ["tbl2"])
        removes those items from the array, each with its comma, keeping the layout and
        comments of the items that stay.

Every edit is checked by parsing the result and comparing the value at the path; a text
that would not come out right raises `JsoncEditError` instead of being returned.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from basedb.core.frozen import frozen_dataclass
from basedb.workspace.files import FileProblem, parse_jsonc
from basedb.workspace.jsonc import Entry, Node, ScanError, scan

__all__ = ["JsoncEditError", "merge_string_array", "remove_strings", "set_string",
           "set_string_array"]


class JsoncEditError(ValueError):
    """The text cannot be edited as asked (malformed, or a parent is not an object)."""


def _load(text: str) -> Any:
    try:
        return parse_jsonc(text, label="the text")
    except FileProblem as problem:
        raise JsoncEditError(problem.message.rstrip(".")) from None


def _parse(text: str) -> Node:
    try:
        root = scan(text, jsonc=True)
    except ScanError as error:
        raise JsoncEditError(str(error)) from None
    if root.kind != "object":
        raise JsoncEditError("the document is not an object")
    return root


# ------------------------------------------------------------------------------ editing


@frozen_dataclass
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


def _append_entries(text: str, container: Node, pieces: list[str]) -> list[_Splice]:
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


def _member(container: Node, key: str) -> Entry | None:
    found = [entry for entry in container.entries if entry.key == key]
    return found[-1] if found else None  # json5 keeps the last of repeated keys


def _nested(path: Sequence[str], value: Any) -> Any:
    for key in reversed(path):
        value = {key: value}
    return value


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _locate(text: str, path: Sequence[str]) -> tuple[Node, int, Entry | None]:
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


def set_string_array(text: str, path: Sequence[str], values: Sequence[str]) -> str:
    """`text` with the member at `path` set to the array `values` (inserted if absent)."""
    return _replace_or_insert(text, path, list(values))


def remove_strings(text: str, path: Sequence[str], values: Sequence[str],
                   ) -> tuple[str, list[str]]:
    """`text` without the items of the array at `path` that equal one of `values`, and the
    values removed (in the array's order). Unchanged text when none is there."""
    current = _value_at(_load(text), path)
    if not isinstance(current, list):
        return text, []
    removed = [item for item in current if isinstance(item, str) and item in values]
    remaining = [item for item in current if not (isinstance(item, str) and item in values)]
    while True:
        _node, depth, entry = _locate(text, path)
        if entry is None or depth != len(path) - 1 or entry.value.kind != "array":
            raise JsoncEditError(f"{'.'.join(path)} is not an array")
        items = entry.value.entries
        index = next((i for i, item in enumerate(items)
                      if _item_value(text, item) in values), None)
        if index is None:
            break
        text = _apply(text, [_removal(text, entry.value, index)])
    return _verified(text, path, remaining), removed


def _item_value(text: str, item: Entry) -> Any:
    if item.value.kind != "scalar":
        return None
    try:
        return _load("{\"v\": " + text[item.value.start:item.value.end] + "}")["v"]
    except (JsoncEditError, KeyError, TypeError):
        return None


def _removal(text: str, array: Node, index: int) -> _Splice:
    """The splice taking item `index` out of `array`, with the comma that separates it."""
    items = array.entries
    if len(items) == 1:
        return _Splice(array.start, array.end, "[]")
    item = items[index]
    if index < len(items) - 1:  # up to where the next item starts: its indentation stays
        return _Splice(item.start, items[index + 1].start, "")
    before = items[index - 1]
    if item.comma_end is not None:  # the last item had a trailing comma: keep the previous one's
        assert before.comma_end is not None
        line = _line_start(text, item.start)
        line_end = text.find("\n", item.comma_end)
        if (line > before.comma_end and not text[line:item.start].strip(" \t")
                and line_end != -1 and not text[item.comma_end:line_end].strip(" \t\r")):
            return _Splice(line, line_end + 1, "")  # the item's whole line
        return _Splice(before.comma_end, item.comma_end, "")
    return _Splice(before.value.end, item.value.end, "")
