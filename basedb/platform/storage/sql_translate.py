"""Translate typed PostgreSQL expressions into SQLite expressions with the same results.

`ExpressionRewriter` is the expression half of `sql_rewrite.Rewriter`. It works on the
compiler's private copy of the tree, children before parents, and reads the PostgreSQL
type of every node from the analysis (`basedb.check.sql.typing`). Each construct becomes
SQLite's own expression where SQLite agrees with PostgreSQL on every input (comparisons,
AND/OR, integer arithmetic, count/sum/min/max, windows), and a call of one of the
platform's `bdb_` functions (`sql_functions`) where it does not. Values use the local
representation of their type: booleans 0/1, dates and timestamps as PostgreSQL's text
(timestamptz in the site's time zone), jsonb and arrays as JSON text.
"""

from __future__ import annotations

import json
from typing import Any

from sqlglot import exp

from basedb.check.sql import pgtypes as T
from basedb.check.sql import pgvalues as V
from basedb.check.sql.typing_expr import (
    ANY,
    call_parts,
    cast_target,
    function_name,
    numeric_typmod,
)
from basedb.platform.storage.sql_functions import bdb_like_glob, has_window_functions
from basedb.platform.storage.sql_query import CompileError

_TEXT = exp.DataType.build("TEXT")
_INTEGER = exp.DataType.build("INTEGER")
_REAL = exp.DataType.build("REAL")
# date_trunc units SQLite's strftime computes exactly.
_TRUNC_FORMATS = {
    "year": "%Y-01-01 00:00:00", "month": "%Y-%m-01 00:00:00", "day": "%Y-%m-%d 00:00:00",
    "hour": "%Y-%m-%d %H:00:00", "minute": "%Y-%m-%d %H:%M:00",
    "second": "%Y-%m-%d %H:%M:%S",
}


def call(name: str, *args: Any) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


def string(text: str) -> exp.Literal:
    return exp.Literal.string(text)


def number(value: int | float) -> exp.Expression:
    if isinstance(value, float) and value != value:  # NaN
        return call("bdb_float", string("NaN"))
    if value < 0:
        return exp.Paren(this=exp.Neg(this=exp.Literal.number(repr(-value) if isinstance(
            value, float) else -value)))
    return exp.Literal.number(repr(value) if isinstance(value, float) else value)


def constant(value: Any) -> exp.Expression:
    """A Python value of the local representation as an SQLite literal."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Literal.number(int(value))
    if isinstance(value, (int, float)):
        return number(value)
    return string(str(value))


def _unit_text(node: Any) -> str | None:
    if isinstance(node, exp.Literal) and node.is_string:
        word = str(node.this).strip().lower()
        return word[:-1] if word.endswith("s") and word not in (
            "microseconds", "milliseconds") else word
    return None


class ExpressionRewriter:
    """Type-directed translation of expressions; see the module docstring."""

    zone: str
    marker: str
    final: dict[int, str]  # id(node of the rewritten tree) -> the type of its value
    coercions: dict[int, str]
    source_types: dict[int, str]

    # ------------------------------------------------------------------ types

    def type_of(self, node: Any) -> str:
        return self.final.get(id(node), ANY)

    def own_type(self, node: Any) -> str:
        return self.source_types.get(id(node), ANY)

    # ------------------------------------------------------------------ coercion

    def converted(self, value: Any, source: str, target: str) -> Any:
        """`value` (of type `source`) as a `target` (an implicit or explicit cast)."""
        if source == target or target in (ANY, T.UNKNOWN):
            return value
        if source == T.UNKNOWN:
            return self.fold(value, target)
        if isinstance(value, exp.Null):
            return value
        if target == T.TEXT:
            return self.as_text(value, source)
        if target in (T.INT4, T.INT8):
            bits = 32 if target == T.INT4 else 64
            if source == T.TEXT:
                return call("bdb_int", value, exp.Literal.number(bits))
            if source == T.FLOAT8:
                return call("bdb_float_to_int", value, exp.Literal.number(bits))
            if source == T.NUMERIC:
                return call("bdb_numeric_to_int", value, exp.Literal.number(bits))
            if source == T.BOOL:
                return value
            if source == T.INT8 and target == T.INT4:
                return call("bdb_int_range", value, exp.Literal.number(32))
            return value
        if target == T.NUMERIC:
            if source == T.TEXT:
                return call("bdb_numeric", value)
            if source == T.FLOAT8:
                return call("bdb_to_numeric", value)
            return self.real(value)
        if target == T.FLOAT8:
            if source == T.TEXT:
                return call("bdb_float", value)
            return self.real(value)
        if target == T.BOOL:
            if source == T.TEXT:
                return call("bdb_bool", value)
            return exp.Paren(this=exp.NEQ(this=value, expression=exp.Literal.number(0)))
        if target == T.DATE:
            if source == T.TEXT:
                return call("bdb_date", value)
            return call("substr", value, exp.Literal.number(1), exp.Literal.number(10))
        if target in (T.TIMESTAMP, T.TIMESTAMPTZ):
            if source == T.TEXT:
                return call("bdb_timestamp", value) if target == T.TIMESTAMP else call(
                    "bdb_timestamptz", value, string(self.zone))
            if source == T.DATE:
                return exp.Paren(this=exp.DPipe(this=value, expression=string(" 00:00:00")))
            return value
        if target == T.JSONB:
            if source == T.TEXT:
                return call("bdb_jsonb", value)
            return value
        if T.is_array(target):
            return value
        raise CompileError(f"cannot convert {source} to {target} on the local platform")

    def real(self, value: Any) -> Any:
        if isinstance(value, exp.Literal) and not value.is_string:
            return exp.Literal.number(repr(float(str(value.this))))
        return exp.Cast(this=value, to=_REAL)

    def as_text(self, value: Any, source: str, *, output: bool = False) -> Any:
        """`value::text` (output=False) or the type's output function (concat())."""
        if source in (T.TEXT, T.UNKNOWN, T.DATE, T.TIMESTAMP, ANY):
            return value
        if source in (T.INT4, T.INT8):
            return exp.Cast(this=value, to=_TEXT)
        if source in (T.FLOAT8, T.NUMERIC):
            return call("bdb_float_text", value)
        if source == T.BOOL:
            if output:
                return call("bdb_bool_output", value)
            return exp.Case(ifs=[exp.If(this=exp.EQ(this=value, expression=exp.Literal.number(
                1)), true=string("true")), exp.If(this=exp.EQ(
                    this=value.copy(), expression=exp.Literal.number(0)), true=string("false"))])
        if source == T.TIMESTAMPTZ:
            return call("bdb_tstz_text", value, string(self.zone))
        if source == T.JSONB:
            return call("bdb_jsonb_text", value)
        raise CompileError(f"{source} as text is not supported on the local platform")

    def fold(self, node: Any, target: str) -> Any:
        """An untyped literal (or NULL) as a constant of `target`."""
        inner = node
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Null):
            return exp.Null()
        if not (isinstance(inner, exp.Literal) and inner.is_string):
            return node
        text = str(inner.this)
        try:
            value: Any
            if target in (T.TEXT, ANY):
                value = text
            elif target == T.INT4:
                value = V.parse_int(text)
            elif target == T.INT8:
                value = V.parse_int(text, 64)
            elif target == T.NUMERIC:
                value = V.parse_numeric(text)
            elif target == T.FLOAT8:
                value = V.parse_float(text)
            elif target == T.BOOL:
                value = V.parse_bool(text)
            elif target == T.DATE:
                value = V.format_date(V.parse_date(text))
            elif target == T.TIMESTAMP:
                value = V.format_timestamp(V.parse_timestamp(text))
            elif target == T.TIMESTAMPTZ:
                value = V.format_timestamp(V.parse_timestamptz(text, V.zone_info(self.zone)))
            elif target == T.JSONB:
                value = json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
            else:
                raise CompileError(f"a literal of type {target} is not supported")
        except (V.ValueInputError, ValueError) as error:
            raise CompileError(f"invalid literal: {error}") from None
        return constant(value)

    # ------------------------------------------------------------------ operators

    def arithmetic(self, node: Any) -> Any:
        left, right = node.this, node.expression
        lt, rt = self.type_of(left), self.type_of(right)
        result = self.own_type(node)
        if isinstance(node, (exp.Add, exp.Sub)):
            moment = self.datetime_arithmetic(node, left, right, lt, rt, result)
            if moment is not None:
                return moment
        if isinstance(node, exp.Div):
            divisor = self.nonzero(right)
            if result in (T.INT4, T.INT8):
                return exp.Div(this=left, expression=divisor, typed=True, safe=False)
            return exp.Div(this=self.real(left), expression=divisor)
        if isinstance(node, exp.Mod):
            if result in (T.INT4, T.INT8):
                return exp.Mod(this=left, expression=self.nonzero(right))
            return call("bdb_mod", left, right)
        if isinstance(node, exp.Pow):
            return call("bdb_power", left, right)
        if isinstance(node, exp.Mul) and result == T.INTERVAL:
            return node
        return node

    def nonzero(self, divisor: Any) -> Any:
        inner = divisor
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Literal) and not inner.is_string and float(
                str(inner.this)) != 0:
            return divisor
        return call("bdb_nonzero", divisor)

    def interval_parts(self, node: Any) -> tuple[Any, V.Interval]:
        """An interval expression as (factor, interval constant)."""
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Neg):
            factor, interval = self.interval_parts(node.this)
            return factor, interval.negated()
        if isinstance(node, exp.Mul):
            left, right = node.this, node.expression
            if self.type_of(left) == T.INTERVAL:
                left, right = right, left
            factor, interval = self.interval_parts(right)
            if isinstance(factor, exp.Literal) and str(factor.this) == "1":
                return left, interval
            return exp.Mul(this=left, expression=factor), interval
        if isinstance(node, exp.Interval):
            unit = node.args.get("unit")
            text = str(node.this.this) + (f" {unit.name}" if isinstance(unit, exp.Var)
                                          else "")
            return exp.Literal.number(1), V.parse_interval(text)
        raise CompileError("this interval expression is not supported on the local platform")

    def datetime_arithmetic(self, node: Any, left: Any, right: Any, lt: str, rt: str,
                            result: str) -> Any:
        add = isinstance(node, exp.Add)
        if result == T.DATE:
            day, count = (left, right) if lt == T.DATE else (right, left)
            if not add:
                count = exp.Neg(this=exp.Paren(this=count))
            return call("bdb_date_add", day, count)
        if lt == T.DATE and rt == T.DATE and not add:
            return exp.Cast(this=exp.Sub(this=call("julianday", left),
                                         expression=call("julianday", right)), to=_INTEGER)
        if T.INTERVAL in (lt, rt) and result in (T.TIMESTAMP, T.TIMESTAMPTZ):
            moment, interval = (left, right) if rt == T.INTERVAL else (right, left)
            factor, value = self.interval_parts(interval)
            if not add:
                value = value.negated()
            zone = string(self.zone) if result == T.TIMESTAMPTZ else exp.Null()
            return call("bdb_add_interval", moment, factor, exp.Literal.number(value.months),
                        exp.Literal.number(value.days), exp.Literal.number(value.micros), zone)
        return None

    def concatenation(self, node: Any) -> Any:
        parts = [self.as_text(side, self.type_of(side)) for side in (node.this,
                                                                       node.expression)]
        return exp.DPipe(this=parts[0], expression=parts[1])

    def like(self, node: Any) -> Any:
        escape = None
        target = node
        if isinstance(node, exp.Escape):
            target, escape = node.this, node.expression
        value, pattern = target.this, target.expression
        insensitive = isinstance(target, exp.ILike)
        if insensitive:
            value, pattern = call("bdb_lower", value), call("bdb_lower", pattern)
        found: Any = exp.Glob(this=value, expression=self.glob_pattern(pattern, escape))
        if target.args.get("negate"):
            found = exp.Not(this=exp.Paren(this=found))
        return found

    def glob_pattern(self, pattern: Any, escape: Any) -> Any:
        escape_text = "\\" if escape is None else str(escape.this)
        if isinstance(pattern, exp.Literal) and pattern.is_string:
            try:
                return string(bdb_like_glob(str(pattern.this), escape_text))
            except ValueError as error:
                raise CompileError(str(error)) from None
        return call("bdb_like_glob", pattern, string(escape_text))

    def is_test(self, node: Any) -> Any:
        target = node.expression
        if isinstance(target, exp.Boolean):
            found = exp.Is(this=node.this, expression=exp.Literal.number(int(target.this)))
            return exp.Not(this=exp.Paren(this=found)) if node.args.get("negate") else found
        return node

    def between(self, node: Any) -> Any:
        if not node.args.get("symmetric"):
            return node
        low, high = node.args["low"], node.args["high"]
        forward = exp.Between(this=node.this, low=low, high=high)
        backward = exp.Between(this=node.this.copy(), low=high.copy(), high=low.copy())
        return exp.Paren(this=exp.Or(this=forward, expression=backward))

    def case(self, node: Any) -> Any:
        return node

    def cast(self, node: Any) -> Any:
        target = cast_target(node.to)
        source = self.type_of(node.this)
        if target is None:
            raise CompileError(f"cast to {node.to.sql()} is not supported")
        value = self.converted(node.this, source, target)
        typmod = numeric_typmod(node.to)
        if typmod is not None:
            value = call("bdb_numeric_typmod", value, exp.Literal.number(typmod[0]),
                         exp.Literal.number(typmod[1]))
        return value

    def json_get(self, node: Any) -> Any:
        step = node.expression.expressions[1].this
        key = exp.Literal.number(step) if isinstance(step, int) else string(str(step))
        name = "bdb_jsonb_get_text" if isinstance(node, exp.JSONExtractScalar) else \
            "bdb_jsonb_get"
        return call(name, node.this, key)

    def special_value(self, node: Any, marker: str) -> Any:
        if isinstance(node, exp.CurrentDate):
            return exp.Placeholder(this=f"{marker}today")
        return exp.Placeholder(this=f"{marker}now")

    def extract(self, node: Any) -> Any:
        field = string(node.this.name.lower())
        return self.extract_call(field, node.expression)

    def extract_call(self, field: Any, value: Any) -> Any:
        kind = {T.DATE: "date", T.TIMESTAMPTZ: "timestamptz"}.get(self.type_of(value),
                                                                   "timestamp")
        return call("bdb_extract", field, value, string(kind),
                    string(self.zone) if kind == "timestamptz" else exp.Null())

    # ------------------------------------------------------------------ functions

    def function(self, node: Any) -> Any:
        name = function_name(node)
        args, distinct, order = call_parts(node)
        handler = FUNCTION_TRANSLATIONS.get(name)
        if handler is None:
            raise CompileError(f"function {name}() has no translation on the local platform")
        result = handler(self, node, args, distinct, order)
        return result

    def aggregate(self, name: str, args: list[Any], distinct: bool) -> Any:
        if distinct:
            args = [exp.Distinct(expressions=args[:1]), *args[1:]]
        return call(name, *args)

    def sort_arguments(self, order: list[Any]) -> list[Any]:
        out: list[Any] = []
        for item in order:
            descending = bool(item.args.get("desc"))
            nulls_first = item.args.get("nulls_first")
            if nulls_first is None:
                nulls_first = descending
            out += [item.this, exp.Literal.number(int(descending)),
                    exp.Literal.number(int(bool(nulls_first)))]
        return out

    def element_json(self, value: Any, type_: str) -> Any:
        """An array element as json_group_array should embed it."""
        if type_ == T.BOOL:
            return call("json", exp.Case(ifs=[exp.If(this=exp.EQ(
                this=value, expression=exp.Literal.number(1)), true=string("true")), exp.If(
                this=exp.EQ(this=value.copy(), expression=exp.Literal.number(0)),
                true=string("false"))]))
        return value


# ---------------------------------------------------------------------- functions

def _same(name: str) -> Any:
    def translate(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
        return rw.aggregate(name, args, distinct)
    return translate


def _udf(name: str) -> Any:
    def translate(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
        return call(name, *args)
    return translate


def _round(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
           order: list[Any]) -> Any:
    if rw.own_type(node) == T.FLOAT8:
        return call("bdb_round_even", *args)
    return call("bdb_round_numeric", *args)


def _trunc(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
           order: list[Any]) -> Any:
    numeric = int(rw.own_type(node) == T.NUMERIC)
    places = args[1] if len(args) > 1 else exp.Literal.number(0)
    return call("bdb_trunc", args[0], places, exp.Literal.number(numeric))


def _mod(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
         order: list[Any]) -> Any:
    if rw.own_type(node) in (T.INT4, T.INT8):
        return exp.Paren(this=exp.Mod(this=args[0], expression=rw.nonzero(args[1])))
    return call("bdb_mod", *args)


def _coalesce(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
              order: list[Any]) -> Any:
    return args[0] if len(args) == 1 else call("coalesce", *args)


def _count(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
           order: list[Any]) -> Any:
    if args and isinstance(args[0], exp.Star):
        return call("count", exp.Star())
    return rw.aggregate("count", args, distinct)


def _sliding(rw: ExpressionRewriter, node: Any, args: list[Any]) -> bool:
    """Whether a sum/avg of doubles runs over a window frame whose start moves."""
    if not args or rw.type_of(args[0]) not in (T.FLOAT8, T.NUMERIC) \
            or not has_window_functions():
        return False
    window = node.parent.parent if isinstance(node.parent, exp.Filter) else node.parent
    if not isinstance(window, exp.Window) or window.this is None:
        return False
    spec = window.args.get("spec")
    if spec is None:
        return False
    start = spec.args.get("start")
    return not (isinstance(start, str) and start.upper() == "UNBOUNDED") and not (
        isinstance(start, exp.Var) and start.name.upper() == "UNBOUNDED")


def _sum(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
         order: list[Any]) -> Any:
    if _sliding(rw, node, args):
        return call("bdb_window_sum", *args)
    return rw.aggregate("sum", args, distinct)


def _avg(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
         order: list[Any]) -> Any:
    if _sliding(rw, node, args):
        return call("bdb_window_avg", *args)
    return rw.aggregate("avg", args, distinct)


def _bool_agg(name: str) -> Any:
    def translate(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
        return rw.aggregate(name, args, distinct)
    return translate


def _string_agg(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                order: list[Any]) -> Any:
    if order:
        if distinct:
            raise CompileError("string_agg(DISTINCT … ORDER BY …) is not supported")
        return call("bdb_string_agg", args[0], args[1], *rw.sort_arguments(order))
    return rw.aggregate("group_concat", args, distinct)


def _array_agg(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
               order: list[Any]) -> Any:
    element = T.element(rw.own_type(node)) if T.is_array(rw.own_type(node)) else ANY
    if order:
        if distinct:
            raise CompileError("array_agg(DISTINCT … ORDER BY …) is not supported")
        return call("bdb_array_agg", args[0], string(element), *rw.sort_arguments(order))
    value = rw.element_json(args[0], element)
    grouped = rw.aggregate("json_group_array", [value], distinct)
    return call("nullif", grouped, string("[]"))


def _concat(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
            order: list[Any]) -> Any:
    parts = [call("coalesce", rw.as_text(a, rw.type_of(a), output=True), string(""))
             for a in args]
    joined: Any = parts[0] if parts else string("")
    for part in parts[1:]:
        joined = exp.DPipe(this=joined, expression=part)
    return exp.Paren(this=joined)


def _concat_ws(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
               order: list[Any]) -> Any:
    values = [rw.as_text(a, rw.type_of(a), output=True) for a in args[1:]]
    return call("bdb_concat_ws", args[0], *values)


def _strpos(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
            order: list[Any]) -> Any:
    return call("instr", args[0], args[1])


def _trim(name: str) -> Any:
    def translate(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
        return call(name, *args)
    return translate


def _cardinality(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                 order: list[Any]) -> Any:
    return call("json_array_length", args[0])


def _array_length(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
    length = call("nullif", call("json_array_length", args[0]), exp.Literal.number(0))
    return exp.Case(ifs=[exp.If(this=exp.EQ(this=args[1], expression=exp.Literal.number(1)),
                                true=length)])


def _date_trunc(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                order: list[Any]) -> Any:
    unit, value = args
    word = _unit_text(unit)
    if word in _TRUNC_FORMATS:
        return call("strftime", string(_TRUNC_FORMATS[word]), value)
    if word == "week":
        return call("strftime", string("%Y-%m-%d 00:00:00"), value, string("-6 days"),
                    string("weekday 1"))
    return call("bdb_date_trunc", unit, value)


def _date_part(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
               order: list[Any]) -> Any:
    return rw.extract_call(args[0], args[1])


def _now(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
         order: list[Any]) -> Any:
    return exp.Placeholder(this=f"{rw.marker}now")


def _to_timestamp(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
    return call("bdb_to_timestamp", args[0], string(rw.zone))


def _window_same(name: str) -> Any:
    def translate(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
        return call(name, *args)
    return translate


def _function_cast(target: str) -> Any:
    def translate(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
        return rw.converted(args[0], rw.type_of(args[0]), target)
    return translate


def _pi(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
        order: list[Any]) -> Any:
    return exp.Literal.number("3.141592653589793")


def _random(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
            order: list[Any]) -> Any:
    return call("bdb_random")


def _current_user_id(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                     order: list[Any]) -> Any:
    return exp.Placeholder(this=f"{rw.marker}u")


FUNCTION_TRANSLATIONS: dict[str, Any] = {
    "lower": _udf("bdb_lower"), "upper": _udf("bdb_upper"), "initcap": _udf("bdb_initcap"),
    "length": _udf("length"), "char_length": _udf("length"),
    "character_length": _udf("length"), "octet_length": _udf("bdb_octet_length"),
    "substr": _udf("bdb_substr"), "substring": _udf("bdb_substr"), "strpos": _strpos,
    "position": _strpos, "replace": _udf("replace"), "trim": _trim("trim"),
    "btrim": _trim("trim"), "ltrim": _trim("ltrim"), "rtrim": _trim("rtrim"),
    "left": _udf("bdb_left"), "right": _udf("bdb_right"), "lpad": _udf("bdb_lpad"),
    "rpad": _udf("bdb_rpad"), "repeat": _udf("bdb_repeat"), "reverse": _udf("bdb_reverse"),
    "split_part": _udf("bdb_split_part"), "starts_with": _udf("bdb_starts_with"),
    "md5": _udf("bdb_md5"), "ascii": _udf("bdb_ascii"), "chr": _udf("bdb_chr"),
    "concat": _concat, "concat_ws": _concat_ws,
    "abs": _udf("abs"), "ceil": _udf("bdb_ceil"), "ceiling": _udf("bdb_ceil"),
    "floor": _udf("bdb_floor"), "round": _round, "trunc": _trunc, "sign": _udf("bdb_sign"),
    "sqrt": _udf("bdb_sqrt"), "cbrt": _udf("bdb_cbrt"), "exp": _udf("bdb_exp"),
    "ln": _udf("bdb_ln"), "log10": _udf("bdb_log10"), "power": _udf("bdb_power"),
    "pow": _udf("bdb_power"), "mod": _mod, "div": _udf("bdb_div"), "pi": _pi,
    "random": _random,
    "now": _now, "date_trunc": _date_trunc, "date_part": _date_part,
    "make_date": _udf("bdb_make_date"), "make_timestamp": _udf("bdb_make_timestamp"),
    "to_timestamp": _to_timestamp,
    "coalesce": _coalesce, "nullif": _udf("nullif"), "greatest": _udf("bdb_greatest"),
    "least": _udf("bdb_least"),
    "count": _count, "sum": _sum, "avg": _avg, "min": _same("min"), "max": _same("max"),
    "string_agg": _string_agg, "array_agg": _array_agg, "bool_and": _bool_agg("min"),
    "bool_or": _bool_agg("max"), "every": _bool_agg("min"),
    "row_number": _window_same("row_number"), "rank": _window_same("rank"),
    "dense_rank": _window_same("dense_rank"), "percent_rank": _window_same("percent_rank"),
    "cume_dist": _window_same("cume_dist"), "ntile": _window_same("ntile"),
    "lag": _window_same("lag"), "lead": _window_same("lead"),
    "first_value": _window_same("first_value"), "last_value": _window_same("last_value"),
    "nth_value": _window_same("nth_value"),
    "jsonb_array_length": _udf("bdb_jsonb_array_length"),
    "jsonb_typeof": _udf("bdb_jsonb_typeof"), "cardinality": _cardinality,
    "array_length": _array_length, "current_user_id": _current_user_id,
    "date": _function_cast(T.DATE), "text": _function_cast(T.TEXT),
    "int4": _function_cast(T.INT4), "int8": _function_cast(T.INT8),
    "float8": _function_cast(T.FLOAT8), "bool": _function_cast(T.BOOL),
}


def log_translation(rw: ExpressionRewriter, node: Any, args: list[Any], distinct: bool,
                    order: list[Any]) -> Any:
    if len(args) == 1:
        return call("bdb_log10", args[0])
    return call("bdb_log", *args)


FUNCTION_TRANSLATIONS["log"] = log_translation
