"""Compare the two engines' outcomes of one query, as the invoke JSON shows them.

Values compare as JSON values: strings, booleans and nulls exactly, numbers by value
(a sum of doubles taken in another order, or over a sliding window frame that SQLite
updates by subtracting, may differ in its last digits: 1e-9 relative), lists
and objects element by element. Rows compare in order when the query fixes one, else
as multisets. An error must meet an error (PostgreSQL raising on data, e.g. division by
zero, and the local platform failing the call); PostgreSQL refusing the query itself
(SQLSTATE classes 42 and 0A) when `check` accepted it is always a difference.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from tests.differential.engines import Outcome

REFUSED_CLASSES = frozenset({"42", "0A"})


@dataclass(frozen=True, slots=True)
class Difference:
    sql: str
    reason: str
    local: Any = None
    postgres: Any = None

    def __str__(self) -> str:
        return (f"{self.reason}\n  sql:      {self.sql}\n  local:    {_short(self.local)}"
                f"\n  postgres: {_short(self.postgres)}")


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) < 600 else text[:600] + "…"


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b or (a == b and type(a) is type(b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if a == b:
            return True
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return bool(type(a) is type(b) and a == b)


def _sort_key(row: list[Any]) -> str:
    return json.dumps(row, ensure_ascii=False, sort_keys=True, default=str)


def compare(sql: str, local: Outcome, postgres: Outcome, *, ordered: bool,
            names: bool = True) -> Difference | None:
    if postgres.error is not None:
        if postgres.error_class in REFUSED_CLASSES:
            return Difference(sql, "check accepted a query PostgreSQL refuses", local.error
                              or local.rows, postgres.error)
        if local.error is None:
            return Difference(sql, "PostgreSQL raised an error; the local platform did not",
                              local.rows, postgres.error)
        return None
    if local.error is not None:
        return Difference(sql, "the local platform failed; PostgreSQL did not", local.error,
                          postgres.rows)
    assert local.rows is not None and postgres.rows is not None
    if names and local.names != postgres.names:
        return Difference(sql, "different column names", local.names, postgres.names)
    if len(local.rows) != len(postgres.rows):
        return Difference(sql, f"{len(local.rows)} rows locally, {len(postgres.rows)} in "
                          "PostgreSQL", local.rows, postgres.rows)
    mine, theirs = local.rows, postgres.rows
    if not ordered:
        mine, theirs = sorted(mine, key=_sort_key), sorted(theirs, key=_sort_key)
    for index, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        if len(a) != len(b) or not all(same_value(x, y) for x, y in zip(a, b, strict=True)):
            return Difference(sql, f"row {index} differs" + (" (in order)" if ordered else ""),
                              a, b)
    return None
