"""A query for every signature of every function the subset lists (`check`'s own table,
`basedb.sql.functions.FUNCTIONS`), over the dataset's columns.

The supported subset is that table: whatever `check` accepts must compile and run on
the local platform, never fail there for being unsupported. Each signature is called
with columns of its argument types (and, where a function reads a unit, a field name or
a separator, with the values its documentation names), as a scalar in a SELECT, as an
aggregate over groups, or as a window function over a partition, so that the
differential suite compares every function with PostgreSQL and
tests/unit/test_sql_subset.py checks every one compiles.
"""

from __future__ import annotations

from collections.abc import Iterator

from basedb.sql import pgtypes as T
from basedb.sql.functions import FUNCTIONS, FunctionSpec, Signature
from tests.differential.engines import Case

# Expressions over "Tasks" AS t, by PostgreSQL type. The first of each is in every
# function's domain (no NULL-free guarantee: NULLs are part of the point); the others are
# the edges: zero, negatives, huge values, text that is not a number, objects that are
# not arrays. PostgreSQL raising on an edge must meet the local platform raising too.
_ARGS: dict[str, tuple[str, ...]] = {
    T.TEXT: ('t."Title"', 't."Notes"', "'  x  '"),
    T.INT4: ("(t.\"Seq\" % 9)::int", "(t.\"Seq\" % 7 - 3)::int", 't."Seq"::int'),
    T.INT8: ('t."Seq"', 't."Seq" * 1000000007', "-t.\"Seq\""),
    T.FLOAT8: ("(t.\"Seq\" % 9)::float8 + 0.5", 't."Points"', 't."Estimate"'),
    T.NUMERIC: ("(t.\"Seq\" % 9)::numeric + 0.25", 't."Points"::numeric',
                "t.\"Estimate\"::numeric(12, 3)"),
    T.BOOL: ('t."Done"', "(t.\"Points\" > 1)"),
    T.DATE: ('t."Due"::date', "DATE '2024-02-29'"),
    T.TIMESTAMP: ('t."Due"', "TIMESTAMP '2024-03-10 02:30:00'"),
    T.TIMESTAMPTZ: ('t."Due"::timestamptz', "now()"),
    T.JSONB: ('t."Files"', 't."Place"'),
    "T[]": ('t."Tags"', 't."Watchers"'),
    "any": ('t."Due"', 't."Title"', 't."Points"', 't."Done"'),
}
# Arguments whose values the function reads as words: the ones its summary names.
_WORDS: dict[tuple[str, int], tuple[str, ...]] = {
    ("date_trunc", 0): ("'month'", "'quarter'", "'week'", "'hour'", "'year'", "'day'"),
    ("date_part", 0): ("'year'", "'dow'", "'epoch'", "'doy'", "'isodow'", "'minute'"),
    ("extract", 0): ("year", "quarter", "dow", "epoch", "week", "second"),
    ("string_agg", 1): ("', '", "''"),
    ("split_part", 1): ("' '", "'a'"),
    ("to_char", 1): ("'YYYY-MM'", "'FMMonth DD, YYYY HH12:MI:SS AM'",
                     "'Dy DDD D ID IW WW Q \"Q\"Q DDth IYYY'", "'HH24:MI:SS.MS US TMDay'"),
    ("to_timestamp", 0): ("1700000000.5", 't."Points" * 1e8', 't."Points" * 1e5'),
    ("make_date", 0): ("2024", "2023"),
    ("make_date", 1): ("2", "12"),
    ("make_date", 2): ("29", "1"),
    ("make_timestamp", 0): ("2024",),
    ("make_timestamp", 1): ("2",),
    ("make_timestamp", 2): ("29",),
    ("make_timestamp", 3): ("23",),
    ("make_timestamp", 4): ("59",),
    ("make_timestamp", 5): ("59.5",),
    ("ntile", 0): ("3", "1"),
    ("nth_value", 1): ("2", "1"),
    ("array_length", 1): ("1",),
    ("lag", 1): ("1", "2"),
    ("lead", 1): ("1", "2"),
}
_VARIANTS = 4


def _argument(spec: FunctionSpec, position: int, type_: str, variant: int) -> str:
    words = _WORDS.get((spec.name, position))
    if words is not None:
        return words[variant % len(words)]
    choices = _ARGS.get(type_, _ARGS["any"])
    return choices[0 if variant == 0 else (variant + position) % len(choices)]


def _arguments(spec: FunctionSpec, signature: Signature, variant: int) -> list[str]:
    types = list(signature.args)
    if types and types[-1] == "…":  # repeats the argument before it: call with three
        types = types[:-1] + [types[-2]] * 2
    if any(t == "T" for t in types):  # every T of one call is one type
        same = (T.TEXT, T.FLOAT8, T.TIMESTAMP, T.INT8)[variant % 4]
        types = [same if t == "T" else t for t in types]
    return [_argument(spec, i, t, variant) for i, t in enumerate(types)]


def _call(spec: FunctionSpec, args: list[str]) -> str:
    if spec.name == "extract":
        return f"extract({args[0]} FROM {args[1]})"
    if spec.name == "substring" and len(args) == 3:
        return f"substring({args[0]} FROM {args[1]} FOR {args[2]})"
    if spec.name == "position":
        return f"position({args[0]} IN {args[1]})"
    if spec.name == "current_user_id":
        return "CURRENT_USER_ID()"
    return f"{spec.name}({', '.join(args)})"


def _query(spec: FunctionSpec, call: str) -> str:
    if spec.kind == "aggregate":
        return (f'SELECT t."Status", {call} AS v FROM "Tasks" AS t GROUP BY t."Status" '
                'ORDER BY t."Status" NULLS FIRST')
    if spec.kind == "window":
        return (f'SELECT t.record_id, {call} OVER (PARTITION BY t."Status" ORDER BY '
                't."Seq") AS v FROM "Tasks" AS t ORDER BY t."Seq"')
    return f'SELECT t.record_id, {call} AS v FROM "Tasks" AS t ORDER BY t."Seq"'


def signature_cases() -> Iterator[Case]:
    """Each function, each signature, in a few variants of its arguments."""
    for spec in FUNCTIONS.values():
        for signature in spec.signatures:
            seen: set[str] = set()
            for variant in range(_VARIANTS):
                sql = _query(spec, _call(spec, _arguments(spec, signature, variant)))
                if sql not in seen:
                    seen.add(sql)
                    yield Case(sql, note=f"{spec.name}{signature.text}")
        if spec.name == "count":
            yield Case(_query(spec, "count(*)"), note="count(*)")
            yield Case(_query(spec, 'count(DISTINCT t."Project")'), note="count(DISTINCT)")
