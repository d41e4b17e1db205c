"""Render docs/sql.md: the SQL subset of Database Functions, from the tables `check` uses.

The constructs (`constructs.CONSTRUCTS`), the functions (`functions.FUNCTIONS`) and the
types of fields and parameters (`pgtypes`) are the very tables the typer judges a query
with, so the document cannot promise what `check` refuses or leave out what it accepts.
`python -m basedb.cli.reference --write` regenerates it; a test fails when it is stale.
"""

from __future__ import annotations

from collections.abc import Iterable

from basedb.sql import pgtypes as T
from basedb.sql.constructs import CONSTRUCTS
from basedb.sql.functions import FUNCTIONS, FunctionSpec

_INTRO = """\
# SQL in Database Functions

A Database Function is one read-only `SELECT` in PostgreSQL's SQL, over the bound tables
and fields by their Base names. Everything in the subset below runs with PostgreSQL's
semantics on the local platform, as it does in the cloud: the same rows, the same types,
NULLs, rounding and errors. `basedb check` refuses the rest before anything is deployed:

- `SQL_UNSUPPORTED`: valid PostgreSQL outside the subset; the finding says what to write
  instead (listed under [Not supported](#not-supported)).
- `SQL_INVALID`: a query PostgreSQL itself would refuse, such as `WHERE 1`,
  `'a' + 1`, a selected column that is neither grouped nor aggregated, or a literal
  that is not a valid value of its type (`'2024-02-30'::date`).

The local platform is held to this by tests/differential, which runs thousands of
queries on a real PostgreSQL and on the local platform and compares the results.

Generated from the tables `check` uses (`python -m basedb.cli.reference --write`).
"""

_TYPES = """\
## Types

Fields and parameters have these PostgreSQL types; untyped literals (`'…'`, NULL) take
the type their context needs, and mixing types follows PostgreSQL's rules (implicit
conversions between numbers, from dates to timestamps; none between text and numbers).
"""

_STORAGE = """\
## Numbers and text on the local platform

The local platform runs the query on SQLite, with each PostgreSQL type held as:
"""
_STORAGE_TYPES = (
    ("integer, bigint", "SQLite INTEGER (64-bit); integer division truncates, and a "
     "conversion or a function result out of range is an error, as in PostgreSQL"),
    ("double precision", "SQLite REAL, the same IEEE 754 double: the same digits"),
    ("numeric (decimal literals like `1.5`, `::numeric`, avg(), sum() of bigint)",
     "a REAL, shown to 15 significant digits; round() and trunc() round it as a decimal "
     "(halves away from zero)"),
    ("text", "UTF-8 text"),
)
_STORAGE_NOTES = """\
So what a numeric computes past 15 significant digits (`12345678901234567.25`) is
rounded there, where PostgreSQL keeps every digit, and a numeric as text is refused
(`SQL_UNSUPPORTED`), since its digits after the point would show the difference.
Integer arithmetic (`+`, `-`, `*`) that overflows its type gives a larger number
locally (a double precision one past bigint) where PostgreSQL raises `integer out of
range` or `bigint out of range`.

Text compares, sorts, groups and is made DISTINCT by code point: the C collation
(PostgreSQL's `COLLATE "C"`; tests/differential compares with a database created with
`LC_COLLATE 'C'`). A database with a linguistic collation (`en_US.UTF-8`, ICU) orders
`'a' < 'B'` and accented letters differently: write `ORDER BY lower(x), x` where that
matters. lower(), upper(), initcap() and ILIKE know every Unicode letter, as PostgreSQL
does with a UTF-8 ctype (`C.UTF-8`); LIKE and `=` compare exactly.
"""

_ZONE = """\
## Time zone

A site's `timezone` (base-database.jsonc, an IANA name; UTC when it is not set) is sent
with every deploy and kept by each deployment: production runs in the zone of the
release it points at, whatever the machine's zone. It works as PostgreSQL's
`SET TIME ZONE`: `now()`, `CURRENT_TIMESTAMP` and `CURRENT_DATE` are the site's time,
datetime fields and DATETIME parameters hold the site's wall-clock time (an ISO 8601
value with an offset or `Z` is converted to it), and a `timestamptz` shows as the site's
local time. Mutations, FaaS record calls and created/updated times write in it too; the
Base API writes in its Base's zone (`basedb init` creates the Base in the template's).
"""

_INDEXES = """\
## Indexes: what stays fast on a large table

Deploying a preview gives each table its Database Functions read an index, planned
from each query's WHERE and ORDER BY (at most 8 per table, since every write updates
each one): the fields compared with `=` to a parameter or a literal first, then the
ORDER BY fields when a range filter is on the first of them or there is none, else
one field compared with `<`, `<=`, `>`, `>=` or `BETWEEN`; when the query reads at
most two more fields, they are added so that the index alone answers it. So these
shapes cost about the same on a million records as on ten thousand: an indexed lookup,
then as many rows as `LIMIT` asks for, with no sort:

- `WHERE "Status" = $1 ORDER BY "Due" DESC LIMIT 20`
- `WHERE "Points" >= $1 AND "Points" < $2 ORDER BY "Points" LIMIT 20`
- `ORDER BY "Title" LIMIT 20`

These stay linear in the number of records, because no index can hold their answer:

- `LIKE` and `ILIKE`: a pattern such as `'%…'` matches anywhere in a value, so every
  value is read (the local platform reads every value for any pattern); filters on an
  expression of a field (`lower("Title") = $1`, `date("Due") = $1`) too: compare the
  field itself.
- Filters joined by `OR`, and on multi-valued fields (link, multi-select,
  multi-user), which read each record's list of values.
- `GROUP BY`, `count(*)`, `sum()` and the other aggregates over the whole table, and
  `DISTINCT`: the answer depends on every record. Filter first, or keep the figure in
  a field that a Mutation updates.
- `ORDER BY` an expression or an aggregate, or a range filter on another field than
  the first ORDER BY field: the matching rows are sorted before `LIMIT` applies.
- `OFFSET n`: the first n rows are read and skipped; page with a filter on the last
  value seen instead (`WHERE "Due" < $1 ORDER BY "Due" DESC LIMIT 20`).
"""

_RESULTS = """\
## Results

Each row of `rows` maps the column names (as PostgreSQL names them; alias columns with
`AS`) to values by type: booleans `true` / `false`, numbers as JSON numbers (a numeric
to 15 significant digits, a whole number without a fraction), text, dates
`YYYY-MM-DD`, timestamps `YYYY-MM-DD HH:MM:SS[.ffffff]`, jsonb and arrays as JSON. A
column that reads a field directly shows it as the field holds it (a multi-valued field
as a list, null when empty). Sums of double precision values may differ from
PostgreSQL's in the last digits when rows are added in another order.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: tuple[str, ...], rows: Iterable[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def _written(spec: FunctionSpec) -> str:
    if spec.written:
        return spec.written
    forms = []
    for sig in spec.signatures:
        args = ", ".join(sig.args)
        forms.append(f"{spec.name}({args})")
    return "; ".join(dict.fromkeys(forms)) or f"{spec.name}()"


def _signatures(spec: FunctionSpec) -> str:
    return "; ".join(f"({', '.join(s.args)}) → {s.result}" for s in spec.signatures)


def render_sql_reference() -> str:
    lines = [_INTRO, _TYPES]
    kinds = sorted(T.FIELD_TYPES.items(), key=lambda item: item[0])
    lines += _table(("field type", "PostgreSQL type"),
                    [(f"`{name}`", T.describe(t) if t != T.TIMESTAMP else
                      "timestamp (without time zone)") for name, t in kinds])
    lines.append("Multi-valued fields (select or user with `multiple`, link) are "
                 "`text[]`; `record_id` is `text`.\n")
    lines += _table(("param kind", "PostgreSQL type"),
                    [(f"`{kind}`", T.describe(t) if t != T.TIMESTAMP else
                      "timestamp (without time zone)")
                     for kind, t in T.PARAM_TYPES.items()])
    lines.append(_STORAGE)
    lines += _table(("PostgreSQL type", "on the local platform"), _STORAGE_TYPES)
    lines.append(_STORAGE_NOTES)
    lines.append(_ZONE)
    lines.append("## Constructs\n")
    groups: dict[str, list[tuple[str, str]]] = {}
    for construct in CONSTRUCTS:
        if construct.supported:
            groups.setdefault(construct.group, []).append((construct.title, construct.note))
    for group, rows in groups.items():
        lines.append(f"### {group}\n")
        lines += _table(("construct", "as in PostgreSQL, and worth knowing"), rows)
    lines.append("## Functions\n")
    by_group: dict[str, list[FunctionSpec]] = {}
    for spec in FUNCTIONS.values():
        by_group.setdefault(spec.group, []).append(spec)
    for group, specs in by_group.items():
        lines.append(f"### {group}\n")
        lines += _table(("function", "signatures", "what it does"),
                        [(f"`{_written(s)}`", _signatures(s), s.summary) for s in specs])
    lines.append("## Not supported\n")
    lines.append("`check` refuses these with `SQL_UNSUPPORTED`, and says what to write "
                 "instead. So does any function not listed above.\n")
    lines += _table(("construct", "write instead"),
                    [(c.title, c.note) for c in CONSTRUCTS if not c.supported])
    lines += [_RESULTS, _INDEXES]
    return "\n".join(lines).rstrip() + "\n"
