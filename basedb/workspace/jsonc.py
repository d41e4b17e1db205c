"""One scanner for JSON and JSONC text: where every value, member and comma is.

Two things need more than a parsed document: pointing a reader at the line and column of
a value (`basedb.workspace.jsonpos`), and changing one value of a hand-written file while
keeping every other byte (`basedb.workspace.jsonc_edit`). Both read the tree of spans this
module builds:

    root = scan(text, jsonc=True)        # a Node; ScanError when the text is malformed
    root.kind, root.start, root.end      # "object" | "array" | "scalar", offsets
    root.entries[0].key, .value, .comma_end

The scanner is iterative (100,000 nested brackets do not overflow the stack). In JSON
mode it accepts exactly JSON; in JSONC mode it also accepts what json5 reads in
base-database.jsonc: // and /* */ comments, trailing commas, single-quoted strings,
unquoted keys, hex numbers, leading or trailing dots, signs, NaN and Infinity.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Entry", "Node", "ScanError", "decode_string", "plain_json", "scan"]

# Whitespace, and for JSONC also // line and /* block */ comments.
_SKIP_JSON = re.compile(r"[ \t\n\r]*")
_SKIP_JSONC = re.compile(r"(?:[ \t\n\r\ufeff\u00a0\u2028\u2029]+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)

_STRING_JSON = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_SCALAR_JSON = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
                          r"|true|false|null")
_STRING_JSONC = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'", re.DOTALL)
_SCALAR_JSONC = re.compile(
    r"[+-]?(?:0[xX][0-9a-fA-F]+|Infinity|NaN|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|true|false|null"
)
_IDENTIFIER_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")

Kind = Literal["object", "array", "scalar"]


class ScanError(ValueError):
    """The text is not well-formed JSON (or JSONC); `offset` is where that shows."""

    def __init__(self, text: str, offset: int, what: str) -> None:
        self.offset = offset
        self.line = text.count("\n", 0, offset) + 1
        super().__init__(f"{what} at line {self.line}")


@dataclass(slots=True)
class Node:
    """A value's span (`end` is just after it); containers also hold their entries."""

    start: int
    end: int
    kind: Kind
    entries: list[Entry] = field(default_factory=list)

    @property
    def close(self) -> int:
        """Offset of the closing bracket of a container."""
        return self.end - 1


@dataclass(slots=True)
class Entry:
    """An array item or an object member: where it starts (its key, for a member), its
    value, and the offset just after the comma that follows it (None when none does)."""

    start: int
    value: Node
    key: str | None = None
    comma_end: int | None = None


def scan(text: str, *, jsonc: bool, start: int = 0) -> Node:
    """The span tree of the one document in `text` (from `start`, e.g. after a BOM)."""
    skip_re = _SKIP_JSONC if jsonc else _SKIP_JSON
    string = (_STRING_JSONC if jsonc else _STRING_JSON).match
    scalar = (_SCALAR_JSONC if jsonc else _SCALAR_JSON).match
    n = len(text)
    stack: list[Node] = []
    pending: list[tuple[int, str | None]] = []  # per open container: next entry's start, key

    def skip(pos: int) -> int:
        m = skip_re.match(text, pos)
        return m.end() if m is not None else pos

    def read_key(pos: int) -> tuple[str, int]:
        """A member name and the position of its value, after the colon."""
        m = string(text, pos)
        if m is not None:
            key = decode_string(m.group())
        elif jsonc and (m := _IDENTIFIER_KEY.match(text, pos)) is not None:
            key = m.group()
        else:
            raise ScanError(text, pos, "expected a member name")
        pos = skip(m.end())
        if pos >= n or text[pos] != ":":
            raise ScanError(text, pos, "expected ':'")
        return key, skip(pos + 1)

    root: Node | None = None
    pos = skip(start)
    while True:
        # A value starts at `pos`.
        if pos >= n:
            raise ScanError(text, pos, "unexpected end of text")
        ch = text[pos]
        if ch in "{[":
            node = Node(pos, pos, "object" if ch == "{" else "array")
        else:
            m = string(text, pos) if ch in "\"'" else scalar(text, pos)
            if m is None:
                raise ScanError(text, pos, f"unexpected {ch!r}")
            node = Node(pos, m.end(), "scalar")
        if stack:
            entry_start, key = pending[-1]
            stack[-1].entries.append(Entry(entry_start, node, key))
        else:
            root = node
        if node.kind != "scalar":
            closer = "}" if node.kind == "object" else "]"
            pos = skip(pos + 1)
            if pos >= n or text[pos] != closer:
                stack.append(node)
                if node.kind == "object":
                    key, value_at = read_key(pos)
                    pending.append((pos, key))
                    pos = value_at
                else:
                    pending.append((pos, None))
                continue
            pos += 1
            node.end = pos  # an empty container is complete
        else:
            pos = node.end
        # After a value: commas and closing brackets, until the next value starts.
        while True:
            pos = skip(pos)
            if not stack:
                if pos != n:
                    raise ScanError(text, pos, "unexpected text after the document")
                assert root is not None
                return root
            if pos >= n:
                raise ScanError(text, pos, "unexpected end of text")
            container = stack[-1]
            closer = "}" if container.kind == "object" else "]"
            ch = text[pos]
            if ch == closer:
                stack.pop()
                pending.pop()
                pos += 1
                container.end = pos
                continue
            if ch != ",":
                raise ScanError(text, pos, f"expected ',' or {closer!r}")
            container.entries[-1].comma_end = pos + 1
            pos = skip(pos + 1)
            if jsonc and pos < n and text[pos] == closer:  # a trailing comma
                continue
            if container.kind == "object":
                key, value_at = read_key(pos)
                pending[-1] = (pos, key)
                pos = value_at
            else:
                pending[-1] = (pos, None)
            break


def plain_json(text: str, root: Node) -> str | None:
    """The scanned document as plain JSON text (comments, trailing commas and whitespace
    gone), or None when it uses what only JSONC allows in a value or key (single quotes,
    unquoted keys, hex, NaN …), which only a JSON5 parser reads."""
    out: list[str] = []
    # Work items: a node to emit, or a literal piece of text.
    work: list[Node | str] = [root]
    while work:
        item = work.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        if item.kind == "scalar":
            raw = text[item.start:item.end]
            if raw[0] == "'" or (raw[0] != '"' and _SCALAR_JSON.fullmatch(raw) is None):
                return None
            out.append(raw)
            continue
        is_object = item.kind == "object"
        pieces: list[Node | str] = ["{" if is_object else "["]
        for number, entry in enumerate(item.entries):
            if number:
                pieces.append(",")
            if is_object:
                if text[entry.start] != '"':
                    return None
                pieces.append(json.dumps(entry.key, ensure_ascii=False) + ":")
            pieces.append(entry.value)
        pieces.append("}" if is_object else "]")
        work.extend(reversed(pieces))
    return "".join(out)


def decode_string(raw: str) -> str:
    """The text of a JSON (or JSONC single-quoted) string literal."""
    inner = raw[1:-1]
    if "\\" not in inner:
        return inner
    if raw[0] == "'":  # a JSONC single-quoted string: decode it as its double-quoted twin
        raw = '"' + inner.replace("\\'", "'").replace('"', '\\"') + '"'
    try:
        decoded = json.loads(raw)
    except ValueError:
        # Escapes JSON lacks (json5 allows \' and line continuations).
        # Lazy: json5 loads only for escapes plain JSON lacks.
        import json5  # noqa: PLC0415

        try:
            decoded = json5.loads(raw)
        except ValueError:
            return inner
    return decoded if isinstance(decoded, str) else inner
