"""Rewrite an analysed Database Function tree (a private copy) for SQLite.

Base names become physical names (`basedb.platform.storage.physical`), multi-valued
fields get "any element" semantics through json_each, `= ANY($n)` / `<> ALL($n)` read an
array parameter bound as JSON text, and every expression is translated by its
PostgreSQL type (`basedb.sql.sqlite.translate`). The query's structure is kept, with
what SQLite lacks spelled out: DISTINCT ON becomes a row_number() filter, NATURAL JOIN
and USING become ON, a scalar subquery fails on a second row, ORDER BY puts NULLs where
PostgreSQL does, and LIMIT / OFFSET refuse negative values. Parameters become named markers that the
compiler turns into `?`; string interpolation is never used.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from basedb.platform.storage import physical
from basedb.platform.storage.sql_rewrite_multi import MultiValuedRewriter, first_output
from basedb.sql import pgtypes as T
from basedb.sql.model import ColumnRef, SqlAnalysis, StarColumn
from basedb.sql.scope import is_all_call, strip_casts
from basedb.sql.sqlite.nodes import call, string
from basedb.sql.sqlite.query import CompileError
from basedb.sql.typing_base import ANY, function_name

_COMPARISONS = (exp.EQ, exp.NEQ, exp.In, exp.Is, exp.GT, exp.GTE, exp.LT, exp.LTE)
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.Pow)
# Parents under which a subquery is not a scalar value.
_QUERY_CONTEXTS = (exp.From, exp.Join, exp.SetOperation, exp.CTE, exp.Exists, exp.In,
                   exp.Any, exp.Subquery)


def _quoted(name: str) -> exp.Identifier:
    return exp.Identifier(this=name, quoted=True)


def post_order(root: Any) -> list[Any]:
    out: list[Any] = []
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            out.append(node)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(list(node.iter_expressions())))
    return out


class Rewriter(MultiValuedRewriter):
    def __init__(self, analysis: SqlAnalysis, marker: str, zone: str = "UTC") -> None:
        if analysis.tree is None or analysis.resolution is None or analysis.typing is None:
            raise CompileError("the query was not analysed against the catalog")
        self.analysis = analysis
        self.marker = marker
        self.zone = zone
        self.tree: Any = analysis.tree.copy()
        self.refs: dict[int, ColumnRef] = {}  # id(physical column node) -> its reference
        self.cte_names: dict[str, str] = {}
        self.source_types: dict[int, str] = {}
        self.coercions: dict[int, str] = {}
        self.final: dict[int, str] = {}
        self.slot_types: dict[str, str] = {}  # placeholder -> the type its value binds as
        self._counter = 0
        self._columns: dict[int, ColumnRef] = {}
        self._sources: dict[int, Any] = {}
        self._stars: dict[int, tuple[StarColumn, ...]] = {}
        self._names: dict[int, list[str]] = {}  # id(select) -> its output names
        self._usings: dict[int, tuple[tuple[ColumnRef, ColumnRef], ...]] = {}
        self._bounds: dict[int, str] = {}
        self._derived: set[int] = set()

    def _next(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def cte_name(self, name: str) -> str:
        # Renamed so that no CTE can shadow a physical table (or json_each).
        if name not in self.cte_names:
            self.cte_names[name] = f"cte_{len(self.cte_names) + 1}"
        return self.cte_names[name]

    # ------------------------------------------------------------------ driver

    def run(self) -> Any:
        res, typing = self.analysis.resolution, self.analysis.typing
        assert res is not None and typing is not None and self.analysis.tree is not None
        original = list(self.analysis.tree.walk())
        copied = list(self.tree.walk())
        if len(original) != len(copied):
            raise CompileError("internal error: the query tree could not be copied faithfully")
        for old, new in zip(original, copied, strict=True):
            key = id(old)
            if key in res.columns:
                self._columns[id(new)] = res.columns[key]
            elif key in res.sources:
                self._sources[id(new)] = res.sources[key]
            if key in res.stars:
                self._stars[id(new)] = res.stars[key]
            if key in typing.types:
                self.source_types[id(new)] = typing.types[key]
            if key in typing.coercions:
                self.coercions[id(new)] = typing.coercions[key]
            if key in typing.bounds:
                self._bounds[id(new)] = typing.bounds[key]
            if isinstance(old, exp.Select):
                self._names[id(new)] = [res.names.get(id(o), "?column?")
                                        for o in old.expressions]
            elif isinstance(old, exp.Join):
                self._usings[id(new)] = res.usings.get(key, ())
            elif isinstance(old, (exp.Subquery, exp.Values)) and _alias_columns(old):
                self._derived.add(id(new))
        for node in post_order(self.tree):
            self.visit(node)
        return self.tree

    def install(self, node: Any, new: Any, parent: Any, key: str | None,
                index: int | None) -> None:
        if new is node:
            return
        if parent is None:
            self.tree = new
        else:
            parent.set(key, new, index=index)

    def visit(self, node: Any) -> None:
        parent, key, index = node.parent, node.arg_key, node.index
        new = self.translate(node)
        own = self.source_types.get(id(node), ANY)
        target = self.coercions.get(id(node))
        if target is not None and isinstance(new, exp.Alias):
            # A result column converted to the common type of a UNION: its value is.
            value = new.this
            new.set("this", self.converted(value, self.type_of(value), target))
        elif target is not None and new is not None:
            new = self.converted(new, own, target)
        if new is not None:
            self.install(node, new, parent, key, index)
            self.final[id(new)] = target or own

    def translate(self, node: Any) -> Any:
        key = id(node)
        if key in self._columns:
            return self.physical_column(self._columns[key])
        if key in self._sources:
            return self.source(node, self._sources[key])
        if isinstance(node, exp.Select):
            return self.select(node)
        if isinstance(node, exp.SetOperation):
            return self.set_operation(node)
        if isinstance(node, exp.Subquery):
            return self.subquery(node)
        if isinstance(node, exp.Values):
            return self.derived(node) if key in self._derived else node
        if isinstance(node, exp.Join):
            self.join(node, self._usings.get(key, ()))
            return node
        if isinstance(node, exp.CTE):
            node.set("alias", exp.TableAlias(this=exp.to_identifier(self.cte_name(node.alias)),
                                            columns=node.args["alias"].args.get("columns")))
            return node
        if isinstance(node, (exp.Limit, exp.Offset)):
            return self.bound(node)
        if isinstance(node, exp.Explode):
            return self.unnest(node)
        return self.expression(node)

    def unnest(self, node: Any) -> Any:
        """unnest(array), a whole item of a SELECT list (check allows it nowhere else):
        the SELECT joins the array's elements, a row each (none for NULL or [])."""
        select: Any = node.parent.parent if isinstance(node.parent, exp.Alias) \
            else node.parent
        if not isinstance(select, exp.Select):
            raise CompileError("unnest() runs only as an item of a SELECT list")
        alias = self._next(f"{self.marker}_un")
        elements = exp.Table(this=call("json_each", node.this),
                             alias=exp.TableAlias(this=exp.to_identifier(alias)))
        if select.args.get("from_") is None:
            select.set("from_", exp.From(this=elements))
        else:
            select.append("joins", exp.Join(this=elements))
        return exp.column("value", table=alias)

    # ------------------------------------------------------------------ names

    def physical_column(self, ref: ColumnRef) -> exp.Column:
        if ref.kind == "field" and ref.field is not None:
            this = exp.to_identifier(physical.column_name(ref.field.field_id))
        else:
            this = _quoted(ref.name)
        table = _quoted(ref.qualifier) if ref.qualifier and ref.kind != "output" else None
        column = exp.Column(this=this, table=table)
        self.refs[id(column)] = ref
        return column

    def source(self, node: Any, source: Any) -> Any:
        if source.table is not None:
            name = physical.table_name(source.table.table_id)
        else:
            name = self.cte_name(source.cte_name)
        return exp.Table(this=exp.to_identifier(name),
                         alias=exp.TableAlias(this=_quoted(source.alias)),
                         joins=node.args.get("joins"))  # FROM (a JOIN b ON …)

    def join(self, join: Any, pairs: tuple[tuple[ColumnRef, ColumnRef], ...]) -> None:
        natural = str(join.args.get("method") or "").upper() == "NATURAL"
        if natural:
            join.set("method", None)
        if not join.args.get("using") and not natural:
            return
        if not pairs:
            if natural:
                join.set("kind", "CROSS" if not join.args.get("side") else join.args.get(
                    "kind"))
                if join.args.get("side"):
                    join.set("on", exp.true())
                return
            raise CompileError("JOIN … USING over a FROM item whose columns are unknown "
                               "cannot run on the local platform; write JOIN … ON.")
        condition: Any = None
        for left, right in pairs:
            eq = exp.EQ(this=self.physical_column(left), expression=self.physical_column(right))
            condition = eq if condition is None else exp.And(this=condition, expression=eq)
        join.set("using", None)
        join.set("on", condition)

    def derived(self, node: Any) -> Any:
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
            return exp.Subquery(this=query, alias=exp.TableAlias(this=alias.this))
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
        return node

    # ------------------------------------------------------------------ queries

    def select(self, select: Any) -> Any:
        self.projections(select)
        self.group_by(select)
        distinct = select.args.get("distinct")
        if isinstance(distinct, exp.Distinct) and distinct.args.get("on") is not None:
            return self.distinct_on(select, distinct)
        return select

    def projections(self, select: Any) -> None:
        items: list[Any] = []
        names = self._names.get(id(select), [])
        for position, proj in enumerate(select.expressions):
            expansion = self._stars.get(id(proj))
            if expansion is not None:
                if not expansion:
                    raise CompileError("`*` over a FROM item whose columns are unknown "
                                       "cannot run on the local platform; list the columns.")
                for star in expansion:
                    ref = ColumnRef("field" if star.physical else "derived", star.qualifier,
                                    star.column.name, star.column.table, star.column.field)
                    items.append(exp.Alias(this=self.physical_column(ref),
                                           alias=_quoted(star.column.name)))
            elif isinstance(proj, exp.Alias):
                proj.set("alias", _quoted(proj.alias))
                items.append(proj)
            else:
                name = names[position] if position < len(names) else "?column?"
                items.append(exp.Alias(this=proj, alias=_quoted(name)))
        select.set("expressions", items)

    def group_by(self, select: Any) -> None:
        """GROUP BY positions and output names become the expressions they stand for
        (SQLite would resolve a name to an input column first)."""
        group = select.args.get("group")
        if group is None:
            return
        projections = [p.this if isinstance(p, exp.Alias) else p for p in select.expressions]
        names = [p.alias if isinstance(p, exp.Alias) else "" for p in select.expressions]
        items = []
        for item in group.expressions:
            if isinstance(item, exp.Literal) and not item.is_string and str(
                    item.this).isdigit() and 0 < int(str(item.this)) <= len(projections):
                item = projections[int(str(item.this)) - 1].copy()
            else:
                ref = self.refs.get(id(item))
                if ref is not None and ref.kind == "output" and ref.name in names:
                    item = projections[names.index(ref.name)].copy()
            items.append(_unfolded(item))
        group.set("expressions", items)
        order = select.args.get("order")
        for ordered in order.expressions if order is not None else ():
            value = ordered.this
            if not (isinstance(value, exp.Literal) and not value.is_string):
                ordered.set("this", _unfolded(value))

    def distinct_on(self, select: Any, distinct: Any) -> Any:
        """DISTINCT ON (keys): the first row of each key in ORDER BY order."""
        on = distinct.args["on"]
        keys = list(on.expressions) if isinstance(on, exp.Tuple) else [on]
        order = select.args.get("order")
        items = list(order.expressions) if order is not None else []
        outputs = [p.alias for p in select.expressions]
        targets = [self.order_target(item.this, select) for item in items]
        partition = [self.order_target(key, select) for key in keys]
        inner = select.copy()
        inner.set("distinct", None)
        inner.set("order", None)
        inner.set("limit", None)
        inner.set("offset", None)
        hidden = [exp.Alias(this=target, alias=_quoted(f"__bdb_o{index}"))
                  for index, target in enumerate(targets)]
        row = self._next("__bdb_rn")
        window = exp.Window(this=call("row_number"), partition_by=partition, order=exp.Order(
            expressions=[exp.Ordered(this=target.copy(), desc=item.args.get("desc"),
                                     nulls_first=item.args.get("nulls_first"))
                         for target, item in zip(targets, items, strict=True)])
            if items else None)
        inner.set("expressions", [*inner.expressions, *hidden,
                                  exp.Alias(this=window, alias=_quoted(row))])
        sub = self._next("__bdb_d")
        outer = exp.Select(
            expressions=[exp.Alias(this=exp.Column(this=_quoted(name), table=_quoted(sub)),
                                   alias=_quoted(name)) for name in outputs],
            from_=exp.From(this=exp.Subquery(this=inner, alias=exp.TableAlias(
                this=_quoted(sub)))),
            where=exp.Where(this=exp.EQ(this=exp.Column(this=_quoted(row), table=_quoted(sub)),
                                        expression=exp.Literal.number(1))))
        if items:
            outer.set("order", exp.Order(expressions=[
                exp.Ordered(this=exp.Column(this=_quoted(f"__bdb_o{index}"),
                                            table=_quoted(sub)),
                            desc=item.args.get("desc"), nulls_first=item.args.get(
                                "nulls_first")) for index, item in enumerate(items)]))
        for key in ("limit", "offset"):
            if select.args.get(key) is not None:
                outer.set(key, select.args[key])
        if select.args.get("with_") is not None:
            outer.set("with_", select.args["with_"])
            inner.set("with_", None)
        return outer

    def order_target(self, node: Any, select: Any) -> Any:
        """An ORDER BY / DISTINCT ON item as an expression of the select's inputs."""
        projections = [p.this for p in select.expressions]
        names = [p.alias for p in select.expressions]
        if isinstance(node, exp.Literal) and not node.is_string and str(node.this).isdigit():
            return projections[int(str(node.this)) - 1].copy()
        ref = self.refs.get(id(node))
        if ref is not None and ref.kind == "output" and ref.name in names:
            return projections[names.index(ref.name)].copy()
        return node.copy()

    def set_operation(self, node: Any) -> Any:
        for key in ("this", "expression"):
            branch = node.args.get(key)
            if isinstance(branch, exp.Subquery) and not isinstance(branch.this,
                                                                   exp.SetOperation):
                inner = branch.this
                if any(inner.args.get(k) for k in ("order", "limit", "offset")):
                    node.set(key, exp.select("*").from_(exp.Subquery(this=inner)))
        return node

    def subquery(self, node: Any) -> Any:
        if node.args.get("alias") is not None and id(node) in self._derived:
            return self.derived(node)
        parent = node.parent
        if parent is None or isinstance(parent, _QUERY_CONTEXTS) or is_all_call(parent):
            return node
        query = node.this
        if _single_row(query):
            return node
        inner = exp.Subquery(this=query, alias=exp.TableAlias(this=_quoted("__bdb_s")))
        column = exp.Column(this=_quoted(first_output(query)), table=_quoted("__bdb_s"))
        return exp.Subquery(this=exp.Select(expressions=[call("bdb_one", column)],
                                            from_=exp.From(this=inner)))

    def bound(self, node: Any) -> Any:
        value = node.args.get("expression")
        if value is None:
            return node
        inner = strip_casts(value)
        which = "LIMIT" if isinstance(node, exp.Limit) else "OFFSET"
        if isinstance(inner, exp.Null):
            node.set("expression", exp.Literal.number(-1 if which == "LIMIT" else 0))
        elif isinstance(inner, exp.Literal):
            pass
        else:
            node.set("expression", call("bdb_bound", value, string(which)))
        return node

    # ------------------------------------------------------------------ expressions

    def expression(self, node: Any) -> Any:
        if isinstance(node, exp.Parameter):
            return self.parameter(node)
        if isinstance(node, exp.CurrentUserId):
            return exp.Placeholder(this=f"{self.marker}u")
        if isinstance(node, (exp.CurrentTimestamp, exp.CurrentDate, exp.Localtimestamp)):
            return self.special_value(node, self.marker)
        if isinstance(node, _COMPARISONS):
            return self.comparison(node)
        if isinstance(node, _ARITHMETIC):
            return self.arithmetic(node)
        if isinstance(node, exp.DPipe):
            return self.concatenation(node)
        if isinstance(node, exp.Escape) or (isinstance(node, (exp.Like, exp.ILike))
                                            and not isinstance(node.parent, exp.Escape)):
            return self.like(node)
        if isinstance(node, exp.Between):
            return self.between(node)
        if isinstance(node, exp.Cast):
            return self.cast(node)
        if isinstance(node, (exp.JSONExtract, exp.JSONExtractScalar)):
            return self.json_get(node)
        if isinstance(node, exp.Extract):
            return self.extract(node)
        if isinstance(node, exp.Substring):
            args = [node.this, node.args.get("start"), node.args.get("length")]
            return call("bdb_substr", *[a for a in args if a is not None])
        if isinstance(node, exp.StrPosition):
            return call("instr", node.this, node.args["substr"])
        if isinstance(node, exp.Trim):
            return self.trim(node)
        if isinstance(node, exp.Date):
            return self.converted(node.this, self.type_of(node.this), T.DATE)
        if isinstance(node, exp.Anonymous) and function_name(node) not in ("all",):
            return self.function(node)
        if isinstance(node, exp.Boolean):
            return exp.Literal.number(int(node.this))
        if isinstance(node, exp.Literal) and node.is_string and id(node) not in self.coercions:
            return node
        if isinstance(node, exp.Interval):
            return node
        return node

    def trim(self, node: Any) -> Any:
        position = str(node.args.get("position") or "BOTH").upper()
        name = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(position, "trim")
        args = [node.this] + ([node.expression] if node.expression is not None else [])
        return call(name, *args)

    def parameter(self, node: Any) -> Any:
        number = str(node.this.this)
        target = self.coercions.get(id(node)) or self.source_types.get(id(node), ANY)
        name = f"{self.marker}{number}x{len(self.slot_types)}"
        self.slot_types[name] = target
        # The coercion is applied by binding, not by an SQL conversion.
        self.coercions.pop(id(node), None)
        self.source_types[id(node)] = target
        return exp.Placeholder(this=name)








def _unfolded(node: Any) -> Any:
    """A GROUP BY / ORDER BY term SQLite cannot fold into an integer (which it would read
    as a column position): `x AND false` is 0 to SQLite."""
    if isinstance(node, exp.Column):
        return node
    return call("coalesce", node, exp.Null())


def _alias_columns(node: Any) -> bool:
    alias = node.args.get("alias")
    return isinstance(alias, exp.TableAlias) and bool(alias.args.get("columns"))


def _single_row(query: Any) -> bool:
    """Whether a query returns at most one row whatever the data (no check needed)."""
    if not isinstance(query, exp.Select):
        return False
    limit = query.args.get("limit")
    if isinstance(limit, exp.Limit):
        value = limit.args.get("expression")
        if isinstance(value, exp.Literal) and str(value.this) in ("0", "1"):
            return True
    if query.args.get("group") is not None or query.args.get("distinct") is not None:
        return False
    return any(isinstance(node, exp.Anonymous) and str(node.this) in _AGGREGATE_NAMES
               and not isinstance(node.parent, exp.Window)
               for proj in query.expressions for node in [proj.this if isinstance(
                   proj, exp.Alias) else proj])


_AGGREGATE_NAMES = frozenset({"count", "sum", "avg", "min", "max", "group_concat",
                              "bdb_string_agg", "bdb_array_agg"})
