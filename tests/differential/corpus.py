"""Hand-written queries: the shapes docs, templates and tests use, and every known
difference between SQLite and PostgreSQL, over the dataset of `dataset.py`.

Each query either runs the same on both engines or is refused by `check` (a query
meant to be refused says so in its note: the suite checks PostgreSQL refuses it too
when `check` calls it invalid). Queries that fix an order fix a total one (ties broken
by record_id), so that the order can be compared row by row.
"""

from __future__ import annotations

from tests.differential.engines import Case

T = "TEXT"
I = "INT"  # noqa: E741
N = "NUMBER"
B = "BOOL"
D = "DATE"
DT = "DATETIME"


def c(sql: str, *params: tuple[str, object], ordered: bool | None = None,
      note: str = "") -> Case:
    return Case(sql, tuple(params), ordered, note)


# The shapes the example template, docs and tests use.
SHAPES = [
    c('SELECT record_id AS task_id, "Title", "Status", "Tags", "Points", "Due", "Watchers", '
      '"Project" FROM "Tasks" WHERE "Status" = $1 ORDER BY "Title", record_id', (T, "Doing")),
    c('SELECT "Title" FROM "Tasks" WHERE ($1 IS NULL OR "Status" = $1) ORDER BY record_id',
      (T, None)),
    c('SELECT "Title" FROM "Tasks" WHERE ($1 IS NULL OR "Status" = $1) ORDER BY record_id',
      (T, "Done")),
    c('SELECT "Title" FROM "Tasks" WHERE ($1::text IS NULL OR "Status" = $1) ORDER BY 1, '
      'record_id', (T, "Todo")),
    c('SELECT "Title" FROM "Tasks" WHERE "Tags" = ANY($1) ORDER BY record_id LIMIT $2',
      (f"{T}[]", ["urgent", "Docs"]), (I, 5)),
    c('SELECT "Title" FROM "Tasks" WHERE "Tags" = ANY($1) ORDER BY record_id',
      (f"{T}[]", [])),
    c('SELECT "Title" FROM "Tasks" WHERE "Project" = $1 ORDER BY record_id', (T, "recP2")),
    c('SELECT "Title", "Owner" FROM "Tasks" WHERE "Owner" = CURRENT_USER_ID() '
      'ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Watchers" = CURRENT_USER_ID() ORDER BY record_id'),
    c('SELECT "Title", "Due" FROM "Tasks" WHERE "Due" < $1 ORDER BY "Due", record_id',
      (DT, "2024-05-17 10:30:00")),
    c('SELECT "Title" FROM "Tasks" WHERE "Due" >= $1 ORDER BY record_id', (D, "2024-06-01")),
    c('SELECT "Title" FROM "Tasks" WHERE "Due"::date = $1 ORDER BY record_id',
      (D, "2024-02-29")),
    c('SELECT "Title" FROM "Tasks" WHERE date("Due") = $1 ORDER BY record_id',
      (D, "2024-06-01")),
    c('SELECT "Title" FROM "Tasks" WHERE "Points" > $1 AND "Done" = $2 ORDER BY record_id',
      (N, 1.5), (B, False)),
    c('SELECT count(*) AS n FROM "Tasks"'),
    c('SELECT t."Title", p."Name" FROM "Tasks" AS t JOIN "Projects" AS p ON t."Project" = '
      'p.record_id ORDER BY t.record_id, p.record_id'),
    c('SELECT p."Name", count(t.record_id) AS tasks, COALESCE(SUM(t."Points"), 0) AS points '
      'FROM "Projects" AS p LEFT JOIN "Tasks" AS t ON t."Project" = p.record_id '
      'GROUP BY p.record_id, p."Name" ORDER BY p.record_id'),
    c('SELECT t.record_id AS id, t."Title", n."Body" FROM "Tasks" AS t LEFT JOIN "Notes" AS n '
      'ON n."Task" = t.record_id AND n."Author" = CURRENT_USER_ID() WHERE t."Owner" = '
      'CURRENT_USER_ID() ORDER BY t.record_id, n.record_id'),
    c('SELECT "Status", COUNT(*) AS submissions, SUM(CASE WHEN "Done" THEN 1 ELSE 0 END) '
      'AS finished, COALESCE(SUM("Points"), 0) AS total FROM "Tasks" GROUP BY "Status" '
      'ORDER BY "Status"'),
    c('SELECT record_id, "Title", CASE WHEN "Status" IS NULL THEN \'no_status\' WHEN "Done" '
      'AND "Points" IS NULL THEN \'no_points\' WHEN "Due" < \'2024-03-01\' THEN \'old\' ELSE '
      '\'ok\' END AS problem FROM "Tasks" ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" ORDER BY CASE WHEN "Status" = \'Doing\' THEN 0 ELSE 1 END, '
      '"Due" DESC, record_id'),
    c('SELECT "Title" FROM "Tasks" ORDER BY "Title", record_id LIMIT 200 OFFSET $1', (I, 3)),
    c('SELECT * FROM "Projects" ORDER BY record_id'),
    c('SELECT p.*, 1 AS one FROM "Projects" p ORDER BY p.record_id'),
    c('WITH open AS (SELECT "Title", "Status" AS s FROM "Tasks" WHERE "Status" = $1) '
      'SELECT * FROM open ORDER BY "Title"', (T, "Doing"), ordered=False),
    c('WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) '
      'SELECT n, "Title" FROM r JOIN "Tasks" ON "Tasks"."Points" = r.n ORDER BY n, '
      '"Tasks".record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Project" IN (SELECT record_id FROM "Projects" '
      'WHERE "Name" = $1) ORDER BY record_id', (T, "Platform")),
    c('SELECT "Title" FROM "Tasks" t WHERE EXISTS (SELECT 1 FROM "Notes" n WHERE n."Task" '
      '= t.record_id) ORDER BY record_id'),
    c('SELECT "Title", (SELECT count(*) FROM "Notes" n WHERE n."Task" = t.record_id) AS notes '
      'FROM "Tasks" t ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Points" > (SELECT avg("Points") FROM "Tasks") '
      'ORDER BY record_id'),
    c('SELECT x.a FROM (SELECT "Title", "Status" FROM "Tasks") AS x(a, b) WHERE x.b = $1 '
      'ORDER BY 1', (T, "Done"), ordered=False),
    c('SELECT v.n, v.label, t."Title" FROM (VALUES (1, \'one\'), (2, \'two\'), (3, NULL)) AS '
      'v(n, label) JOIN "Tasks" t ON t."Seq" = v.n ORDER BY v.n'),
    c('SELECT "Title" FROM "Tasks" WHERE "Tags" IN ($1, $2) ORDER BY record_id',
      (T, "ui"), (T, "api")),
    c('SELECT "Title" FROM "Tasks" WHERE "Tags" NOT IN ($1, $2) ORDER BY record_id',
      (T, "ui"), (T, "api")),
    c('SELECT "Title" FROM "Tasks" WHERE "Tags" <> $1 ORDER BY record_id', (T, "urgent")),
    c('SELECT "Title" FROM "Tasks" WHERE "Tags" <> ALL($1) ORDER BY record_id',
      (f"{T}[]", ["urgent", "api"])),
    c('SELECT record_id FROM "Tasks" WHERE NOT ("Tags" = \'ui\') ORDER BY record_id'),
    c('SELECT record_id FROM "Tasks" WHERE NOT ("Watchers" <> $1) ORDER BY record_id',
      (T, "ou_bob")),
    c('SELECT record_id, "Tags" = \'ui\' AS has_ui, NOT ("Tags" IN (\'api\', NULL)) AS n, '
      '"Project" = ANY($1) AS p FROM "Tasks" ORDER BY record_id', (f"{T}[]", None)),
    c('SELECT record_id FROM "Tasks" WHERE NOT ("Project" IN (SELECT record_id FROM '
      '"Projects" WHERE "Active")) ORDER BY record_id'),
    # unnest in a SELECT list: IN over the elements of a multi-valued field.
    c('SELECT record_id FROM "Tasks" WHERE record_id IN (SELECT unnest("Task") FROM "Notes") '
      'ORDER BY record_id'),
    c('SELECT record_id FROM "Tasks" WHERE record_id NOT IN (SELECT unnest("Task") FROM '
      '"Notes" WHERE "Author" = CURRENT_USER_ID()) ORDER BY record_id'),
    c('SELECT p."Name" FROM "Projects" p WHERE p.record_id IN (SELECT unnest(t."Project") '
      'FROM "Tasks" t WHERE t."Done") ORDER BY p.record_id'),
    c('SELECT t.record_id, unnest(t."Tags") AS tag FROM "Tasks" t ORDER BY 1, 2'),
    c('SELECT DISTINCT unnest("Watchers") AS w FROM "Tasks" ORDER BY 1'),
    c('SELECT "Name", unnest($1) AS v FROM "Projects" WHERE "Kind" = \'client\' ORDER BY 1, 2',
      (f"{I}[]", [3, 1, 2])),
    c('SELECT x.tag, count(*) AS n FROM (SELECT unnest("Tags") AS tag FROM "Tasks") x '
      'GROUP BY x.tag ORDER BY 2 DESC, 1'),
    c('SELECT unnest("Tags") AS tag, count(*) FROM "Tasks" GROUP BY 1', note="unsupported"),
    c('SELECT "Title" FROM "Tasks" WHERE "Watchers" IS NULL ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Watchers" IS NOT NULL ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Status" = ANY($1) ORDER BY record_id',
      (f"{T}[]", ["Done", "Blocked"])),
    c('SELECT "Title" FROM "Tasks" WHERE "Status" <> ALL($1) ORDER BY record_id',
      (f"{T}[]", ["Done", "Blocked"])),
    c('SELECT "Title" FROM "Tasks" WHERE record_id = ANY($1) ORDER BY record_id',
      (f"{T}[]", ["recT1", "recT9", "recX"])),
    c('SELECT "Title" FROM "Tasks" WHERE cardinality($1::text[]) = 2 AND "Points" = 3 '
      'ORDER BY record_id', (f"{T}[]", ["a", "b"])),
    c('SELECT "Title" FROM "Tasks" WHERE "Seq" = ANY($1) ORDER BY record_id',
      (f"{I}[]", [1, 5, 40])),
    c('SELECT "Title" FROM "Tasks" WHERE "Points" = ANY($1) ORDER BY record_id',
      (f"{N}[]", [2.5, 3])),
    c('SELECT p."Name" FROM "Projects" p WHERE p.record_id IN (SELECT t."Project" FROM '
      '"Tasks" t WHERE t."Owner" = CURRENT_USER_ID()) ORDER BY p.record_id'),
    c('SELECT "Title" FROM "Tasks" ORDER BY "Points", record_id LIMIT $1 OFFSET $2',
      (I, None), (I, None)),
    c('SELECT DISTINCT ON ("Status") "Status", "Title" FROM "Tasks" ORDER BY "Status", '
      '"Title" DESC, record_id'),
    c('SELECT "Status", count(*) FROM "Tasks" GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 3'),
    c('SELECT "Status" AS s, count(*) AS n FROM "Tasks" GROUP BY s HAVING count(*) >= $1 '
      'ORDER BY n DESC, s', (I, 2)),
    c('SELECT "Title" FROM "Tasks" WHERE "Title" ILIKE $1 ORDER BY record_id', (T, "%api%")),
    c('SELECT "Title" || \'/\' || "Status" AS label, concat("Title", \'-\', "Points") AS c, '
      'date_trunc(\'month\', "Due") AS month, EXTRACT(year FROM "Due") AS y, '
      'coalesce("Points", 0) AS p FROM "Tasks" ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Due" >= \'2024-05-19\'::timestamp - INTERVAL '
      '\'1 day\' ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Due" < \'2024-05-11\'::date + INTERVAL \'1 week\' '
      'ORDER BY record_id'),
    c('SELECT date_trunc(\'week\', "Due") AS w, EXTRACT(dow FROM "Due") AS dow FROM "Tasks" '
      'ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Done" = true ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE NOT "Done" AND "Done" = $1 ORDER BY record_id',
      (B, False)),
    c('SELECT t."Title" FROM "Tasks" t JOIN "Tasks" u USING ("Title") WHERE t."Title" = $1 '
      'ORDER BY t.record_id, u.record_id', (T, "write api")),
    c('SELECT p."Name", t."Title" FROM ("Tasks" t JOIN "Projects" p ON p.record_id = '
      't."Project") WHERE p."Name" = $1 ORDER BY 2, t.record_id', (T, "Portal")),
]

# Each bullet of the known differences between SQLite and PostgreSQL.
KNOWN = [
    # LIKE is case-sensitive for ASCII in PostgreSQL; \ escapes; ESCAPE.
    c('SELECT "Title" FROM "Tasks" WHERE "Title" LIKE \'write%\' ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Title" LIKE \'W%\' ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Title" NOT LIKE \'%a%\' ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Title" LIKE \'%\\%%\' ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Title" LIKE \'fix\\_%\' ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Title" LIKE \'fix!_%\' ESCAPE \'!\' '
      'ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Title" LIKE \'a\\\\b\' ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Title" ILIKE \'école\' ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Title" ILIKE \'%STRASSE%\' ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Title" LIKE $1 ORDER BY record_id', (T, "_ix%")),
    c('SELECT "Title" FROM "Tasks" WHERE "Title" LIKE \'[a]%\' ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Title" LIKE \'*\' ORDER BY record_id'),
    c('SELECT "Title", lower("Title") AS l, upper("Title") AS u FROM "Tasks" '
      'ORDER BY record_id'),
    # now() / CURRENT_DATE in the site's time zone.
    c('SELECT now() AS now, CURRENT_TIMESTAMP AS ts, CURRENT_DATE AS today, LOCALTIMESTAMP '
      'AS local FROM "Projects" LIMIT 1'),
    c('SELECT "Title" FROM "Tasks" WHERE "Due" < now() - INTERVAL \'300 days\' '
      'ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Due"::date < CURRENT_DATE - 365 ORDER BY record_id'),
    c('SELECT date_trunc(\'day\', now()) AS d, extract(hour FROM now()) AS h, '
      'now()::date AS today, now()::text AS t FROM "Projects" LIMIT 1'),
    c('SELECT extract(epoch FROM now()) AS e, extract(epoch FROM "Due") AS due_epoch '
      'FROM "Tasks" ORDER BY record_id'),
    # Negative OFFSET / LIMIT are errors.
    c('SELECT "Title" FROM "Tasks" ORDER BY record_id OFFSET $1', (I, -1)),
    c('SELECT "Title" FROM "Tasks" ORDER BY record_id LIMIT $1', (I, -5)),
    c('SELECT "Title" FROM "Tasks" ORDER BY record_id OFFSET -1', note="invalid"),
    c('SELECT "Title" FROM "Tasks" ORDER BY record_id FETCH FIRST 3 ROWS ONLY'),
    # Integer division; division by zero.
    c('SELECT 7 / 2 AS a, -7 / 2 AS b, 7 % 3 AS m, -7 % 3 AS mm, 7.0 / 2 AS c, "Seq" / 3 '
      'AS d, "Points" / 4 AS e FROM "Tasks" ORDER BY record_id'),
    c('SELECT count(*) / 3 AS a, sum("Seq") / count(*) AS b, avg("Seq") AS c FROM "Tasks"'),
    c('SELECT "Seq" / ("Seq" - 5) AS x FROM "Tasks" ORDER BY record_id'),
    c('SELECT "Points" / 0 AS x FROM "Tasks"'),
    c('SELECT 1 / 0 AS x FROM "Tasks" WHERE false'),
    c('SELECT mod("Seq", 4) AS m, div("Seq", 4) AS d, "Seq" % 4 AS p FROM "Tasks" '
      'ORDER BY record_id'),
    # NULL ordering defaults.
    c('SELECT "Title", "Points" FROM "Tasks" ORDER BY "Points", record_id'),
    c('SELECT "Title", "Points" FROM "Tasks" ORDER BY "Points" DESC, record_id'),
    c('SELECT "Title", "Due" FROM "Tasks" ORDER BY "Due" NULLS FIRST, record_id'),
    c('SELECT "Title", "Due" FROM "Tasks" ORDER BY "Due" DESC NULLS LAST, record_id'),
    c('SELECT "Name", "Kind" FROM "Projects" ORDER BY "Kind", record_id'),
    c('SELECT "Title" FROM "Tasks" ORDER BY "Title", record_id'),
    # String concatenation with NULL.
    c('SELECT "Title" || "Notes" AS a, concat("Title", "Notes") AS b, concat_ws(\'|\', '
      '"Title", "Notes", "Status") AS w, "Title" || NULL AS n FROM "Tasks" '
      'ORDER BY record_id'),
    c('SELECT "Title" || "Points" AS a, "Title" || "Done" AS b, concat("Done", "Points", '
      '"Due") AS c, "Seq" || \'#\' AS d FROM "Tasks" ORDER BY record_id'),
    # COALESCE typing.
    c('SELECT COALESCE("Points", "Seq") AS a, COALESCE("Notes", \'none\') AS b, '
      'COALESCE("Due", \'2000-01-01\') AS c, COALESCE(NULL, 1) AS d FROM "Tasks" '
      'ORDER BY record_id'),
    c('SELECT COALESCE("Title", 0) AS x FROM "Tasks"', note="invalid"),
    c('SELECT COALESCE("Due"::date, "Due") AS x FROM "Tasks" ORDER BY record_id'),
    c('SELECT NULLIF("Points", 2.5) AS a, GREATEST("Points", "Estimate") AS g, '
      'LEAST("Points", "Estimate", 0) AS l FROM "Tasks" ORDER BY record_id'),
    # Boolean rendering.
    c('SELECT "Done", "Points" > 2 AS big, NOT "Done" AS open, "Title" IS NULL AS t, '
      '"Points" IN (1, 2) AS i, "Done"::text AS s, "Done"::int AS n FROM "Tasks" '
      'ORDER BY record_id'),
    c('SELECT bool_and("Done") AS a, bool_or("Done") AS o, every("Points" > 0) AS e '
      'FROM "Tasks"'),
    c('SELECT "Status", bool_or("Done") AS any_done FROM "Tasks" GROUP BY "Status" '
      'ORDER BY 1'),
    # Numeric rounding.
    c('SELECT round("Points") AS r, round("Points"::numeric) AS rn, round("Points"::numeric, '
      '1) AS r1, trunc("Points") AS t, ceil("Points") AS c, floor("Points") AS f FROM '
      '"Tasks" ORDER BY record_id'),
    c('SELECT round(2.5) AS a, round(-2.5) AS b, round(2.5::float8) AS c, round(3.5::float8) '
      'AS d, round(2.675, 2) AS e, round(-0.5::float8) AS f, 2.5::float8::int AS g, '
      '2.5::numeric::int AS h, (-3.5)::float8::bigint AS i FROM "Projects" LIMIT 1'),
    c('SELECT round("Points", 1) AS x FROM "Tasks"', note="invalid"),
    c('SELECT round(avg("Points")::numeric, 2) AS a, sum("Points") AS s, avg("Seq") AS m '
      'FROM "Tasks"'),
    c('SELECT 0.1 + 0.2 AS a, 0.1::float8 + 0.2::float8 AS b, 1.0 / 3 AS c, 2 ^ 10 AS d, '
      'sqrt(2) AS e, abs(-3) AS f, sign(-2.5) AS g FROM "Projects" LIMIT 1'),
    # DISTINCT ON.
    c('SELECT DISTINCT ON ("Status") "Status", "Title", "Points" FROM "Tasks" ORDER BY '
      '"Status", "Points" DESC, record_id'),
    c('SELECT DISTINCT ON ("Done", "Status") "Done", "Status", record_id FROM "Tasks" '
      'ORDER BY "Done", "Status" NULLS FIRST, record_id DESC'),
    c('SELECT DISTINCT ON (1) "Status", "Title" FROM "Tasks" ORDER BY 1, 2, record_id '
      'LIMIT 2 OFFSET 1'),
    c('SELECT DISTINCT "Status" FROM "Tasks" ORDER BY "Status"'),
    c('SELECT DISTINCT "Status" FROM "Tasks" ORDER BY "Title"', note="invalid"),
    # Window frames.
    c('SELECT record_id, sum("Seq") OVER (ORDER BY "Seq") AS running, sum("Seq") OVER '
      '(ORDER BY "Seq" ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS around, '
      'count(*) OVER () AS n FROM "Tasks" ORDER BY record_id'),
    c('SELECT record_id, first_value("Title") OVER w AS f, last_value("Title") OVER w AS l, '
      'nth_value("Title", 2) OVER w AS s FROM "Tasks" WINDOW w AS (PARTITION BY "Status" '
      'ORDER BY "Seq") ORDER BY record_id'),
    c('SELECT record_id, last_value("Seq") OVER (PARTITION BY "Status" ORDER BY "Seq" ROWS '
      'BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS l FROM "Tasks" '
      'ORDER BY record_id'),
    c('SELECT record_id, sum("Points") OVER (ORDER BY "Points") AS s FROM "Tasks" '
      'ORDER BY record_id'),
    c('SELECT record_id, rank() OVER (ORDER BY "Status") AS r, dense_rank() OVER (ORDER BY '
      '"Status" DESC) AS d, row_number() OVER (PARTITION BY "Done" ORDER BY "Seq") AS n, '
      'ntile(3) OVER (ORDER BY "Seq") AS t FROM "Tasks" ORDER BY record_id'),
    c('SELECT record_id, percent_rank() OVER (ORDER BY "Points") AS p, cume_dist() OVER '
      '(ORDER BY "Points") AS c FROM "Tasks" ORDER BY record_id'),
    c('SELECT record_id, lag("Title") OVER (ORDER BY "Seq") AS prev, lead("Points", 2, 0) '
      'OVER (ORDER BY "Seq") AS next2 FROM "Tasks" ORDER BY record_id'),
    c('SELECT record_id, sum("Seq") OVER (ORDER BY "Seq" GROUPS BETWEEN 1 PRECEDING AND '
      'CURRENT ROW EXCLUDE CURRENT ROW) AS g FROM "Tasks" ORDER BY record_id'),
    c('SELECT record_id, count(*) OVER (PARTITION BY "Status") AS n, avg("Points") OVER '
      '(PARTITION BY "Status") AS a FROM "Tasks" ORDER BY record_id'),
    c('SELECT "Status", count(*) AS n, rank() OVER (ORDER BY count(*) DESC) AS r FROM '
      '"Tasks" GROUP BY "Status" ORDER BY "Status"'),
    # FILTER (WHERE …).
    c('SELECT count(*) FILTER (WHERE "Done") AS done, sum("Points") FILTER (WHERE "Points" '
      '> 1) AS big, count(DISTINCT "Status") FILTER (WHERE NOT "Done") AS open_statuses '
      'FROM "Tasks"'),
    c('SELECT "Status", count(*) FILTER (WHERE "Tags" = \'ui\') AS ui FROM "Tasks" GROUP BY '
      '"Status" ORDER BY 1'),
    c('SELECT record_id, count(*) FILTER (WHERE "Done") OVER (ORDER BY "Seq") AS d FROM '
      '"Tasks" ORDER BY record_id'),
    # GROUP BY rules.
    c('SELECT "Status", "Title" FROM "Tasks" GROUP BY "Status"', note="invalid"),
    c('SELECT "Title", count(*) FROM "Tasks"', note="invalid"),
    c('SELECT t.record_id, t."Title", count(n.record_id) AS notes FROM "Tasks" t LEFT JOIN '
      '"Notes" n ON n."Task" = t.record_id GROUP BY t.record_id ORDER BY t.record_id'),
    c('SELECT lower("Title") AS l, count(*) FROM "Tasks" GROUP BY lower("Title") '
      'ORDER BY 1'),
    c('SELECT "Done", "Points" > 2 AS big, count(*) FROM "Tasks" GROUP BY 1, 2 '
      'ORDER BY 1, 2'),
    c('SELECT "Status", count(*) AS n FROM "Tasks" GROUP BY "Status" HAVING n > 1',
      note="invalid"),
    c('SELECT "Title" FROM "Tasks" WHERE count(*) > 1', note="invalid"),
    c('SELECT max("Title") AS m, min("Due") AS d, max("Done"::int) AS b, min("Seq") AS s '
      'FROM "Tasks"'),
    c('SELECT count(*) AS n, max("Points") AS m FROM "Tasks" WHERE false'),
    # JSON.
    c('SELECT record_id, "Place" ->> \'full_address\' AS addr, "Place" -> \'name\' AS name, '
      '"Files" -> 0 ->> \'name\' AS first_file, jsonb_array_length("Files") AS files, '
      'jsonb_typeof("Place") AS kind FROM "Tasks" ORDER BY record_id'),
    c('SELECT record_id, "Place" FROM "Tasks" WHERE "Place" ->> \'name\' = $1 '
      'ORDER BY record_id', (T, "Office")),
    c('SELECT "Files" ->> 0 AS f, "Files" -> -1 -> \'size\' AS s, "Place"::text AS t FROM '
      '"Tasks" ORDER BY record_id'),
    # Quantified comparisons, LATERAL, NATURAL JOIN, date_trunc('quarter').
    c('SELECT "Title" FROM "Tasks" WHERE "Points" < ANY($1)', (f"{N}[]", [1, 2]),
      note="unsupported"),
    c('SELECT t."Title" FROM "Tasks" t, LATERAL (SELECT "Name" FROM "Projects") x',
      note="unsupported"),
    c('WITH a AS (SELECT record_id, "Title" FROM "Tasks"), b AS (SELECT record_id, "Status" '
      'FROM "Tasks") SELECT * FROM a NATURAL JOIN b ORDER BY record_id'),
    c('SELECT n."Body", t."Title" FROM "Notes" n NATURAL JOIN "Tasks" t ORDER BY 1, 2'),
    c('SELECT record_id, date_trunc(\'quarter\', "Due") AS q, date_trunc(\'year\', "Due") AS '
      'y, date_trunc(\'decade\', "Due") AS dec, date_trunc(\'hour\', "Due") AS h FROM "Tasks" '
      'ORDER BY record_id'),
]

FUNCTIONS = [
    c('SELECT record_id, length("Title") AS n, octet_length("Title") AS o, substr("Title", 2, '
      '3) AS s, substr("Title", -1, 3) AS neg, substring("Title" FROM 3) AS f, '
      'substring("Title", 0, 2) AS z FROM "Tasks" ORDER BY record_id'),
    c('SELECT record_id, strpos("Title", \'a\') AS p, position(\'i\' IN "Title") AS q, '
      'replace("Title", \'a\', \'A\') AS r, trim("Title") AS t, ltrim("Title", \' W\') AS lt, '
      'rtrim("Title", \'e \') AS rt, btrim("Title", \' \') AS bt, trim(both \'x\' FROM '
      '"Title") AS tx FROM "Tasks" ORDER BY record_id'),
    c('SELECT record_id, left("Title", 3) AS l, right("Title", 2) AS r, left("Title", -2) AS '
      'ln, right("Title", -3) AS rn, lpad("Title", 12, \'*\') AS lp, rpad("Title", 4) AS rp, '
      'repeat("Status", 2) AS rep, reverse("Title") AS rev FROM "Tasks" ORDER BY record_id'),
    c('SELECT record_id, split_part("Title", \' \', 2) AS s, split_part("Title", \' \', -1) AS '
      'e, starts_with("Title", \'W\') AS w, initcap("Title") AS i, md5("Title") AS m, '
      'ascii("Title") AS a, chr(65 + "Seq") AS ch FROM "Tasks" ORDER BY record_id'),
    c('SELECT record_id, abs("Points") AS a, ceiling("Points") AS c, exp("Seq" / 10.0) AS e, '
      'ln("Seq") AS l, log("Seq") AS lg, log10("Seq") AS l10, log(2, "Seq") AS lb, power('
      '"Seq", 2) AS p, pow(2, "Seq" / 4) AS q, cbrt("Seq") AS cb, pi() AS pi FROM "Tasks" '
      'ORDER BY record_id'),
    c('SELECT sqrt("Points") AS s FROM "Tasks" ORDER BY record_id'),
    c('SELECT ln("Points") AS s FROM "Tasks" ORDER BY record_id'),
    c('SELECT record_id, "Due" + INTERVAL \'1 month\' AS m, "Due" - INTERVAL \'2 hours 30 '
      'minutes\' AS h, "Due"::date + 30 AS d, "Due"::date - DATE \'2024-01-01\' AS days, '
      '"Due" + 3 * INTERVAL \'1 day\' AS three FROM "Tasks" ORDER BY record_id'),
    c('SELECT record_id, extract(quarter FROM "Due") AS q, extract(week FROM "Due") AS w, '
      'extract(isodow FROM "Due") AS i, extract(doy FROM "Due") AS d, extract(second FROM '
      '"Due") AS s, date_part(\'month\', "Due") AS m, extract(isoyear FROM "Due") AS iy, '
      'extract(century FROM "Due") AS c FROM "Tasks" ORDER BY record_id'),
    c('SELECT make_date(2024, 2, 29) AS d, make_timestamp(2024, 1, 31, 10, 5, 7.25) AS ts, '
      'to_timestamp(0) AS epoch, DATE \'2024-01-31\' + INTERVAL \'1 month\' AS m FROM '
      '"Projects" LIMIT 1'),
    c('SELECT make_date(2023, 2, 29) AS d FROM "Projects"'),
    # to_char with PostgreSQL's template patterns (English names, C locale).
    c('SELECT record_id, to_char("Due", \'YYYY-MM\') AS m, to_char("Due", \'FMMonth FMDDth, '
      'YYYY HH12:MI AM\') AS a, to_char("Due", \'Day Dy DDD D ID IW WW W Q CC J RM\') AS b, '
      'to_char("Due"::date, \'YYYY"年"MM"月"DD"日"\') AS c, to_char("Due", \'MONTH month MON '
      'mon DAY day DY dy IYYY IYY Y,YYY YY a.m. P.M. AD\') AS e FROM "Tasks" '
      'ORDER BY record_id'),
    c('SELECT to_char(now(), \'HH24:MI:SS.MS US FF3 SSSS\') AS t, to_char(now()::timestamp, '
      '\'yyyy-mm-dd hh24:mi:ss\') AS l, to_char("Start", \'TMMonth FMHH12 pm\') AS s FROM '
      '"Projects" ORDER BY record_id'),
    c('SELECT to_char("Due", \'YYYY-MM\') AS m, count(*) AS n FROM "Tasks" GROUP BY 1 '
      'ORDER BY 1'),
    c('SELECT to_char("Points", \'999.9\') AS x FROM "Tasks"', note="unsupported"),
    c('SELECT to_char("Due", \'HH24 TZ\') AS x FROM "Tasks"', note="unsupported"),
    c('SELECT to_char("Due", "Title") AS x FROM "Tasks"', note="unsupported"),
    c('SELECT TIMESTAMP \'2024-01-01 10:00\'::date AS d, DATE \'2024-02-29\'::timestamp AS t, '
      'date_part(\'minute\', DATE \'2024-02-29\') AS m FROM "Projects" LIMIT 1'),
    c('SELECT "Title"::int AS n FROM "Tasks"'),
    c('SELECT record_id, \'12\'::int + 1 AS a, \' 7 \'::bigint AS b, \'2.5\'::numeric AS c, '
      '\'1e3\'::float8 AS d, \'yes\'::boolean AS e, \'2024-02-29\'::date AS f, '
      '\'2024-02-29T10:00:00+02:00\'::timestamp AS g, \'2024-02-29T10:00:00+02:00\'::'
      'timestamptz AS h, \'{"a": 1}\'::jsonb AS j FROM "Projects" ORDER BY record_id'),
    c('SELECT "Budget"::numeric(6, 1) AS b, "Budget"::int AS i, "Budget"::text AS t FROM '
      '"Projects" ORDER BY record_id'),
    c('SELECT string_agg("Title", \', \' ORDER BY "Title", record_id) AS titles, '
      'array_agg("Seq" ORDER BY "Seq" DESC) AS seqs FROM "Tasks" WHERE "Done"'),
    c('SELECT "Status", string_agg("Title", \'|\' ORDER BY "Seq") AS t, array_agg("Done" '
      'ORDER BY "Seq") AS d FROM "Tasks" GROUP BY "Status" ORDER BY 1'),
    c('SELECT array_agg("Title" ORDER BY record_id) AS t FROM "Tasks" WHERE false'),
    # DISTINCT inside string_agg / array_agg, with and without ORDER BY.
    c('SELECT string_agg(DISTINCT "Status", \'|\' ORDER BY "Status") AS v FROM "Tasks"'),
    c('SELECT "Done", string_agg(DISTINCT lower("Title"), \',\' ORDER BY lower("Title") DESC) '
      'AS t, array_agg(DISTINCT "Status" ORDER BY "Status" NULLS FIRST) AS s, array_agg('
      'DISTINCT "Points" ORDER BY "Points" DESC) AS p FROM "Tasks" GROUP BY "Done" ORDER BY 1'),
    c('SELECT string_agg(DISTINCT "Status", \',\') AS s, array_agg(DISTINCT "Done") AS d, '
      'array_agg(DISTINCT "Seq" % 3) AS m FROM "Tasks"'),
    c('SELECT string_agg(DISTINCT "Status", \'|\' ORDER BY "Title") AS v FROM "Tasks"',
      note="invalid"),
    c('SELECT record_id, cardinality("Tags") AS n, array_length("Watchers", 1) AS w FROM '
      '"Tasks" ORDER BY record_id'),
    c('SELECT record_id, "Tags", "Watchers", "Project" FROM "Tasks" ORDER BY record_id'),
    c('SELECT "Status", "Done" FROM "Tasks" UNION SELECT "Kind", "Active" FROM "Projects" '
      'ORDER BY 1, 2'),
    c('SELECT "Title" FROM "Tasks" INTERSECT SELECT "Body" FROM "Notes" ORDER BY 1'),
    c('SELECT "Title" FROM "Tasks" EXCEPT SELECT "Body" FROM "Notes" ORDER BY 1'),
    c('SELECT "Seq" AS x FROM "Tasks" UNION ALL SELECT "Budget" FROM "Projects" ORDER BY 1'),
    c('SELECT 1 AS x FROM "Tasks" UNION SELECT 2 INTERSECT SELECT 2 ORDER BY 1'),
    c('(SELECT "Title" FROM "Tasks" ORDER BY "Seq" LIMIT 2) UNION ALL (SELECT "Name" FROM '
      '"Projects" ORDER BY record_id LIMIT 1) ORDER BY 1'),
    c('SELECT "Title" FROM "Tasks" WHERE "Points" BETWEEN 1 AND 3 ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Points" BETWEEN SYMMETRIC 3 AND 1 '
      'ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Points" IS DISTINCT FROM "Estimate" '
      'ORDER BY record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Done" IS NOT TRUE AND "Status" IS NOT NULL '
      'ORDER BY record_id'),
    c('SELECT (SELECT "Title" FROM "Tasks" t WHERE t."Project" = p.record_id) AS t FROM '
      '"Projects" p ORDER BY p.record_id'),
    c('SELECT (SELECT "Title" FROM "Tasks" t WHERE t."Seq" = 3) AS t, (SELECT max("Seq") '
      'FROM "Tasks") AS m FROM "Projects" p ORDER BY p.record_id'),
    c('SELECT "Title" FROM "Tasks" WHERE "Seq" = (SELECT "Seq" FROM "Tasks" WHERE "Done" '
      'ORDER BY "Seq" LIMIT 1)'),
]

CORPUS: list[Case] = SHAPES + KNOWN + FUNCTIONS
