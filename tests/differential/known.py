"""The known differences between SQLite and PostgreSQL, one case (or a few) for each,
with PostgreSQL's result over the dataset: rows as the invoke JSON shows them, "error"
when PostgreSQL raises on the data, or the codes `check` refuses the query with.

tests/unit/test_sql_known_differences.py runs them on the local platform (no server
needed); tests/differential/test_known.py checks the expectations against PostgreSQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.differential.engines import Case


@dataclass(frozen=True, slots=True)
class Expected:
    bullet: str
    case: Case
    result: Any  # rows, "error", or a sorted list of check codes


def _e(bullet: str, sql: str, result: Any, *params: tuple[str, Any]) -> Expected:
    return Expected(bullet, Case(sql, tuple(params)), result)


KNOWN_DIFFERENCES: list[Expected] = [
    _e("like-is-case-sensitive",
       'SELECT "Title" FROM "Tasks" WHERE "Title" LIKE \'write%\' ORDER BY record_id',
       [["write api"], ["write api"]]),
    _e("ilike-folds-every-letter",
       'SELECT "Title" FROM "Tasks" WHERE "Title" ILIKE \'écol_\' ORDER BY record_id',
       [["ÉCOLE"], ["école"], ["ÉCOLE"], ["école"]]),
    _e("like-backslash-escapes",
       'SELECT "Title" FROM "Tasks" WHERE "Title" LIKE \'%\\%%\' ORDER BY record_id',
       [["50% done"], ["50% done"]]),
    _e("now-is-site-time",
       "SELECT now() AS now, CURRENT_DATE AS today, now()::text AS t FROM \"Projects\" "
       "LIMIT 1", [["2025-01-31 09:30:15.25", "2025-01-31", "2025-01-31 09:30:15.25+08"]]),
    _e("negative-offset-is-an-error",
       'SELECT "Title" FROM "Tasks" ORDER BY record_id OFFSET $1', "error", ("INT", -1)),
    _e("negative-offset-literal-is-refused",
       'SELECT "Title" FROM "Tasks" ORDER BY record_id OFFSET -1', ["SQL_INVALID"]),
    _e("lateral-is-refused",
       'SELECT t."Title" FROM "Tasks" t, LATERAL (SELECT "Name" FROM "Projects") x',
       ["SQL_UNSUPPORTED"]),
    _e("natural-join-runs",
       'WITH a AS (SELECT record_id, "Title" FROM "Tasks" WHERE "Seq" < 3), b AS (SELECT '
       'record_id, "Seq" FROM "Tasks") SELECT a."Title", b."Seq" FROM a NATURAL JOIN b '
       "ORDER BY 2", [["Write API", 1], ["write api", 2]]),
    _e("date-trunc-quarter-runs",
       'SELECT date_trunc(\'quarter\', "Due") AS q FROM "Tasks" WHERE "Seq" IN (2, 3) '
       'ORDER BY "Seq"', [["2025-01-01 00:00:00"], ["2024-01-01 00:00:00"]]),
    _e("less-than-any-is-refused",
       'SELECT "Title" FROM "Tasks" WHERE "Points" < ANY($1)', ["SQL_UNSUPPORTED"],
       ("NUMBER[]", [1.0, 2.0])),
    _e("integer-division-truncates",
       'SELECT 7 / 2 AS a, -7 / 2 AS b, "Seq" / 3 AS c, "Points" / 4 AS d, 7.0 / 2 AS e '
       'FROM "Tasks" WHERE "Seq" = 5', [[3, -3, 1, 0.625, 3.5]]),
    _e("division-by-zero-is-an-error",
       'SELECT "Seq" / ("Seq" - 5) AS x FROM "Tasks"', "error"),
    _e("nulls-sort-last-ascending",
       'SELECT "Kind" FROM "Projects" ORDER BY "Kind", record_id',
       [["client"], ["client"], ["internal"], [None]]),
    _e("nulls-sort-first-descending",
       'SELECT "Kind" FROM "Projects" ORDER BY "Kind" DESC, record_id',
       [[None], ["internal"], ["client"], ["client"]]),
    _e("concatenation-with-null-is-null",
       'SELECT "Name" || "Kind" AS a, concat("Name", "Kind") AS b FROM "Projects" '
       "ORDER BY record_id", [["Platforminternal", "Platforminternal"],
                              ["Portalclient", "Portalclient"], [None, "platform"],
                              ["Ünicodeclient", "Ünicodeclient"]]),
    _e("coalesce-takes-the-common-type",
       'SELECT COALESCE("Points", "Seq") AS a, COALESCE("Notes", \'none\') AS b FROM '
       '"Tasks" WHERE "Seq" IN (1, 2) ORDER BY "Seq"', [[1, "none"], [0, "a\\b"]]),
    _e("coalesce-of-text-and-number-is-refused",
       'SELECT COALESCE("Title", 0) AS x FROM "Tasks"', ["SQL_INVALID"]),
    _e("coalesce-of-date-and-timestamp-is-a-timestamp",
       'SELECT COALESCE("Due"::date, "Due") AS x FROM "Tasks" WHERE "Seq" = 3',
       [["2024-02-29 00:00:00"]]),
    _e("booleans-are-true-and-false",
       'SELECT "Done", "Seq" > 2 AS big, "Done"::text AS t, concat("Done") AS c FROM "Tasks" '
       'WHERE "Seq" = 4', [[True, True, "true", "t"]]),
    _e("round-half-even-for-double-precision",
       "SELECT round(2.5::float8) AS a, round(3.5::float8) AS b, round(2.5) AS c, "
       "round(-2.5) AS d, round(2.675, 2) AS e, 2.5::float8::int AS f, 2.5::numeric::int "
       'AS g FROM "Projects" LIMIT 1', [[2, 4, 3, -3, 2.68, 2, 3]]),
    _e("round-of-double-precision-to-places-is-refused",
       'SELECT round("Points", 1) AS x FROM "Tasks"', ["SQL_INVALID"]),
    _e("distinct-on-keeps-the-first-row",
       'SELECT DISTINCT ON ("Kind") "Kind", "Name" FROM "Projects" ORDER BY "Kind", '
       '"Budget" DESC', [["client", "Portal"], ["internal", "Platform"], [None, "platform"]]),
    _e("window-frames",
       'SELECT "Seq", sum("Seq") OVER (ORDER BY "Seq" ROWS BETWEEN 1 PRECEDING AND 1 '
       'FOLLOWING) AS s, last_value("Seq") OVER (ORDER BY "Seq") AS l FROM "Tasks" '
       'WHERE "Seq" <= 4 ORDER BY "Seq"', [[1, 3, 1], [2, 6, 2], [3, 9, 3], [4, 7, 4]]),
    _e("aggregate-filter",
       'SELECT count(*) FILTER (WHERE "Done") AS done, count(*) AS n FROM "Tasks"',
       [[14, 40]]),
    _e("ungrouped-column-is-refused",
       'SELECT "Status", "Title" FROM "Tasks" GROUP BY "Status"', ["SQL_INVALID"]),
    _e("grouping-by-the-key-allows-its-fields",
       'SELECT p.record_id, p."Name", count(*) AS n FROM "Projects" p GROUP BY p.record_id '
       "ORDER BY 1", [["recP1", "Platform", 1], ["recP2", "Portal", 1],
                      ["recP3", "platform", 1], ["recP4", "Ünicode", 1]]),
    _e("json-operators",
       'SELECT "Place" ->> \'full_address\' AS a, "Files" -> 0 ->> \'name\' AS f, '
       'jsonb_typeof("Place") AS k FROM "Tasks" WHERE "Seq" IN (1, 2) ORDER BY "Seq"',
       [[None, "f0.png", None], ["Road 1", None, "object"]]),
]
