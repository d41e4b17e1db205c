"""Type a resolved Database Function query as PostgreSQL would, and hold it to the subset.

After names are resolved (`resolve.py`), the typer gives every expression its PostgreSQL
type (`pgtypes`), records the implicit conversions PostgreSQL applies, and refuses
queries PostgreSQL would refuse (SQL_INVALID: `WHERE 1`, `'a' + 1`, a column neither
grouped nor aggregated, CASE branches of unrelated types) and constructs outside the
subset (SQL_UNSUPPORTED, with what to write instead). The compiler reads the result
(`Typing`) to translate each construct with PostgreSQL's semantics, and the invoke
runtime renders each result column by its type.

This module is the query half (scopes, FROM items, set operations, grouping rules);
expressions are typed by `typing_expr.ExpressionTyper`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from basedb.sql import pgtypes as T
from basedb.sql.ctes import CteDefinition, bind_ctes
from basedb.sql.model import ColumnRef, Resolution, SqlProblem, Typing
from basedb.sql.scope import set_operation_parts
from basedb.sql.typing_base import ANY, CALLS
from basedb.sql.typing_groups import GroupingRules
from basedb.workspace.model import Table

# Select arguments the subset knows; anything else present is refused.
_SELECT_KEYS = frozenset({"with_", "from_", "joins", "expressions", "where", "group",
                          "having", "windows", "order", "limit", "offset", "distinct",
                          "kind", "locks", "into"})
_SET_KEYS = frozenset({"this", "expression", "distinct", "by_name", "side", "kind",
                       "with_", "order", "limit", "offset"})


class _Source:
    __slots__ = ("alias", "columns")

    def __init__(self, alias: str, columns: list[tuple[str, str]]) -> None:
        self.alias = alias
        self.columns = columns

    def find(self, name: str) -> str | None:
        for column, type_ in self.columns:
            if column == name:
                return type_
        folded = [t for c, t in self.columns if c.casefold() == name.casefold()]
        return folded[0] if len(folded) == 1 else None


class _Scope:
    __slots__ = ("ctes", "outputs", "parent", "sources")

    def __init__(self, parent: _Scope | None, ctes: dict[str, list[tuple[str, str]]]) -> None:
        self.parent = parent
        self.ctes = ctes
        self.sources: list[_Source] = []
        self.outputs: list[tuple[str, str]] = []

    def source(self, alias: str | None) -> _Source | None:
        current: _Scope | None = self
        while current is not None:
            for source in current.sources:
                if source.alias == (alias or ""):
                    return source
            if alias:
                folded = [s for s in current.sources if s.alias.casefold() == alias.casefold()]
                if len(folded) == 1:
                    return folded[0]
            current = current.parent
        return None


def _table_columns(table: Table) -> list[tuple[str, str]]:
    """(name, type) of each of `table`'s columns, record_id last."""
    columns = [(f.name, T.field_type(f)) for f in table.fields]
    columns.append(("record_id", T.TEXT))
    return columns


class Typer(GroupingRules):
    def __init__(self, sql: str, resolution: Resolution | None,
                 declared: Sequence[str | None]) -> None:
        self.sql = sql
        self.resolution = resolution or Resolution()
        self.declared = tuple(T.PARAM_TYPES.get(kind) if kind else None for kind in declared)
        self.problems: list[SqlProblem] = []
        self.types: dict[int, str] = {}
        self.coercions: dict[int, str] = {}
        self.param_types: dict[int, str] = {}
        self.bounds: dict[int, str] = {}
        self.bound_params: set[int] = set()
        self._reported: set[int] = set()
        self.suspects = 0
        self.keys: dict[int, Any] = {}

    def run(self, tree: Any) -> Typing:
        columns = self.query_columns(tree, None)
        for number, found in self.param_types.items():
            if found == T.UNKNOWN:
                self.param_types[number] = T.TEXT
        return Typing(types=self.types, coercions=self.coercions, params=self.param_types,
                      bounds=self.bounds, bound_params=frozenset(self.bound_params),
                      columns=tuple(t for _, t in columns))

    # ------------------------------------------------------------------ names

    def resolution_ref(self, node: Any) -> ColumnRef | None:
        while isinstance(node, exp.Paren):
            node = node.this
        if not isinstance(node, exp.Column):
            return None
        return self.resolution.columns.get(id(node))

    def column_type(self, node: Any, ref: ColumnRef | None, scope: Any) -> str:
        ref = ref or self.resolution.columns.get(id(node))
        if ref is None:
            return ANY
        if ref.kind == "field":
            return T.field_type(ref.field) if ref.field is not None else ANY
        if ref.kind == "output":
            current = scope
            for name, type_ in current.outputs if current is not None else ():
                if name == ref.name:
                    return type_
            return ANY
        source = scope.source(ref.qualifier) if scope is not None else None
        if source is None:
            return ANY
        found = source.find(ref.name)
        return found if found is not None else ANY

    # ------------------------------------------------------------------ queries

    def query_columns(self, node: Any, scope: Any) -> list[tuple[str, str]]:
        ctes = scope.ctes if scope is not None else {}
        if isinstance(node, exp.Subquery):
            columns = self.query_columns(node.this, scope)
            self.tail(node, scope, ctes, columns)
            return columns
        if isinstance(node, exp.Select):
            return self.select(node, scope, ctes)
        if isinstance(node, exp.SetOperation):
            return self.set_operation(node, scope, ctes)
        if isinstance(node, exp.Values):
            return self.values(node, scope, ctes)
        self.expr(node, _Scope(scope, ctes))
        return []

    def with_clause(self, with_: Any, scope: Any, ctes: dict[str, list[tuple[str, str]]],
                    ) -> dict[str, list[tuple[str, str]]]:
        def define(cte: CteDefinition, visible: dict[str, list[tuple[str, str]]],
                   ) -> list[tuple[str, str]]:
            names = list(cte.column_names)
            body = cte.body
            if not (cte.recursive and isinstance(body, exp.Union)):
                return _renamed(self.query_columns(body, _Scope(scope, visible)), names)
            # The non-recursive term fixes the types; the recursive term, which reads
            # them, must agree (PostgreSQL refuses a recursive column that widens).
            anchor = self.query_columns(body.this, _Scope(scope, visible))
            visible[cte.name] = _renamed(anchor, names)
            inner = _Scope(scope, visible)
            step = self.query_columns(body.expression, inner)
            self.recursive_types(body, anchor, step)
            self.tail(body, inner, visible, anchor)
            return _renamed(anchor, names)

        return bind_ctes(with_, ctes, define)

    def recursive_types(self, body: Any, anchor: list[tuple[str, str]],
                        step: list[tuple[str, str]]) -> None:
        if len(anchor) != len(step):
            self.invalid("each UNION query must have the same number of columns", body)
            return
        for index, ((name, wanted), (_, found)) in enumerate(zip(anchor, step, strict=True)):
            if ANY in (wanted, found) or wanted == found or found == T.UNKNOWN:
                continue
            self.invalid(f'recursive query column {index + 1} ("{name}") has type '
                         f"{T.describe(wanted)} in the non-recursive term but type "
                         f"{T.describe(found)} overall", body,
                         f"Cast the non-recursive term's column: SELECT x::"
                         f"{found.split(' ')[0]}.")

    def set_operation(self, node: Any, scope: Any,
                      ctes: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str]]:
        ctes = self.with_clause(node.args.get("with_"), scope, ctes)
        operations, branches = set_operation_parts(node)
        for current in operations:
            self.refuse_unknown_args(current, _SET_KEYS)
            if not current.args.get("distinct") and isinstance(
                    current, (exp.Intersect, exp.Except)):
                self.unsupported("set_operations_all", "INTERSECT ALL / EXCEPT ALL", current)
            if current.args.get("by_name") or current.args.get("side") or \
                    current.args.get("kind"):
                self.unsupported("set_operations_all", "This set operation", current)
        shapes = [self.query_columns(b, _Scope(scope, ctes)) for b in branches]
        width = len(shapes[0])
        if any(len(shape) != width for shape in shapes):
            self.invalid(f"each {node.key.upper()} query must have the same number of "
                         "columns", node, "Select the same number of columns in every "
                         "branch.")
            return shapes[0]
        columns: list[tuple[str, str]] = []
        for index in range(width):
            types = [shape[index][1] for shape in shapes]
            found = T.common_type(types) if ANY not in types else ANY
            if found is None:
                shown = " and ".join(dict.fromkeys(T.describe(t) for t in types
                                                   if t != T.UNKNOWN))
                self.invalid(f"{node.key.upper()} types {shown} cannot be matched", node,
                             "Give the column the same type in every branch.")
                found = ANY
            for branch in branches:
                projection = _projection(branch, index)
                if projection is not None and found != ANY:
                    self.coerce(projection, found, f"column {index + 1} of the "
                                f"{node.key.upper()}")
            columns.append((shapes[0][index][0], found))
        self.tail(node, _Scope(scope, ctes), ctes, columns, set_operation=True)
        return columns

    def tail(self, node: Any, scope: Any, ctes: dict[str, list[tuple[str, str]]],
             columns: list[tuple[str, str]], *, set_operation: bool = False) -> None:
        inner = _Scope(scope, ctes)
        inner.outputs = columns
        order = node.args.get("order")
        if order is not None:
            for item in order.expressions:
                self.expr(item, inner)
                if not self.constant_item(item.this, "ORDER BY", len(columns)):
                    continue
                if set_operation and not _is_output_reference(item.this, self.resolution):
                    self.invalid("ORDER BY on a UNION/INTERSECT/EXCEPT result must name a "
                                 "result column", item, "Order by a column name or position "
                                 "of the result.")
        self.limits(node, inner)

    def values(self, node: Any, scope: Any,
               ctes: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str]]:
        inner = _Scope(scope, ctes)
        rows = [row.expressions if isinstance(row, exp.Tuple) else [row]
                for row in node.expressions]
        width = len(rows[0]) if rows else 0
        if any(len(row) != width for row in rows):
            self.invalid("VALUES lists must all be the same length", node)
            return []
        for row in rows:
            for cell in row:
                self.expr(cell, inner)
        columns = []
        for index in range(width):
            cells = [row[index] for row in rows]
            found = self.common(cells, "VALUES", node)
            columns.append((f"column{index + 1}", found))
        return columns

    def refuse_unknown_args(self, node: Any, known: frozenset[str]) -> None:
        for key, value in node.args.items():
            if key in known or value is None or value is False or value == []:
                continue
            self._problem("SQL_UNSUPPORTED", f"The {key.upper()} clause is not supported by "
                          "basedb.", "Rewrite the query with the clauses docs/sql.md lists.", node)
            return

    # ------------------------------------------------------------------ SELECT

    def select(self, sel: Any, outer: Any,
               ctes: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str]]:
        self.refuse_unknown_args(sel, _SELECT_KEYS)
        scope = _Scope(outer, self.with_clause(sel.args.get("with_"), outer, ctes))
        from_ = sel.args.get("from_")
        if from_ is not None:
            self.add_source(from_.this, scope)
        for join in sel.args.get("joins") or ():
            self.join(join, scope)
        where = sel.args.get("where")
        if where is not None:
            typed = self.suspects
            self.expr(where.this, scope)
            self.require_bool(where.this, "WHERE")
            self.no_aggregates(where.this, "WHERE", typed)
        listed = self.suspects
        columns = self.projections(sel, scope)
        scope.outputs = columns
        group = sel.args.get("group")
        grouped: list[Any] = []
        if group is not None:
            if any(group.args.get(k) for k in ("grouping_sets", "cube", "rollup", "totals")):
                self.unsupported("grouping_sets", "GROUPING SETS / ROLLUP / CUBE", group)
            for item in group.expressions:
                typed = self.suspects
                self.expr(item, scope)
                self.no_aggregates(item, "GROUP BY", typed)
                if self.constant_item(item, "GROUP BY", len(sel.expressions)):
                    target = self.group_target(item, sel)
                    if target is not item:
                        self.no_aggregates(target, "GROUP BY")
                    grouped.append(target)
        having = sel.args.get("having")
        if having is not None:
            self.expr(having.this, scope)
            self.require_bool(having.this, "HAVING")
            self.no_output_names(having.this, "HAVING")
        for window in sel.args.get("windows") or ():
            for item in [*(window.args.get("partition_by") or ()),
                         *(window.args["order"].expressions if window.args.get("order")
                           else ())]:
                self.expr(item, scope)
        distinct = sel.args.get("distinct")
        on = distinct.args.get("on") if isinstance(distinct, exp.Distinct) else None
        if on is not None:
            for item in on.expressions if isinstance(on, exp.Tuple) else [on]:
                self.expr(item, scope)
                self.constant_item(item, "DISTINCT ON", len(sel.expressions))
        order = sel.args.get("order")
        if order is not None:
            for item in order.expressions:
                self.expr(item, scope)
                self.constant_item(item.this, "ORDER BY", len(sel.expressions))
        empty_group = group is not None and not group.expressions
        # Typing the select list and ORDER BY met no call: neither calls an aggregate.
        maybe_aggregates = self.suspects != listed
        if (group is not None or having is not None
                or (maybe_aggregates and self.has_aggregates(sel))) and not empty_group:
            self.grouping(sel, grouped)
        if distinct is not None and order is not None:
            self.distinct_order(sel, distinct, on, order)
        self.limits(sel, scope)
        return columns

    def add_source(self, node: Any, scope: _Scope) -> None:
        alias_node = node.args.get("alias")
        alias = alias_node.name if alias_node is not None else ""
        names = ([c.name for c in alias_node.columns]
                 if isinstance(alias_node, exp.TableAlias) else [])
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            ref = self.resolution.sources.get(id(node))
            if ref is not None and ref.table is not None:
                scope.sources.append(_Source(ref.alias, _table_columns(ref.table)))
            elif ref is not None and ref.cte_name is not None:
                found = self.cte(scope, ref.cte_name) or []
                scope.sources.append(_Source(ref.alias, _renamed(found, names)))
            else:
                scope.sources.append(_Source(alias or str(node.name), []))
            for join in node.args.get("joins") or ():
                self.join(join, scope)
        elif isinstance(node, exp.Subquery) and isinstance(node.this, exp.Table) \
                and alias_node is None:
            self.add_source(node.this, scope)
        elif isinstance(node, exp.Subquery) and isinstance(node.this, exp.Query):
            if node.args.get("lateral"):
                self.unsupported("lateral", "LATERAL", node, "LATERAL")
            columns = self.query_columns(node.this, _Scope(scope.parent, scope.ctes))
            scope.sources.append(_Source(alias, _renamed(columns, names)))
        elif isinstance(node, exp.Values):
            columns = self.values(node, scope.parent, scope.ctes)
            scope.sources.append(_Source(alias, _renamed(columns, names)))
        elif isinstance(node, exp.Lateral):
            self.unsupported("lateral", "LATERAL", node, "LATERAL")
            scope.sources.append(_Source(alias, []))
        else:
            what = "A table function" if isinstance(node, (exp.Table, exp.Func)) else \
                f"`{node.sql(dialect='postgres')[:40]}` in FROM"
            self.unsupported("table_functions", what, node)
            scope.sources.append(_Source(alias, []))

    def cte(self, scope: _Scope | None, name: str) -> list[tuple[str, str]] | None:
        while scope is not None:
            if name in scope.ctes:
                return scope.ctes[name]
            scope = scope.parent
        return None

    def join(self, join: Any, scope: _Scope) -> None:
        self.add_source(join.this, scope)
        on = join.args.get("on")
        if on is not None:
            typed = self.suspects
            self.expr(on, scope)
            self.require_bool(on, "JOIN/ON")
            self.no_aggregates(on, "JOIN conditions", typed)
        for left, right in self.resolution.usings.get(id(join), ()):
            lt, rt = (self.column_type(None, ref, scope) for ref in (left, right))
            if ANY not in (lt, rt) and T.comparable(lt, rt) is None:
                self.invalid(f'JOIN/USING types {T.describe(lt)} and {T.describe(rt)} '
                             f'cannot be matched for "{left.name}"', join)
            elif T.is_array(lt) or T.is_array(rt):
                self.unsupported("row_values", f'JOIN … USING ("{left.name}") on a '
                                 "multi-valued field", join)

    def projections(self, sel: Any, scope: _Scope) -> list[tuple[str, str]]:
        columns: list[tuple[str, str]] = []
        names = self.resolution.names
        merging = any(join.args.get("using") or str(join.args.get("method") or "").upper()
                      == "NATURAL" for join in sel.args.get("joins") or ())
        for proj in sel.expressions:
            stars = self.resolution.stars.get(id(proj))
            if stars is not None and merging and isinstance(proj, exp.Star):
                self.unsupported("star_using", "`*` over JOIN … USING / NATURAL JOIN", proj)
            whole = isinstance(proj, exp.Star) or (isinstance(proj, exp.Column)
                                                   and isinstance(proj.this, exp.Star))
            if whole and proj.find(*CALLS) is not None:
                # Not typed by `expr`: count what it could hide (`* REPLACE (f(x) AS y)`).
                self.suspects += 1
            if stars is not None:
                for star in stars:
                    column = star.column
                    if star.physical and column.field is not None:
                        columns.append((column.name, T.field_type(column.field)))
                    else:
                        source = scope.source(star.qualifier)
                        found = source.find(column.name) if source is not None else None
                        columns.append((column.name, found or ANY))
                continue
            if whole:
                continue
            found = self.expr(proj, scope)
            if found == T.UNKNOWN:
                self.coerce(proj, T.TEXT, "a result column")
                found = T.TEXT
            columns.append((names.get(id(proj), "?column?"), found))
        return columns













def _renamed(columns: list[tuple[str, str]], names: list[str]) -> list[tuple[str, str]]:
    if not names:
        return list(columns)
    out = [(name, type_) for name, (_, type_) in zip(names, columns, strict=False)]
    return out + list(columns[len(names):])


def _projection(branch: Any, index: int) -> Any:
    while isinstance(branch, exp.Subquery):
        branch = branch.this
    if isinstance(branch, exp.SetOperation):
        return None
    if isinstance(branch, exp.Select) and index < len(branch.expressions):
        proj = branch.expressions[index]
        return None if isinstance(proj, exp.Star) or (
            isinstance(proj, exp.Column) and isinstance(proj.this, exp.Star)) else proj
    return None


def _is_output_reference(node: Any, resolution: Resolution) -> bool:
    if isinstance(node, exp.Literal) and not node.is_string:
        return True
    ref = resolution.columns.get(id(node)) if isinstance(node, exp.Column) else None
    return ref is not None and ref.kind == "output"
