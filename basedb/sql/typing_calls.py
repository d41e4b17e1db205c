"""Typing function calls, casts and window functions as PostgreSQL does.

`CallTyper` resolves a call against the function table (`functions.FUNCTIONS`): its
kind (a window function needs OVER, DISTINCT and ORDER BY only go inside aggregates),
then its overloads with PostgreSQL's rules (manual 10.3: exact matches first, then
preferred types), or a rule of its own for the generic ones (coalesce, min, lag, …).
A name outside the table is refused: SQL_INVALID when PostgreSQL has no such function
(ifnull, nvl, …), SQL_UNSUPPORTED when it has one the subset leaves out.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from basedb.sql import pgtypes as T
from basedb.sql.datetime_format import FormatError, parse_format
from basedb.sql.functions import (
    FUNCTIONS,
    OTHER_DIALECT_FUNCTIONS,
    REFUSED_FUNCTIONS,
    UNSUPPORTED_FUNCTIONS,
    FunctionSpec,
)
from basedb.sql.model import node_offset
from basedb.sql.pgcasts import cast_target, castable, choose_signature
from basedb.sql.scope import is_all_call
from basedb.sql.typing_base import (
    ANY,
    COMPARISONS,
    NUMERIC_TEXT_FIX,
    TyperBase,
    call_parts,
    describe_node,
    function_name,
    is_windowed,
    sql_text,
)

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


class CallTyper(TyperBase):
    """Function calls, casts, windows; see the module docstring."""

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
        if distinct and order:
            written = {self.same_value_key(a) for a in args}
            for item in order:
                # A quoted literal is of unknown type in ORDER BY: never an argument.
                if (isinstance(item.this, exp.Literal) and item.this.is_string) \
                        or self.same_value_key(item.this) not in written:
                    return self.invalid(
                        "in an aggregate with DISTINCT, ORDER BY expressions must appear "
                        "in argument list", item, f"Order by the value itself: {name}("
                        f"DISTINCT x, … ORDER BY x).")
        rule = _FUNCTION_RULES.get(name)
        if rule is not None:
            return rule(self, node, name, args)
        return self.resolve_call(node, spec, args)

    def same_value_key(self, node: Any) -> str:
        """The expression as text with each column named by what it resolves to, so
        that `t."x"` and `"x"` of one FROM item compare equal, as PostgreSQL sees them."""
        while isinstance(node, exp.Paren):
            node = node.this
        copy = node.copy()
        refs = {id(new): self.resolution_ref(old) for old, new in zip(
            node.walk(), copy.walk(), strict=True) if isinstance(old, exp.Column)}

        def named(found: Any) -> Any:
            ref = refs.get(id(found))
            if ref is None:
                return found
            return exp.column(ref.name, table=ref.qualifier or "", quoted=True)
        return sql_text(copy.transform(named, copy=False))

    def quantifier(self, node: Any, scope: Any) -> str:
        if not isinstance(node.parent, COMPARISONS):
            return self.invalid("ANY / ALL is allowed only on the right of a comparison", node)
        return ANY

    def unknown_function(self, name: str, node: Any) -> str:
        key = REFUSED_FUNCTIONS.get(name)
        if key is not None:
            return self.unsupported(key, f"Function {name}()", node)
        alternative = UNSUPPORTED_FUNCTIONS.get(name)
        if alternative is not None:
            return self._problem("SQL_UNSUPPORTED", f"Function {name}() is not supported by "
                                 "basedb (PostgreSQL has it, the subset docs/sql.md lists "
                                 "does not).", f"Write {alternative}.", node)
        alternative = OTHER_DIALECT_FUNCTIONS.get(name)
        if alternative is not None:
            return self.invalid(f"function {name}() does not exist in PostgreSQL", node,
                                f"Write {alternative}.")
        close = difflib.get_close_matches(name, list(FUNCTIONS), n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        return self._problem("SQL_UNSUPPORTED", f"Function {name}() is not supported by basedb: a "
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
                                     "supported by basedb (its digits after the point "
                                     "depend on how it was computed).", NUMERIC_TEXT_FIX, arg)
            if T.is_array(found):
                return self._problem("SQL_UNSUPPORTED", "An array as text is not supported "
                                     "by basedb.", "Aggregate it with string_agg(…) instead.", arg)
            if found == T.UNKNOWN:
                self.coerce(arg, T.TEXT, f"an argument of {name}()")
        return T.TEXT

    def _array_size(self, node: Any, name: str, args: list[Any]) -> str:
        expected = 2 if name == "array_length" else 1
        if len(args) != expected:
            what = "one argument" if expected == 1 else f"{expected} arguments"
            return self.invalid(f"{name} takes {what}", node)
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
                                 "supported by basedb.", "Truncate in the site's time zone: "
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

    def _to_char(self, node: Any, name: str, args: list[Any]) -> str:
        if len(args) != 2:
            return self.invalid("to_char takes a value and a template", node)
        value, template = args
        found = self.t(value)
        if T.is_number(found):
            return self._problem("SQL_UNSUPPORTED", "to_char of a number is not supported by "
                                 "basedb.", "Write round(x)::bigint::text, x::float8::text, "
                                 "or pad it with lpad(…).", node)
        if found == T.UNKNOWN:
            return self.invalid("function to_char(unknown, unknown) is not unique", value,
                                "Cast the value: to_char(TIMESTAMP '2024-05-01', 'YYYY').")
        if not (isinstance(template, exp.Literal) and template.is_string):
            return self._problem("SQL_UNSUPPORTED", "A to_char template computed at run "
                                 "time is not supported by basedb.", "Write the template as "
                                 "a literal: to_char(x, 'YYYY-MM-DD').", template)
        try:
            parse_format(str(template.this))
        except FormatError as error:
            what = str(error)
            return self._problem("SQL_UNSUPPORTED", f"{what[:1].upper()}{what[1:]} is not "
                                 "supported by basedb.", "Use the patterns docs/sql.md lists "
                                 "for to_char (write a time zone as text).", template)
        if found == T.DATE:  # as PostgreSQL: a date is read as a timestamp
            self.coerce(value, T.TIMESTAMP, "the date")
            self.coerce(template, T.TEXT, "the template")
            return T.TEXT
        return self.resolve_call(node, FUNCTIONS["to_char"], args)

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

    def unnest(self, node: Any, scope: Any) -> str:
        """unnest(array) as a whole item of a SELECT list: a row per element (none for
        NULL or an empty array), as PostgreSQL's set-returning function there."""
        item = node.parent.parent if isinstance(node.parent, exp.Alias) else node.parent
        select = item if isinstance(item, exp.Select) else None
        if select is None or len(node.expressions) > 0 or select.args.get("group") \
                or select.args.get("having") or any(
                    isinstance(n, (exp.Window, exp.AggFunc)) or (
                        isinstance(n, exp.Anonymous) and getattr(FUNCTIONS.get(
                            function_name(n)), "kind", "") == "aggregate")
                    or (isinstance(n, exp.Explode) and n is not node)
                    for p in select.expressions for n in p.walk()):
            return self._problem("SQL_UNSUPPORTED", "unnest() is supported by basedb only as "
                                 "a whole item of a SELECT list without GROUP BY, aggregates "
                                 "or window functions, once per SELECT.", "Select unnest(x) "
                                 "in a subquery of its own, e.g. x IN (SELECT unnest(f) FROM "
                                 "t), and group or aggregate around it.", node)
        found = self.t(node.this)
        if found == ANY:
            return ANY
        if not T.is_array(found):
            return self.invalid(f"function unnest({T.describe(found)}) does not exist", node,
                                "Pass a multi-valued field or an array parameter.")
        return T.element(found)

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
            return self.unsupported("window_other", describe_node(func) + " with OVER", node)
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
                              "supported by basedb.", "Use ROWS or GROUPS BETWEEN n "
                              "PRECEDING AND …, or RANGE with UNBOUNDED / CURRENT ROW.", node)
                return
            if not (isinstance(bound, exp.Literal) and not bound.is_string
                    and str(bound.this).isdigit()):
                self._problem("SQL_UNSUPPORTED", "basedb supports only a whole-number "
                              "literal as a frame offset.", "Write ROWS BETWEEN 2 PRECEDING "
                              "AND CURRENT ROW.", node)
                return

    def filter(self, node: Any, scope: Any) -> str:
        inner = node.this
        spec = FUNCTIONS.get(function_name(inner)) if isinstance(inner, exp.Anonymous) else None
        if spec is None or spec.kind != "aggregate":
            return self.invalid("FILTER is not implemented for non-aggregate functions", node)
        return self.t(inner)

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
        if not castable(source, target):
            return self.invalid(f"cannot cast type {T.describe(source)} to "
                                f"{T.describe(target)}", node)
        if source == T.NUMERIC and target == T.TEXT:
            return self._problem("SQL_UNSUPPORTED", "A numeric value as text is not "
                                 "supported by basedb (its digits after the point depend on "
                                 "how it was computed).", NUMERIC_TEXT_FIX, node)
        return target

    def date_call(self, node: Any, scope: Any) -> str:
        if node.args.get("zone") or node.expressions:
            return self.invalid("function date takes one argument", node)
        return self.cast_to(node, node.this, T.DATE)

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
            return self._problem("SQL_UNSUPPORTED", "basedb supports ARRAY[…] only in = "
                                 "ANY (ARRAY[…]) and <> ALL (ARRAY[…]).",
                                 "Use IN (…) / NOT IN (…), or an array parameter.", node)
        items = list(node.expressions)
        if not items:
            return self.invalid("cannot determine type of empty array", node)
        element = self.common(items, "ARRAY", node)
        return ANY if element == ANY else T.array_of(element)


_FUNCTION_RULES: dict[str, Callable[[CallTyper, Any, str, list[Any]], str]] = {
    "count": CallTyper._count, "coalesce": CallTyper._same_type,
    "greatest": CallTyper._same_type, "least": CallTyper._same_type,
    "nullif": CallTyper._nullif, "min": CallTyper._min_max, "max": CallTyper._min_max,
    "array_agg": CallTyper._array_agg, "lag": CallTyper._offset_window,
    "lead": CallTyper._offset_window, "first_value": CallTyper._offset_window,
    "last_value": CallTyper._offset_window, "nth_value": CallTyper._offset_window,
    "concat": CallTyper._concat, "concat_ws": CallTyper._concat,
    "cardinality": CallTyper._array_size, "array_length": CallTyper._array_size,
    "date_trunc": CallTyper._date_trunc, "date_part": CallTyper._date_part,
    "string_agg": CallTyper._string_agg, "to_char": CallTyper._to_char,
    "date": CallTyper._function_cast,
    "text": CallTyper._function_cast, "int4": CallTyper._function_cast,
    "int8": CallTyper._function_cast, "float8": CallTyper._function_cast,
    "bool": CallTyper._function_cast,
}
