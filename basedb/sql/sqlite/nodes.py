"""Small builders of SQLite expression nodes for the compiler."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

TEXT_TYPE = exp.DataType.build("TEXT")
INTEGER_TYPE = exp.DataType.build("INTEGER")
REAL_TYPE = exp.DataType.build("REAL")
# date_trunc units SQLite's strftime computes exactly.
TRUNC_FORMATS = {
    "year": "%Y-01-01 00:00:00", "month": "%Y-%m-01 00:00:00", "day": "%Y-%m-%d 00:00:00",
    "hour": "%Y-%m-%d %H:00:00", "minute": "%Y-%m-%d %H:%M:00",
    "second": "%Y-%m-%d %H:%M:%S",
}


def call(name: str, *args: Any) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def string(text: str) -> exp.Literal:
    return exp.Literal.string(text)


def number(value: int | float) -> exp.Expression:
    if isinstance(value, float) and value != value:  # NaN
        return call("bdb_float", string("NaN"))
    if value < 0:
        return exp.Paren(this=exp.Neg(this=exp.Literal.number(repr(-value) if isinstance(
            value, float) else -value)))
    return exp.Literal.number(repr(value) if isinstance(value, float) else value)


def constant(value: Any) -> exp.Expression:
    """A Python value of the local representation as an SQLite literal."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Literal.number(int(value))
    if isinstance(value, (int, float)):
        return number(value)
    return string(str(value))


def unit_text(node: Any) -> str | None:
    if isinstance(node, exp.Literal) and node.is_string:
        word = str(node.this).strip().lower()
        return word[:-1] if word.endswith("s") and word not in (
            "microseconds", "milliseconds") else word
    return None
