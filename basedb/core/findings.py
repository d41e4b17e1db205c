"""Findings: what validators report and reporters render.

An *error* (`Finding`) blocks `check` and `deploy`; a *hint* (`Hint`) never does. Both
remember the workspace-relative file and the JSON Pointer they are about, so that every
reporter can point a user (or an editor, or code scanning) at the exact place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any

from basedb.core.frozen import frozen_dataclass

ERROR_CODES: tuple[str, ...] = (
    "WORKSPACE_NOT_FOUND",
    "WORKSPACE_CONFIG_INVALID",
    "CATALOG_INVALID",
    "DECLARATION_INVALID",
    "FUNCTION_ID_INVALID",
    "FUNCTION_ID_DUPLICATE",
    "PARAM_NAME_MISSING",
    "PARAM_NAME_INVALID",
    "PARAM_NAME_DUPLICATE",
    "PARAM_DESCRIPTION_MISSING",
    "PARAM_KIND_INVALID",
    "ENUM_EMPTY",
    "ENUM_DUPLICATE",
    "ENUM_NULL",
    "ENUM_TYPE_MISMATCH",
    "ENUM_OUT_OF_DOMAIN",
    "FAAS_SCHEMA_NOT_OBJECT",
    "FAAS_PROPERTY_DESCRIPTION_MISSING",
    "FAAS_SCHEMA_INVALID",
    "FAAS_PATTERN_UNSUPPORTED",
    "FAAS_NETWORK_INVALID",
    "FAAS_SECRET_INVALID",
    "SQL_PARSE_ERROR",
    "SQL_NOT_READ_ONLY",
    "SQL_NO_BOUND_TABLE",
    "SQL_UNKNOWN_TABLE",
    "SQL_UNKNOWN_FIELD",
    "SQL_PARAM_UNDECLARED",
    "SQL_UNSUPPORTED",
    "SQL_INVALID",
    "MUTATION_TABLE_UNKNOWN",
    "MUTATION_FIELD_UNKNOWN",
    "MUTATION_FIELD_READONLY",
    "MUTATION_PARAM_UNDECLARED",
    "AGENT_TOOLS_INVALID",
    "CONTRACTS_STALE",
)

HINT_CODES: tuple[str, ...] = (
    "function_description_short",
    "param_description_short",
    "option_field_unconstrained",
    "reference_value_hint",
    "enum_unchecked",
    "param_unused",
)


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
