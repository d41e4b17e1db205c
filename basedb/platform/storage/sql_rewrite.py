"""Rewrite an analysed Database Function tree (a private copy) for SQLite.

Base names become physical names (`basedb.platform.storage.physical`), multi-valued fields get
"any element" semantics through json_each, `= ANY($n)` / `<> ALL($n)` read an array
parameter bound as JSON text, and the few PostgreSQL constructs sqlglot does not carry
over to SQLite (date_trunc, EXTRACT, concat, array lengths, interval arithmetic) are
expressed with SQLite's own functions. Parameters become named markers that the
compiler turns into `?`; string interpolation is never used.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from basedb.check.sql.model import ColumnRef, SqlAnalysis, StarColumn
from basedb.check.sql.scope import is_all_call, strip_casts
from basedb.platform.storage import physical
from basedb.platform.storage.sql_query import CompileError

_TRUNC_FORMATS = {
    "YEAR": "%Y-01-01 00:00:00", "MONTH": "%Y-%m-01 00:00:00", "DAY": "%Y-%m-%d 00:00:00",
    "HOUR": "%Y-%m-%d %H:00:00", "MINUTE": "%Y-%m-%d %H:%M:00",
    "SECOND": "%Y-%m-%d %H:%M:%S",
}
_EXTRACT_FORMATS = {"YEAR": "%Y", "MONTH": "%m", "DAY": "%d", "HOUR": "%H", "MINUTE": "%M",
                    "SECOND": "%S", "DOW": "%w", "DOY": "%j", "EPOCH": "%s"}
_INTERVAL_UNITS = {"YEAR": "years", "MONTH": "months", "WEEK": "days", "DAY": "days",
                   "HOUR": "hours", "MINUTE": "minutes", "SECOND": "seconds"}


_COMPARISONS = (exp.EQ, exp.NEQ, exp.In, exp.Is, exp.GT, exp.GTE, exp.LT, exp.LTE)


def _unit(node: Any) -> str:
    text = node.name if isinstance(node, exp.Expression) else str(node or "")
    text = text.strip("'\"").upper()
    return text[:-1] if text.endswith("S") and text[:-1] in _INTERVAL_UNITS else text


def _quoted(name: str) -> exp.Identifier:
    return exp.Identifier(this=name, quoted=True)


def _call(name: str, *args: Any) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def _json_elements(source: Any, alias: str) -> exp.Table:
    return exp.Table(this=_call("json_each", source),
                     alias=exp.TableAlias(this=exp.to_identifier(alias)))


class Rewriter:
    def __init__(self, analysis: SqlAnalysis, marker: str) -> None:
        assert analysis.tree is not None and analysis.resolution is not None
        self.analysis = analysis
        self.marker = marker
        self.tree: Any = analysis.tree.copy()
        self.refs: dict[int, ColumnRef] = {}  # id(physical column node) -> its reference
        self.cte_names: dict[str, str] = {}
        self._counter = 0

    def _next(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def physical_column(self, ref: ColumnRef) -> exp.Column:
        if ref.kind == "field" and ref.field is not None:
            this = exp.to_identifier(physical.column_name(ref.field.field_id))
        else:
            this = _quoted(ref.name)
        table = _quoted(ref.qualifier) if ref.qualifier and ref.kind != "output" else None
        column = exp.Column(this=this, table=table)
        self.refs[id(column)] = ref
        return column

    def cte_name(self, name: str) -> str:
        # Renamed so that no CTE can shadow a physical table (or json_each).
        if name not in self.cte_names:
            self.cte_names[name] = f"cte_{len(self.cte_names) + 1}"
        return self.cte_names[name]

    # ------------------------------------------------------------------ driver

    def run(self) -> Any:
        res = self.analysis.resolution
        assert res is not None
        original = list(self.analysis.tree.walk()) if self.analysis.tree is not None else []
        copied = list(self.tree.walk())
        if len(original) != len(copied):
            raise CompileError("internal error: the query tree could not be copied faithfully")
        columns, sources, selects, names = [], [], [], {}
        stars: dict[int, tuple[StarColumn, ...]] = {}
        joins, ctes, derived = [], [], []
        for old, new in zip(original, copied, strict=True):
            key = id(old)
            if key in res.columns:
                columns.append((new, res.columns[key]))
            elif key in res.sources:
                sources.append((new, res.sources[key]))
            if key in res.stars:
                stars[id(new)] = res.stars[key]
            if isinstance(old, exp.Select):
                selects.append(new)
                for o, n in zip(old.expressions, new.expressions, strict=True):
                    names[id(n)] = res.names.get(id(o), "?column?")
            elif isinstance(old, exp.Join):
                joins.append((new, res.usings.get(key, ())))
            elif isinstance(old, exp.CTE):
                ctes.append(new)
            elif isinstance(old, (exp.Subquery, exp.Values)) and _alias_columns(old):
                derived.append(new)
        for select in selects:
            self.projections(select, stars, names)
        for node, ref in columns:
            node.replace(self.physical_column(ref))
        for node, source in sources:
            self.source(node, source)
        for cte in ctes:
            cte.set("alias", exp.TableAlias(this=exp.to_identifier(self.cte_name(cte.alias)),
                                            columns=cte.args["alias"].args.get("columns")))
        for join, pairs in joins:
            self.join(join, pairs)
        for node in derived:
            self.derived(node)
        for node in list(self.tree.walk()):
            if isinstance(node, _COMPARISONS):
                self.comparison(node)
        for node in list(self.tree.walk()):
            if isinstance(node, (exp.Limit, exp.Offset)):
                self.null_bound(node)
        for node in list(self.tree.walk()):
            self.expression(node)
        return self.tree

    def null_bound(self, node: Any) -> None:
        # PostgreSQL reads LIMIT NULL as "no limit" and OFFSET NULL as 0, so an optional
        # paging param may be left out; SQLite rejects NULL there, -1 means no limit.
        value = node.args.get("expression")
        if value is None or not isinstance(value, (exp.Parameter, exp.Cast, exp.Paren)):
            return
        default = exp.Literal.number(-1 if isinstance(node, exp.Limit) else 0)
        node.set("expression", exp.Coalesce(this=value, expressions=[default]))

    # ------------------------------------------------------------------ structure

    def projections(self, select: Any, stars: dict[int, tuple[StarColumn, ...]],
                    names: dict[int, str]) -> None:
        items: list[Any] = []
        for proj in select.expressions:
            expansion = stars.get(id(proj))
            if expansion is not None:
                if not expansion:
                    raise CompileError("`*` over a FROM item whose columns are unknown "
                                       "cannot run on the local platform; list the columns.")
                for star in expansion:
                    ref = (ColumnRef("field", star.qualifier, star.column.name,
                                     star.column.table, star.column.field) if star.physical
                           else ColumnRef("derived", star.qualifier, star.column.name,
                                          star.column.table, star.column.field))
                    items.append(exp.Alias(this=self.physical_column(ref),
                                           alias=_quoted(star.column.name)))
            elif isinstance(proj, exp.Alias):
                proj.set("alias", _quoted(proj.alias))
                items.append(proj)
            else:
                items.append(exp.Alias(this=proj, alias=_quoted(names.get(id(proj), "?column?"))))
        select.set("expressions", items)

    def source(self, node: Any, source: Any) -> None:
        if source.table is not None:
            name = physical.table_name(source.table.table_id)
        else:
            name = self.cte_name(source.cte_name)
        node.replace(exp.Table(this=exp.to_identifier(name),
                               alias=exp.TableAlias(this=_quoted(source.alias)),
                               joins=node.args.get("joins")))  # FROM (a JOIN b ON …)

    def join(self, join: Any, pairs: tuple[tuple[ColumnRef, ColumnRef], ...]) -> None:
        if str(join.args.get("method") or "").upper() == "NATURAL":
            raise CompileError("NATURAL JOIN is not supported; write JOIN … USING (…) or ON.")
        if not join.args.get("using"):
            return
        if not pairs:
            raise CompileError("JOIN … USING over a FROM item whose columns are unknown "
                               "cannot run on the local platform; write JOIN … ON.")
        condition: Any = None
        for left, right in pairs:
            eq = exp.EQ(this=self.physical_column(left), expression=self.physical_column(right))
            condition = eq if condition is None else exp.And(this=condition, expression=eq)
        join.set("using", None)
        join.set("on", condition)

    def derived(self, node: Any) -> None:
        """SQLite has no `AS alias(col, …)` for subqueries: name the columns inside."""
        alias = node.args["alias"]
        names = [c.name for c in alias.columns]
        if isinstance(node, exp.Values):
            inner = exp.Subquery(this=node.copy())
            inner.this.set("alias", None)
            query: Any = exp.Select(
                expressions=[exp.Alias(this=exp.column(f"column{i + 1}"), alias=_quoted(n))
                             for i, n in enumerate(names)],
                from_=exp.From(this=inner))
            node.replace(exp.Subquery(this=query, alias=exp.TableAlias(this=alias.this)))
            return
        query = node.this
        while isinstance(query, (exp.SetOperation, exp.Subquery)):
            query = query.this
        if not isinstance(query, exp.Select) or len(query.expressions) < len(names):
            raise CompileError(f"Subquery {alias.name!r} has fewer columns than its alias "
                               "names.")
        for proj, name in zip(query.expressions, names, strict=False):
            target = proj.this if isinstance(proj, exp.Alias) else proj
            proj.replace(exp.Alias(this=target, alias=_quoted(name)))
        node.set("alias", exp.TableAlias(this=alias.this))

    # ------------------------------------------------------------------ comparisons

    def _multi_column(self, node: Any) -> Any:
        target = strip_casts(node)
        ref = self.refs.get(id(target))
        if ref is not None and ref.field is not None and ref.field.is_multi_valued:
            return target
        return None

    def _list_source(self, node: Any) -> Any:
        """What an ANY/ALL (or IN) compares against, as an IN list or subquery."""
        inner = strip_casts(node.this if isinstance(node, exp.Any) else node.expressions[0])
        if isinstance(inner, exp.Subquery):
            return {"query": inner}
        if isinstance(inner, exp.Array):
            return {"expressions": list(inner.expressions)}
        elements = exp.Select(expressions=[exp.column("value")],
                              from_=exp.From(this=exp.Table(this=_call("json_each", inner))))
        return {"query": exp.Subquery(this=elements)}

    def comparison(self, node: Any) -> None:
        if isinstance(node, exp.Is):
            column = self._multi_column(node.this)
            if column is not None and isinstance(node.expression, exp.Null):
                # An empty multi-valued cell may be stored as [] : it is NULL to the author.
                empty = exp.EQ(this=_call("json_array_length", column.copy()),
                               expression=exp.Literal.number(0))
                is_null = exp.Is(this=column.copy(), expression=exp.Null())
                found: Any = exp.Paren(this=exp.Or(this=is_null, expression=empty))
                node.replace(exp.Not(this=found) if node.args.get("negate") else found)
            return
        if isinstance(node, exp.In):
            column = self._multi_column(node.this)
            if column is not None:
                # Move (never copy) the IN node: comparisons inside it are rewritten later.
                alias = self._next(f"{self.marker}_mv")
                found = self._any_element(column, alias, exp.true())
                node.replace(found)
                node.set("this", exp.column("value", table=alias))
                found.this.args["where"].set("this", node)
            return
        for column_side, other in ((node.this, node.expression), (node.expression, node.this)):
            quantified = isinstance(other, exp.Any) or is_all_call(other)
            column = self._multi_column(column_side)
            if quantified:
                self.quantified(node, column_side, other, column)
                return
            if column is not None and isinstance(node, (exp.EQ, exp.NEQ)):
                alias = self._next(f"{self.marker}_mv")
                test = exp.EQ(this=exp.column("value", table=alias), expression=other)
                found = self._any_element(column, alias, test)
                node.replace(found if isinstance(node, exp.EQ) else exp.Not(this=found))
                return

    def quantified(self, node: Any, left: Any, other: Any, column: Any) -> None:
        is_any = isinstance(other, exp.Any)
        if not isinstance(node, (exp.EQ, exp.NEQ)) or is_any != isinstance(node, exp.EQ):
            raise CompileError("Only `= ANY(…)` and `<> ALL(…)` are supported for arrays.")
        source = self._list_source(other)
        if column is not None:
            alias = self._next(f"{self.marker}_mv")
            test = exp.In(this=exp.column("value", table=alias), **source)
            found: Any = self._any_element(column, alias, test)
        else:
            found = exp.In(this=left, **source)
        node.replace(found if is_any else exp.Not(this=found))

    def _any_element(self, column: Any, alias: str, test: Any) -> exp.Exists:
        return exp.Exists(this=exp.Select(expressions=[exp.Literal.number(1)],
                                          from_=exp.From(this=_json_elements(column.copy(),
                                                                             alias)),
                                          where=exp.Where(this=test)))

    # ------------------------------------------------------------------ expressions

    def expression(self, node: Any) -> None:
        if isinstance(node, exp.Parameter):
            node.replace(exp.Placeholder(this=f"{self.marker}{node.this.this}"))
        elif isinstance(node, exp.CurrentUserId):
            node.replace(exp.Placeholder(this=f"{self.marker}u"))
        elif isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.ARRAY):
            node.replace(node.this)  # arrays are JSON text already
        elif isinstance(node, exp.TimestampTrunc):
            unit = _unit(node.args.get("unit"))
            if unit == "WEEK":  # weeks start on Monday, as in PostgreSQL
                node.replace(_call("datetime", node.this, exp.Literal.string("-6 days"),
                                   exp.Literal.string("weekday 1"),
                                   exp.Literal.string("start of day")))
                return
            fmt = _TRUNC_FORMATS.get(unit)
            if fmt is None:
                raise CompileError(f"date_trunc unit {_unit(node.args.get('unit'))!r} is not "
                                   "supported; use year, month, day, hour, minute or second.")
            node.replace(_call("strftime", exp.Literal.string(fmt), node.this))
        elif isinstance(node, exp.Extract):
            self.extract(node)
        elif isinstance(node, exp.Concat):
            parts = [exp.Coalesce(this=exp.Cast(this=e, to=exp.DataType.build("TEXT")),
                                  expressions=[exp.Literal.string("")])
                     for e in node.expressions]
            joined: Any = parts[0] if parts else exp.Literal.string("")
            for part in parts[1:]:
                joined = exp.DPipe(this=joined, expression=part)
            node.replace(exp.Paren(this=joined))
        elif isinstance(node, exp.ArraySize) or (
                isinstance(node, exp.Anonymous)
                and str(node.this).lower() in ("cardinality", "array_length")):
            node.replace(_call("json_array_length", node.this if isinstance(
                node, exp.ArraySize) else node.expressions[0]))
        elif isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.expression, exp.Interval):
            self.interval(node)
        elif isinstance(node, exp.Lateral):
            raise CompileError("LATERAL is not supported on the local platform; use a "
                               "correlated subquery instead.")

    def extract(self, node: Any) -> None:
        unit = _unit(node.this)
        value = node.expression
        if unit == "QUARTER":
            month = exp.Cast(this=_call("strftime", exp.Literal.string("%m"), value),
                             to=exp.DataType.build("INT"))
            node.replace(exp.Paren(this=exp.IntDiv(
                this=exp.Paren(this=exp.Add(this=month, expression=exp.Literal.number(2))),
                expression=exp.Literal.number(3))))
            return
        fmt = _EXTRACT_FORMATS.get(unit)
        if fmt is None:
            raise CompileError(f"EXTRACT({unit}) is not supported on the local platform.")
        node.replace(exp.Cast(this=_call("strftime", exp.Literal.string(fmt), value),
                              to=exp.DataType.build("INT")))

    def interval(self, node: Any) -> None:
        interval = node.expression
        amount, unit = str(interval.this.name if interval.this else ""), _unit(
            interval.args.get("unit"))
        parts = amount.split()
        if len(parts) == 2 and not unit:
            amount, unit = parts[0], _unit(parts[1])
        try:
            number = float(amount)
        except ValueError:
            raise CompileError(f"Interval {interval.sql(dialect='postgres')} is not "
                               "supported; write INTERVAL 'N unit'.") from None
        if unit not in _INTERVAL_UNITS:
            raise CompileError(f"Interval unit {unit!r} is not supported.")
        if unit == "WEEK":
            number *= 7
        if isinstance(node, exp.Sub):
            number = -number
        text = f"{number:+g} {_INTERVAL_UNITS[unit]}"
        node.replace(_call("datetime", node.this, exp.Literal.string(text)))


def _alias_columns(node: Any) -> bool:
    alias = node.args.get("alias")
    return isinstance(alias, exp.TableAlias) and bool(alias.args.get("columns"))
