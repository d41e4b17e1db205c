"""Run one query on both engines and bring both results to the invoke JSON's shape.

The local side is the platform's own path: analyse (as `basedb check` does), compile for
SQLite in the site's time zone, run on a read-only connection with the platform's
functions and authorizer, and shape the rows as invoke returns them.

The PostgreSQL side runs the author's SQL as written, on tables named as the Base
names them, with the parameters typed by their declared kinds (text, bigint, double
precision, boolean, date, timestamp and their arrays) and `SET TIME ZONE` to the site's
zone. Only what the platform adds to PostgreSQL is rewritten first, in PostgreSQL's own
terms: an empty multi-valued field is NULL, `field = x` is `x = ANY(field)`,
`field <> x` is `x <> ALL(field)`, `field IN S` (a list, a subquery, `= ANY(array)`) is
the OR over the values v of S of `v = ANY(field)`, IS NULL on one also matches an empty
array, `x IN (SELECT <array>)` means its elements, CURRENT_USER_ID() reads a session
setting, and the current time is pinned to the same instant on both sides.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from sqlglot import exp

from basedb.platform.storage.sql_compile import compile_for_sqlite
from basedb.platform.storage.sql_results import column_decoder
from basedb.sql import pgvalues as V
from basedb.sql.analysis import analyze_sql
from basedb.sql.model import SqlAnalysis
from basedb.sql.scope import is_all_call
from basedb.sql.sqlite.query import read_only_authorizer
from basedb.workspace.model import Catalog

NOW = datetime(2025, 1, 31, 1, 30, 15, 250000, tzinfo=UTC)
KIND_OIDS = {"TEXT": 25, "INT": 20, "NUMBER": 701, "BOOL": 16, "DATE": 1082,
             "DATETIME": 1114, "TEXT[]": 1009, "INT[]": 1016, "NUMBER[]": 1022}


@dataclass(frozen=True, slots=True)
class Case:
    """One query of the corpus, with its params as (kind, value) pairs."""

    sql: str
    params: tuple[tuple[str, Any], ...] = ()
    ordered: bool | None = None  # None: ordered when the query ends with ORDER BY
    note: str = ""

    @property
    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.params]

    @property
    def values(self) -> list[Any]:
        return [value for _, value in self.params]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one engine made of a query: rows and column names, or an error."""

    rows: list[list[Any]] | None = None
    names: list[str] | None = None
    error: str | None = None
    error_class: str = ""  # PostgreSQL's SQLSTATE class ("22" data, "42" rule, …)


# --------------------------------------------------------------------------- local

def analyse(case: Case, catalog: Catalog) -> SqlAnalysis:
    return analyze_sql(case.sql, catalog, len(case.params), param_kinds=case.kinds)


def run_local(conn: sqlite3.Connection, analysis: SqlAnalysis, case: Case, catalog: Catalog,
              zone: str) -> Outcome:
    try:
        compiled = compile_for_sqlite(analysis, catalog, timezone=zone)
    except Exception as error:  # a compile failure is a difference in itself
        return Outcome(error=f"compile: {type(error).__name__}: {error}", error_class="compile")
    conn.set_authorizer(read_only_authorizer(compiled))
    try:
        cursor = conn.execute(compiled.sql, compiled.parameters(case.values, "ou_ann",
                                                                now=NOW))
        rows = cursor.fetchall()
    except sqlite3.Error as error:
        return Outcome(error=f"{type(error).__name__}: {error}", error_class="run")
    finally:
        conn.set_authorizer(None)
    # As shape_result decodes them, but positionally: invoke's row objects would let a
    # repeated column name hide a value, which the comparison should still see.
    decoders = [column_decoder(column) for column in compiled.columns]
    return Outcome(rows=[[decode(cell) for decode, cell in zip(decoders, raw, strict=True)]
                         for raw in rows],
                   names=[column.name for column in compiled.columns])


# ----------------------------------------------------------------------- PostgreSQL

def oracle_sql(analysis: SqlAnalysis) -> str:
    """The author's query, with the platform's additions spelled in PostgreSQL."""
    assert analysis.tree is not None and analysis.resolution is not None
    tree = analysis.tree.copy()
    refs: dict[int, Any] = {}
    types: dict[int, str] = {}
    stars: dict[int, Any] = {}
    typing = analysis.typing
    for old, new in zip(analysis.tree.walk(), tree.walk(), strict=True):
        ref = analysis.resolution.columns.get(id(old))
        if ref is not None:
            refs[id(new)] = ref
        if id(old) in analysis.resolution.stars:
            stars[id(new)] = analysis.resolution.stars[id(old)]
        if typing is not None and id(old) in typing.types:
            types[id(new)] = typing.types[id(old)]

    def multi(node: Any) -> bool:
        while isinstance(node, exp.Paren):
            node = node.this
        ref = refs.get(id(node)) if isinstance(node, exp.Column) else None
        return ref is not None and ref.field is not None and ref.field.is_multi_valued

    def elements(node: Any) -> Any:
        # An empty multi-valued field is NULL (the dataset stores it so; '{}' too).
        return exp.Nullif(this=node.copy(), expression=exp.cast(exp.Literal.string("{}"),
                                                                "text[]"))

    def some_value_in(column: Any, rows: Any) -> Any:
        """`field IN S`: the OR over the values v of S of `v = ANY(field)`, with
        PostgreSQL's own three-valued OR (`true = ANY (…)`)."""
        test = exp.EQ(this=exp.column("v", table="__s"),
                      expression=exp.Any(this=exp.Paren(this=elements(column))))
        return exp.EQ(this=exp.true(), expression=exp.Any(this=exp.Subquery(this=exp.Select(
            expressions=[test], from_=exp.From(this=exp.Subquery(
                this=rows, alias=exp.TableAlias(this=exp.to_identifier("__s"),
                                                columns=[exp.to_identifier("v")])))))))

    def unnested(array: Any) -> Any:
        return exp.Select(expressions=[exp.Anonymous(this="unnest", expressions=[
            array.copy()])])

    def rewrite(node: Any) -> Any:
        if isinstance(node, exp.Select) and any(id(p) in stars for p in node.expressions):
            # `*` is the fields of a table (record_id is a pseudo-column, not among them).
            items = []
            for proj in node.expressions:
                for star in stars.get(id(proj), [proj]) if id(proj) in stars else [proj]:
                    if star is proj:
                        items.append(proj)
                        continue
                    table = exp.to_identifier(star.qualifier, quoted=True) \
                        if star.qualifier else None
                    items.append(exp.Column(this=exp.to_identifier(star.column.name,
                                                                   quoted=True), table=table))
            node.set("expressions", items)
            return node
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null) \
                and multi(node.this):
            test = exp.Paren(this=exp.Or(this=exp.Is(this=node.this.copy(),
                                                     expression=exp.Null()),
                                         expression=exp.EQ(this=exp.Anonymous(
                                             this="cardinality", expressions=[
                                                 node.this.copy()]),
                                             expression=exp.Literal.number(0))))
            return exp.Not(this=test) if node.args.get("negate") else test
        if isinstance(node, exp.In):
            query = node.args.get("query")
            if query is not None and _array_query(query, types):
                inner = query.this if isinstance(query, exp.Subquery) else query
                name = _output_name(inner)
                node.set("query", exp.Subquery(this=exp.Select(
                    expressions=[exp.Anonymous(this="unnest", expressions=[
                        exp.column(name, table="__s", quoted=True)])],
                    from_=exp.From(this=exp.Subquery(this=inner, alias=exp.TableAlias(
                        this=exp.to_identifier("__s")))))))
            if multi(node.this):
                if node.args.get("query"):
                    return some_value_in(node.this, node.args["query"].this.copy())
                return exp.Paren(this=exp.or_(*(exp.EQ(this=e.copy(), expression=exp.Any(
                    this=exp.Paren(this=elements(node.this)))) for e in node.expressions)))
            return node
        if isinstance(node, (exp.EQ, exp.NEQ)):
            for column, other in ((node.this, node.expression), (node.expression, node.this)):
                if not multi(column):
                    continue
                if isinstance(other, exp.Any) or is_all_call(other):
                    source = other.this if isinstance(other, exp.Any) else other.expressions[0]
                    while isinstance(source, exp.Paren):
                        source = source.this
                    if isinstance(source, exp.Subquery):
                        found = some_value_in(column, source.this.copy())
                    else:  # an array: NULL when it is NULL (`x = ANY(NULL)`)
                        found = exp.Case(ifs=[exp.If(
                            this=exp.Not(this=exp.Is(this=source.copy(),
                                                     expression=exp.Null())),
                            true=some_value_in(column, unnested(source)))])
                    return found if isinstance(other, exp.Any) else exp.Not(
                        this=exp.Paren(this=found))
                if isinstance(node, exp.EQ):  # x = ANY(field)
                    return exp.EQ(this=other.copy(), expression=exp.Any(
                        this=exp.Paren(this=elements(column))))
                return exp.NEQ(this=other.copy(), expression=exp.Anonymous(  # x <> ALL(field)
                    this="ALL", expressions=[exp.Paren(this=elements(column))]))
        if isinstance(node, (exp.CurrentTimestamp,)) and not node.args.get("this"):
            return exp.Anonymous(this="now", expressions=[])
        if isinstance(node, exp.CurrentDate):
            return exp.cast(exp.Anonymous(this="now", expressions=[]), "date")
        if isinstance(node, exp.Localtimestamp) and not node.args.get("this"):
            return exp.cast(exp.Anonymous(this="now", expressions=[]), "timestamp")
        return node

    tree = tree.transform(rewrite, copy=False)
    for distinct in list(tree.find_all(exp.Distinct)):
        if len(distinct.expressions) > 1:
            # sqlglot writes `f(DISTINCT a, b)` as a row value for PostgreSQL, which
            # string_agg refuses: keep it as written.
            written = ", ".join(e.sql(dialect="postgres") for e in distinct.expressions)
            distinct.replace(exp.Var(this=f"DISTINCT {written}"))
    return str(tree.sql(dialect="postgres"))


def _array_query(query: Any, types: dict[int, str]) -> bool:
    inner = query.this if isinstance(query, exp.Subquery) else query
    if not isinstance(inner, exp.Select) or len(inner.expressions) != 1:
        return False
    return types.get(id(inner.expressions[0]), "").endswith("[]")


def _output_name(select: Any) -> str:
    proj = select.expressions[0]
    if isinstance(proj, exp.Alias):
        return str(proj.alias)
    if isinstance(proj, exp.Column):
        return str(proj.name)
    return "?column?"


def pg_text(kind: str, value: Any) -> bytes | None:
    """A parameter value in PostgreSQL's text input format."""
    if value is None:
        return None
    if kind.endswith("[]"):
        parts = []
        for item in value:
            if item is None:
                parts.append("NULL")
            else:
                text = str(item)
                parts.append('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')
        return ("{" + ",".join(parts) + "}").encode()
    if kind == "BOOL":
        return b"true" if value else b"false"
    if kind == "NUMBER":
        return repr(float(value)).encode()
    return str(value).encode()


def run_postgres(conn: Any, sql: str, case: Case, zone: str) -> Outcome:
    import psycopg
    from psycopg.adapt import Transformer

    pgconn = conn.pgconn
    result = pgconn.exec_params(sql.encode(), [pg_text(k, v) for k, v in case.params],
                                [KIND_OIDS[k] for k in case.kinds])
    status = result.status
    if status not in (psycopg.pq.ExecStatus.TUPLES_OK, psycopg.pq.ExecStatus.COMMAND_OK):
        state = (result.error_field(psycopg.pq.DiagnosticField.SQLSTATE) or b"").decode()
        message = (result.error_message or b"").decode(errors="replace").strip()
        conn.execute("ROLLBACK") if conn.info.transaction_status != 0 else None
        return Outcome(error=f"{state}: {message}", error_class=state[:2])
    transformer = Transformer(conn)
    transformer.set_pgresult(result)
    rows = transformer.load_rows(0, result.ntuples, tuple)
    names = [result.fname(i).decode() for i in range(result.nfields)]
    return Outcome(rows=[[normalise(value, zone) for value in row] for row in rows],
                   names=names)


def normalise(value: Any, zone: str) -> Any:
    """A PostgreSQL value as the invoke JSON shows it."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, Decimal):
        if not value.is_finite():
            return "NaN" if value.is_nan() else ("Infinity" if value > 0 else "-Infinity")
        as_float = float(f"{float(value):.15g}")
        return int(as_float) if as_float.is_integer() and abs(as_float) <= 2**53 else as_float
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return int(value) if value.is_integer() and abs(value) <= 2**53 else value
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(V.zone_info(zone)).replace(tzinfo=None)
        return V.format_timestamp(value)
    if isinstance(value, date):
        return V.format_date(value)
    if isinstance(value, list):
        return [normalise(v, zone) for v in value]
    return value


def setup_session(conn: Any, zone: str) -> None:
    conn.execute(f"SET TIME ZONE '{zone}'")
    conn.execute("SET basedb.user_id = 'ou_ann'")
    conn.execute("SET search_path = basedb_pin, public, pg_catalog")
