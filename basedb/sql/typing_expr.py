"""Typing expressions as PostgreSQL does: literals, operators, CASE, predicates.

`ExpressionTyper` is the expression half of `basedb.sql.typing.Typer`, on top of
`typing_calls.CallTyper` (functions, casts, windows) and `typing_base.TyperBase`
(walking, reporting, conversions); `HANDLERS` maps each parse-tree class to its rule.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from basedb.sql import pgtypes as T
from basedb.sql import pgvalues
from basedb.sql.scope import is_all_call
from basedb.sql.typing_base import ANY, COMPARISONS, NUMERIC_TEXT_FIX, QUERIES, sql_text
from basedb.sql.typing_calls import CallTyper

_OPERATOR_TEXT = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">",
                  exp.GTE: ">=", exp.NullSafeEQ: "IS NOT DISTINCT FROM",
                  exp.NullSafeNEQ: "IS DISTINCT FROM", exp.Add: "+", exp.Sub: "-",
                  exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.Pow: "^", exp.DPipe: "||"}


class ExpressionTyper(CallTyper):
    """Literals, operators, predicates and CASE; see the module docstring."""

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
            # The field's SQL is printed only if the comparison is reported.
            self.coerce(other, T.TEXT, lambda: "the value compared with multi-valued field "
                        f"{sql_text(multi)}")
            return T.BOOL
        lt, rt = self.t(left), self.t(right)
        if ANY in (lt, rt):
            return T.BOOL
        if T.is_array(lt) or T.is_array(rt) or T.JSONB in (lt, rt):
            what = "arrays" if T.is_array(lt) or T.is_array(rt) else "jsonb values"
            return self._problem("SQL_UNSUPPORTED", f"Comparing {what} with "
                                 f"{_OPERATOR_TEXT.get(type(node), '=')} is not supported "
                                 "by basedb.",
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
                                     "supported by basedb.", "Aggregate with string_agg(…) "
                                     "instead.", side)
            if type_ == T.NUMERIC:
                return self._problem("SQL_UNSUPPORTED", "A numeric value as text is not "
                                     "supported by basedb (its digits after the point "
                                     "depend on how it was computed).", NUMERIC_TEXT_FIX, side)
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

    def exists(self, node: Any, scope: Any) -> str:
        return T.BOOL

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

    def placeholder(self, node: Any, scope: Any) -> str:
        return ANY  # `?`, `:name`: reported as undeclared parameters

    def boolean(self, node: Any, scope: Any) -> str:
        return T.BOOL

    def null(self, node: Any, scope: Any) -> str:
        return T.UNKNOWN


ExpressionTyper.HANDLERS = {
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
    exp.Date: ExpressionTyper.date_call, exp.Explode: ExpressionTyper.unnest,
}
for _comparison in COMPARISONS:
    ExpressionTyper.HANDLERS[_comparison] = ExpressionTyper.comparison
