"""Typing expressions as PostgreSQL does: operators, functions, casts, literals.

`ExpressionTyper` is the expression half of `basedb.check.sql.typing.Typer`. Nodes are
typed children first, with an explicit stack (a query with thousands of ANDs must not
exhaust Python's recursion limit); each handler reads its children's types, records the
conversions PostgreSQL would apply to them (`coerce`), and returns its own type. What
PostgreSQL would refuse is SQL_INVALID; what it accepts but the subset does not is
SQL_UNSUPPORTED, with what to write instead. After a problem the node types as `ANY`,
which fits everywhere, so one mistake is reported once.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from basedb.check.sql import pgtypes as T
from basedb.check.sql import pgvalues
from basedb.check.sql.constructs import instead
from basedb.check.sql.functions import FUNCTIONS, FunctionSpec, Signature
from basedb.check.sql.model import ColumnRef, SqlProblem, line_column, node_offset
from basedb.check.sql.scope import is_all_call

ANY = "?"  # the type of a node after a problem, or of a name that was not resolved

# Nodes typed by their parent (their children are not expressions of the query).
OPAQUE: tuple[type, ...] = (exp.DataType, exp.Var, exp.JSONPath, exp.Identifier,
                            exp.WindowSpec, exp.Star, exp.DataTypeParam)
QUERIES: tuple[type, ...] = (exp.Select, exp.SetOperation, exp.Subquery)

# Functions PostgreSQL has that the subset refuses, with the construct that says why.
_REFUSED_FUNCTIONS = {
    "regexp_replace": "regex", "regexp_match": "regex", "regexp_matches": "regex",
    "regexp_like": "regex", "regexp_split_to_array": "regex", "regexp_count": "regex",
    "regexp_substr": "regex", "regexp_instr": "regex", "unnest": "table_functions",
    "generate_series": "table_functions", "age": "interval_value",
    "justify_days": "interval_value", "justify_hours": "interval_value",
    "make_interval": "interval_value",
}
# Names from other SQL dialects that PostgreSQL does not have.
_OTHER_DIALECTS = {
    "ifnull": "coalesce(a, b)", "nvl": "coalesce(a, b)", "isnull": "coalesce(a, b)",
    "iif": "CASE WHEN … THEN … ELSE … END", "if": "CASE WHEN … THEN … ELSE … END",
    "len": "length(s)", "instr": "strpos(s, sub)", "charindex": "strpos(s, sub)",
    "substring_index": "split_part(s, sep, n)", "datediff": "a::date - b::date",
    "dateadd": "x + INTERVAL '1 day'", "getdate": "now()", "sysdate": "now()",
    "current_timestamp": "CURRENT_TIMESTAMP (without parentheses)",
    "current_date": "CURRENT_DATE (without parentheses)", "group_concat": "string_agg(x, ',')",
    "strftime": "date_trunc() or extract()", "julianday": "extract(epoch FROM x)",
    "to_char": "extract(…), date_trunc(…) or x::date::text",
    "to_date": "x::date (ISO 8601 text)", "format": "concat() or ||",
    "json_array_length": "jsonb_array_length(x)", "json_typeof": "jsonb_typeof(x)",
    "array_position": "= ANY(…)", "array_to_string": "string_agg() over the values",
}
_EXTRACT_FIELDS = frozenset({
    "year", "quarter", "month", "week", "day", "dow", "isodow", "doy", "hour", "minute",
    "second", "milliseconds", "microseconds", "epoch", "isoyear", "decade", "century",
    "millennium", "julian"})
_DATE_ONLY_FIELDS = frozenset({"year", "quarter", "month", "week", "day", "dow", "isodow",
                               "doy", "epoch", "isoyear", "decade", "century", "millennium",
                               "julian"})
TRUNC_UNITS = frozenset({"microseconds", "milliseconds", "second", "minute", "hour", "day",
                         "week", "month", "quarter", "year", "decade", "century",
                         "millennium"})
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ,
                exp.NullSafeNEQ)
_OPERATOR_TEXT = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">",
                  exp.GTE: ">=", exp.NullSafeEQ: "IS NOT DISTINCT FROM",
                  exp.NullSafeNEQ: "IS DISTINCT FROM", exp.Add: "+", exp.Sub: "-",
                  exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.Pow: "^", exp.DPipe: "||"}
_NUMERIC_TEXT_FIX = ("Convert it first: x::float8::text, or round(x)::bigint::text for a "
                     "whole number")
_UNSUPPORTED_NODES: dict[type, str] = {
    exp.Lateral: "lateral", exp.Tuple: "row_values", exp.Bracket: "subscripts",
    exp.RegexpLike: "regex", exp.RegexpILike: "regex", exp.SimilarTo: "regex",
    exp.ByteString: "escape_strings", exp.Collate: "collate", exp.Unnest: "table_functions",
}
for _name in ("UnicodeString", "RawString", "National", "HexString", "BitString"):
    if isinstance(getattr(exp, _name, None), type):
        _UNSUPPORTED_NODES[getattr(exp, _name)] = "escape_strings"


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


class ExpressionTyper:
    """Types one expression tree at a time; see the module docstring."""

    sql: str
    problems: list[SqlProblem]
    types: dict[int, str]
    coercions: dict[int, str]
    param_types: dict[int, str]
    declared: tuple[str | None, ...]
    _reported: set[int]

    # Implemented by the query half.
    def column_type(self, node: Any, ref: ColumnRef | None, scope: Any) -> str:
        raise NotImplementedError

    def query_columns(self, node: Any, scope: Any) -> list[tuple[str, str]]:
        raise NotImplementedError

    # ------------------------------------------------------------------ reporting

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
        return self._problem("SQL_UNSUPPORTED", f"{what} is not supported: a Database "
                             "Function may use only the SQL subset listed in docs/sql.md.",
                             instead(key), node, keyword)

    # ------------------------------------------------------------------ walking

    def expr(self, root: Any, scope: Any) -> str:
        """Type `root` and everything under it; its type."""
        stack: list[tuple[Any, bool]] = [(root, False)]
        types = self.types
        while stack:
            node, ready = stack.pop()
            if ready:
                types[id(node)] = self.handle(node, scope)
                continue
            if isinstance(node, (*QUERIES, exp.Values)):
                types[id(node)] = self.subquery_type(node, scope)
                continue
            if isinstance(node, OPAQUE):
                types[id(node)] = ANY
                continue
            stack.append((node, True))
            stack.extend((child, False) for child in node.iter_expressions())
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
        handler = _HANDLERS.get(kind)
        if handler is None:
            for base, candidate in _BASE_HANDLERS:
                if issubclass(kind, base):
                    handler = candidate
                    break
        if handler is None:
            key = _UNSUPPORTED_NODES.get(kind)
            if key is not None:
                return self.unsupported(key, _describe_node(node), node)
            return self._problem(
                "SQL_UNSUPPORTED", f"{_describe_node(node)} is not supported: a Database "
                "Function may use only the SQL subset listed in docs/sql.md.",
                "Rewrite it with the constructs and functions docs/sql.md lists.", node)
        result = handler(self, node, scope)
        if result == T.INTERVAL and not isinstance(node.parent, (exp.Add, exp.Sub, exp.Mul,
                                                                 exp.Paren, exp.Neg)):
            return self.unsupported("interval_value", "An interval value here", node)
        return result

    # ------------------------------------------------------------------ coercion

    def coerce(self, node: Any, target: str, what: str) -> bool:
        """Convert `node` to `target` as PostgreSQL would (implicitly), or report it."""
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
        self.invalid(f"{what} is {T.describe(source)}, not {T.describe(target)}", node,
                     f"Cast it explicitly (x::{_type_keyword(target)}) or use a value of "
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
                _parse_json(text)
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
                         f"Cast each use to one type, e.g. ${number}::{_type_keyword(known)}.")
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

    # ------------------------------------------------------------------ leaves

    def literal(self, node: Any, scope: Any) -> str:
        if node.is_string:
            return T.UNKNOWN
        text = str(node.this)
        if text.isdigit():
            value = int(text)
            if value <= pgvalues.INT4_RANGE[1]:
                return T.INT4
            if value <= pgvalues.INT8_RANGE[1]:
                return T.INT8
        return T.NUMERIC

    def parameter(self, node: Any, scope: Any) -> str:
        if not isinstance(node.this, exp.Literal):
            return ANY
        text = str(node.this.this)
        if not (text.isascii() and text.isdigit()):
            return ANY
        number = int(text)
        kind = self.declared[number - 1] if 0 < number <= len(self.declared) else None
        if kind is not None:
            self.param_types[number] = kind
            return kind
        return self.param_types.setdefault(number, T.UNKNOWN)

    def column(self, node: Any, scope: Any) -> str:
        if isinstance(node.this, exp.Star):
            return self.unsupported("row_values", "A whole-row reference t.*", node) \
                if not isinstance(node.parent, exp.Select) else ANY
        return self.column_type(node, None, scope)

    # ------------------------------------------------------------------ operators

    def logical(self, node: Any, scope: Any) -> str:
        word = "AND" if isinstance(node, exp.And) else "OR"
        self.require_bool(node.this, word)
        self.require_bool(node.expression, word)
        return T.BOOL

    def negation(self, node: Any, scope: Any) -> str:
        self.require_bool(node.this, "NOT")
        return T.BOOL

    def minus(self, node: Any, scope: Any) -> str:
        inner = self.t(node.this)
        if inner in (ANY, T.INTERVAL) or T.is_number(inner):
            return inner
        return self.invalid(f"operator does not exist: - {T.describe(inner)}", node)

    def paren(self, node: Any, scope: Any) -> str:
        return self.t(node.this)

    def comparison(self, node: Any, scope: Any) -> str:
        left, right = node.this, node.expression
        if isinstance(right, exp.Any) or is_all_call(right):
            return self.quantified(node, left, right)
        if isinstance(left, exp.Any) or is_all_call(left):
            return self.invalid("ANY / ALL must be on the right of the comparison", node,
                                "Write x = ANY(…).")
        multi = self.multi_side(node)
        if multi is not None:
            other = right if multi is left else left
            if self.multi_side_of(other):
                return self.unsupported("row_values", "Comparing two multi-valued fields",
                                        node)
            self.coerce(other, T.TEXT, f"the value compared with multi-valued field "
                        f"{_sql(multi)}")
            return T.BOOL
        lt, rt = self.t(left), self.t(right)
        if ANY in (lt, rt):
            return T.BOOL
        if T.is_array(lt) or T.is_array(rt) or T.JSONB in (lt, rt):
            what = "arrays" if T.is_array(lt) or T.is_array(rt) else "jsonb values"
            return self._problem("SQL_UNSUPPORTED", f"Comparing {what} with "
                                 f"{_OPERATOR_TEXT.get(type(node), '=')} is not supported.",
                                 "Compare elements (x = ANY(array)) or extracted values "
                                 "(x ->> 'key').", node)
        target = T.comparable(lt, rt)
        if target is None:
            op = _OPERATOR_TEXT.get(type(node), "=")
            return self.invalid(f"operator does not exist: {T.describe(lt)} {op} "
                                f"{T.describe(rt)}", node, "Compare values of one type; cast "
                                "one side explicitly if that is what you mean.")
        self.coerce(left, target, "the left side")
        self.coerce(right, target, "the right side")
        return T.BOOL

    def multi_side(self, node: Any) -> Any:
        """The multi-valued field compared by an `=` / `<>` (the node), or None."""
        if not isinstance(node, (exp.EQ, exp.NEQ, exp.In)):
            return None
        for side in ((node.this,) if isinstance(node, exp.In) else (node.this,
                                                                     node.expression)):
            if self.multi_side_of(side):
                return side
        return None

    def multi_side_of(self, node: Any) -> bool:
        ref = self.resolution_ref(node)
        return ref is not None and ref.field is not None and ref.field.is_multi_valued

    def resolution_ref(self, node: Any) -> ColumnRef | None:
        raise NotImplementedError

    def quantified(self, node: Any, left: Any, right: Any) -> str:
        is_any = isinstance(right, exp.Any)
        if not ((is_any and isinstance(node, exp.EQ)) or (not is_any
                                                         and isinstance(node, exp.NEQ))):
            return self.unsupported("quantified_other", f"{_OPERATOR_TEXT.get(type(node))} "
                                    f"{'ANY' if is_any else 'ALL'} (…)", node)
        inner = right.this if is_any else right.expressions[0]
        while isinstance(inner, exp.Paren):
            inner = inner.this
        lt = T.TEXT if self.multi_side_of(left) else self.t(left)
        inner_type = self.t(inner)
        if isinstance(inner, QUERIES):
            element = inner_type
        elif inner_type in (ANY,):
            return T.BOOL
        elif inner_type == T.UNKNOWN:
            if isinstance(inner, exp.Parameter) and lt not in (ANY, T.UNKNOWN):
                self.infer_param(inner, T.array_of(lt))
                return T.BOOL
            return self.unsupported("subscripts", "An array literal '{…}'", inner)
        elif not T.is_array(inner_type):
            return self.invalid(f"op ANY/ALL (array) requires array on right side, not "
                                f"{T.describe(inner_type)}", inner,
                                "Pass an array parameter (TEXT[], INT[], NUMBER[]).")
        else:
            element = T.element(inner_type)
        if ANY in (lt, element):
            return T.BOOL
        target = T.comparable(lt, element)
        if target is None:
            return self.invalid(f"operator does not exist: {T.describe(lt)} = "
                                f"{T.describe(element)}", node)
        if not self.multi_side_of(left):
            self.coerce(left, target, "the left side")
        return T.BOOL

    def in_list(self, node: Any, scope: Any) -> str:
        query = node.args.get("query")
        if node.args.get("unnest") or node.args.get("field"):
            return self.unsupported("table_functions", "IN UNNEST(…)", node)
        left = node.this
        multi = self.multi_side_of(left)
        if query is not None:
            columns = self.t(query)
            if T.is_array(columns):
                # x IN (SELECT <multi-valued field> …): any element of any row.
                columns = T.element(columns)
            target = T.comparable(T.TEXT if multi else self.t(left), columns)
            if target is None:
                return self.invalid("IN compares values of different types", node)
            if not multi:
                self.coerce(left, target, "the left side of IN")
            return T.BOOL
        values = list(node.expressions)
        if multi:
            for value in values:
                self.coerce(value, T.TEXT, "a value of IN on a multi-valued field")
            return T.BOOL
        self.common([left, *values], "IN", node)
        return T.BOOL

    def between(self, node: Any, scope: Any) -> str:
        parts = [node.this, node.args.get("low"), node.args.get("high")]
        types = [self.t(p) for p in parts]
        if ANY in types:
            return T.BOOL
        for bound in parts[1:]:
            target = T.comparable(types[0], self.t(bound))
            if target is None:
                return self.invalid(f"operator does not exist: {T.describe(types[0])} >= "
                                    f"{T.describe(self.t(bound))}", node)
            self.coerce(bound, target, "a bound of BETWEEN")
            self.coerce(parts[0], target, "the value of BETWEEN")
        return T.BOOL

    def like(self, node: Any, scope: Any) -> str:
        for side in (node.this, node.expression):
            if self.multi_side_of(side):
                return self.invalid("operator does not exist: text[] ~~ text", side,
                                    "Match one element instead, e.g. with EXISTS over the "
                                    "values, or compare with = ANY.")
            self.coerce(side, T.TEXT, "an operand of LIKE")
        return T.BOOL

    def escape(self, node: Any, scope: Any) -> str:
        char = node.expression
        if not (isinstance(char, exp.Literal) and char.is_string):
            return self.unsupported("like_escape", "An ESCAPE that is not a literal", char)
        if len(str(char.this)) > 1:
            return self.invalid("invalid escape string", char, "ESCAPE takes one character.")
        return self.t(node.this)

    def is_(self, node: Any, scope: Any) -> str:
        target = node.expression
        if isinstance(target, exp.Null):
            return T.BOOL
        if isinstance(target, exp.Boolean):
            self.require_bool(node.this, "IS TRUE / IS FALSE")
            return T.BOOL
        return self.invalid("IS takes NULL, TRUE or FALSE", node)

    def arithmetic(self, node: Any, scope: Any) -> str:
        left, right = node.this, node.expression
        lt, rt = self.t(left), self.t(right)
        op = _OPERATOR_TEXT.get(type(node), "?")
        if ANY in (lt, rt):
            return ANY
        if T.UNKNOWN in (lt, rt):
            known = rt if lt == T.UNKNOWN else lt
            if known == T.UNKNOWN or not T.is_number(known):
                return self.invalid(f"operator is not unique: {T.describe(lt)} {op} "
                                    f"{T.describe(rt)}", node, "Cast the literal to the "
                                    "type you mean, e.g. DATE '2024-01-31' or 1::int.")
            self.coerce(left if lt == T.UNKNOWN else right, known, "an operand")
            lt = rt = known
        if T.is_number(lt) and T.is_number(rt):
            return self.number_arithmetic(node, lt, rt, op)
        if isinstance(node, (exp.Add, exp.Sub)):
            found = self.datetime_arithmetic(node, lt, rt)
            if found is not None:
                return found
        if isinstance(node, exp.Mul) and T.INTERVAL in (lt, rt):
            other = right if lt == T.INTERVAL else left
            if T.is_number(self.t(other)):
                self.coerce(other, T.FLOAT8, "the factor of an interval")
                return T.INTERVAL
        return self.invalid(f"operator does not exist: {T.describe(lt)} {op} "
                            f"{T.describe(rt)}", node)

    def number_arithmetic(self, node: Any, lt: str, rt: str, op: str) -> str:
        wide = T.wider_number(lt, rt)
        divisor = node.expression
        while isinstance(divisor, (exp.Paren, exp.Neg)):
            divisor = divisor.this
        if isinstance(node, (exp.Div, exp.Mod)) and isinstance(divisor, exp.Literal) \
                and not divisor.is_string and float(str(divisor.this)) == 0:
            # PostgreSQL folds constants before it runs a query: every call fails.
            return self.invalid("division by zero", node, "Divide by something else than "
                                "the constant 0.")
        if isinstance(node, exp.Pow):
            wide = T.NUMERIC if T.NUMERIC in (lt, rt) and T.FLOAT8 not in (lt, rt) else T.FLOAT8
        if isinstance(node, exp.Mod) and wide == T.FLOAT8:
            return self.invalid("operator does not exist: double precision % double "
                                "precision", node, "Use mod(x::numeric, y) or round first.")
        self.coerce(node.this, wide, "an operand")
        self.coerce(node.expression, wide, "an operand")
        return wide

    def datetime_arithmetic(self, node: Any, lt: str, rt: str) -> str | None:
        add = isinstance(node, exp.Add)
        ints = (T.INT4,)
        if lt == T.DATE and rt in ints:
            return T.DATE
        if add and lt in ints and rt == T.DATE:
            return T.DATE
        if lt == T.DATE and rt == T.DATE and not add:
            return T.INT4
        if T.INTERVAL in (lt, rt):
            moment, interval = (lt, rt) if rt == T.INTERVAL else (rt, lt)
            if interval != T.INTERVAL or (lt == T.INTERVAL and not add):
                return None
            if moment == T.DATE:
                self.coerce(node.this if lt == T.DATE else node.expression, T.TIMESTAMP,
                            "the date")
                return T.TIMESTAMP
            if moment in (T.TIMESTAMP, T.TIMESTAMPTZ):
                return moment
            return None
        if T.is_datetime(lt) and T.is_datetime(rt) and not add and lt != T.DATE:
            self.unsupported("interval_value", "The difference of two timestamps (an "
                             "interval)", node)
            return ANY
        return None

    def concatenation(self, node: Any, scope: Any) -> str:
        sides = (node.this, node.expression)
        types = [self.t(s) for s in sides]
        if ANY in types:
            return T.TEXT
        if not any(t in (T.TEXT, T.UNKNOWN) for t in types):
            return self.invalid(f"operator does not exist: {T.describe(types[0])} || "
                                f"{T.describe(types[1])}", node, "Cast one side to text, "
                                "or use concat(…).")
        for side, type_ in zip(sides, types, strict=True):
            if T.is_array(type_):
                return self._problem("SQL_UNSUPPORTED", "Array concatenation with || is not "
                                     "supported.", "Aggregate with string_agg(…) instead.",
                                     side)
            if type_ == T.NUMERIC:
                return self._problem("SQL_UNSUPPORTED", "A numeric value as text is not "
                                     "supported (its digits after the point depend on how "
                                     "it was computed).", _NUMERIC_TEXT_FIX, side)
            if type_ == T.UNKNOWN:
                self.coerce(side, T.TEXT, "an operand of ||")
        return T.TEXT

    def case(self, node: Any, scope: Any) -> str:
        operand = node.this
        results = [branch.args.get("true") for branch in node.args.get("ifs") or ()]
        default = node.args.get("default")
        for branch in node.args.get("ifs") or ():
            condition = branch.this
            if operand is not None:
                target = T.comparable(self.t(operand), self.t(condition))
                if target is None and ANY not in (self.t(operand), self.t(condition)):
                    self.invalid(f"operator does not exist: {T.describe(self.t(operand))} = "
                                 f"{T.describe(self.t(condition))}", condition)
                elif target is not None:
                    self.coerce(condition, target, "a CASE value")
                    self.coerce(operand, target, "the CASE operand")
            else:
                self.require_bool(condition, "CASE/WHEN")
        if default is not None:
            results.append(default)
        return self.common(results, "CASE", node)

    def branch(self, node: Any, scope: Any) -> str:
        return self.t(node.args.get("true"))

    def alias(self, node: Any, scope: Any) -> str:
        return self.t(node.this)

    def ordered(self, node: Any, scope: Any) -> str:
        return self.t(node.this)

    def distinct(self, node: Any, scope: Any) -> str:
        items = list(node.expressions)
        return self.t(items[0]) if len(items) == 1 else ANY

    def order(self, node: Any, scope: Any) -> str:
        return self.t(node.this) if node.this is not None else ANY

    def where(self, node: Any, scope: Any) -> str:
        self.require_bool(node.this, "FILTER (WHERE …)")
        return T.BOOL

    def interval(self, node: Any, scope: Any) -> str:
        value, unit = node.this, node.args.get("unit")
        if not (isinstance(value, exp.Literal) and value.is_string):
            return self.unsupported("interval_value", "An INTERVAL that is not a literal",
                                    node)
        text = str(value.this) + (f" {unit.name}" if isinstance(unit, exp.Var) else "")
        if unit is not None and not isinstance(unit, exp.Var):
            return self.unsupported("interval_value", "This INTERVAL form", node)
        try:
            pgvalues.parse_interval(text)
        except pgvalues.ValueInputError as error:
            return self.invalid(str(error), node, "Write INTERVAL 'N unit', e.g. INTERVAL "
                                "'3 days'.")
        return T.INTERVAL

    def cast(self, node: Any, scope: Any) -> str:
        if isinstance(node, exp.TryCast) or node.args.get("format"):
            return self.unsupported("cast_forms", "This cast form", node)
        target = cast_target(node.to)
        if target is None:
            return self.unsupported("other_types", f"Type {node.to.sql(dialect='postgres')}",
                                    node.to if node_offset(node.to) is not None else node)
        return self.cast_to(node, node.this, target)

    def cast_to(self, node: Any, value: Any, target: str) -> str:
        """An explicit conversion of `value` to `target` (CAST, ::, date(x), …)."""
        source = self.t(value)
        inner = value
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if source in (ANY, target):
            return target
        if source == T.UNKNOWN:
            if isinstance(inner, exp.Parameter):
                self.infer_param(inner, target)
                return target
            if isinstance(inner, exp.Literal) and inner.is_string:
                self.literal_fits(inner, target)
            return target
        if not _castable(source, target):
            return self.invalid(f"cannot cast type {T.describe(source)} to "
                                f"{T.describe(target)}", node)
        if source == T.NUMERIC and target == T.TEXT:
            return self._problem("SQL_UNSUPPORTED", "A numeric value as text is not "
                                 "supported (its digits after the point depend on how it was "
                                 "computed).", _NUMERIC_TEXT_FIX, node)
        return target

    def json_get(self, node: Any, scope: Any) -> str:
        source = self.t(node.this)
        path = node.expression
        parts = list(path.expressions) if isinstance(path, exp.JSONPath) else []
        if len(parts) != 2 or not isinstance(parts[1], (exp.JSONPathKey,
                                                         exp.JSONPathSubscript)) or not (
                isinstance(parts[1].this, (str, int))):
            return self.unsupported("json_paths", "This JSON path", node)
        if source not in (T.JSONB, ANY):
            op = "->>" if isinstance(node, exp.JSONExtractScalar) else "->"
            return self.invalid(f"operator does not exist: {T.describe(source)} {op} "
                                "unknown", node, "Use -> and ->> on attachment and location "
                                "fields (jsonb).")
        return T.TEXT if isinstance(node, exp.JSONExtractScalar) else T.JSONB

    def array(self, node: Any, scope: Any) -> str:
        if not isinstance(node.parent, (exp.Any, exp.Paren)) and not is_all_call(
                node.parent):
            return self._problem("SQL_UNSUPPORTED", "ARRAY[…] is supported only in = ANY "
                                 "(ARRAY[…]) and <> ALL (ARRAY[…]).",
                                 "Use IN (…) / NOT IN (…), or an array parameter.", node)
        items = list(node.expressions)
        if not items:
            return self.invalid("cannot determine type of empty array", node)
        element = self.common(items, "ARRAY", node)
        return ANY if element == ANY else T.array_of(element)

    def exists(self, node: Any, scope: Any) -> str:
        return T.BOOL

    def quantifier(self, node: Any, scope: Any) -> str:
        if not isinstance(node.parent, _COMPARISONS):
            return self.invalid("ANY / ALL is allowed only on the right of a comparison", node)
        return ANY

    def special_value(self, node: Any, scope: Any) -> str:
        if node.args.get("this") is not None:
            return self.unsupported("other_types", "A precision on the current time", node)
        if isinstance(node, exp.CurrentTimestamp):
            return T.TIMESTAMPTZ
        if isinstance(node, exp.CurrentDate):
            return T.DATE
        return T.TIMESTAMP

    def current_user(self, node: Any, scope: Any) -> str:
        return T.TEXT

    def date_call(self, node: Any, scope: Any) -> str:
        if node.args.get("zone") or node.expressions:
            return self.invalid("function date takes one argument", node)
        return self.cast_to(node, node.this, T.DATE)

    def placeholder(self, node: Any, scope: Any) -> str:
        return ANY  # `?`, `:name`: reported as undeclared parameters

    def boolean(self, node: Any, scope: Any) -> str:
        return T.BOOL

    def null(self, node: Any, scope: Any) -> str:
        return T.UNKNOWN

    # ------------------------------------------------------------------ functions

    def call(self, node: Any, scope: Any) -> str:
        name = function_name(node)
        if name == "all" and is_all_call(node):
            return self.quantifier(node, scope)
        spec = FUNCTIONS.get(name)
        if spec is None or name in ("extract", "position", "current_user_id"):
            return self.unknown_function(name, node)
        args, distinct, order = call_parts(node)
        windowed = is_windowed(node)
        if spec.kind == "window" and not windowed:
            return self.invalid(f"window function {name} requires an OVER clause", node,
                                f"Add OVER (…), e.g. {name}() OVER (ORDER BY …).")
        if spec.kind == "scalar" and (windowed or distinct or order
                                      or isinstance(node.parent, exp.Filter)):
            return self.invalid(f"{name} is not an aggregate or window function", node)
        if (distinct or order) and spec.kind != "aggregate":
            return self.invalid(f"DISTINCT / ORDER BY is only for aggregates, not {name}",
                                node)
        if order and name not in ("string_agg", "array_agg"):
            return self.unsupported("windowed_ordered_aggregate", f"ORDER BY inside {name}()",
                                    node)
        if order and windowed:
            return self.unsupported("windowed_ordered_aggregate", f"{name}(… ORDER BY …) "
                                    "OVER (…)", node)
        if distinct and windowed:
            return self.invalid("DISTINCT is not implemented for window functions", node)
        rule = _FUNCTION_RULES.get(name)
        if rule is not None:
            return rule(self, node, name, args)
        return self.resolve_call(node, spec, args)

    def unknown_function(self, name: str, node: Any) -> str:
        key = _REFUSED_FUNCTIONS.get(name)
        if key is not None:
            return self.unsupported(key, f"Function {name}()", node)
        alternative = _OTHER_DIALECTS.get(name)
        if alternative is not None:
            return self.invalid(f"function {name}() does not exist in PostgreSQL", node,
                                f"Write {alternative}.")
        close = difflib.get_close_matches(name, list(FUNCTIONS), n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        return self._problem("SQL_UNSUPPORTED", f"Function {name}() is not supported: a "
                             f"Database Function may call only the functions docs/sql.md "
                             f"lists.{hint}", "Use a function from docs/sql.md (the SQL "
                             "subset of Database Functions).", node)

    def resolve_call(self, node: Any, spec: FunctionSpec, args: list[Any]) -> str:
        types = [self.t(a) for a in args]
        chosen = choose_signature(spec.signatures, types)
        if chosen is None:
            shown = ", ".join(T.describe(t) for t in types)
            forms = "; ".join(f"{spec.name}{s.text}" for s in spec.signatures)
            return self.invalid(f"function {spec.name}({shown}) does not exist", node,
                                f"Call it as {forms}, casting arguments where needed.")
        for arg, wanted in zip(args, chosen.args, strict=False):
            self.coerce(arg, wanted, f"an argument of {spec.name}()")
        return chosen.result

    # Functions with rules of their own (generic or special forms).

    def _count(self, node: Any, name: str, args: list[Any]) -> str:
        if len(args) != 1:
            return self.invalid("count takes one argument (or *)", node)
        return T.INT8

    def _same_type(self, node: Any, name: str, args: list[Any]) -> str:
        if not args:
            return self.invalid(f"{name} needs at least one argument", node)
        found = self.common(args, name.upper(), node)
        if name in ("greatest", "least") and (T.is_array(found) or found == T.JSONB):
            return self.unsupported("row_values", f"{name} of arrays or jsonb", node)
        return found

    def _nullif(self, node: Any, name: str, args: list[Any]) -> str:
        if len(args) != 2:
            return self.invalid("nullif takes two arguments", node)
        first, second = (self.t(a) for a in args)
        target = T.comparable(first, second)
        if target is None:
            return self.invalid(f"operator does not exist: {T.describe(first)} = "
                                f"{T.describe(second)}", node)
        self.coerce(args[1], target, "the second argument of nullif()")
        if first == T.UNKNOWN:
            self.coerce(args[0], target, "the first argument of nullif()")
            return target
        return first

    def _min_max(self, node: Any, name: str, args: list[Any]) -> str:
        if len(args) != 1:
            return self.invalid(f"{name} takes one argument", node)
        found = self.t(args[0])
        if found == T.UNKNOWN:
            self.coerce(args[0], T.TEXT, f"the argument of {name}()")
            return T.TEXT
        if found == T.BOOL or T.is_array(found) or found == T.JSONB:
            return self.invalid(f"function {name}({T.describe(found)}) does not exist", node,
                                "Use bool_and / bool_or for booleans.")
        return found

    def _array_agg(self, node: Any, name: str, args: list[Any]) -> str:
        if len(args) != 1:
            return self.invalid("array_agg takes one argument", node)
        found = self.t(args[0])
        if found == T.UNKNOWN:
            return self.invalid("function array_agg(unknown) is not unique", node,
                                "Cast the value: array_agg('x'::text).")
        if T.is_array(found) or found in (T.JSONB, T.NUMERIC, T.TIMESTAMPTZ):
            return self.unsupported("subscripts", f"array_agg of {T.describe(found)}", node)
        return ANY if found == ANY else T.array_of(found)

    def _offset_window(self, node: Any, name: str, args: list[Any]) -> str:
        arity = {"lag": (1, 3), "lead": (1, 3), "nth_value": (2, 2)}.get(name, (1, 1))
        if not arity[0] <= len(args) <= arity[1]:
            return self.invalid(f"wrong number of arguments for {name}", node)
        if len(args) > 1:
            self.coerce(args[1], T.INT4, f"the offset of {name}()")
        if len(args) == 3:  # lag / lead (anycompatible, integer, anycompatible)
            return self.common([args[0], args[2]], name, node)
        value = self.t(args[0])
        if value == T.UNKNOWN:
            return self.invalid("could not determine polymorphic type because input has "
                                "type unknown", node, f"Cast the value: {name}('x'::text).")
        return value

    def _concat(self, node: Any, name: str, args: list[Any]) -> str:
        if name == "concat_ws":
            if not args:
                return self.invalid("concat_ws needs a separator", node)
            self.coerce(args[0], T.TEXT, "the separator of concat_ws()")
            args = args[1:]
        for arg in args:
            found = self.t(arg)
            if found == T.NUMERIC:
                return self._problem("SQL_UNSUPPORTED", "A numeric value as text is not "
                                     "supported (its digits after the point depend on how "
                                     "it was computed).", _NUMERIC_TEXT_FIX, arg)
            if T.is_array(found):
                return self._problem("SQL_UNSUPPORTED", "An array as text is not supported.",
                                     "Aggregate it with string_agg(…) instead.", arg)
            if found == T.UNKNOWN:
                self.coerce(arg, T.TEXT, f"an argument of {name}()")
        return T.TEXT

    def _array_size(self, node: Any, name: str, args: list[Any]) -> str:
        expected = 2 if name == "array_length" else 1
        if len(args) != expected:
            return self.invalid(f"{name} takes {expected} argument(s)", node)
        found = self.t(args[0])
        if found != ANY and not T.is_array(found):
            return self.invalid(f"function {name}({T.describe(found)}) does not exist", node,
                                "Pass a multi-valued field or an array parameter.")
        if name == "array_length":
            self.coerce(args[1], T.INT4, "the dimension of array_length()")
        return T.INT4

    def _date_trunc(self, node: Any, name: str, args: list[Any]) -> str:
        if len(args) == 3:
            return self._problem("SQL_UNSUPPORTED", "date_trunc(unit, x, zone) is not "
                                 "supported.", "Truncate in the site's time zone: "
                                 "date_trunc(unit, x).", node)
        unit = args[0] if args else None
        if isinstance(unit, exp.Literal) and unit.is_string:
            word = str(unit.this).strip().lower()
            if word.endswith("s") and word[:-1] in TRUNC_UNITS:
                word = word[:-1]
            if word not in TRUNC_UNITS:
                return self.invalid(f'unit "{unit.this}" not recognized', unit,
                                    "Use one of: " + ", ".join(sorted(TRUNC_UNITS)) + ".")
        return self.resolve_call(node, FUNCTIONS["date_trunc"], args)

    def _date_part(self, node: Any, name: str, args: list[Any]) -> str:
        if len(args) == 2 and isinstance(args[0], exp.Literal) and args[0].is_string:
            # date_part has no date variant: a date is read as a timestamp.
            source = T.TIMESTAMP if self.t(args[1]) == T.DATE else self.t(args[1])
            problem = self.extract_field(str(args[0].this), source, args[0])
            if problem:
                return ANY
        if len(args) == 2 and self.t(args[1]) == T.DATE:
            self.coerce(args[1], T.TIMESTAMP, "the date")
            self.coerce(args[0], T.TEXT, "the field")
            return T.FLOAT8
        return self.resolve_call(node, FUNCTIONS["date_part"], args)

    def extract_field(self, text: str, source: str, at: Any) -> bool:
        field = text.strip().lower()
        if field not in _EXTRACT_FIELDS:
            self.invalid(f'unit "{text}" not recognized', at, "Use one of: "
                         + ", ".join(sorted(_EXTRACT_FIELDS)) + ".")
            return True
        if source == T.DATE and field not in _DATE_ONLY_FIELDS:
            self.invalid(f'unit "{field}" not supported for type date', at,
                         "Extract it from a timestamp.")
            return True
        return False

    def _function_cast(self, node: Any, name: str, args: list[Any]) -> str:
        if len(args) != 1:
            return self.invalid(f"function {name} takes one argument", node)
        target = FUNCTIONS[name].signatures[0].result
        return self.cast_to(node, args[0], target)

    def _string_agg(self, node: Any, name: str, args: list[Any]) -> str:
        if len(args) != 2:
            return self.invalid("string_agg takes a value and a separator", node)
        self.coerce(args[0], T.TEXT, "the value of string_agg()")
        self.coerce(args[1], T.TEXT, "the separator of string_agg()")
        return T.TEXT

    def extract(self, node: Any, scope: Any) -> str:
        unit = node.this
        source = self.t(node.expression)
        if source == T.UNKNOWN:
            return self.invalid("EXTRACT needs a typed value", node.expression,
                                "Cast it: TIMESTAMP '2024-05-01 10:00'.")
        if source not in (ANY, *T.DATETIMES):
            return self.invalid(f"function extract(unknown, {T.describe(source)}) does not "
                                "exist", node)
        if isinstance(unit, exp.Var) and self.extract_field(unit.name, source, node):
            return ANY
        return T.NUMERIC

    def substring(self, node: Any, scope: Any) -> str:
        args = [node.this, node.args.get("start"), node.args.get("length")]
        if args[1] is None:
            return self.unsupported("regex", "substring(s FROM pattern)", node)
        return self.resolve_call(node, FUNCTIONS["substr"], [a for a in args if a is not None])

    def str_position(self, node: Any, scope: Any) -> str:
        if node.args.get("position") is not None:
            return self.invalid("function position with a start does not exist", node)
        return self.resolve_call(node, FUNCTIONS["strpos"], [node.this, node.args["substr"]])

    def trim(self, node: Any, scope: Any) -> str:
        if node.args.get("collation"):
            return self.unsupported("collate", "COLLATE", node)
        args = [node.this] + ([node.expression] if node.expression is not None else [])
        return self.resolve_call(node, FUNCTIONS["trim"], args)

    def window(self, node: Any, scope: Any) -> str:
        func = node.this
        if isinstance(func, exp.Filter):
            func = func.this
        if not isinstance(func, exp.Anonymous):
            return self.unsupported("window_other", _describe_node(func) + " with OVER", node)
        spec = FUNCTIONS.get(function_name(func))
        if spec is None or spec.kind == "scalar":
            return self.invalid(f"OVER specified, but {function_name(func)} is not a window "
                                "function nor an aggregate function", node)
        self.frame(node)
        return self.t(node.this)

    def frame(self, node: Any) -> None:
        spec = node.args.get("spec")
        if spec is None:
            return
        kind = str(spec.args.get("kind") or "").upper()
        for key in ("start", "end"):
            bound = spec.args.get(key)
            if bound is None or isinstance(bound, str) or (
                    isinstance(bound, exp.Var) and bound.name.upper() in ("UNBOUNDED",
                                                                         "CURRENT ROW")):
                continue
            if kind == "RANGE":
                self._problem("SQL_UNSUPPORTED", "RANGE frames with an offset are not "
                              "supported.", "Use ROWS or GROUPS BETWEEN n PRECEDING AND …, or "
                              "RANGE with UNBOUNDED / CURRENT ROW.", node)
                return
            if not (isinstance(bound, exp.Literal) and not bound.is_string
                    and str(bound.this).isdigit()):
                self._problem("SQL_UNSUPPORTED", "A frame offset must be a whole-number "
                              "literal.", "Write ROWS BETWEEN 2 PRECEDING AND CURRENT ROW.",
                              node)
                return

    def filter(self, node: Any, scope: Any) -> str:
        inner = node.this
        spec = FUNCTIONS.get(function_name(inner)) if isinstance(inner, exp.Anonymous) else None
        if spec is None or spec.kind != "aggregate":
            return self.invalid("FILTER is not implemented for non-aggregate functions", node)
        return self.t(inner)


def _sql(node: Any) -> str:
    return str(node.sql(dialect="postgres"))


def _describe_node(node: Any) -> str:
    if isinstance(node, exp.Func):
        return f"Function {function_name(node)}()"
    text = _sql(node)
    return f"`{text[:40]}{'…' if len(text) > 40 else ''}`"


def _type_keyword(type_: str) -> str:
    return {T.TIMESTAMP: "timestamp", T.TIMESTAMPTZ: "timestamptz", T.FLOAT8: "float8",
            T.INT4: "int", T.INT8: "bigint"}.get(type_, type_)


def _parse_json(text: str) -> None:
    import json  # noqa: PLC0415  (only for the rare jsonb literal)

    try:
        json.loads(text)
    except ValueError:
        raise pgvalues.ValueInputError("invalid input syntax for type json") from None


def cast_target(data_type: Any) -> str | None:
    """The type a CAST names, or None when the subset has no such type."""
    if not isinstance(data_type, exp.DataType):
        return None
    params = data_type.expressions
    text = data_type.sql(dialect="postgres").lower()
    if params:
        if data_type.this == exp.DataType.Type.DECIMAL and len(params) <= 2 and all(
                isinstance(p, exp.DataTypeParam) and isinstance(p.this, exp.Literal)
                and not p.this.is_string for p in params):
            return T.NUMERIC
        if not data_type.is_type(exp.DataType.Type.ARRAY):
            return None
    return T.CAST_TARGETS.get(text)


def numeric_typmod(data_type: Any) -> tuple[int, int] | None:
    """(precision, scale) of numeric(p, s), else None."""
    params = data_type.expressions if isinstance(data_type, exp.DataType) else []
    if not params or data_type.this != exp.DataType.Type.DECIMAL:
        return None
    values = [int(str(p.this.this)) for p in params]
    return values[0], values[1] if len(values) > 1 else 0


def _castable(source: str, target: str) -> bool:
    if T.can_coerce(source, target) or source == target:
        return True
    if T.is_number(source) and T.is_number(target):
        return True
    if source == T.TEXT and not T.is_array(target):
        return True
    if target == T.TEXT and not T.is_array(source):
        return True
    if (source, target) in ((T.BOOL, T.INT4), (T.INT4, T.BOOL)):
        return True
    if source in (T.TIMESTAMP, T.TIMESTAMPTZ) and target in T.DATETIMES:
        return True
    return T.is_array(source) and T.is_array(target) and (
        T.element(source) == T.element(target)
        or (T.is_number(T.element(source)) and T.is_number(T.element(target))))


def choose_signature(signatures: tuple[Signature, ...], types: list[str]) -> Signature | None:
    """PostgreSQL's function resolution (manual 10.3), for fixed argument types."""
    candidates = []
    for sig in signatures:
        if len(sig.args) != len(types):
            continue
        exact, fits = 0, True
        for given, wanted in zip(types, sig.args, strict=True):
            if given in (ANY, wanted):
                exact += given == wanted
                continue
            if not T.can_coerce(given, wanted):
                fits = False
                break
        if fits:
            candidates.append((exact, sig))
    if not candidates:
        return None
    best = max(exact for exact, _ in candidates)
    remaining = [sig for exact, sig in candidates if exact == best]
    if len(remaining) > 1:
        def preferred(sig: Signature) -> int:
            return sum(1 for given, wanted in zip(types, sig.args, strict=True)
                       if given not in (wanted, ANY) and wanted in T._PREFERRED)
        top = max(preferred(sig) for sig in remaining)
        remaining = [sig for sig in remaining if preferred(sig) == top]
    return remaining[0]


_Handler = Callable[[ExpressionTyper, Any, Any], str]
_HANDLERS: dict[type, _Handler] = {
    exp.Literal: ExpressionTyper.literal, exp.Boolean: ExpressionTyper.boolean,
    exp.Null: ExpressionTyper.null, exp.Parameter: ExpressionTyper.parameter,
    exp.Column: ExpressionTyper.column, exp.And: ExpressionTyper.logical,
    exp.Or: ExpressionTyper.logical, exp.Not: ExpressionTyper.negation,
    exp.Neg: ExpressionTyper.minus, exp.Paren: ExpressionTyper.paren,
    exp.In: ExpressionTyper.in_list, exp.Between: ExpressionTyper.between,
    exp.Like: ExpressionTyper.like, exp.ILike: ExpressionTyper.like,
    exp.Escape: ExpressionTyper.escape, exp.Is: ExpressionTyper.is_,
    exp.Add: ExpressionTyper.arithmetic, exp.Sub: ExpressionTyper.arithmetic,
    exp.Mul: ExpressionTyper.arithmetic, exp.Div: ExpressionTyper.arithmetic,
    exp.Mod: ExpressionTyper.arithmetic, exp.Pow: ExpressionTyper.arithmetic,
    exp.DPipe: ExpressionTyper.concatenation, exp.Case: ExpressionTyper.case,
    exp.If: ExpressionTyper.branch, exp.Alias: ExpressionTyper.alias,
    exp.Ordered: ExpressionTyper.ordered, exp.Distinct: ExpressionTyper.distinct,
    exp.Order: ExpressionTyper.order, exp.Where: ExpressionTyper.where,
    exp.Interval: ExpressionTyper.interval, exp.Cast: ExpressionTyper.cast,
    exp.JSONExtract: ExpressionTyper.json_get,
    exp.JSONExtractScalar: ExpressionTyper.json_get, exp.Array: ExpressionTyper.array,
    exp.Exists: ExpressionTyper.exists, exp.Any: ExpressionTyper.quantifier,
    exp.CurrentTimestamp: ExpressionTyper.special_value,
    exp.CurrentDate: ExpressionTyper.special_value,
    exp.Localtimestamp: ExpressionTyper.special_value,
    exp.CurrentUserId: ExpressionTyper.current_user,
    exp.Anonymous: ExpressionTyper.call, exp.Extract: ExpressionTyper.extract,
    exp.Substring: ExpressionTyper.substring, exp.StrPosition: ExpressionTyper.str_position,
    exp.Trim: ExpressionTyper.trim, exp.Window: ExpressionTyper.window,
    exp.Filter: ExpressionTyper.filter, exp.Placeholder: ExpressionTyper.placeholder,
    exp.Date: ExpressionTyper.date_call,
}
for _comparison in _COMPARISONS:
    _HANDLERS[_comparison] = ExpressionTyper.comparison
_BASE_HANDLERS: tuple[tuple[type, _Handler], ...] = ()

_FUNCTION_RULES: dict[str, Callable[[ExpressionTyper, Any, str, list[Any]], str]] = {
    "count": ExpressionTyper._count, "coalesce": ExpressionTyper._same_type,
    "greatest": ExpressionTyper._same_type, "least": ExpressionTyper._same_type,
    "nullif": ExpressionTyper._nullif, "min": ExpressionTyper._min_max,
    "max": ExpressionTyper._min_max, "array_agg": ExpressionTyper._array_agg,
    "lag": ExpressionTyper._offset_window, "lead": ExpressionTyper._offset_window,
    "first_value": ExpressionTyper._offset_window,
    "last_value": ExpressionTyper._offset_window,
    "nth_value": ExpressionTyper._offset_window, "concat": ExpressionTyper._concat,
    "concat_ws": ExpressionTyper._concat, "cardinality": ExpressionTyper._array_size,
    "array_length": ExpressionTyper._array_size, "date_trunc": ExpressionTyper._date_trunc,
    "date_part": ExpressionTyper._date_part, "string_agg": ExpressionTyper._string_agg,
    "date": ExpressionTyper._function_cast, "text": ExpressionTyper._function_cast,
    "int4": ExpressionTyper._function_cast, "int8": ExpressionTyper._function_cast,
    "float8": ExpressionTyper._function_cast, "bool": ExpressionTyper._function_cast,
}
