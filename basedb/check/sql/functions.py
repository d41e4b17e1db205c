"""Which SQL functions a Database Function may call: one list for check and runtime.

`check` uses it on the author's SQL (a call that sqlglot does not model is passed
through to SQLite verbatim, so its name must be a known-safe SQLite function), and the
local platform's SQLite authorizer uses the very same list on the compiled statement, so
whatever passes one passes the other. Kept free of sqlglot so the platform can import it
cheaply.
"""

from __future__ import annotations

# Built-in SQLite functions that only compute values: no I/O, no connection state, no
# schema access. Names from newer SQLite releases are listed too; an older library just
# lacks them.
SQLITE_FUNCTIONS: frozenset[str] = frozenset({
    # core scalar functions
    "abs", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex", "ifnull",
    "iif", "instr", "length", "like", "likelihood", "likely", "lower", "ltrim", "max",
    "min", "nullif", "octet_length", "printf", "quote", "random", "replace", "round",
    "rtrim", "sign", "substr", "substring", "trim", "typeof", "unhex", "unicode",
    "unlikely", "upper",
    # date and time
    "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
    # aggregates
    "avg", "count", "group_concat", "string_agg", "sum", "total",
    # window functions
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag",
    "lead", "first_value", "last_value", "nth_value",
    # math (present when SQLite is built with its math functions)
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos",
    "cosh", "degrees", "exp", "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow",
    "power", "radians", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
    # JSON (json_each is the table-valued function multi-valued fields compile to)
    "json", "json_array", "json_array_length", "json_extract", "json_insert",
    "json_object", "json_patch", "json_remove", "json_replace", "json_set", "json_type",
    "json_valid", "json_quote", "json_group_array", "json_group_object", "json_each",
})

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

# PostgreSQL functions that sqlglot does not model but the compiler rewrites itself.
REWRITTEN_FUNCTIONS: frozenset[str] = frozenset({"array_length", "cardinality"})


def is_denied_function(name: str) -> bool:
    """Whether calling `name` is refused outright (dangerous or internal)."""
    lowered = name.lower()
    return lowered in DENIED_FUNCTIONS or lowered.startswith(DENIED_FUNCTION_PREFIXES)


def is_sqlite_function_allowed(name: str) -> bool:
    """Whether a compiled statement may call the SQLite function `name` (the authorizer)."""
    lowered = name.lower()
    return lowered in SQLITE_FUNCTIONS and not is_denied_function(lowered)


def is_passthrough_function_allowed(name: str) -> bool:
    """Whether a call sqlglot does not model may appear in a Database Function."""
    lowered = name.lower()
    return is_sqlite_function_allowed(lowered) or lowered in REWRITTEN_FUNCTIONS


def is_schema_table(name: str) -> bool:
    lowered = name.lower()
    return lowered in SCHEMA_TABLES or lowered.startswith(("sqlite_", "pragma_"))
