"""The groundwork of typing a query as PostgreSQL does: walking, reporting, conversions.

`TyperBase` walks an expression tree children first, with an explicit stack (a query
with thousands of ANDs must not exhaust Python's recursion limit), and hands each node
to the handler its class has (`HANDLERS`, filled by `typing_expr.ExpressionTyper`); a
handler reads its children's types, records the conversions PostgreSQL would apply to
them (`coerce`), and returns its own type. What PostgreSQL would refuse is SQL_INVALID;
what it accepts but the subset does not is SQL_UNSUPPORTED, with what to write instead.
After a problem the node types as `ANY`, which fits everywhere, so one mistake is
reported once.

    TyperBase → typing_calls.CallTyper (functions, casts, windows)
              → typing_expr.ExpressionTyper (operators, literals, CASE, …)
              → typing.Typer (queries: scopes, FROM, set operations, grouping)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from sqlglot import exp

from basedb.sql import pgtypes as T
from basedb.sql import pgvalues
from basedb.sql.constructs import instead
from basedb.sql.model import ColumnRef, SqlProblem, line_column, node_offset

ANY = "?"  # the type of a node after a problem, or of a name that was not resolved

# Nodes typed by their parent (their children are not expressions of the query).
OPAQUE: tuple[type, ...] = (exp.DataType, exp.Var, exp.JSONPath, exp.Identifier,
                            exp.WindowSpec, exp.Star, exp.DataTypeParam)
QUERIES: tuple[type, ...] = (exp.Select, exp.SetOperation, exp.Subquery)
COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ,
                exp.NullSafeNEQ)
NUMERIC_TEXT_FIX = ("Convert it first: x::float8::text, or round(x)::bigint::text for a "
                    "whole number")
_UNSUPPORTED_NODES: dict[type, str] = {
    exp.Lateral: "lateral", exp.Tuple: "row_values", exp.Bracket: "subscripts",
    exp.RegexpLike: "regex", exp.RegexpILike: "regex", exp.SimilarTo: "regex",
    exp.ByteString: "escape_strings", exp.Collate: "collate", exp.Unnest: "table_functions",
}
for _name in ("UnicodeString", "RawString", "National", "HexString", "BitString"):
    if isinstance(getattr(exp, _name, None), type):
        _UNSUPPORTED_NODES[getattr(exp, _name)] = "escape_strings"


# How `TyperBase.expr` treats a node, by class (cached: isinstance against the tuples
# above costs more than the rest of the walk). A call class (`_WALK_CALL`) is walked like
# any other, and may be an aggregate or a window, which the grouping rules look for.
_WALK_CHILDREN, _WALK_CALL, _WALK_QUERY, _WALK_OPAQUE = range(4)
_WALKS: dict[type, int] = {}
CALLS = (exp.Anonymous, exp.Filter, exp.Window)


def _walk_of(kind: type) -> int:
    walk = (_WALK_QUERY if issubclass(kind, (*QUERIES, exp.Values))
            else _WALK_OPAQUE if issubclass(kind, OPAQUE)
            else _WALK_CALL if issubclass(kind, CALLS) else _WALK_CHILDREN)
    _WALKS[kind] = walk
    return walk


def function_name(node: Any) -> str:
    """The name a function call was written with, lower case."""
    return str(node.this).lower() if isinstance(node, exp.Anonymous) else str(
        node.sql_name()).lower()


def is_windowed(node: Any) -> bool:
    parent = node.parent
    if isinstance(parent, exp.Filter):
        parent = parent.parent
    return isinstance(parent, exp.Window) and parent.this is not None and (
        parent.this is node or parent.this is node.parent)


def call_parts(node: Any) -> tuple[list[Any], bool, list[Any]]:
    """A call's arguments, whether DISTINCT, and its ORDER BY items (aggregates)."""
    args = list(node.expressions)
    distinct, order = False, []
    if args and isinstance(args[-1], exp.Order):
        order = list(args[-1].expressions)
        args[-1] = args[-1].this
    if args and isinstance(args[0], exp.Distinct):
        distinct = True
        args = list(args[0].expressions) + args[1:]
    return [a for a in args if a is not None], distinct, order


class TyperBase:
    """Walking, reporting and conversions; see the module docstring."""

    HANDLERS: ClassVar[dict[type, Callable[[Any, Any, Any], str]]] = {}

    sql: str
    problems: list[SqlProblem]
    types: dict[int, str]
    coercions: dict[int, str]
    param_types: dict[int, str]
    declared: tuple[str | None, ...]
    _reported: set[int]
    # How many nodes `expr` met that are, or may hide, an aggregate or a window call (a
    # call, or an opaque node with children): while it does not grow over the typing of
    # an expression, that expression calls neither at its own level.
    suspects: int = 0

    # Implemented by the query half (typing.Typer).
    # Implemented by the query half.
    def column_type(self, node: Any, ref: ColumnRef | None, scope: Any) -> str:
        raise NotImplementedError

    def query_columns(self, node: Any, scope: Any) -> list[tuple[str, str]]:
        raise NotImplementedError

    def resolution_ref(self, node: Any) -> ColumnRef | None:
        raise NotImplementedError

    def _problem(self, code: str, message: str, fix: str, node: Any,
                 keyword: str | None = None) -> str:
        key = id(node)
        if key not in self._reported:
            self._reported.add(key)
            offset = node_offset(node)
            if keyword is not None and offset is not None:
                # Point at the keyword written in front of the node (LATERAL, …).
                found = self.sql.upper().rfind(keyword, 0, offset)
                offset = found if found >= 0 else offset
            where = line_column(self.sql, offset) if offset is not None else (None, None)
            self.problems.append(SqlProblem(code, message, fix, *where))
        return ANY

    def invalid(self, reason: str, node: Any, fix: str = "Change the expression so that "
                "PostgreSQL accepts it.") -> str:
        return self._problem("SQL_INVALID", f"PostgreSQL refuses this query: {reason}.",
                             fix, node)

    def unsupported(self, key: str, what: str, node: Any, keyword: str | None = None) -> str:
        return self._problem("SQL_UNSUPPORTED", f"{what} is not supported by basedb: a Database "
                             "Function may use only the SQL subset listed in docs/sql.md.",
                             instead(key), node, keyword)

    def expr(self, root: Any, scope: Any) -> str:
        """Type `root` and everything under it; its type.

        Children are typed before their parent, the last child first. The walk lists the
        nodes parent first (first child first), then types them in the reverse order,
        which is that order. A subquery is typed as a whole where it stands; a node of
        an `OPAQUE` class types as ANY and its children are not visited."""
        walks = _WALKS
        order: list[Any] = []
        stack = [root]
        suspects = 0
        while stack:
            node = stack.pop()
            order.append(node)
            kind = type(node)
            walk = walks.get(kind)
            if walk is None:
                walk = _walk_of(kind)
            if walk <= _WALK_CALL:
                children = list(node.iter_expressions())
                children.reverse()
                stack += children
                if walk == _WALK_CALL:
                    suspects += 1
            elif walk == _WALK_OPAQUE and kind is not exp.Identifier \
                    and next(node.iter_expressions(), None) is not None:
                suspects += 1  # a node under it is not visited: it could be a call
        self.suspects += suspects
        types = self.types
        handle = self.handle
        for node in reversed(order):
            walk = walks[type(node)]
            if walk <= _WALK_CALL:
                types[id(node)] = handle(node, scope)
            elif walk == _WALK_QUERY:
                types[id(node)] = self.subquery_type(node, scope)
            else:
                types[id(node)] = ANY
        return types[id(root)]

    def subquery_type(self, node: Any, scope: Any) -> str:
        columns = self.query_columns(node, scope)
        if isinstance(node.parent, (exp.Exists,)):
            return T.BOOL
        if len(columns) != 1:
            return self.invalid("subquery must return only one column", node,
                                "Select exactly one column in the subquery.") \
                if not isinstance(node.parent, exp.Exists) else T.BOOL
        return columns[0][1]

    def t(self, node: Any) -> str:
        return self.types.get(id(node), ANY)

    def handle(self, node: Any, scope: Any) -> str:
        kind = type(node)
        handler = self.HANDLERS.get(kind)
        if handler is None:
            key = _UNSUPPORTED_NODES.get(kind)
            if key is not None:
                return self.unsupported(key, describe_node(node), node)
            return self._problem(
                "SQL_UNSUPPORTED", f"{describe_node(node)} is not supported by basedb: a Database "
                "Function may use only the SQL subset listed in docs/sql.md.",
                "Rewrite it with the constructs and functions docs/sql.md lists.", node)
        result = handler(self, node, scope)
        if result == T.INTERVAL and not isinstance(node.parent, (exp.Add, exp.Sub, exp.Mul,
                                                                 exp.Paren, exp.Neg)):
            return self.unsupported("interval_value", "An interval value here", node)
        return result

    def coerce(self, node: Any, target: str, what: str | Callable[[], str]) -> bool:
        """Convert `node` to `target` as PostgreSQL would (implicitly), or report it;
        `what` names the value in the report (a callable when naming it costs)."""
        source = self.t(node)
        if source in (ANY, target) or target == ANY:
            return True
        inner = node
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if source == T.UNKNOWN:
            if isinstance(inner, exp.Parameter):
                return self.infer_param(inner, target)
            if isinstance(inner, exp.Literal) and inner.is_string \
                    and not self.literal_fits(inner, target):
                return False
            self.coercions[id(node)] = target
            if inner is not node:
                self.coercions[id(inner)] = target
            return True
        if T.can_coerce(source, target):
            self.coercions[id(node)] = target
            return True
        if callable(what):
            what = what()
        self.invalid(f"{what} is {T.describe(source)}, not {T.describe(target)}", node,
                     f"Cast it explicitly (x::{type_keyword(target)}) or use a value of "
                     f"type {T.describe(target)}.")
        return False

    def literal_fits(self, node: Any, target: str) -> bool:
        text = str(node.this)
        try:
            if target == T.INT4:
                pgvalues.parse_int(text)
            elif target == T.INT8:
                pgvalues.parse_int(text, 64)
            elif target in (T.NUMERIC,):
                pgvalues.parse_numeric(text)
            elif target == T.FLOAT8:
                pgvalues.parse_float(text)
            elif target == T.BOOL:
                pgvalues.parse_bool(text)
            elif target == T.DATE:
                pgvalues.parse_date(text)
            elif target in (T.TIMESTAMP, T.TIMESTAMPTZ):
                pgvalues.parse_timestamp(text)
            elif target == T.INTERVAL:
                pgvalues.parse_interval(text)
            elif target == T.JSONB:
                parse_json(text)
            elif T.is_array(target):
                return bool(self.unsupported("subscripts", "An array literal '{…}'", node))
        except pgvalues.ValueInputError as error:
            self.invalid(str(error), node, "Write a valid value for the type.")
            return False
        return True

    def infer_param(self, node: Any, target: str) -> bool:
        number = int(str(node.this.this))
        known = self.param_types.get(number)
        if known is None or known == T.UNKNOWN:
            self.param_types[number] = target
            self.types[id(node)] = target
            return True
        if known != target:
            self.invalid(f"inconsistent types deduced for parameter ${number} "
                         f"({T.describe(known)} and {T.describe(target)})", node,
                         f"Cast each use to one type, e.g. ${number}::{type_keyword(known)}.")
            return False
        return True

    def common(self, nodes: list[Any], what: str, at: Any) -> str:
        """Resolve `nodes` to their common type (CASE, COALESCE, IN, VALUES, UNION)."""
        types = [self.t(n) for n in nodes]
        if ANY in types:
            return ANY
        found = T.common_type(types)
        if found is None:
            shown = " and ".join(dict.fromkeys(T.describe(t) for t in types if t != T.UNKNOWN))
            return self.invalid(f"{what} types {shown} cannot be matched", at,
                                "Give every branch the same type, casting where needed.")
        for node in nodes:
            self.coerce(node, found, what)
        return found

    def require_bool(self, node: Any, what: str) -> None:
        self.coerce(node, T.BOOL, f"the argument of {what}")


def sql_text(node: Any) -> str:
    return str(node.sql(dialect="postgres"))


def describe_node(node: Any) -> str:
    if isinstance(node, exp.Func):
        return f"Function {function_name(node)}()"
    text = sql_text(node)
    return f"`{text[:40]}{'…' if len(text) > 40 else ''}`"


def type_keyword(type_: str) -> str:
    return {T.TIMESTAMP: "timestamp", T.TIMESTAMPTZ: "timestamptz", T.FLOAT8: "float8",
            T.INT4: "int", T.INT8: "bigint"}.get(type_, type_)


def parse_json(text: str) -> None:
    try:
        json.loads(text)
    except ValueError:
        raise pgvalues.ValueInputError("invalid input syntax for type json") from None
