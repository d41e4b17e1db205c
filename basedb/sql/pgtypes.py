"""PostgreSQL's types as a Database Function sees them, and its rules for mixing them.

Names are PostgreSQL's own (`format_type`), so a type inferred here can be compared with
`pg_typeof(…)` on a real server. Only the rules the supported subset needs are modelled:
implicit casts, operator and function argument matching, and the common type of CASE,
COALESCE, IN lists, VALUES and UNION (PostgreSQL manual, "Type Conversion", 10.2–10.5).

How fields and parameters are typed (the same table the differential tests use to build
PostgreSQL tables):

    text, formula, lookup, user, created_by, updated_by, select   text
    record_id                                                     text
    select (multiple), user (multiple), link                      text[]
    number                                                        double precision
    auto_number                                                   bigint
    checkbox                                                      boolean
    datetime, created_at, updated_at                              timestamp without time zone
    attachment, location                                          jsonb

    TEXT INT NUMBER BOOL DATE DATETIME   text bigint double precision boolean date timestamp
    TEXT[] INT[] NUMBER[]                text[] bigint[] double precision[]
"""

from __future__ import annotations

from basedb.workspace.model import Field

BOOL = "boolean"
INT4 = "integer"
INT8 = "bigint"
NUMERIC = "numeric"
FLOAT8 = "double precision"
TEXT = "text"
DATE = "date"
TIMESTAMP = "timestamp without time zone"
TIMESTAMPTZ = "timestamp with time zone"
INTERVAL = "interval"
JSONB = "jsonb"
UNKNOWN = "unknown"  # an untyped string literal or NULL: takes the type its context needs

TEXT_ARRAY = "text[]"
INT8_ARRAY = "bigint[]"
INT4_ARRAY = "integer[]"
FLOAT8_ARRAY = "double precision[]"

NUMBERS = (INT4, INT8, NUMERIC, FLOAT8)  # in the order PostgreSQL widens them
DATETIMES = (DATE, TIMESTAMP, TIMESTAMPTZ)
_CATEGORY = {BOOL: "B", INT4: "N", INT8: "N", NUMERIC: "N", FLOAT8: "N", TEXT: "S",
             DATE: "D", TIMESTAMP: "D", TIMESTAMPTZ: "D", INTERVAL: "T", JSONB: "U",
             UNKNOWN: "X"}
_PREFERRED = frozenset({BOOL, FLOAT8, TEXT, TIMESTAMPTZ, INTERVAL})
_IMPLICIT: dict[str, frozenset[str]] = {
    INT4: frozenset({INT8, NUMERIC, FLOAT8}),
    INT8: frozenset({NUMERIC, FLOAT8}),
    NUMERIC: frozenset({FLOAT8}),
    DATE: frozenset({TIMESTAMP, TIMESTAMPTZ}),
    TIMESTAMP: frozenset({TIMESTAMPTZ}),
}

FIELD_TYPES: dict[str, str] = {
    "text": TEXT, "formula": TEXT, "lookup": TEXT, "select": TEXT, "user": TEXT,
    "created_by": TEXT, "updated_by": TEXT, "record_id": TEXT,
    "number": FLOAT8, "auto_number": INT8, "checkbox": BOOL,
    "datetime": TIMESTAMP, "created_at": TIMESTAMP, "updated_at": TIMESTAMP,
    "attachment": JSONB, "location": JSONB, "link": TEXT_ARRAY,
}
PARAM_TYPES: dict[str, str] = {
    "TEXT": TEXT, "INT": INT8, "NUMBER": FLOAT8, "BOOL": BOOL, "DATE": DATE,
    "DATETIME": TIMESTAMP, "TEXT[]": TEXT_ARRAY, "INT[]": INT8_ARRAY,
    "NUMBER[]": FLOAT8_ARRAY,
}


def field_type(field: Field) -> str:
    """The PostgreSQL type of a field's cells (a multi-valued field is an array)."""
    if field.is_multi_valued:
        return TEXT_ARRAY
    return FIELD_TYPES.get(field.type, TEXT)


def is_array(type_: str) -> bool:
    return type_.endswith("[]")


def element(type_: str) -> str:
    """The element type of an array type."""
    return type_[:-2]


def array_of(type_: str) -> str:
    return type_ + "[]"


def category(type_: str) -> str:
    """PostgreSQL's type category letter (A for arrays; X for unknown)."""
    return "A" if is_array(type_) else _CATEGORY.get(type_, "?")


def is_number(type_: str) -> bool:
    return type_ in NUMBERS


def is_datetime(type_: str) -> bool:
    return type_ in DATETIMES


def can_coerce(source: str, target: str) -> bool:
    """Whether PostgreSQL converts `source` to `target` implicitly (or they are equal)."""
    return source in (target, UNKNOWN) or target in _IMPLICIT.get(source, ())


def wider_number(left: str, right: str) -> str:
    """The type of arithmetic on two numbers: the wider of the two."""
    return max(left, right, key=NUMBERS.index)


def common_type(types: list[str]) -> str | None:
    """The type CASE, COALESCE, IN, VALUES and UNION resolve their inputs to, or None when
    PostgreSQL refuses to mix them (its "types … cannot be matched")."""
    known = [t for t in types if t != UNKNOWN]
    if not known:
        return TEXT
    candidate = known[0]
    if any(category(t) != category(candidate) for t in known):
        return None
    for other in known[1:]:
        if other == candidate:
            continue
        if candidate in _PREFERRED and category(other) == category(candidate):
            if not can_coerce(other, candidate):
                return None
            continue
        if can_coerce(candidate, other) and not can_coerce(other, candidate):
            candidate = other
    if not all(can_coerce(t, candidate) for t in known):
        return None
    return candidate


def comparable(left: str, right: str) -> str | None:
    """The type two operands of `=`, `<`, … are compared as, or None when PostgreSQL has no
    such operator. An unknown side takes the other side's type."""
    if left == UNKNOWN and right == UNKNOWN:
        return TEXT
    if left == UNKNOWN:
        return right
    if right == UNKNOWN:
        return left
    if left == right:
        return left
    if is_number(left) and is_number(right):
        return wider_number(left, right)
    if is_datetime(left) and is_datetime(right):
        return max(left, right, key=DATETIMES.index)
    return None


def describe(type_: str) -> str:
    """A short name for messages."""
    return {TIMESTAMP: "timestamp", TIMESTAMPTZ: "timestamptz", FLOAT8: "double precision",
            UNKNOWN: "an untyped literal"}.get(type_, type_)


# Type names a CAST may target, as PostgreSQL spells them (lower case, sqlglot's
# rendering of the same types included), and the type each means.
CAST_TARGETS: dict[str, str] = {
    "text": TEXT, "varchar": TEXT, "character varying": TEXT,
    "int": INT4, "integer": INT4, "int4": INT4, "bigint": INT8, "int8": INT8,
    "numeric": NUMERIC, "decimal": NUMERIC,
    "double precision": FLOAT8, "float8": FLOAT8, "float": FLOAT8,
    "boolean": BOOL, "bool": BOOL,
    "date": DATE,
    "timestamp": TIMESTAMP, "timestamp without time zone": TIMESTAMP,
    "timestamptz": TIMESTAMPTZ, "timestamp with time zone": TIMESTAMPTZ,
    "jsonb": JSONB,
    "text[]": TEXT_ARRAY, "varchar[]": TEXT_ARRAY, "bigint[]": INT8_ARRAY,
    "int8[]": INT8_ARRAY, "int[]": INT4_ARRAY, "integer[]": INT4_ARRAY,
    "int4[]": INT4_ARRAY, "double precision[]": FLOAT8_ARRAY, "float8[]": FLOAT8_ARRAY,
}
