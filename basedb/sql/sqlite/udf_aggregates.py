"""Aggregates and window functions with PostgreSQL's semantics (see `udf`):
a scalar subquery that fails on a second row, string_agg / array_agg with ORDER BY and
DISTINCT, and sums of doubles over sliding window frames.
"""

from __future__ import annotations

import json
from typing import Any

from basedb.sql.sqlite.udf_values import fail, limit_text

# ------------------------------------------------------------------ aggregates

class _One:
    """The value of a scalar subquery: an error when it returns more than one row."""

    def __init__(self) -> None:
        self.rows = 0
        self.value: Any = None

    def step(self, value: Any) -> None:
        self.rows += 1
        if self.rows > 1:
            raise fail("more than one row returned by a subquery used as an expression")
        self.value = value

    def finalize(self) -> Any:
        return self.value


def sort_key(value: Any, descending: bool, nulls_first: bool) -> tuple[int, Any]:
    """A key that orders values as PostgreSQL's ORDER BY does (see `_Ordered`)."""
    if value is None:
        return (0 if nulls_first else 2, 0)
    if isinstance(value, str):
        encoded = value.encode("utf-8")
        return (1, _Reversed(encoded) if descending else encoded)
    return (1, -value if descending else value)


class _Reversed:
    __slots__ = ("value",)

    def __init__(self, value: bytes) -> None:
        self.value = value

    def __lt__(self, other: _Reversed) -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


class _Ordered:
    """An aggregate whose input is ordered (string_agg / array_agg with ORDER BY). After
    the value (and the separator), each sort key comes with two flags: descending and
    NULLs first. With `distinct`, a value equal to one before it in that order is left
    out (PostgreSQL's DISTINCT compares with `=`: NULLs are one value)."""

    extra = 0
    distinct = False

    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []
        self.seq = 0
        self.separator: Any = None

    def step(self, value: Any, *rest: Any) -> None:
        if self.extra:
            self.separator, rest = rest[0], rest[1:]
        keys = []
        for index in range(0, len(rest), 3):
            keys.append(sort_key(rest[index], bool(rest[index + 1]), bool(rest[index + 2])))
        self.seq += 1
        self.items.append((*keys, self.seq, value))
        if len(self.items) > 1_000_000:
            raise fail("too many rows in one aggregate")

    def ordered(self) -> list[Any]:
        self.items.sort(key=lambda item: item[:-1])
        values = [item[-1] for item in self.items]
        if self.distinct:
            kept: list[Any] = []
            seen: set[Any] = set()
            for value in values:
                if value not in seen:
                    seen.add(value)
                    kept.append(value)
            values = kept
        return values


class _StringAgg(_Ordered):
    extra = 1

    def finalize(self) -> Any:
        values = [v for v in self.ordered() if v is not None]
        if not values:
            return None
        return limit_text((self.separator or "").join(values))


class _ArrayAgg(_Ordered):
    """array_agg(x ORDER BY …): the separator slot carries the element type ("boolean"
    turns 0 / 1 into JSON false / true)."""

    extra = 1

    def finalize(self) -> Any:
        if not self.items:
            return None
        values = self.ordered()
        if self.separator == "boolean":
            values = [None if v is None else bool(v) for v in values]
        return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


class _StringAggDistinct(_StringAgg):
    distinct = True


class _ArrayAggDistinct(_ArrayAgg):
    distinct = True


class _WindowSum:
    """sum() / avg() of doubles over a window frame whose start moves. SQLite updates such
    a frame by subtracting the rows that leave it, and subtracting a large value loses
    the small ones (PostgreSQL sums each frame afresh); a compensated (Neumaier) sum keeps
    them, so the result agrees with PostgreSQL's to its last digits."""

    average = False

    def __init__(self) -> None:
        self.total = 0.0
        self.compensation = 0.0
        self.count = 0

    def _add(self, value: float) -> None:
        total = self.total + value
        if abs(self.total) >= abs(value):
            self.compensation += (self.total - total) + value
        else:
            self.compensation += (value - total) + self.total
        self.total = total

    def step(self, value: Any) -> None:
        if value is not None:
            self._add(float(value))
            self.count += 1

    def inverse(self, value: Any) -> None:
        if value is not None:
            self._add(-float(value))
            self.count -= 1

    def value(self) -> Any:
        if self.count == 0:
            return None
        found = self.total + self.compensation
        return found / self.count if self.average else found

    def finalize(self) -> Any:
        return self.value()


class _WindowAvg(_WindowSum):
    average = True


AGGREGATES: dict[str, tuple[int, type]] = {
    "bdb_one": (1, _One), "bdb_string_agg": (-1, _StringAgg), "bdb_array_agg": (-1, _ArrayAgg),
    "bdb_string_agg_distinct": (-1, _StringAggDistinct),
    "bdb_array_agg_distinct": (-1, _ArrayAggDistinct),
}
WINDOWS: dict[str, tuple[int, type]] = {
    "bdb_window_sum": (1, _WindowSum), "bdb_window_avg": (1, _WindowAvg),
}
