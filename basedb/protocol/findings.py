"""Findings: what validators report and reporters render, and what
the platform answers in `data.errors` of a refused draft.

An *error* (`Finding`) blocks `check` and `deploy`; a *hint* (`Hint`) never does. Both
remember the workspace-relative file and the JSON Pointer they are about, so that every
reporter can point a user (or an editor, or code scanning) at the exact place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any

from basedb.core.frozen import frozen_dataclass
from basedb.protocol.codes import ErrorCode, HintCode

ERROR_CODES: tuple[str, ...] = tuple(code.value for code in ErrorCode)
HINT_CODES: tuple[str, ...] = tuple(code.value for code in HintCode)


@frozen_dataclass
class Finding:
    """A blocking error about one place in one file."""

    code: str
    message: str
    file: str
    pointer: str = ""
    function_id: str | None = None
    fix: str | None = None
    # Line and column (1-based) for files that are not JSON, such as main.sql.
    line: int | None = None
    column: int | None = None

    def __post_init__(self) -> None:
        if self.code not in ERROR_CODES:
            raise ValueError(f"unknown error code {self.code!r}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.function_id is not None:
            out["functionId"] = self.function_id
        out["file"] = self.file
        out["pointer"] = self.pointer
        if self.fix:
            out["fix"] = self.fix
        if self.line is not None:
            out["line"] = self.line
            if self.column is not None:
                out["column"] = self.column
        return out


@frozen_dataclass
class Hint:
    """Advice that never blocks: a `functionHints` entry."""

    code: str
    function_id: str
    message: str
    file: str
    pointer: str = ""
    param: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.code not in HINT_CODES:
            raise ValueError(f"unknown hint code {self.code!r}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "functionId": self.function_id}
        if self.param is not None:
            out["param"] = self.param
        out["message"] = self.message
        out["file"] = self.file
        out["pointer"] = self.pointer
        out.update(self.extra)
        return out


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Stable, reader-friendly order: by file, then position, then code."""
    return sorted(
        findings,
        key=lambda f: (f.file, f.line or 0, _pointer_key(f.pointer), f.code, f.message),
    )


def sort_hints(hints: Iterable[Hint]) -> list[Hint]:
    return sorted(
        hints, key=lambda h: (h.function_id, h.file, _pointer_key(h.pointer), h.code, h.message)
    )


def _pointer_key(pointer: str) -> tuple[tuple[int, int | str], ...]:
    # Numeric segments sort numerically so /params/10 comes after /params/2.
    parts = pointer.split("/")[1:] if pointer else []
    return tuple((0, int(p)) if p.isascii() and p.isdigit() else (1, p) for p in parts)


def escape_pointer_token(token: str) -> str:
    """Escape one reference token for a JSON Pointer (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def pointer(*tokens: str | int) -> str:
    """Build a JSON Pointer from tokens: pointer("meta", "params", 0) == "/meta/params/0"."""
    text = "/".join(map(str, tokens))
    if "~" in text or text.count("/") != len(tokens) - 1:  # a token to escape
        return "".join("/" + escape_pointer_token(str(t)) for t in tokens)
    return "/" + text if tokens else ""
