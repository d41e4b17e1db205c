"""PostgreSQL's rules for casts and for choosing among a function's overloads, over the
types of `pgtypes`: which type a CAST names (`cast_target`, with numeric(p, s) read by
`numeric_typmod`), which casts exist (`castable`), and which signature a call of given
argument types resolves to (`choose_signature`, manual 10.3).

The typer applies them to a query (`typing_calls.CallTyper`); the SQLite back end reads
the same CAST targets when it translates (`basedb.sql.sqlite.translate`).
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from basedb.sql import pgtypes as T
from basedb.sql.functions import Signature
from basedb.sql.typing_base import ANY


def cast_target(data_type: Any) -> str | None:
    """The type a CAST names, or None when the subset has no such type."""
    if not isinstance(data_type, exp.DataType):
        return None
    params = data_type.expressions
    text = data_type.sql(dialect="postgres").lower()
    if params:
        if data_type.this == exp.DataType.Type.DECIMAL and len(params) <= 2 and all(
                isinstance(p, exp.DataTypeParam) and isinstance(p.this, exp.Literal)
                and not p.this.is_string for p in params):
            return T.NUMERIC
        if not data_type.is_type(exp.DataType.Type.ARRAY):
            return None
    return T.CAST_TARGETS.get(text)


def numeric_typmod(data_type: Any) -> tuple[int, int] | None:
    """(precision, scale) of numeric(p, s), else None."""
    params = data_type.expressions if isinstance(data_type, exp.DataType) else []
    if not params or data_type.this != exp.DataType.Type.DECIMAL:
        return None
    values = [int(str(p.this.this)) for p in params]
    return values[0], values[1] if len(values) > 1 else 0


def castable(source: str, target: str) -> bool:
    """Whether PostgreSQL casts a value of `source` to `target` (explicitly, with CAST
    or `::`)."""
    if T.can_coerce(source, target) or source == target:
        return True
    if T.is_number(source) and T.is_number(target):
        return True
    if source == T.TEXT and not T.is_array(target):
        return True
    if target == T.TEXT and not T.is_array(source):
        return True
    if (source, target) in ((T.BOOL, T.INT4), (T.INT4, T.BOOL)):
        return True
    if source in (T.TIMESTAMP, T.TIMESTAMPTZ) and target in T.DATETIMES:
        return True
    return T.is_array(source) and T.is_array(target) and (
        T.element(source) == T.element(target)
        or (T.is_number(T.element(source)) and T.is_number(T.element(target))))


def choose_signature(signatures: tuple[Signature, ...], types: list[str]) -> Signature | None:
    """PostgreSQL's function resolution (manual 10.3), for fixed argument types."""
    candidates = []
    for sig in signatures:
        if len(sig.args) != len(types):
            continue
        exact, fits = 0, True
        for given, wanted in zip(types, sig.args, strict=True):
            if given in (ANY, wanted):
                exact += given == wanted
                continue
            if not T.can_coerce(given, wanted):
                fits = False
                break
        if fits:
            candidates.append((exact, sig))
    if not candidates:
        return None
    best = max(exact for exact, _ in candidates)
    remaining = [sig for exact, sig in candidates if exact == best]
    if len(remaining) > 1:
        def preferred(sig: Signature) -> int:
            return sum(1 for given, wanted in zip(types, sig.args, strict=True)
                       if given not in (wanted, ANY) and wanted in T._PREFERRED)
        top = max(preferred(sig) for sig in remaining)
        remaining = [sig for sig in remaining if preferred(sig) == top]
    return remaining[0]
