"""How a compiled Database Function's result cells become invoke JSON.

A column that reads a field directly is decoded as the field stores it (multi-valued
cells are JSON arrays; an empty one is NULL, as in PostgreSQL's array of no elements
never being stored); any other column by its PostgreSQL type, as PostgreSQL's JSON
rendering shows it: booleans true / false, numbers as JSON numbers (a numeric with at
most 15 significant digits, a whole double precision without a fraction), dates and
timestamps as their text (a timestamptz in the site's time zone, without an offset),
jsonb and arrays as JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from basedb.platform.storage import physical
from basedb.sql import pgtypes as T
from basedb.sql.model import OutputColumn


def plain(cell: Any) -> Any:
    """Any SQLite value as JSON can carry it."""
    if isinstance(cell, float) and not math.isfinite(cell):
        return "NaN" if math.isnan(cell) else ("Infinity" if cell > 0 else "-Infinity")
    if isinstance(cell, bytes):
        return cell.hex()
    return cell


def _json_cell(cell: Any) -> Any:
    if not isinstance(cell, str):
        return plain(cell)
    try:
        found = json.loads(cell)
    except ValueError:
        return cell
    return None if found == [] else found


def _json_value(cell: Any) -> Any:
    if not isinstance(cell, str):
        return plain(cell)
    try:
        return json.loads(cell)
    except ValueError:
        return cell


def number(cell: Any) -> Any:
    if isinstance(cell, float) and cell.is_integer() and abs(cell) <= 2**53:
        return int(cell)
    return plain(cell)


def _numeric(cell: Any) -> Any:
    if isinstance(cell, float) and math.isfinite(cell):
        cell = float(f"{cell:.15g}")
    return number(cell)


def _boolean(cell: Any) -> Any:
    return None if cell is None else bool(cell)


_BY_TYPE: dict[str, Callable[[Any], Any]] = {
    T.BOOL: _boolean, T.NUMERIC: _numeric, T.FLOAT8: number, T.INT4: number,
    T.INT8: number, T.JSONB: _json_value,
}


def column_decoder(column: OutputColumn) -> Callable[[Any], Any]:
    """How to read a column's cells: as the field stores them when the column reads a
    field directly, else by the column's PostgreSQL type."""
    field = column.field
    if field is not None:
        if physical.is_json_encoded(field):
            return _json_cell
        if field.type == "checkbox":
            return _boolean
        if field.type in ("number", "auto_number"):
            return number
        return plain
    if T.is_array(column.type):
        return _json_value
    return _BY_TYPE.get(column.type, plain)
