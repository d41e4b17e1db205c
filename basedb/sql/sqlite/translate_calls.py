"""How each function of the subset (`basedb.sql.functions.FUNCTIONS`) is written
in SQLite: a built-in where it agrees with PostgreSQL on every input, else one of the
platform's `bdb_` functions (`udf`). Each translation gets the rewriter (its
types and time zone), the call node and its translated arguments.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from basedb.sql import pgtypes as T
from basedb.sql.sqlite.nodes import TRUNC_FORMATS, call, string, unit_text
from basedb.sql.sqlite.udf import has_window_functions
from basedb.sql.typing_base import ANY

RewriterLike = Any  # the translate.ExpressionRewriter each translation is called with

def _same(name: str) -> Any:
    def translate(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
        return rw.aggregate(name, args, distinct)
    return translate


def _udf(name: str) -> Any:
    def translate(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
        return call(name, *args)
    return translate


def _round(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
           order: list[Any]) -> Any:
    if rw.own_type(node) == T.FLOAT8:
        return call("bdb_round_even", *args)
    return call("bdb_round_numeric", *args)


def _trunc(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
           order: list[Any]) -> Any:
    numeric = int(rw.own_type(node) == T.NUMERIC)
    places = args[1] if len(args) > 1 else exp.Literal.number(0)
    return call("bdb_trunc", args[0], places, exp.Literal.number(numeric))


def _mod(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
         order: list[Any]) -> Any:
    if rw.own_type(node) in (T.INT4, T.INT8):
        return exp.Paren(this=exp.Mod(this=args[0], expression=rw.nonzero(args[1])))
    return call("bdb_mod", *args)


def _coalesce(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
              order: list[Any]) -> Any:
    return args[0] if len(args) == 1 else call("coalesce", *args)


def _count(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
           order: list[Any]) -> Any:
    if args and isinstance(args[0], exp.Star):
        return call("count", exp.Star())
    return rw.aggregate("count", args, distinct)


def _sliding(rw: RewriterLike, node: Any, args: list[Any]) -> bool:
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


def _sum(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
         order: list[Any]) -> Any:
    if _sliding(rw, node, args):
        return call("bdb_window_sum", *args)
    return rw.aggregate("sum", args, distinct)


def _avg(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
         order: list[Any]) -> Any:
    if _sliding(rw, node, args):
        return call("bdb_window_avg", *args)
    return rw.aggregate("avg", args, distinct)


def _bool_agg(name: str) -> Any:
    def translate(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
        return rw.aggregate(name, args, distinct)
    return translate


def _distinct_order(rw: RewriterLike, args: list[Any], order: list[Any]) -> list[Any]:
    """The sort arguments of an aggregate with DISTINCT: its ORDER BY, else the value
    itself (PostgreSQL sorts a DISTINCT aggregate's input to find its duplicates)."""
    if order:
        return rw.sort_arguments(order)
    return rw.sort_arguments([exp.Ordered(this=args[0].copy(), nulls_first=False)])


def _string_agg(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
                order: list[Any]) -> Any:
    if distinct:
        return call("bdb_string_agg_distinct", args[0], args[1],
                    *_distinct_order(rw, args, order))
    if order:
        return call("bdb_string_agg", args[0], args[1], *rw.sort_arguments(order))
    return rw.aggregate("group_concat", args, distinct)


def _array_agg(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
               order: list[Any]) -> Any:
    element = T.element(rw.own_type(node)) if T.is_array(rw.own_type(node)) else ANY
    if distinct:
        return call("bdb_array_agg_distinct", args[0], string(element),
                    *_distinct_order(rw, args, order))
    if order:
        return call("bdb_array_agg", args[0], string(element), *rw.sort_arguments(order))
    value = rw.element_json(args[0], element)
    grouped = rw.aggregate("json_group_array", [value], distinct)
    return call("nullif", grouped, string("[]"))


def _concat(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
            order: list[Any]) -> Any:
    parts = [call("coalesce", rw.as_text(a, rw.type_of(a), output=True), string(""))
             for a in args]
    joined: Any = parts[0] if parts else string("")
    for part in parts[1:]:
        joined = exp.DPipe(this=joined, expression=part)
    return exp.Paren(this=joined)


def _concat_ws(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
               order: list[Any]) -> Any:
    values = [rw.as_text(a, rw.type_of(a), output=True) for a in args[1:]]
    return call("bdb_concat_ws", args[0], *values)


def _strpos(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
            order: list[Any]) -> Any:
    return call("instr", args[0], args[1])


def _trim(name: str) -> Any:
    def translate(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
        return call(name, *args)
    return translate


def _cardinality(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
                 order: list[Any]) -> Any:
    return call("json_array_length", args[0])


def _array_length(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
    length = call("nullif", call("json_array_length", args[0]), exp.Literal.number(0))
    return exp.Case(ifs=[exp.If(this=exp.EQ(this=args[1], expression=exp.Literal.number(1)),
                                true=length)])


def _date_trunc(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
                order: list[Any]) -> Any:
    unit, value = args
    word = unit_text(unit)
    if word in TRUNC_FORMATS:
        return call("strftime", string(TRUNC_FORMATS[word]), value)
    if word == "week":
        return call("strftime", string("%Y-%m-%d 00:00:00"), value, string("-6 days"),
                    string("weekday 1"))
    return call("bdb_date_trunc", unit, value)


def _date_part(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
               order: list[Any]) -> Any:
    return rw.extract_call(args[0], args[1])


def _now(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
         order: list[Any]) -> Any:
    return exp.Placeholder(this=f"{rw.marker}now")


def _to_timestamp(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
    return call("bdb_to_timestamp", args[0], string(rw.zone))


def _window_same(name: str) -> Any:
    def translate(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
        return call(name, *args)
    return translate


def _function_cast(target: str) -> Any:
    def translate(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
                  order: list[Any]) -> Any:
        return rw.converted(args[0], rw.type_of(args[0]), target)
    return translate


def _pi(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
        order: list[Any]) -> Any:
    return exp.Literal.number("3.141592653589793")


def _random(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
            order: list[Any]) -> Any:
    return call("bdb_random")


def _current_user_id(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
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
    "to_timestamp": _to_timestamp, "to_char": _udf("bdb_to_char"),
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


def log_translation(rw: RewriterLike, node: Any, args: list[Any], distinct: bool,
                    order: list[Any]) -> Any:
    if len(args) == 1:
        return call("bdb_log10", args[0])
    return call("bdb_log", *args)


FUNCTION_TRANSLATIONS["log"] = log_translation
