"""Render contracts as TypeScript (`src/generated/function-inputs.ts`).

The file exports, for Page code:
- `DatabaseFunctionParameterOptions` / `MutationParameterOptions`: per function, per param
  with an `enum`, the allowed values as a readonly tuple (`as const`);
- `DatabaseFunctionInputMap` (SQL and FaaS) / `MutationInputMap`: the input object of each
  function, by functionId; enum params reference the options constants, so a Page can
  take `(typeof intentOptions)[number]` and the input type from one source.
"""

from __future__ import annotations

import re

from basedb.contracts.inputs import ContractInputs, FunctionInput
from basedb.contracts.shapes import (
    UNKNOWN,
    AllOf,
    AnyOf,
    ArrayOf,
    Const,
    JsonScalar,
    Obj,
    OptionRef,
    Prim,
    Shape,
    any_of,
    comment_lines,
    string_literal,
)

OUTPUT_PATH = "src/generated/function-inputs.ts"

OPTIONS_CONSTANTS = {
    "database_function": "DatabaseFunctionParameterOptions",
    "mutation": "MutationParameterOptions",
}

_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*\Z")
_PRIMITIVES = {
    "string": "string",
    "integer": "number",
    "number": "number",
    "boolean": "boolean",
    "null": "null",
    "unknown": "unknown",
    "never": "never",
}


def render_typescript(inputs: ContractInputs) -> str:
    lines = [
        *inputs.header("//"),
        "",
        "/** Allowed values of Database Function params that declare an `enum`. */",
        *_options("DatabaseFunctionParameterOptions", inputs.database_functions),
        "",
        "/** Allowed values of Mutation params that declare an `enum`. */",
        *_options("MutationParameterOptions", inputs.mutations),
        "",
        "/** Inputs of Database Functions (SQL) and FaaS, by functionId. */",
        *_input_map("DatabaseFunctionInputMap", inputs.database_functions),
        "",
        "/** Inputs of Mutations, by functionId. */",
        *_input_map("MutationInputMap", inputs.mutations),
        "",
        "export type DatabaseFunctionId = keyof DatabaseFunctionInputMap;",
        "export type MutationId = keyof MutationInputMap;",
    ]
    return "\n".join(lines) + "\n"


def property_key(name: str) -> str:
    return name if _IDENTIFIER.match(name) else string_literal(name)


def literal(value: JsonScalar) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return string_literal(value)
    return repr(value)


def jsdoc(text: str, pad: str) -> list[str]:
    lines = [line.replace("*/", "*\\/") for line in comment_lines(text)]
    if not lines:
        return []
    if len(lines) == 1:
        return [f"{pad}/** {lines[0]} */"]
    return [f"{pad}/**", *(f"{pad} * {line}".rstrip() for line in lines), f"{pad} */"]


def _options(constant: str, functions: tuple[FunctionInput, ...]) -> list[str]:
    with_options = [f for f in functions if f.options]
    if not with_options:
        return [f"export const {constant} = {{}} as const;"]
    lines = [f"export const {constant} = {{"]
    for fn in with_options:
        lines.append(f"  {property_key(fn.function_id)}: {{")
        for param, values in fn.options:
            tuple_text = ", ".join(literal(v) for v in values)
            lines.append(f"    {property_key(param)}: [{tuple_text}] as const,")
        lines.append("  },")
    lines.append("} as const;")
    return lines


def _input_map(name: str, functions: tuple[FunctionInput, ...]) -> list[str]:
    if not functions:
        return [f"export interface {name} {{}}"]
    lines = [f"export interface {name} {{"]
    for fn in functions:
        lines += jsdoc(fn.description, "  ")
        lines.append(_member(fn.function_id, False, fn.shape, 2))
    lines.append("}")
    return lines


def _member(name: str, optional: bool, shape: Shape, indent: int) -> str:
    text = type_text(shape, indent, as_member=True)
    mark = "?" if optional else ""
    sep = ":" if text.startswith("\n") else ": "
    return f"{' ' * indent}{property_key(name)}{mark}{sep}{text};"


def type_text(shape: Shape, indent: int, *, as_member: bool = False) -> str:
    """TypeScript for `shape`, starting on a line indented by `indent` spaces.

    A union of multi-line members that is a property's whole type is written one member
    per line with a leading `|` (and so starts with a line break).
    """
    if isinstance(shape, Prim):
        return _PRIMITIVES[shape.name]
    if isinstance(shape, Const):
        return " | ".join(dict.fromkeys(literal(v) for v in shape.values))
    if isinstance(shape, OptionRef):
        constant = OPTIONS_CONSTANTS[shape.group]
        return (f"(typeof {constant})[{string_literal(shape.function_id)}]"
                f"[{string_literal(shape.param)}][number]")
    if isinstance(shape, ArrayOf):
        item = shape.item
        text = type_text(item, indent)
        needs_parens = isinstance(item, (AnyOf, AllOf, ArrayOf)) or (
            isinstance(item, Const) and " | " in text)
        return f"readonly ({text})[]" if needs_parens else f"readonly {text}[]"
    if isinstance(shape, Obj):
        return _object(shape, indent)
    if isinstance(shape, AnyOf):
        return _union(shape, indent, as_member)
    parts = []
    for member in shape.members:
        text = type_text(member, indent)
        parts.append(f"({text})" if " | " in text or isinstance(member, AnyOf) else text)
    return " & ".join(parts)


def _union(shape: AnyOf, indent: int, as_member: bool) -> str:
    if as_member:
        members = dict.fromkeys(type_text(m, indent + 4) for m in shape.members)
        if any("\n" in m for m in members):
            pad = " " * (indent + 2)
            return "".join(f"\n{pad}| {m}" for m in members)
    return " | ".join(dict.fromkeys(type_text(m, indent) for m in shape.members))


def _object(obj: Obj, indent: int) -> str:
    if not obj.props:
        if obj.extra is None:
            return "Record<string, never>"
        return f"{{ [key: string]: {type_text(obj.extra, indent)} }}"
    pad = " " * (indent + 2)
    lines = ["{"]
    for prop in obj.props:
        lines += jsdoc(prop.description, pad)
        lines.append(_member(prop.name, not prop.required, prop.shape, indent + 2))
    if obj.extra is not None:
        # An index signature must admit every declared property's type as well, and
        # `undefined` for optional ones (unless exactOptionalPropertyTypes is on).
        extra = obj.extra if obj.extra == UNKNOWN else any_of(
            [obj.extra, *(p.shape for p in obj.props)])
        text = type_text(extra, indent + 2)
        if extra != UNKNOWN and any(not p.required for p in obj.props):
            text += " | undefined"
        lines.append(f"{pad}[key: string]: {text};")
    lines.append(" " * indent + "}")
    return "\n".join(lines)
