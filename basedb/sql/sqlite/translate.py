"""Translate typed PostgreSQL expressions into SQLite expressions with the same results.

`ExpressionRewriter` is the expression half of the storage's compiler
(`basedb.platform.storage.sql_rewrite.Rewriter`, which adds the physical names). It works
on the compiler's private copy of the tree, children before parents, and reads the PostgreSQL
type of every node from the analysis (`basedb.sql.typing`). Each construct becomes
SQLite's own expression where SQLite agrees with PostgreSQL on every input (comparisons,
AND/OR, integer arithmetic, count/sum/min/max, windows), and a call of one of the
platform's `bdb_` functions (`udf`) where it does not. Values use the local
representation of their type: booleans 0/1, dates and timestamps as PostgreSQL's text
(timestamptz in the site's time zone), jsonb and arrays as JSON text.
"""

from __future__ import annotations

import json
from typing import Any

from sqlglot import exp

from basedb.sql import pgtypes as T
from basedb.sql import pgvalues as V
from basedb.sql.pgcasts import cast_target, numeric_typmod
from basedb.sql.sqlite.nodes import (
    INTEGER_TYPE,
    REAL_TYPE,
    TEXT_TYPE,
    call,
    constant,
    string,
)
from basedb.sql.sqlite.query import CompileError
from basedb.sql.sqlite.translate_calls import FUNCTION_TRANSLATIONS
from basedb.sql.sqlite.udf_text import bdb_like_glob
from basedb.sql.typing_base import ANY, call_parts, function_name


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
        return exp.Cast(this=value, to=REAL_TYPE)

    def as_text(self, value: Any, source: str, *, output: bool = False) -> Any:
        """`value::text` (output=False) or the type's output function (concat())."""
        if source in (T.TEXT, T.UNKNOWN, T.DATE, T.TIMESTAMP, ANY):
            return value
        if source in (T.INT4, T.INT8):
            return exp.Cast(this=value, to=TEXT_TYPE)
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
                                         expression=call("julianday", right)), to=INTEGER_TYPE)
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
