"""The SQL functions a Database Function may call: one table for check, runtime and docs.

`FUNCTIONS` is the supported subset of PostgreSQL's functions: what `check` accepts
(`basedb.sql.typing` types every call against these signatures and refuses any
other function with SQL_UNSUPPORTED), what the local platform's compiler translates
(`basedb.sql.sqlite.translate_calls` has one translation per entry, a test keeps the
two in step), and what docs/sql.md lists (`basedb.sql.reference`).

Signatures use PostgreSQL's type names; `T` is any one type (all `T` of one call resolve
to a common type, as PostgreSQL's `anyelement`), `T[]` an array of it, `any` a value of
any type, and `…` repeats the last argument. Overloads are listed in the order
PostgreSQL prefers them.

The rest of this module is the SQLite side: the built-in SQLite functions a compiled
statement may call (the read-only authorizer allows those and the platform's own `bdb_`
functions, nothing else), and names that are refused outright.
"""

from __future__ import annotations

from typing import Literal

from basedb.core.frozen import frozen_dataclass
from basedb.sql.pgtypes import (
    BOOL,
    DATE,
    FLOAT8,
    INT4,
    INT8,
    JSONB,
    NUMERIC,
    TEXT,
    TIMESTAMP,
    TIMESTAMPTZ,
)

FunctionKind = Literal["scalar", "aggregate", "window"]


@frozen_dataclass
class Signature:
    args: tuple[str, ...]
    result: str

    @property
    def text(self) -> str:
        return f"({', '.join(self.args)}) → {self.result}"


@frozen_dataclass
class FunctionSpec:
    name: str
    kind: FunctionKind
    signatures: tuple[Signature, ...]
    summary: str
    group: str
    written: str = ""  # how the call is written when it is not name(args)


def _sig(*parts: str) -> Signature:
    *args, result = parts
    return Signature(tuple(args), result)


def _spec(name: str, kind: FunctionKind, group: str, summary: str, *sigs: Signature,
          written: str = "") -> FunctionSpec:
    return FunctionSpec(name, kind, tuple(sigs), summary, group, written)


_STRING, _NUMBER, _TIME, _COND, _AGG, _WINDOW, _JSON, _ARRAY, _CAST, _SITE = (
    "Strings", "Numbers", "Dates and times", "Conditionals", "Aggregates",
    "Window functions", "JSON (attachment and location fields)", "Arrays (multi-valued "
    "fields and array parameters)", "Type conversions", "Site")

_SPECS: tuple[FunctionSpec, ...] = (
    # ------------------------------------------------------------------ strings
    _spec("lower", "scalar", _STRING, "Lower case (every Unicode letter).",
          _sig(TEXT, TEXT)),
    _spec("upper", "scalar", _STRING, "Upper case (every Unicode letter).",
          _sig(TEXT, TEXT)),
    _spec("initcap", "scalar", _STRING, "First letter of each word upper case, the rest "
          "lower.", _sig(TEXT, TEXT)),
    _spec("length", "scalar", _STRING, "Number of characters.", _sig(TEXT, INT4)),
    _spec("char_length", "scalar", _STRING, "Number of characters.", _sig(TEXT, INT4)),
    _spec("character_length", "scalar", _STRING, "Number of characters.",
          _sig(TEXT, INT4)),
    _spec("octet_length", "scalar", _STRING, "Number of bytes in UTF-8.", _sig(TEXT, INT4)),
    _spec("substr", "scalar", _STRING, "Characters from a 1-based position (a start "
          "before 1 counts towards the length, as in PostgreSQL).",
          _sig(TEXT, INT4, TEXT), _sig(TEXT, INT4, INT4, TEXT)),
    _spec("substring", "scalar", _STRING, "Same as substr.", _sig(TEXT, INT4, TEXT),
          _sig(TEXT, INT4, INT4, TEXT),
          written="substring(s FROM start [FOR count]), substring(s, start[, count])"),
    _spec("strpos", "scalar", _STRING, "1-based position of the first occurrence, 0 if "
          "none.", _sig(TEXT, TEXT, INT4)),
    _spec("position", "scalar", _STRING, "Same as strpos(s, sub).", _sig(TEXT, TEXT, INT4),
          written="position(sub IN s)"),
    _spec("replace", "scalar", _STRING, "Every occurrence replaced.",
          _sig(TEXT, TEXT, TEXT, TEXT)),
    _spec("trim", "scalar", _STRING, "Characters removed from both ends (spaces by "
          "default).", _sig(TEXT, TEXT), _sig(TEXT, TEXT, TEXT),
          written="trim([BOTH | LEADING | TRAILING] [chars FROM] s)"),
    _spec("btrim", "scalar", _STRING, "Same as trim.", _sig(TEXT, TEXT),
          _sig(TEXT, TEXT, TEXT)),
    _spec("ltrim", "scalar", _STRING, "Characters removed from the start.",
          _sig(TEXT, TEXT), _sig(TEXT, TEXT, TEXT)),
    _spec("rtrim", "scalar", _STRING, "Characters removed from the end.",
          _sig(TEXT, TEXT), _sig(TEXT, TEXT, TEXT)),
    _spec("left", "scalar", _STRING, "First n characters (all but the last -n when n < 0).",
          _sig(TEXT, INT4, TEXT)),
    _spec("right", "scalar", _STRING, "Last n characters (all but the first -n when "
          "n < 0).", _sig(TEXT, INT4, TEXT)),
    _spec("lpad", "scalar", _STRING, "Padded on the left to a length (cut when longer).",
          _sig(TEXT, INT4, TEXT), _sig(TEXT, INT4, TEXT, TEXT)),
    _spec("rpad", "scalar", _STRING, "Padded on the right to a length (cut when longer).",
          _sig(TEXT, INT4, TEXT), _sig(TEXT, INT4, TEXT, TEXT)),
    _spec("repeat", "scalar", _STRING, "Repeated n times (at most 1 MB of text).",
          _sig(TEXT, INT4, TEXT)),
    _spec("reverse", "scalar", _STRING, "Characters in reverse order.", _sig(TEXT, TEXT)),
    _spec("split_part", "scalar", _STRING, "The n-th field between delimiters (from the end "
          "when n < 0).", _sig(TEXT, TEXT, INT4, TEXT)),
    _spec("starts_with", "scalar", _STRING, "Whether the text starts with a prefix.",
          _sig(TEXT, TEXT, BOOL)),
    _spec("md5", "scalar", _STRING, "MD5 of the UTF-8 bytes, as 32 hex digits.",
          _sig(TEXT, TEXT)),
    _spec("ascii", "scalar", _STRING, "Code point of the first character.",
          _sig(TEXT, INT4)),
    _spec("chr", "scalar", _STRING, "The character of a code point.", _sig(INT4, TEXT)),
    _spec("concat", "scalar", _STRING, "Every argument as text, NULLs skipped.",
          _sig("any", "…", TEXT)),
    _spec("concat_ws", "scalar", _STRING, "Arguments joined by a separator, NULLs "
          "skipped.", _sig(TEXT, "any", "…", TEXT)),
    # ------------------------------------------------------------------ numbers
    _spec("abs", "scalar", _NUMBER, "Absolute value.", _sig(INT4, INT4), _sig(INT8, INT8),
          _sig(NUMERIC, NUMERIC), _sig(FLOAT8, FLOAT8)),
    _spec("ceil", "scalar", _NUMBER, "Smallest whole number not less than x.",
          _sig(FLOAT8, FLOAT8), _sig(NUMERIC, NUMERIC)),
    _spec("ceiling", "scalar", _NUMBER, "Same as ceil.", _sig(FLOAT8, FLOAT8),
          _sig(NUMERIC, NUMERIC)),
    _spec("floor", "scalar", _NUMBER, "Largest whole number not greater than x.",
          _sig(FLOAT8, FLOAT8), _sig(NUMERIC, NUMERIC)),
    _spec("round", "scalar", _NUMBER, "Nearest whole number: halves to even for double "
          "precision, away from zero for numeric; round(x::numeric, n) for n places.",
          _sig(FLOAT8, FLOAT8), _sig(NUMERIC, NUMERIC), _sig(NUMERIC, INT4, NUMERIC)),
    _spec("trunc", "scalar", _NUMBER, "Truncated towards zero (to n places for numeric).",
          _sig(FLOAT8, FLOAT8), _sig(NUMERIC, NUMERIC), _sig(NUMERIC, INT4, NUMERIC)),
    _spec("sign", "scalar", _NUMBER, "-1, 0 or 1.", _sig(FLOAT8, FLOAT8),
          _sig(NUMERIC, NUMERIC)),
    _spec("sqrt", "scalar", _NUMBER, "Square root (an error for negatives).",
          _sig(FLOAT8, FLOAT8), _sig(NUMERIC, NUMERIC)),
    _spec("cbrt", "scalar", _NUMBER, "Cube root.", _sig(FLOAT8, FLOAT8)),
    _spec("exp", "scalar", _NUMBER, "e to the power x.", _sig(FLOAT8, FLOAT8),
          _sig(NUMERIC, NUMERIC)),
    _spec("ln", "scalar", _NUMBER, "Natural logarithm (an error for x <= 0).",
          _sig(FLOAT8, FLOAT8), _sig(NUMERIC, NUMERIC)),
    _spec("log10", "scalar", _NUMBER, "Base-10 logarithm.", _sig(FLOAT8, FLOAT8),
          _sig(NUMERIC, NUMERIC)),
    _spec("log", "scalar", _NUMBER, "Base-10 logarithm; log(b, x) in base b.",
          _sig(FLOAT8, FLOAT8), _sig(NUMERIC, NUMERIC), _sig(NUMERIC, NUMERIC, NUMERIC)),
    _spec("power", "scalar", _NUMBER, "x to the power y.", _sig(FLOAT8, FLOAT8, FLOAT8),
          _sig(NUMERIC, NUMERIC, NUMERIC)),
    _spec("pow", "scalar", _NUMBER, "Same as power.", _sig(FLOAT8, FLOAT8, FLOAT8),
          _sig(NUMERIC, NUMERIC, NUMERIC)),
    _spec("mod", "scalar", _NUMBER, "Remainder of x / y, with the sign of x.",
          _sig(INT4, INT4, INT4), _sig(INT8, INT8, INT8), _sig(NUMERIC, NUMERIC, NUMERIC)),
    _spec("div", "scalar", _NUMBER, "Integer quotient of x / y, truncated towards zero.",
          _sig(NUMERIC, NUMERIC, NUMERIC)),
    _spec("pi", "scalar", _NUMBER, "π.", _sig(FLOAT8)),
    # ------------------------------------------------------------------ dates and times
    _spec("now", "scalar", _TIME, "The time the call started, in the site's time zone.",
          _sig(TIMESTAMPTZ)),
    _spec("date_trunc", "scalar", _TIME, "Truncated to microseconds, milliseconds, second, "
          "minute, hour, day, week (Monday), month, quarter, year, decade, century or "
          "millennium.", _sig(TEXT, TIMESTAMP, TIMESTAMP), _sig(TEXT, TIMESTAMPTZ,
                                                               TIMESTAMPTZ)),
    _spec("date_part", "scalar", _TIME, "A field (as extract) as double precision.",
          _sig(TEXT, TIMESTAMP, FLOAT8), _sig(TEXT, TIMESTAMPTZ, FLOAT8)),
    _spec("extract", "scalar", _TIME, "A field: year, quarter, month, week, day, dow, "
          "isodow, doy, hour, minute, second, milliseconds, microseconds, epoch, isoyear, "
          "decade, century, millennium, julian.", _sig(TEXT, TIMESTAMP, NUMERIC),
          _sig(TEXT, TIMESTAMPTZ, NUMERIC), _sig(TEXT, DATE, NUMERIC),
          written="extract(field FROM x)"),
    _spec("make_date", "scalar", _TIME, "The date of a year, month and day.",
          _sig(INT4, INT4, INT4, DATE)),
    _spec("make_timestamp", "scalar", _TIME, "The timestamp of its parts.",
          _sig(INT4, INT4, INT4, INT4, INT4, FLOAT8, TIMESTAMP)),
    _spec("to_timestamp", "scalar", _TIME, "The instant of seconds since 1970-01-01 UTC.",
          _sig(FLOAT8, TIMESTAMPTZ)),
    _spec("to_char", "scalar", _TIME, "The date or time written by a literal template of "
          "PostgreSQL's patterns: YYYY, MM, DD, HH24, HH12, MI, SS, MS, US, AM, Month, Mon, "
          "Day, Dy, Q, WW, IW, DDD, D, ID, …, with FM and TH; English names, no time zone "
          "patterns.", _sig(TIMESTAMP, TEXT, TEXT), _sig(TIMESTAMPTZ, TEXT, TEXT),
          written="to_char(timestamp, 'template')"),
    # ------------------------------------------------------------------ conditionals
    _spec("coalesce", "scalar", _COND, "The first argument that is not NULL.",
          _sig("T", "…", "T")),
    _spec("nullif", "scalar", _COND, "NULL when a = b, else a.", _sig("T", "T", "T")),
    _spec("greatest", "scalar", _COND, "The largest argument, NULLs ignored.",
          _sig("T", "…", "T")),
    _spec("least", "scalar", _COND, "The smallest argument, NULLs ignored.",
          _sig("T", "…", "T")),
    # ------------------------------------------------------------------ aggregates
    _spec("count", "aggregate", _AGG, "Rows (count(*)) or values that are not NULL.",
          _sig("any", INT8), written="count(*), count(x), count(DISTINCT x)"),
    _spec("sum", "aggregate", _AGG, "Sum of the values that are not NULL.",
          _sig(INT4, INT8), _sig(INT8, NUMERIC), _sig(NUMERIC, NUMERIC),
          _sig(FLOAT8, FLOAT8)),
    _spec("avg", "aggregate", _AGG, "Mean of the values that are not NULL.",
          _sig(INT4, NUMERIC), _sig(INT8, NUMERIC), _sig(NUMERIC, NUMERIC),
          _sig(FLOAT8, FLOAT8)),
    _spec("min", "aggregate", _AGG, "Smallest value.", _sig("T", "T")),
    _spec("max", "aggregate", _AGG, "Largest value.", _sig("T", "T")),
    _spec("string_agg", "aggregate", _AGG, "Values joined by a separator.",
          _sig(TEXT, TEXT, TEXT), written="string_agg([DISTINCT] x, sep [ORDER BY …])"),
    _spec("array_agg", "aggregate", _AGG, "Values (NULLs too) as an array.",
          _sig("T", "T[]"), written="array_agg([DISTINCT] x [ORDER BY …])"),
    _spec("bool_and", "aggregate", _AGG, "Whether every value is true.", _sig(BOOL, BOOL)),
    _spec("bool_or", "aggregate", _AGG, "Whether some value is true.", _sig(BOOL, BOOL)),
    _spec("every", "aggregate", _AGG, "Same as bool_and.", _sig(BOOL, BOOL)),
    # ------------------------------------------------------------------ windows
    _spec("row_number", "window", _WINDOW, "Number of the row in its partition.",
          _sig(INT8)),
    _spec("rank", "window", _WINDOW, "Rank with gaps.", _sig(INT8)),
    _spec("dense_rank", "window", _WINDOW, "Rank without gaps.", _sig(INT8)),
    _spec("percent_rank", "window", _WINDOW, "(rank - 1) / (rows - 1).", _sig(FLOAT8)),
    _spec("cume_dist", "window", _WINDOW, "Rows up to the current peer group / rows.",
          _sig(FLOAT8)),
    _spec("ntile", "window", _WINDOW, "Bucket 1…n of the row.", _sig(INT4, INT4)),
    _spec("lag", "window", _WINDOW, "The value n rows before (default 1), else default.",
          _sig("T", "T"), _sig("T", INT4, "T"), _sig("T", INT4, "T", "T")),
    _spec("lead", "window", _WINDOW, "The value n rows after (default 1), else default.",
          _sig("T", "T"), _sig("T", INT4, "T"), _sig("T", INT4, "T", "T")),
    _spec("first_value", "window", _WINDOW, "The value at the frame's first row.",
          _sig("T", "T")),
    _spec("last_value", "window", _WINDOW, "The value at the frame's last row.",
          _sig("T", "T")),
    _spec("nth_value", "window", _WINDOW, "The value at the frame's n-th row.",
          _sig("T", INT4, "T")),
    # ------------------------------------------------------------------ JSON
    _spec("jsonb_array_length", "scalar", _JSON, "Number of elements of a JSON array.",
          _sig(JSONB, INT4)),
    _spec("jsonb_typeof", "scalar", _JSON, "object, array, string, number, boolean or null.",
          _sig(JSONB, TEXT)),
    # ------------------------------------------------------------------ arrays
    _spec("cardinality", "scalar", _ARRAY, "Number of elements (0 for an empty array).",
          _sig("T[]", INT4)),
    _spec("array_length", "scalar", _ARRAY, "Number of elements along dimension 1 (NULL "
          "for an empty array).", _sig("T[]", INT4, INT4)),
    # ------------------------------------------------------------------ conversions
    _spec("date", "scalar", _CAST, "Same as x::date.", _sig("any", DATE)),
    _spec("text", "scalar", _CAST, "Same as x::text.", _sig("any", TEXT)),
    _spec("int4", "scalar", _CAST, "Same as x::integer.", _sig("any", INT4)),
    _spec("int8", "scalar", _CAST, "Same as x::bigint.", _sig("any", INT8)),
    _spec("float8", "scalar", _CAST, "Same as x::double precision.", _sig("any", FLOAT8)),
    _spec("bool", "scalar", _CAST, "Same as x::boolean.", _sig("any", BOOL)),
    # ------------------------------------------------------------------ the platform
    _spec("current_user_id", "scalar", _SITE, "The user id of the caller.", _sig(TEXT),
          written="CURRENT_USER_ID()"),
)

FUNCTIONS: dict[str, FunctionSpec] = {spec.name: spec for spec in _SPECS}

# Functions PostgreSQL has that the subset refuses, with the construct
# (`constructs.CONSTRUCTS`) that says what to write instead.
REFUSED_FUNCTIONS: dict[str, str] = {
    "regexp_replace": "regex", "regexp_match": "regex", "regexp_matches": "regex",
    "regexp_like": "regex", "regexp_split_to_array": "regex", "regexp_count": "regex",
    "regexp_substr": "regex", "regexp_instr": "regex", "unnest": "table_functions",
    "generate_series": "table_functions", "age": "interval_value",
    "justify_days": "interval_value", "justify_hours": "interval_value",
    "make_interval": "interval_value",
}
# PostgreSQL functions the subset leaves out that no construct covers, and what to
# write instead (check: SQL_UNSUPPORTED, saying basedb does not support them).
UNSUPPORTED_FUNCTIONS: dict[str, str] = {
    "to_date": "x::date (ISO 8601 text)", "format": "concat() or ||",
    "json_array_length": "jsonb_array_length(x)", "json_typeof": "jsonb_typeof(x)",
    "array_position": "= ANY(…)", "array_to_string": "string_agg() over the values",
}
# Names from other SQL dialects that PostgreSQL does not have, and what to write
# (tests/differential/test_known.py asks a real PostgreSQL that it has none of them).
OTHER_DIALECT_FUNCTIONS: dict[str, str] = {
    "ifnull": "coalesce(a, b)", "nvl": "coalesce(a, b)", "isnull": "coalesce(a, b)",
    "iif": "CASE WHEN … THEN … ELSE … END", "if": "CASE WHEN … THEN … ELSE … END",
    "len": "length(text)", "instr": "strpos(text, sub)", "charindex": "strpos(text, sub)",
    "substring_index": "split_part(text, sep, n)", "datediff": "a::date - b::date",
    "dateadd": "x + INTERVAL '1 day'", "getdate": "now()", "sysdate": "now()",
    "current_timestamp": "CURRENT_TIMESTAMP (without parentheses)",
    "current_date": "CURRENT_DATE (without parentheses)", "group_concat": "string_agg(x, ',')",
    "strftime": "to_char(x, 'YYYY-MM-DD'), date_trunc() or extract()",
    "julianday": "extract(epoch FROM x)",
}


def function_spec(name: str) -> FunctionSpec | None:
    return FUNCTIONS.get(name.lower())


# ------------------------------------------------------------------ the SQLite side

# Built-in SQLite functions a compiled statement may call: the compiler emits only
# these (and the platform's `bdb_` functions), and the authorizer allows nothing else.
SQLITE_FUNCTIONS: frozenset[str] = frozenset({
    "abs", "coalesce", "glob", "ifnull", "instr", "length", "max", "min", "nullif", "replace",
    "substr", "trim", "ltrim", "rtrim", "typeof", "date", "datetime", "julianday",
    "strftime", "count", "sum", "total", "avg", "group_concat", "row_number", "rank",
    "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value",
    "last_value", "nth_value", "json", "json_array", "json_array_length", "json_extract",
    "json_type", "json_valid", "json_quote", "json_group_array", "json_each",
})
PLATFORM_FUNCTION_PREFIX = "bdb_"

# Never callable, whatever the dialect: they read or write files, load code, change the
# connection or expose the schema.
DENIED_FUNCTIONS: frozenset[str] = frozenset({
    "load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "fts5",
    "changes", "total_changes", "last_insert_rowid", "zeroblob", "randomblob",
    "json_tree", "dbstat",
})
DENIED_FUNCTION_PREFIXES: tuple[str, ...] = ("pragma_", "sqlite_", "pg_", "lo_", "dblink")

# Schema tables of SQLite; any reference to them is refused.
SCHEMA_TABLES: frozenset[str] = frozenset({
    "sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema",
})


def is_denied_function(name: str) -> bool:
    """Whether calling `name` is refused outright (dangerous or internal)."""
    lowered = name.lower()
    return lowered in DENIED_FUNCTIONS or lowered.startswith(DENIED_FUNCTION_PREFIXES)


def is_sqlite_function_allowed(name: str) -> bool:
    """Whether a compiled statement may call the SQLite function `name` (the authorizer)."""
    lowered = name.lower()
    return (lowered in SQLITE_FUNCTIONS or lowered.startswith(PLATFORM_FUNCTION_PREFIX)) \
        and not is_denied_function(lowered)


def is_schema_table(name: str) -> bool:
    lowered = name.lower()
    return lowered in SCHEMA_TABLES or lowered.startswith(("sqlite_", "pragma_"))
