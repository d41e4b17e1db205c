"""Rules driven by parameter bindings, shared by Database Functions and Mutations.

A *binding* says that a parameter's value is compared with (SQL) or written to (Mutation)
a catalog field. A binding is *provable* when every value the parameter can take is
certainly used against that field: `f = $1` at the top of a WHERE is; the optional filter
`$1 IS NULL OR f = $1` is not, so an enum there gets `enum_unchecked`, not a proof.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence

from basedb.protocol.findings import Finding, Hint
from basedb.sql.model import ParamBinding
from basedb.workspace.model import AnyDeclaration, Param, Workspace

OPTION_SUMMARY_LIMIT = 20
_WORD_RE = re.compile(r"[A-Za-z0-9_]+")


def binding_rules(decl: AnyDeclaration, bindings: Sequence[ParamBinding], ws: Workspace,
                  ) -> Iterator[Finding | Hint]:
    """ENUM_OUT_OF_DOMAIN, enum_unchecked, option_field_unconstrained, reference_value_hint."""
    by_param: dict[int, list[ParamBinding]] = {}
    for b in bindings:
        by_param.setdefault(b.param_index, []).append(b)
    for param in decl.params:
        found = by_param.get(param.index, [])
        yield from _option_rules(decl, param, [b for b in found if b.field.is_option])
        refs = [b for b in found if b.field.type == "record_id" or b.field.is_reference]
        if refs and not _names_supplier(decl, param, ws):
            yield _reference_hint(decl, param, refs[0])


def _option_rules(decl: AnyDeclaration, param: Param, found: list[ParamBinding],
                  ) -> Iterator[Finding | Hint]:
    if not found:
        return
    enum = param.enum_values
    if enum is None:
        b = found[0]
        options = list(b.field.options)
        extra: dict[str, object] = {
            "table": b.table.name,
            "field": b.field.name,
            "options": options[:OPTION_SUMMARY_LIMIT],
        }
        if len(options) > OPTION_SUMMARY_LIMIT:
            extra["truncated"] = True
        shown = ", ".join(options[:OPTION_SUMMARY_LIMIT]) + (", …" if len(options) >
                                                             OPTION_SUMMARY_LIMIT else "")
        yield Hint(
            "option_field_unconstrained", decl.function_id,
            f"Parameter {param.name_str!r} is bound to option field "
            f"{b.table.name}.{b.field.name} but declares no enum (options: {shown}). If the "
            "options are fixed, copy the ones callers may use into enum; if they change, say "
            "in the description how to get a valid value.",
            decl.file, param.pointer, param.name_str, extra)
        return
    provable = [b for b in found if b.provable]
    if not provable:
        b = found[0]
        yield Hint(
            "enum_unchecked", decl.function_id,
            f"The enum of parameter {param.name_str!r} could not be checked against the "
            f"options of {b.table.name}.{b.field.name}: the query uses it conditionally "
            "(for example `$n IS NULL OR field = $n`), which gives no proof of its domain. "
            "Verify the values against the field's real options; keep the query as it is.",
            decl.file, f"{param.pointer}/enum", param.name_str,
            {"table": b.table.name, "field": b.field.name})
        return
    for b in provable:
        domain = set(b.field.options)
        for i, value in enumerate(enum):
            if isinstance(value, str) and value not in domain:
                candidates = _closest(value, b.field.options)
                yield Finding(
                    "ENUM_OUT_OF_DOMAIN",
                    f"Enum value {value!r} of parameter {param.name_str!r} is not an option "
                    f"of {b.table.name}.{b.field.name} (options: "
                    f"{_preview(b.field.options)}).",
                    decl.file, f"{param.pointer}/enum/{i}", decl.function_id,
                    "Use only option names of the bound field"
                    + (f", e.g. {', '.join(map(repr, candidates))}" if candidates else "")
                    + "; run `basedb catalog pull` if the options changed.")


def _reference_hint(decl: AnyDeclaration, param: Param, b: ParamBinding) -> Hint:
    what = ("a record id of table " + b.table.name if b.field.type == "record_id"
            else f"ids for {b.field.type} field {b.table.name}.{b.field.name}")
    return Hint(
        "reference_value_hint", decl.function_id,
        f"Parameter {param.name_str!r} takes {what}, but its description names no function "
        "that supplies the value. Say which open function to call first and which returned "
        "field to pass (e.g. \"call listPeriods and pass rows[].period_id\").",
        decl.file, f"{param.pointer}/description", param.name_str,
        {"table": b.table.name, "field": b.field.name})


def _names_supplier(decl: AnyDeclaration, param: Param, ws: Workspace) -> bool:
    text = param.description_str
    if not text:
        return False
    # A functionId is named when it is a whole word of the description: look each word
    # up (declarations are keyed by functionId) instead of scanning every function.
    for word in set(_WORD_RE.findall(text)):
        other = ws.declarations.get(word)
        if (other is not None and other.function_id == word
                and word != decl.function_id and other.kind in ("database_function", "faas")):
            return True
    return False


def _preview(options: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(repr(o) for o in options[:limit])
    return shown + (", …" if len(options) > limit else "") if options else "none"


def _closest(value: str, options: Sequence[str]) -> list[str]:
    return difflib.get_close_matches(value, list(options), n=3, cutoff=0.3)
