"""Language-neutral shapes of function inputs, rendered by the TypeScript and Python writers.

Declarations (SQL and Mutation params, FaaS JSON Schemas) are first turned into these small
immutable values, so that each language only decides how a shape is spelled, never what an
input accepts.
"""

from __future__ import annotations

import json
import math
import unicodedata
from typing import Literal

from basedb.core.frozen import frozen_dataclass

JsonScalar = str | int | float | bool | None

PrimName = Literal["string", "integer", "number", "boolean", "null", "unknown", "never"]


@frozen_dataclass
class Prim:
    """A primitive: string, integer, number, boolean, null, unknown (anything) or never."""

    name: PrimName


@frozen_dataclass
class Const:
    """A union of literal values (JSON Schema `enum` / `const`)."""

    values: tuple[JsonScalar, ...]


@frozen_dataclass
class OptionRef:
    """A declared param's `enum`, which the options constants also publish."""

    group: Literal["database_function", "mutation"]
    function_id: str
    param: str
    values: tuple[JsonScalar, ...]


@frozen_dataclass
class ArrayOf:
    item: Shape


@frozen_dataclass
class Prop:
    name: str
    shape: Shape
    required: bool
    description: str = ""


@frozen_dataclass
class Obj:
    """An object; `extra` is the shape of undeclared keys, None when they are not allowed."""

    props: tuple[Prop, ...]
    extra: Shape | None = None


@frozen_dataclass
class AnyOf:
    members: tuple[Shape, ...]


@frozen_dataclass
class AllOf:
    members: tuple[Shape, ...]


Shape = Prim | Const | OptionRef | ArrayOf | Obj | AnyOf | AllOf

UNKNOWN = Prim("unknown")
NEVER = Prim("never")
NULL = Prim("null")


def any_of(members: list[Shape]) -> Shape:
    """A union, flattened; `unknown` absorbs everything and `never` disappears."""
    flat: list[Shape] = []
    for member in members:
        parts = member.members if isinstance(member, AnyOf) else (member,)
        for part in parts:
            if part == UNKNOWN:
                return UNKNOWN
            if part != NEVER:
                flat.append(part)
    if not flat:
        return NEVER
    return flat[0] if len(flat) == 1 else AnyOf(tuple(flat))


def nullable(shape: Shape) -> Shape:
    return any_of([shape, NULL])


def is_json_scalar(value: object) -> bool:
    """A value a literal type can spell (JSON like 1e400 parses to a float infinity)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, int, bool))


def scalar_key(value: JsonScalar) -> tuple[str, object]:
    """Identity of a literal that keeps `1`, `1.0` and `true` apart the way JSON does."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", float(value))
    return ("null", None) if value is None else ("string", value)


def _escape_char(ch: str) -> str:
    return f"\\u{ord(ch):04x}"  # every character escaped here is in the BMP


def _needs_escape(ch: str) -> bool:
    # Control characters, lone surrogates and line/paragraph separators would break a
    # source line or the file's UTF-8 encoding; everything else stays readable as written.
    return unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp")


def string_literal(text: str) -> str:
    """A double-quoted literal valid in both TypeScript and Python source."""
    body = json.dumps(text, ensure_ascii=False)[1:-1]
    if any(_needs_escape(ch) for ch in body):
        body = "".join(_escape_char(ch) if _needs_escape(ch) else ch for ch in body)
    return f'"{body}"'


def comment_lines(text: str) -> list[str]:
    """A description as comment lines: no line breaks, control characters or surrogates."""
    lines = []
    for line in text.strip().splitlines():
        if any(_needs_escape(ch) and ch != "\t" for ch in line):
            line = "".join(
                _escape_char(ch) if _needs_escape(ch) and ch != "\t" else ch for ch in line)
        lines.append(line.rstrip())
    return lines
