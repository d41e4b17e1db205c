"""The SQL constructs of the supported subset, and those refused with what to write
instead: one table for `check`'s SQL_UNSUPPORTED findings and for docs/sql.md.

Every construct listed as supported runs on the local platform with PostgreSQL's
semantics (tests/differential compares it with a real PostgreSQL); every construct that
is not is refused by `check` before anything is deployed, with the `instead` text as the
fix. Functions are in `basedb.sql.functions`.
"""

from __future__ import annotations

from basedb.core.frozen import frozen_dataclass


@frozen_dataclass
class Construct:
    key: str
    group: str
    title: str  # what it is, as an author writes it
    supported: bool
    note: str  # supported: its semantics worth knowing; refused: what to write instead


_QUERY, _JOIN, _EXPR, _TYPE, _PLATFORM = ("Queries", "FROM and JOIN", "Expressions",
                                          "Types and literals", "The platform's additions")

CONSTRUCTS: tuple[Construct, ...] = (
    # ------------------------------------------------------------------ queries
    Construct("select", _QUERY, "SELECT list, `*`, `t.*`, column aliases", True,
              "Unaliased columns are named as PostgreSQL names them (`count`, `?column?`); "
              "`*` lists a table's fields (record_id is a pseudo-column: select it by name)."),
    Construct("with", _QUERY, "WITH (common table expressions), WITH RECURSIVE", True,
              "A recursive CTE runs until it adds no rows or hits the time limit."),
    Construct("set_operations", _QUERY, "UNION, UNION ALL, INTERSECT, EXCEPT", True,
              "Each column takes the common type of its branches; ORDER BY names result "
              "columns."),
    Construct("set_operations_all", _QUERY, "INTERSECT ALL, EXCEPT ALL", False,
              "Use INTERSECT / EXCEPT (without ALL), or count rows per value with GROUP BY."),
    Construct("where", _QUERY, "WHERE, HAVING", True,
              "The condition must be boolean (`WHERE 1` is refused, as in PostgreSQL)."),
    Construct("group_by", _QUERY, "GROUP BY expressions, output names and positions", True,
              "A selected column must be grouped or inside an aggregate, unless its "
              "table's record_id is grouped (PostgreSQL's rule)."),
    Construct("grouping_sets", _QUERY, "GROUPING SETS, ROLLUP, CUBE", False,
              "Write one query per grouping and combine them with UNION ALL."),
    Construct("distinct", _QUERY, "DISTINCT, DISTINCT ON (…)", True,
              "DISTINCT ON keeps the first row of each group in ORDER BY order; its "
              "expressions must lead the ORDER BY."),
    Construct("order_by", _QUERY, "ORDER BY … ASC | DESC [NULLS FIRST | NULLS LAST]", True,
              "NULLs sort last ascending and first descending, as in PostgreSQL; text "
              "sorts by code point (the C collation)."),
    Construct("limit", _QUERY, "LIMIT, OFFSET, FETCH FIRST n ROWS ONLY", True,
              "An integer literal or a parameter; NULL means no limit (LIMIT) or 0 "
              "(OFFSET); a negative value is an error, as in PostgreSQL."),
    Construct("limit_expression", _QUERY, "LIMIT or OFFSET computed from an expression",
              False, "Pass the number as a parameter ($n) or write an integer literal."),
    Construct("window", _QUERY, "Window functions: OVER (PARTITION BY … ORDER BY … frame), "
              "named WINDOW", True,
              "Frames ROWS, RANGE or GROUPS BETWEEN … with EXCLUDE; the default frame is "
              "PostgreSQL's."),
    Construct("filter", _QUERY, "Aggregate FILTER (WHERE …)", True, ""),
    Construct("window_other", _QUERY, "OVER on anything but a window function or an "
              "aggregate", False, "Apply OVER to a window function (row_number(), lag(), …) "
              "or an aggregate (sum(), count(), …)."),
    Construct("aggregate_order", _QUERY, "ORDER BY and DISTINCT inside string_agg / "
              "array_agg", True, "Not with OVER: a window's own ORDER BY orders its rows. "
              "With DISTINCT, ORDER BY may name only the arguments, as in PostgreSQL; "
              "without ORDER BY the distinct values come sorted."),
    Construct("windowed_ordered_aggregate", _QUERY,
              "string_agg / array_agg with ORDER BY and OVER", False,
              "Order the window instead: string_agg(x, ',') OVER (ORDER BY …)."),
    Construct("subqueries", _QUERY, "Scalar subqueries, EXISTS, IN (SELECT …), "
              "= ANY (SELECT …), <> ALL (SELECT …)", True,
              "A scalar subquery that returns more than one row is an error, as in "
              "PostgreSQL."),
    Construct("values", _QUERY, "VALUES lists in FROM", True, ""),
    Construct("unnest", _QUERY, "unnest(array) as an item of a SELECT list", True,
              "A row per element of a multi-valued field or array parameter (none for an "
              "empty one), e.g. `record_id IN (SELECT unnest(\"Link\") FROM t)`; once per "
              "SELECT, without GROUP BY, aggregates or window functions in it (group around "
              "it in an outer query)."),
    # ------------------------------------------------------------------ joins
    Construct("joins", _JOIN, "[INNER] JOIN, LEFT / RIGHT / FULL [OUTER] JOIN, CROSS JOIN, "
              "comma joins, JOIN … USING, NATURAL JOIN", True,
              "NATURAL JOIN joins on the fields both sides have (as USING)."),
    Construct("star_using", _JOIN, "An unqualified * over JOIN … USING or NATURAL JOIN",
              False, "List the columns, or select t.* of one side: PostgreSQL merges the "
              "joined columns of *, which the local platform does not."),
    Construct("lateral", _JOIN, "LATERAL subqueries and joins", False,
              "Use a correlated subquery in the SELECT list or WHERE, or join the table "
              "and filter with ON."),
    Construct("table_functions", _JOIN, "Table functions in FROM (unnest, "
              "generate_series, …)", False,
              "Select unnest(x) in the SELECT list, or compare with `field = ANY($n)`; "
              "for a series of numbers use WITH RECURSIVE."),
    # ------------------------------------------------------------------ expressions
    Construct("operators", _EXPR, "Arithmetic + - * / % ^, comparison, AND / OR / NOT, "
              "string concatenation ||", True,
              "Integer division truncates; division by zero is an error; `||` with NULL "
              "is NULL (concat() skips NULLs)."),
    Construct("predicates", _EXPR, "IS [NOT] NULL, IS [NOT] TRUE / FALSE, IS [NOT] "
              "DISTINCT FROM, BETWEEN [SYMMETRIC], IN (…), EXISTS", True, ""),
    Construct("like", _EXPR, "LIKE, NOT LIKE, ILIKE, NOT ILIKE [ESCAPE …]", True,
              "LIKE is case-sensitive and ILIKE is not, for every letter; `\\` escapes "
              "`%` and `_` unless ESCAPE says otherwise."),
    Construct("like_escape", _EXPR, "An ESCAPE character computed at run time", False,
              "Write the ESCAPE character as a literal: LIKE $1 ESCAPE '!'."),
    Construct("case", _EXPR, "CASE WHEN … THEN … ELSE … END, simple CASE x WHEN …", True,
              "The branches take their common type (CASE WHEN … THEN 1 ELSE 'a' END is "
              "refused, as in PostgreSQL)."),
    Construct("quantified", _EXPR, "x = ANY (array or subquery), x <> ALL (…)", True, ""),
    Construct("quantified_other", _EXPR, "Other quantified comparisons: x < ANY (…), "
              "x = ALL (…), SOME", False,
              "Compare with min() / max() of the values: x < (SELECT max(v) FROM …), or "
              "use = ANY / <> ALL."),
    Construct("regex", _EXPR, "Regular expressions: ~, ~*, SIMILAR TO, regexp_* functions",
              False, "Use LIKE / ILIKE patterns, strpos(), or starts_with()."),
    Construct("row_values", _EXPR, "Row values: (a, b) = (c, d), (a, b) IN (…)", False,
              "Compare column by column: a = c AND b = d."),
    Construct("subscripts", _EXPR, "Array subscripts and slices: x[1], x[1:2]", False,
              "Test membership with `= ANY(x)` or count with cardinality(x)."),
    Construct("json", _EXPR, "JSON operators -> and ->> (key or index)", True,
              "On attachment and location fields (jsonb); chain them for a path."),
    Construct("json_paths", _EXPR, "JSON path operators #> and #>>, @>, ?, keys computed "
              "at run time", False, "Chain -> and ->> with literal keys: x -> 'a' ->> 'b'."),
    Construct("interval_value", _EXPR, "Interval values: the difference of two timestamps, "
              "interval columns or comparisons", False,
              "Subtract epochs for seconds (extract(epoch FROM a) - extract(epoch FROM "
              "b)), or dates for days (a::date - b::date)."),
    Construct("datetime_arithmetic", _EXPR, "date ± integer, date - date, date or "
              "timestamp ± INTERVAL '…' (times a number)", True,
              "Months are added on the calendar (Jan 31 + 1 month = Feb 29 in 2024), as "
              "in PostgreSQL."),
    Construct("collate", _EXPR, "COLLATE", False,
              "Remove it: text compares and sorts by code point."),
    # ------------------------------------------------------------------ types
    Construct("literals", _TYPE, "Literals: 'text', 12, 1.5, TRUE, NULL, DATE '…', "
              "TIMESTAMP '…', INTERVAL '…'", True,
              "A quoted literal takes the type its context needs and must be valid for "
              "it ('2024-02-30' is refused); dates and times in ISO 8601."),
    Construct("escape_strings", _TYPE, "E'…' escape strings, U&'…', $$…$$", False,
              "Write the characters themselves in an ordinary '…' literal."),
    Construct("cast_forms", _TYPE, "TRY_CAST, CAST … FORMAT", False,
              "Write CAST (x AS type) or x::type."),
    Construct("casts", _TYPE, "CAST (x AS type), x::type", True,
              "To text, integer, bigint, numeric[(p, s)], double precision, boolean, date, "
              "timestamp, timestamptz, jsonb and their arrays; text converts as PostgreSQL "
              "reads it (an invalid value is an error)."),
    Construct("other_types", _TYPE, "Other types (time, interval columns, money, bytea, "
              "uuid, xml, real, smallint, varchar(n), char(n), json, …)", False,
              "Use one of the supported types (e.g. text, double precision, jsonb)."),
    Construct("parameters", _TYPE, "Parameters $1 … $n", True,
              "Typed by their declared kind: TEXT text, INT bigint, NUMBER double "
              "precision, BOOL boolean, DATE date, DATETIME timestamp, TEXT[] / INT[] / "
              "NUMBER[] arrays."),
    # ------------------------------------------------------------------ the platform
    Construct("multi_valued", _PLATFORM, "Multi-valued fields (multi-select, multi-user, "
              "link): `=`, `<>`, IN, NOT IN, = ANY, <> ALL, IS NULL", True,
              "`field = x` is `x = ANY(field)`: true when some element equals x; "
              "`field <> x` is `x <> ALL(field)`: true when none does; `field IN (a, b)` "
              "is `field = a OR field = b`. An empty field is NULL (IS NULL matches it), "
              "so a comparison with it is NULL, and so is its NOT, as in PostgreSQL. "
              "Anywhere else the field is a text[] array."),
    Construct("current_user_id", _PLATFORM, "CURRENT_USER_ID()", True,
              "The calling user's id (text)."),
    Construct("time_zone", _PLATFORM, "now(), CURRENT_TIMESTAMP, CURRENT_DATE, "
              "LOCALTIMESTAMP, timestamptz", True,
              "In the site's `timezone` (base-database.jsonc; UTC when it is not set), as "
              "PostgreSQL does after SET TIME ZONE."),
)

CONSTRUCT_BY_KEY: dict[str, Construct] = {c.key: c for c in CONSTRUCTS}


def instead(key: str) -> str:
    """What to write instead of an unsupported construct."""
    construct = CONSTRUCT_BY_KEY[key]
    assert not construct.supported, key
    return construct.note
