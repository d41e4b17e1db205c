"""Line and column of the value a JSON Pointer designates, for pointing readers at it.

Findings carry a JSON Pointer (`/meta/params/0/enum/1`); editors, CI annotations and
SARIF viewers want a line and a column. `locate` scans the document once
(`basedb.workspace.jsonc`, the scanner the JSONC editor uses too) and caches the
resulting index per text, so hundreds of findings in the same file cost one scan.
Malformed text yields None rather than an exception: positions are a courtesy, and the
finding that reports the malformed text already says where the syntax breaks.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache

from basedb.core.frozen import frozen_dataclass
from basedb.workspace.jsonc import Node, ScanError, scan

__all__ = ["locate"]

_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]{0,17}")


@frozen_dataclass
class _Index:
    """A parsed document's tree and where each of its lines starts."""

    root: Node
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
        child = _child(node, token)
        if child is None:
            break
        node = child
    return index.position(node.start)


def _pointer_tokens(pointer: str) -> list[str] | None:
    if pointer == "":
        return []
    if not isinstance(pointer, str) or not pointer.startswith("/"):
        return None
    # RFC 6901: ~1 is '/', ~0 is '~', decoded in that order.
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _child(node: Node, token: str) -> Node | None:
    if node.kind == "object":
        # A repeated name: the last one wins, as in json.
        for entry in reversed(node.entries):
            if entry.key == token:
                return entry.value
        return None
    if node.kind == "array" and _ARRAY_INDEX.fullmatch(token):
        i = int(token)
        if i < len(node.entries):
            return node.entries[i].value
    return None


@lru_cache(maxsize=16)
def _build_index(text: str, jsonc: bool) -> _Index | None:
    bom = text.startswith("\ufeff")
    try:
        root = scan(text, jsonc=jsonc, start=1 if bom else 0)
    except ScanError:
        return None
    line_starts = [0]
    line_starts.extend(m.end() for m in re.finditer("\n", text))
    return _Index(root=root, line_starts=line_starts, bom=bom)
