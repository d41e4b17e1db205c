"""Multi-valued fields (multi-select, multi-user, link) in comparisons, for SQLite.

The platform's addition to PostgreSQL, in PostgreSQL's terms: an empty field is NULL
(IS NULL matches it, stored as NULL or `[]`), `field = x` is `x = ANY(field)`,
`field <> x` is `x <> ALL(field)`, and `field IN (a, b)` / `field = ANY(array)` is
`field = a OR field = b` (NOT IN and <> ALL their negation). So each follows
PostgreSQL's three-valued logic: a comparison with an empty field is NULL, and so is its
NOT, and a NULL among the values makes "no match" NULL rather than false.

A multi-valued cell is a JSON array, so each becomes a json_each over the cell. The
elements of an empty cell are read as one NULL: `x IN (NULL)` is NULL for every x, which
is exactly `x = ANY(NULL)`. `field IN S` is `1 IN (SELECT e IN S FROM elements e)`: true
when some element is in S, else NULL when some test was NULL, else false, which is the
OR over S of `v = ANY(field)` (and false for an empty S, as in PostgreSQL). An array
parameter that is NULL is one NULL value too (`x = ANY(NULL)` is NULL). `x IN (SELECT
<array> …)` compares with the elements.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from basedb.sql import pgtypes as T
from basedb.sql.model import ColumnRef
from basedb.sql.scope import is_all_call, strip_casts
from basedb.sql.sqlite.nodes import call, string
from basedb.sql.sqlite.query import CompileError
from basedb.sql.sqlite.translate import ExpressionRewriter


def quoted(name: str) -> exp.Identifier:
    return exp.Identifier(this=name, quoted=True)


def json_elements(source: Any, alias: str) -> exp.Table:
    return exp.Table(this=call("json_each", source),
                     alias=exp.TableAlias(this=exp.to_identifier(alias)))


class MultiValuedRewriter(ExpressionRewriter):
    """Comparisons of `sql_rewrite.Rewriter`; see the module docstring."""

    refs: dict[int, ColumnRef]

    def _next(self, prefix: str) -> str:
        raise NotImplementedError

    def _multi_column(self, node: Any) -> Any:
        target = node
        while isinstance(target, exp.Paren):
            target = target.this
        ref = self.refs.get(id(target))
        if ref is not None and ref.field is not None and ref.field.is_multi_valued:
            return target
        return None

    def _list_source(self, node: Any) -> Any:
        """What an ANY/ALL (or IN) compares against, as an IN list or subquery."""
        inner = strip_casts(node.this if isinstance(node, exp.Any) else node.expressions[0])
        if isinstance(inner, exp.Subquery):
            if T.is_array(self.type_of(inner)):
                return {"query": self.element_rows(inner)}
            return {"query": inner}
        if isinstance(inner, exp.Array):
            return {"expressions": list(inner.expressions)}
        # An array value (a parameter): its elements, or one NULL when it is NULL.
        values = call("json_each", call("coalesce", inner, string("[null]")))
        elements = exp.Select(expressions=[exp.column("value")],
                              from_=exp.From(this=exp.Table(this=values)))
        return {"query": exp.Subquery(this=elements)}

    def comparison(self, node: Any) -> Any:
        if isinstance(node, exp.Is):
            column = self._multi_column(node.this)
            if column is not None and isinstance(node.expression, exp.Null):
                found: Any = exp.Paren(this=_is_empty(column))
                return exp.Not(this=found) if node.args.get("negate") else found
            return self.is_test(node)
        if isinstance(node, exp.In):
            query = node.args.get("query")
            if query is not None and T.is_array(self.type_of(query)):
                node.set("query", self.element_rows(query))
            column = self._multi_column(node.this)
            if column is not None:
                return self._some_element_in(column, (
                    {"query": node.args["query"]} if node.args.get("query")
                    else {"expressions": list(node.expressions)}))
            return node
        for column_side, other in ((node.this, node.expression), (node.expression, node.this)):
            quantified = isinstance(other, exp.Any) or is_all_call(other)
            column = self._multi_column(column_side)
            if quantified:
                return self.quantified(node, column_side, other, column)
            if column is not None and isinstance(node, (exp.EQ, exp.NEQ)):
                # x = ANY(field) / x <> ALL(field): NULL for an empty field.
                found = exp.In(this=other, query=exp.Subquery(this=_elements(column)))
                return found if isinstance(node, exp.EQ) else exp.Not(this=found)
        return node

    def quantified(self, node: Any, left: Any, other: Any, column: Any) -> Any:
        is_any = isinstance(other, exp.Any)
        if not isinstance(node, (exp.EQ, exp.NEQ)) or is_any != isinstance(node, exp.EQ):
            raise CompileError("Only `= ANY(…)` and `<> ALL(…)` are supported for arrays.")
        source = self._list_source(other)
        if column is not None:
            found: Any = self._some_element_in(column, source)
        else:
            found = exp.In(this=left, **source)
        return found if is_any else exp.Not(this=found)

    def _some_element_in(self, column: Any, source: dict[str, Any]) -> Any:
        """`field IN S` with three-valued logic: `1 IN (SELECT e IN S FROM elements)`."""
        alias = self._next(f"{self.marker}_mv")
        test = exp.In(this=exp.column("value", table=alias), **source)
        tests = exp.Select(expressions=[test], from_=exp.From(this=exp.Subquery(
            this=_elements(column), alias=exp.TableAlias(this=exp.to_identifier(alias)))))
        return exp.Paren(this=exp.In(this=exp.Literal.number(1),
                                     query=exp.Subquery(this=tests)))

    def element_rows(self, query: Any) -> Any:
        """A subquery of array values as a subquery of their elements."""
        rows, elements = self._next("__bdb_r"), self._next("__bdb_e")
        column = exp.Column(this=quoted(first_output(query.this)), table=quoted(rows))
        return exp.Subquery(this=exp.Select(
            expressions=[exp.column("value", table=elements)],
            from_=exp.From(this=exp.Subquery(this=query.this, alias=exp.TableAlias(
                this=quoted(rows)))),
            joins=[exp.Join(this=json_elements(column, elements))]))


def _is_empty(column: Any) -> Any:
    """An empty multi-valued cell is NULL to the author, whether stored as NULL or []."""
    return exp.EQ(this=call("coalesce", call("json_array_length", column.copy()),
                             exp.Literal.number(0)), expression=exp.Literal.number(0))


def _elements(column: Any) -> exp.Union:
    """The elements of a multi-valued cell, or one NULL when it is empty."""
    return exp.union(
        exp.Select(expressions=[exp.column("value")],
                   from_=exp.From(this=exp.Table(this=call("json_each", column.copy())))),
        exp.Select(expressions=[exp.Null()], where=exp.Where(this=_is_empty(column))),
        distinct=False)


def first_output(query: Any) -> str:
    while isinstance(query, (exp.Subquery,)):
        query = query.this
    while isinstance(query, exp.SetOperation):
        query = query.this
        while isinstance(query, exp.Subquery):
            query = query.this
    if isinstance(query, exp.Select) and query.expressions:
        first = query.expressions[0]
        if isinstance(first, exp.Alias):
            return str(first.alias)
    raise CompileError("a scalar subquery must name its column on the local platform")
