"""Line and column of the value a JSON Pointer designates, for pointing readers at it.

Findings carry a JSON Pointer (`/meta/params/0/enum/1`); editors, CI annotations and
SARIF viewers want a line and a column. `locate` scans the document once with a small
position-tracking scanner (iterative, so 100k nested brackets do not overflow the stack)
and caches the resulting index per text, so hundreds of findings in the same file cost
one scan. Malformed text yields None rather than an exception: positions are a courtesy,
and the finding that reports the malformed text already says where the syntax breaks.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeAlias

__all__ = ["locate"]

# Whitespace, and for JSONC also // line and /* block */ comments.
_SKIP_JSON = re.compile(r"[ \t\n\r]*")
_SKIP_JSONC = re.compile(r"(?:[ \t\n\r\ufeff\u00a0\u2028\u2029]+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)

_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
# base-database.jsonc is read with json5, so tolerate what json5 accepts in JSONC mode:
# single-quoted strings, unquoted keys, hex numbers, leading/trailing dots, signs, NaN.
_STRING_JSONC = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'", re.DOTALL)
_SCALAR_JSONC = re.compile(
    r"[+-]?(?:0[xX][0-9a-fA-F]+|Infinity|NaN|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|true|false|null"
)
_IDENTIFIER_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]{0,17}")


@dataclass(slots=True)
class _Container:
    """An object or array: where it starts, and its members' nodes."""

    offset: int
    members: dict[str, _Node] | list[_Node]


# A scalar is just its start offset; containers also keep their members.
_Node: TypeAlias = "int | _Container"


@dataclass(frozen=True, slots=True)
class _Index:
    root: _Node
    line_starts: list[int]
    bom: bool

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self.line_starts, offset)
        column = offset - self.line_starts[line - 1] + 1
        if line == 1 and self.bom:
            column -= 1  # editors do not count a byte-order mark as a column
        return line, column


def locate(text: str, pointer: str, *, jsonc: bool = False) -> tuple[int, int] | None:
    """1-based (line, column) of the value `pointer` designates in a JSON document.

    A pointer into a path that does not exist gives the position of its nearest existing
    ancestor (a missing member points at the object that lacks it). Returns None when
    the text is not well-formed JSON (JSONC when `jsonc`) or the pointer is malformed.
    """
    tokens = _pointer_tokens(pointer)
    if tokens is None:
        return None
    index = _build_index(text, jsonc)
    if index is None:
        return None
    node = index.root
    for token in tokens:
        if not isinstance(node, _Container):
            break
        child = _child(node, token)
        if child is None:
            break
        node = child
    return index.position(node if isinstance(node, int) else node.offset)


def _pointer_tokens(pointer: str) -> list[str] | None:
    if pointer == "":
        return []
    if not isinstance(pointer, str) or not pointer.startswith("/"):
        return None
    # RFC 6901: ~1 is '/', ~0 is '~', decoded in that order.
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _child(node: _Container, token: str) -> _Node | None:
    members = node.members
    if isinstance(members, dict):
        return members.get(token)
    if _ARRAY_INDEX.fullmatch(token):
        i = int(token)
        if i < len(members):
            return members[i]
    return None


@lru_cache(maxsize=16)
def _build_index(text: str, jsonc: bool) -> _Index | None:
    bom = text.startswith("\ufeff")
    root = _scan(text, 1 if bom else 0, jsonc)
    if root is None:
        return None
    line_starts = [0]
    line_starts.extend(m.end() for m in re.finditer("\n", text))
    return _Index(root=root, line_starts=line_starts, bom=bom)


def _scan(text: str, start: int, jsonc: bool) -> _Node | None:
    """Parse `text` into a tree of start offsets, or None if it is not well formed."""
    skip_re = _SKIP_JSONC if jsonc else _SKIP_JSON
    string = (_STRING_JSONC if jsonc else _STRING).match
    scalar = (_SCALAR_JSONC if jsonc else _SCALAR).match
    n = len(text)
    stack: list[_Container] = []
    keys: list[str] = []  # the pending member name of each open object ("" for arrays)
    root: _Node | None = None

    def skip(pos: int) -> int:
        """The position after any whitespace (and comments) at `pos`."""
        m = skip_re.match(text, pos)
        return m.end() if m is not None else pos

    def read_key(pos: int) -> tuple[str, int] | None:
        """A member name and the position of its value, after the colon."""
        m = string(text, pos)
        if m is not None:
            key = _decode_string(m.group())
        elif jsonc and (m := _IDENTIFIER_KEY.match(text, pos)) is not None:
            key = m.group()
        else:
            return None
        pos = skip(m.end())
        if pos >= n or text[pos] != ":":
            return None
        return key, skip(pos + 1)

    pos = skip(start)
    while True:
        # A value starts at `pos`.
        if pos >= n:
            return None
        ch = text[pos]
        node: _Node
        end = pos + 1
        if ch == "{" or ch == "[":
            node = _Container(pos, {} if ch == "{" else [])
        else:
            m = string(text, pos) if ch in "\"'" else scalar(text, pos)
            if m is None:
                return None
            node, end = pos, m.end()
        if not stack:
            root = node
        else:
            parent = stack[-1].members
            if isinstance(parent, list):
                parent.append(node)
            else:
                parent[keys[-1]] = node  # a repeated name: the last one wins, as in json
        if isinstance(node, _Container):
            closer = "}" if ch == "{" else "]"
            pos = skip(end)
            if pos >= n or text[pos] != closer:
                stack.append(node)
                keys.append("")
                if isinstance(node.members, dict):
                    found = read_key(pos)
                    if found is None:
                        return None
                    keys[-1], pos = found
                continue
            pos += 1  # an empty container is complete
        else:
            pos = end
        # After a value: commas and closing brackets, until the next value starts.
        while True:
            pos = skip(pos)
            if not stack:
                return root if pos == n else None
            if pos >= n:
                return None
            is_object = isinstance(stack[-1].members, dict)
            closer = "}" if is_object else "]"
            ch = text[pos]
            if ch == closer:
                stack.pop()
                keys.pop()
                pos += 1
                continue
            if ch != ",":
                return None
            pos = skip(pos + 1)
            if jsonc and pos < n and text[pos] == closer:  # a trailing comma
                continue
            if is_object:
                found = read_key(pos)
                if found is None:
                    return None
                keys[-1], pos = found
            break


def _decode_string(raw: str) -> str:
    inner = raw[1:-1]
    if "\\" not in inner:
        return inner
    if raw[0] == "'":  # a JSONC single-quoted name: decode it as its double-quoted twin
        raw = '"' + inner.replace("\\'", "'").replace('"', '\\"') + '"'
    try:
        decoded = json.loads(raw)
    except ValueError:
        return inner
    return decoded if isinstance(decoded, str) else inner
