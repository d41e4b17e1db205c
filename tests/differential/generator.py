"""A grammar that writes random, typed Database Function queries over the dataset.

Every query is deterministic in PostgreSQL's own terms (a total ORDER BY wherever rows
are ordered or limited, window orders that decide every row, no aggregate whose result
depends on input order without ORDER BY), so any difference between the engines is a
real one. The grammar covers joins (multi-valued links included), CTEs, derived tables,
set operations, DISTINCT and DISTINCT ON, aggregates with FILTER, GROUP BY and HAVING,
window functions with frames, CASE, COALESCE and NULLIF, string, number and date/time
functions, casts, LIKE / ILIKE, BETWEEN, IN, EXISTS, scalar subqueries, parameters of
every kind, the platform's any-of comparisons on multi-valued fields, and unnest() of
them in a SELECT list.

    for case in QueryGenerator(seed=1).cases(3000): …
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from tests.differential.engines import Case

TEXT, NUM, INT, BOOL, TS, DATE = "text", "num", "int", "bool", "ts", "date"

# Columns by type, per alias of the FROM items the grammar uses.
TASK_COLUMNS = {
    TEXT: ['"Title"', '"Notes"', '"Status"', "record_id", '"Owner"'],
    NUM: ['"Points"', '"Estimate"'],
    INT: ['"Seq"'],
    BOOL: ['"Done"'],
    TS: ['"Due"'],
}
PROJECT_COLUMNS = {TEXT: ['"Name"', '"Kind"', '"Lead"'], NUM: ['"Budget"'], TS: ['"Start"'],
                   BOOL: ['"Active"']}
NOTE_COLUMNS = {TEXT: ['"Body"', '"Author"'], NUM: ['"Score"'], TS: ['"Written"']}

TEXT_LITERALS = ["'Write API'", "'write api'", "'x'", "'Done'", "'Todo'", "'api'", "'é'",
                 "'任务一'", "''", "' padded '", "'Apple'", "'50% done'", "'a\\b'"]
NUM_LITERALS = ["0", "1", "2", "2.5", "-1.5", "0.5", "10", "3.14159", "100", "-7", "0.1"]
INT_LITERALS = ["0", "1", "2", "3", "5", "7", "10", "-3", "40"]
TS_LITERALS = ["'2024-05-17 10:30:00'", "'2024-02-29'", "'2024-06-01 00:00:00'",
               "TIMESTAMP '2024-03-01 08:30'", "'2025-01-01'"]
PATTERNS = ["'%a%'", "'W%'", "'%API'", "'_ix%'", "'%\\%%'", "'fix\\_%'", "'%e'", "'A%'",
            "'%É%'", "'%'", "'__'", "'%任%'"]
UNITS = ["'day'", "'month'", "'year'", "'hour'", "'week'", "'quarter'", "'minute'"]
INTERVALS = ["INTERVAL '1 day'", "INTERVAL '2 hours'", "INTERVAL '1 month'",
             "INTERVAL '1 year 2 mons'", "INTERVAL '90 minutes'", "INTERVAL '-3 days'",
             "INTERVAL '1 week'"]
TO_CHAR_TEMPLATES = ["'YYYY-MM'", "'YYYY-MM-DD HH24:MI:SS'", "'FMMonth FMDDth'",
                     "'Dy, DD Mon YYYY'", "'HH12:MI AM'", "'IYYY-\"W\"IW'", "'Q'",
                     "'yyyymmdd'", "'DDD D ID WW'", "'Day'", "'MS US'"]
FIELDS = ["year", "month", "day", "hour", "minute", "dow", "doy", "quarter", "week",
          "isodow", "epoch", "second"]


class QueryGenerator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.params: list[tuple[str, object]] = []
        self.columns: dict[str, list[str]] = TASK_COLUMNS
        self.prefix = "t."

    # ------------------------------------------------------------------ helpers

    def pick(self, items: list[str]) -> str:
        return self.rng.choice(items)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def param(self, kind: str, value: object) -> str:
        self.params.append((kind, value))
        return f"${len(self.params)}"

    def column(self, type_: str) -> str | None:
        names = self.columns.get(type_)
        return self.prefix + self.pick(names) if names else None

    # ------------------------------------------------------------------ expressions

    def expr(self, type_: str, depth: int = 0) -> str:
        makers: dict[str, Callable[[int], str]] = {
            TEXT: self.text, NUM: self.number, INT: self.integer, BOOL: self.boolean,
            TS: self.timestamp, DATE: self.date}
        return makers[type_](depth)

    def leaf(self, type_: str) -> str:
        found = self.column(type_) if self.chance(0.75) else None
        if found is not None:
            return found
        return {TEXT: lambda: self.pick(TEXT_LITERALS), NUM: lambda: self.pick(NUM_LITERALS),
                INT: lambda: self.pick(INT_LITERALS), BOOL: lambda: self.pick(
                    ["true", "false"]), TS: lambda: self.pick(TS_LITERALS) + "::timestamp",
                DATE: lambda: "DATE '2024-05-17'"}[type_]()

    def text(self, depth: int) -> str:
        if depth > 2 or self.chance(0.35):
            return self.leaf(TEXT)
        d = depth + 1
        options = [
            lambda: f"lower({self.text(d)})", lambda: f"upper({self.text(d)})",
            lambda: f"substr({self.text(d)}, {self.pick(['1', '2', '-1', '0'])}, "
                    f"{self.pick(['1', '3', '5'])})",
            lambda: f"replace({self.text(d)}, 'a', 'o')",
            lambda: f"trim({self.text(d)})",
            lambda: f"concat({self.text(d)}, '-', "
                    f"{self.expr(self.pick([NUM, INT, BOOL]), d)})",
            lambda: f"({self.text(d)} || {self.text(d)})",
            lambda: f"left({self.text(d)}, {self.pick(['2', '-2', '0'])})",
            lambda: f"right({self.text(d)}, {self.pick(['3', '-1'])})",
            lambda: f"lpad({self.text(d)}, 8, '*')", lambda: f"initcap({self.text(d)})",
            lambda: f"split_part({self.text(d)}, ' ', {self.pick(['1', '2', '-1'])})",
            lambda: f"reverse({self.text(d)})", lambda: f"coalesce({self.text(d)}, "
                                                       f"{self.pick(TEXT_LITERALS)})",
            lambda: f"nullif({self.text(d)}, {self.pick(TEXT_LITERALS)})",
            lambda: f"CASE WHEN {self.boolean(d)} THEN {self.text(d)} ELSE "
                    f"{self.text(d)} END",
            lambda: f"({self.integer(d)})::text",
            lambda: f"{self.timestamp(d)}::date::text",
            lambda: f"concat_ws('|', {self.text(d)}, {self.text(d)})",
            lambda: f"({self.number(d)})::text",
            lambda: f"({self.boolean(d)})::text",
            lambda: f"repeat({self.text(d)}, 2)",
            lambda: f"md5({self.text(d)})",
            lambda: f"to_char({self.timestamp(d)}, {self.pick(TO_CHAR_TEMPLATES)})",
        ]
        return self.rng.choice(options)()

    def number(self, depth: int) -> str:
        if depth > 2 or self.chance(0.35):
            return self.leaf(NUM)
        d = depth + 1
        options = [
            lambda: f"({self.number(d)} + {self.number(d)})",
            lambda: f"({self.number(d)} - {self.integer(d)})",
            lambda: f"({self.number(d)} * {self.pick(NUM_LITERALS)})",
            lambda: f"({self.number(d)} / {self.pick(['2', '4', '0.5', '3', '-8'])})",
            lambda: f"abs({self.number(d)})", lambda: f"round({self.number(d)})",
            lambda: f"ceil({self.number(d)})", lambda: f"floor({self.number(d)})",
            lambda: f"trunc({self.number(d)})",
            lambda: f"coalesce({self.number(d)}, {self.pick(NUM_LITERALS)})",
            lambda: f"greatest({self.number(d)}, {self.number(d)})",
            lambda: f"least({self.number(d)}, {self.pick(NUM_LITERALS)})",
            lambda: f"CASE WHEN {self.boolean(d)} THEN {self.number(d)} ELSE "
                    f"{self.integer(d)} END",
            lambda: f"nullif({self.number(d)}, {self.pick(NUM_LITERALS)})",
            lambda: f"round(({self.number(d)})::numeric, {self.pick(['0', '1', '2'])})",
            lambda: f"sqrt(abs({self.number(d)}))",
            lambda: f"power(abs({self.number(d)}) + 1, {self.pick(['2', '0.5'])})",
            lambda: f"extract({self.pick(FIELDS)} FROM {self.timestamp(d)})",
            lambda: f"date_part('{self.pick(FIELDS)}', {self.timestamp(d)})",
            lambda: f"sign({self.number(d)})",
            lambda: f"({self.integer(d)} / 4.0)",
            lambda: f"{self.text_number(d)}",
        ]
        return self.rng.choice(options)()

    def text_number(self, depth: int) -> str:
        return f"length({self.text(depth)})::float8"

    def integer(self, depth: int) -> str:
        if depth > 2 or self.chance(0.4):
            return self.leaf(INT)
        d = depth + 1
        options = [
            lambda: f"({self.integer(d)} + {self.integer(d)})",
            lambda: f"({self.integer(d)} * {self.pick(INT_LITERALS)})",
            lambda: f"({self.integer(d)} / {self.pick(['2', '3', '-4', '7'])})",
            lambda: f"({self.integer(d)} % {self.pick(['2', '3', '5'])})",
            lambda: f"length({self.text(d)})", lambda: f"strpos({self.text(d)}, 'a')",
            lambda: f"abs({self.integer(d)})",
            lambda: f"coalesce({self.integer(d)}, {self.pick(INT_LITERALS)})",
            lambda: f"({self.date(d)} - DATE '2024-01-01')",
            lambda: f"CASE WHEN {self.boolean(d)} THEN 1 ELSE 0 END",
            lambda: f"({self.number(d)})::int",
            lambda: f"round(({self.number(d)})::numeric)::int",
            lambda: f"mod({self.integer(d)}, {self.pick(['3', '-5'])})",
            lambda: f"octet_length({self.text(d)})",
        ]
        return self.rng.choice(options)()

    def timestamp(self, depth: int) -> str:
        if depth > 2 or self.chance(0.4):
            return self.leaf(TS)
        d = depth + 1
        options = [
            lambda: f"({self.timestamp(d)} + {self.pick(INTERVALS)})",
            lambda: f"({self.timestamp(d)} - {self.pick(INTERVALS)})",
            lambda: f"date_trunc({self.pick(UNITS)}, {self.timestamp(d)})",
            lambda: f"coalesce({self.timestamp(d)}, {self.pick(TS_LITERALS)})",
            lambda: f"({self.date(d)} + {self.pick(INTERVALS)})",
            lambda: f"{self.date(d)}::timestamp",
            lambda: f"CASE WHEN {self.boolean(d)} THEN {self.timestamp(d)} END",
            lambda: f"greatest({self.timestamp(d)}, {self.pick(TS_LITERALS)})",
            lambda: f"({self.timestamp(d)} + {self.pick(['2', '-1', '0.5'])} * "
                    f"{self.pick(INTERVALS)})",
        ]
        return self.rng.choice(options)()

    def date(self, depth: int) -> str:
        d = depth + 1
        options = [
            lambda: f"{self.timestamp(d)}::date", lambda: "CURRENT_DATE",
            lambda: f"({self.timestamp(d)}::date + {self.pick(['1', '-30', '365'])})",
            lambda: f"date({self.timestamp(d)})",
            lambda: "DATE '2024-02-29'",
            lambda: f"make_date(2024, {self.pick(['1', '2', '12'])}, {self.pick(['1', '28'])})",
        ]
        return self.rng.choice(options)()

    def boolean(self, depth: int) -> str:
        if depth > 2 or self.chance(0.15):
            return self.leaf(BOOL)
        d = depth + 1
        op = self.pick(["=", "<>", "<", "<=", ">", ">="])
        options = [
            lambda: f"{self.text(d)} {op} {self.text(d)}",
            lambda: f"{self.number(d)} {op} {self.number(d)}",
            lambda: f"{self.integer(d)} {op} {self.number(d)}",
            lambda: f"{self.timestamp(d)} {op} {self.pick(TS_LITERALS)}",
            lambda: f"{self.timestamp(d)} {op} now()",
            lambda: f"{self.date(d)} {op} CURRENT_DATE",
            lambda: f"{self.expr(self.pick([TEXT, NUM, TS, INT]), d)} IS "
                    f"{self.pick(['NULL', 'NOT NULL'])}",
            lambda: f"{self.text(d)} {self.pick(['LIKE', 'NOT LIKE', 'ILIKE', 'NOT ILIKE'])} "
                    f"{self.pick(PATTERNS)}",
            lambda: f"{self.number(d)} BETWEEN {self.pick(NUM_LITERALS)} AND "
                    f"{self.pick(NUM_LITERALS)}",
            lambda: f"{self.text(d)} IN ({self.pick(TEXT_LITERALS)}, "
                    f"{self.pick(TEXT_LITERALS)})",
            lambda: f"{self.integer(d)} NOT IN (1, 2, 3)",
            lambda: f"({self.boolean(d)} AND {self.boolean(d)})",
            lambda: f"({self.boolean(d)} OR {self.boolean(d)})",
            lambda: f"NOT ({self.boolean(d)})",
            lambda: f"{self.number(d)} IS DISTINCT FROM {self.number(d)}",
            lambda: f"starts_with({self.text(d)}, 'W')",
            lambda: f"({self.boolean(d)}) IS {self.pick(['TRUE', 'NOT TRUE', 'FALSE'])}",
            lambda: self.multi_valued(),
            lambda: self.with_param(),
        ]
        return self.rng.choice(options)()

    def multi_valued(self) -> str:
        if self.prefix != "t.":
            return "true"
        tag = self.pick(["'ui'", "'api'", "'Docs'", "'urgent'"])
        project = self.pick(["'recP1'", "'recP2'", "'recP9'"])
        field = self.pick(["Tags", "Watchers", "Project"])
        null = self.pick(["NULL", "NOT NULL"])
        negate = self.pick(["", "NOT "])
        other = "'x'"
        active = ['p."Active"', 'p."Active" OR p."Active" IS NULL', "false"]
        options = [
            lambda: f't."Tags" = {tag}', lambda: f't."Tags" <> {tag}',
            lambda: 't."Tags" IN (\'ui\', \'Docs\')', lambda: 't."Tags" NOT IN (\'api\')',
            lambda: 't."Watchers" = CURRENT_USER_ID()', lambda: 't."Owner" = CURRENT_USER_ID()',
            lambda: f't."Project" = {project}', lambda: f't."{field}" IS {null}',
            lambda: f't."Tags" = ANY({self.param("TEXT[]", self.tags())})',
            lambda: f't."Status" <> ALL({self.param("TEXT[]", ["Done", "Todo"])})',
            lambda: 'cardinality(t."Tags") >= 2',
            # NOT and NULL: an empty field is NULL, and so is a comparison with it.
            lambda: f'NOT (t."{field}" = {self.multi_value(field)})',
            lambda: f'NOT (t."{field}" <> {self.multi_value(field)})',
            lambda: f'(t."{field}" = {self.multi_value(field)}) IS {self.truth()}',
            lambda: f'NOT (t."Tags" IN ({tag}, {self.pick(["NULL", other])}))',
            lambda: f't."Tags" NOT IN ({tag}, NULL)',
            lambda: f'{negate}(t."Tags" = ANY({self.param("TEXT[]", self.tags_or_null())}))',
            lambda: f'{negate}(t."Watchers" <> ALL('
                    f'{self.param("TEXT[]", self.rng.choice([["ou_ann", None], ["ou_bob"]]))}))',
            lambda: f'{negate}(t."Project" IN (SELECT p.record_id FROM "Projects" p WHERE '
                    f'{self.pick(active)}))',
            lambda: f'{negate}(t."Watchers" = t."Owner")',
        ]
        return self.rng.choice(options)()

    def multi_value(self, field: str) -> str:
        return {"Tags": self.pick(["'ui'", "'api'", "NULL::text"]),
                "Watchers": self.pick(["CURRENT_USER_ID()", "'ou_bob'", 't."Owner"']),
                "Project": self.pick(["'recP1'", "'recP2'"])}[field]

    def truth(self) -> str:
        return self.pick(["NULL", "NOT NULL", "TRUE", "NOT TRUE", "FALSE", "NOT FALSE"])

    def tags_or_null(self) -> list[str | None] | None:
        return self.rng.choice([self.tags(), ["ui", None], [], None])

    def tags(self) -> list[str]:
        return self.rng.sample(["ui", "api", "x", "Docs"], 2)

    def with_param(self) -> str:
        kind = self.pick(["TEXT", "NUMBER", "INT", "DATETIME", "DATE", "BOOL"])
        column = {"TEXT": TEXT, "NUMBER": NUM, "INT": INT, "DATETIME": TS, "DATE": TS,
                  "BOOL": BOOL}[kind]
        value = {"TEXT": self.rng.choice(["Write API", "Done", None, "x"]),
                 "NUMBER": self.rng.choice([1.5, 2, -1, None]),
                 "INT": self.rng.choice([1, 3, 20, None]),
                 "DATETIME": self.rng.choice(["2024-05-17 10:30:00", "2024-06-01 00:00:00"]),
                 "DATE": self.rng.choice(["2024-02-29", "2024-06-01"]),
                 "BOOL": self.rng.choice([True, False, None])}[kind]
        target = self.column(column) or self.leaf(column)
        mark = self.param(kind, value)
        if value is None and self.chance(0.7):
            return f"({mark} IS NULL OR {target} = {mark})"
        return f"{target} {self.pick(['=', '<>', '>=', '<'])} {mark}"

    # ------------------------------------------------------------------ queries

    def cases(self, count: int) -> Iterator[Case]:
        shapes = [self.projection, self.projection, self.aggregate, self.aggregate,
                  self.window, self.join, self.set_operation, self.distinct, self.cte,
                  self.subquery]
        for _ in range(count):
            self.params = []
            self.columns, self.prefix = TASK_COLUMNS, "t."
            sql = self.rng.choice(shapes)()
            yield Case(sql, tuple(self.params))

    def projection(self) -> str:
        items = [f"{self.expr(self.pick([TEXT, NUM, INT, BOOL, TS, DATE]))} AS c{i}"
                 for i in range(self.rng.randint(1, 4))]
        where = f" WHERE {self.boolean(0)}" if self.chance(0.7) else ""
        limit = f" LIMIT {self.rng.randint(0, 12)}" if self.chance(0.3) else ""
        offset = f" OFFSET {self.param('INT', self.rng.randint(0, 5))}" if self.chance(
            0.15) else ""
        order = "t.record_id" if self.chance(0.6) else f"c0 {self.pick(['ASC', 'DESC'])}" \
            f"{self.pick(['', ' NULLS FIRST', ' NULLS LAST'])}, t.record_id"
        return f'SELECT {", ".join(items)} FROM "Tasks" t{where} ORDER BY {order}{limit}{offset}'

    def aggregate(self) -> str:
        keys = [f"{self.expr(self.pick([TEXT, BOOL, INT, DATE]), 1)}"
                for _ in range(self.rng.randint(0, 2))]
        aggregates = []
        for i in range(self.rng.randint(1, 3)):
            filt = f" FILTER (WHERE {self.boolean(1)})" if self.chance(0.25) else ""
            agg = self.rng.choice([
                lambda: "count(*)", lambda: f"count({self.expr(self.pick([TEXT, NUM]), 1)})",
                lambda: f"count(DISTINCT {self.text(1)})", lambda: f"sum({self.number(1)})",
                lambda: f"avg({self.number(1)})", lambda: f"sum({self.integer(1)})",
                lambda: f"avg({self.integer(1)})",
                lambda: f"min({self.expr(self.pick([TEXT, NUM, TS, DATE]), 1)})",
                lambda: f"max({self.expr(self.pick([TEXT, NUM, TS, INT]), 1)})",
                lambda: f"bool_and({self.boolean(1)})", lambda: f"bool_or({self.boolean(1)})",
                lambda: f"string_agg({self.text(1)}, ',' ORDER BY {self.text(1)}, t.record_id)",
                lambda: f"array_agg({self.expr(self.pick([TEXT, INT, BOOL]), 1)} ORDER BY "
                        "t.record_id)",
                lambda: f"round(avg({self.number(1)})::numeric, 2)",
                lambda: self.distinct_aggregate(),
            ])()
            aggregates.append(f"{agg}{filt} AS a{i}")
        where = f" WHERE {self.boolean(1)}" if self.chance(0.5) else ""
        items = [f"{k} AS k{i}" for i, k in enumerate(keys)] + aggregates
        group = f" GROUP BY {', '.join(keys)}" if keys else ""
        having = f" HAVING count(*) > {self.pick(['0', '1', '3'])}" if keys and self.chance(
            0.3) else ""
        order = f" ORDER BY {', '.join(f'k{i}' for i in range(len(keys)))}" if keys else ""
        return f'SELECT {", ".join(items)} FROM "Tasks" t{where}{group}{having}{order}'

    def distinct_aggregate(self) -> str:
        """DISTINCT with ORDER BY inside an aggregate: it may order only by its
        arguments, so the order is total."""
        value = self.expr(self.pick([TEXT, INT, BOOL]), 1)
        direction = self.pick(["", " DESC", " NULLS FIRST", " DESC NULLS LAST"])
        if self.chance(0.5):
            value = self.text(1)
            return f"string_agg(DISTINCT {value}, ',' ORDER BY {value}{direction})"
        return f"array_agg(DISTINCT {value} ORDER BY {value}{direction})"

    def window(self) -> str:
        partition = f"PARTITION BY {self.expr(self.pick([TEXT, BOOL]), 2)} " if self.chance(
            0.6) else ""
        unique = self.pick(['t."Seq"', "t.record_id", 't."Seq" DESC'])
        ties = self.pick(['t."Status"', 't."Done"', 't."Points"', 't."Due" DESC NULLS LAST'])
        frame = self.pick(["", " ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
                           " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
                           " ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
                           " GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW",
                           " RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"])
        value = self.expr(self.pick([NUM, INT, TEXT]), 2)
        number = self.expr(self.pick([NUM, INT]), 2)
        function = self.rng.choice([
            lambda: f"row_number() OVER ({partition}ORDER BY {unique})",
            lambda: f"rank() OVER ({partition}ORDER BY {ties})",
            lambda: f"dense_rank() OVER ({partition}ORDER BY {ties})",
            lambda: f"percent_rank() OVER ({partition}ORDER BY {ties})",
            lambda: f"cume_dist() OVER ({partition}ORDER BY {ties})",
            lambda: f"ntile({self.pick(['2', '3', '5'])}) OVER ({partition}ORDER BY {unique})",
            lambda: f"lag({value}) OVER ({partition}ORDER BY {unique})",
            lambda: f"lead({value}, 2) OVER ({partition}ORDER BY {unique})",
            lambda: f"first_value({value}) OVER ({partition}ORDER BY {unique}{frame})",
            lambda: f"last_value({value}) OVER ({partition}ORDER BY {unique}{frame})",
            lambda: f"sum({number}) OVER ({partition}ORDER BY {unique}{frame})",
            lambda: f"count(*) OVER ({partition.strip()})",
            lambda: f"max({value}) OVER ({partition}ORDER BY {ties})",
            lambda: f"avg({number}) OVER ({partition.strip()})",
        ])()
        where = f" WHERE {self.boolean(1)}" if self.chance(0.3) else ""
        return f'SELECT t.record_id, {function} AS w FROM "Tasks" t{where} ORDER BY t.record_id'

    def join(self) -> str:
        kind = self.pick(["JOIN", "LEFT JOIN"])
        if self.chance(0.5):
            on = self.pick(['t."Project" = p.record_id', 'p.record_id = t."Project"',
                            't."Owner" = p."Lead"'])
            self.columns, self.prefix = PROJECT_COLUMNS, "p."
            right = f"{self.expr(self.pick([TEXT, NUM, BOOL]), 1)} AS r"
            self.columns, self.prefix = TASK_COLUMNS, "t."
            left = f"{self.expr(self.pick([TEXT, NUM, INT]), 1)} AS l"
            return (f'SELECT {left}, {right} FROM "Tasks" t {kind} "Projects" p ON {on}'
                    f' ORDER BY t.record_id, p.record_id')
        on = self.pick(['n."Task" = t.record_id', 't.record_id = n."Task" AND n."Author" = '
                        'CURRENT_USER_ID()'])
        self.columns, self.prefix = NOTE_COLUMNS, "n."
        right = f"{self.expr(self.pick([TEXT, NUM, TS]), 1)} AS r"
        self.columns, self.prefix = TASK_COLUMNS, "t."
        left = f"{self.expr(self.pick([TEXT, NUM]), 1)} AS l"
        where = f" WHERE {self.boolean(1)}" if self.chance(0.4) else ""
        return (f'SELECT {left}, {right} FROM "Tasks" t {kind} "Notes" n ON {on}{where}'
                " ORDER BY t.record_id, n.record_id")

    def set_operation(self) -> str:
        op = self.pick(["UNION", "UNION ALL", "INTERSECT", "EXCEPT"])
        type_ = self.pick([TEXT, NUM, INT, TS])
        left = f'SELECT {self.expr(type_, 1)} AS v FROM "Tasks" t WHERE {self.boolean(1)}'
        self.columns, self.prefix = {TEXT: PROJECT_COLUMNS[TEXT], NUM: PROJECT_COLUMNS[NUM],
                                     TS: PROJECT_COLUMNS[TS], INT: []}, "p."
        right = f'SELECT {self.expr(type_, 1)} FROM "Projects" p'
        return f"{left} {op} {right} ORDER BY 1"

    def distinct(self) -> str:
        if self.chance(0.5):
            value = self.expr(self.pick([TEXT, BOOL, INT]), 1)
            return f'SELECT DISTINCT {value} AS d FROM "Tasks" t ORDER BY 1'
        key = self.expr(self.pick([TEXT, BOOL]), 2)
        other = self.expr(self.pick([NUM, TEXT, TS]), 1)
        direction = self.pick(["", " DESC", " NULLS FIRST", " DESC NULLS LAST"])
        return (f'SELECT DISTINCT ON ({key}) {key} AS k, {other} AS v, t.record_id FROM '
                f'"Tasks" t ORDER BY {key}, {other}{direction}, t.record_id')

    def cte(self) -> str:
        value = self.expr(self.pick([TEXT, NUM, INT]), 1)
        flag = self.boolean(1)
        body = f'SELECT t.record_id AS id, {value} AS v, {flag} AS f FROM "Tasks" t'
        outer = self.pick([
            "SELECT id, v FROM c WHERE f ORDER BY id",
            "SELECT f, count(*) AS n FROM c GROUP BY f ORDER BY f",
            "SELECT c.id, c.v FROM c JOIN c AS d ON d.id = c.id ORDER BY c.id",
            "SELECT id FROM c WHERE v IS NOT NULL ORDER BY v, id",
        ])
        return f"WITH c AS ({body}) {outer}"

    def subquery(self) -> str:
        return self.rng.choice([
            lambda: (f'SELECT t."Title", (SELECT count(*) FROM "Notes" n WHERE n."Task" = '
                     f't.record_id AND {self.note_condition()}) AS n FROM "Tasks" t '
                     "ORDER BY t.record_id"),
            lambda: (f'SELECT t.record_id FROM "Tasks" t WHERE EXISTS (SELECT 1 FROM "Notes" '
                     f'n WHERE n."Task" = t.record_id AND {self.note_condition()}) '
                     "ORDER BY 1"),
            lambda: (f'SELECT t.record_id FROM "Tasks" t WHERE {self.number(1)} > (SELECT '
                     f'avg(p."Budget") / 100 FROM "Projects" p) ORDER BY 1'),
            lambda: (f'SELECT x.v, x.id FROM (SELECT {self.expr(self.pick([TEXT, NUM]), 1)} AS '
                     f'v, t.record_id AS id FROM "Tasks" t) AS x WHERE x.v IS NOT NULL '
                     "ORDER BY x.id"),
            lambda: ('SELECT p."Name" FROM "Projects" p WHERE p.record_id IN (SELECT '
                     f't."Project" FROM "Tasks" t WHERE {self.boolean(1)}) ORDER BY p.record_id'),
            lambda: (f'SELECT p."Name" FROM "Projects" p WHERE p.record_id '
                     f'{self.pick(["IN", "NOT IN"])} (SELECT unnest(t."Project") FROM "Tasks" t '
                     f'WHERE {self.boolean(1)}) ORDER BY p.record_id'),
            lambda: (f'SELECT t.record_id FROM "Tasks" t WHERE t.record_id '
                     f'{self.pick(["IN", "NOT IN"])} (SELECT unnest(n."Task") FROM "Notes" n '
                     f'WHERE {self.note_condition()}) ORDER BY 1'),
            lambda: (f'SELECT t.record_id, unnest(t."{self.pick(["Tags", "Watchers"])}") AS e '
                     f'FROM "Tasks" t WHERE {self.boolean(1)} ORDER BY 1, 2'),
        ])()

    def note_condition(self) -> str:
        self.columns, self.prefix = NOTE_COLUMNS, "n."
        found = self.boolean(2)
        self.columns, self.prefix = TASK_COLUMNS, "t."
        return found
