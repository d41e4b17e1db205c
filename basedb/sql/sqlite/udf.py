"""The SQLite functions that give compiled Database Functions PostgreSQL's semantics.

SQLite's own functions differ from PostgreSQL's in many small ways: `lower('É')` leaves
the letter alone, `substr('abc', -1, 3)` counts from the end, `round(2.5)` rounds away
from zero where PostgreSQL's double precision rounds to even, `1 / 0` is NULL where
PostgreSQL raises, `max(a, b)` is NULL when either is. The compiler
(`translate`) emits SQLite's built-ins where they agree and these `bdb_` functions
(`udf_values`, `udf_text`, `udf_time`, `udf_aggregates`) where they do
not; `register_functions` adds them to a connection (the read-only
authorizer allows the `bdb_` prefix, and `check` never lets an author call them by
name). Each raises ValueError where PostgreSQL raises an error, which fails the call.

Values arrive and leave in the local representation of their PostgreSQL type
(`basedb.sql.pgvalues`): booleans as 0/1, dates and timestamps as PostgreSQL's
text, jsonb and arrays as JSON text.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from typing import Any

from basedb.sql.sqlite import udf_text, udf_time, udf_values
from basedb.sql.sqlite.udf_aggregates import AGGREGATES, WINDOWS

_SCALARS: dict[str, tuple[int, Callable[..., Any]]] = {
    **udf_values.SCALARS, **udf_text.SCALARS, **udf_time.SCALARS}
_VOLATILE = frozenset({"bdb_error"})
PLATFORM_FUNCTIONS = frozenset(_SCALARS) | frozenset(AGGREGATES) | frozenset(WINDOWS) | {
    "bdb_random"}


def has_window_functions() -> bool:
    """Whether this Python can add window functions to SQLite (3.11 and later)."""
    return hasattr(sqlite3.Connection, "create_window_function")


def bdb_random() -> float:
    return random.random()  # PostgreSQL's random(): not for secrets


def register_functions(conn: sqlite3.Connection) -> None:
    """Add the `bdb_` functions to a connection."""
    for name, (arity, function) in _SCALARS.items():
        conn.create_function(name, arity, function, deterministic=name not in _VOLATILE)
    conn.create_function("bdb_random", 0, bdb_random)
    for name, (arity, aggregate) in AGGREGATES.items():
        conn.create_aggregate(name, arity, aggregate)
    if hasattr(conn, "create_window_function"):  # Python 3.11 and later
        for name, (arity, window) in WINDOWS.items():
            conn.create_window_function(name, arity, window)
