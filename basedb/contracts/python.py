"""Render contracts as Python (`src/generated/function_inputs.py`, Python 3.10+).

As precise as the TypeScript contracts, and clean under `mypy --strict` and pyright's
strict mode: one `TypedDict` per function input (nested FaaS objects get their own),
`Literal[...]` for enums, `DATABASE_FUNCTION_PARAMETER_OPTIONS` /
`MUTATION_PARAMETER_OPTIONS` (the allowed values, typed by TypedDicts down to each
param's `Literal`), `DatabaseFunctionInputMap` / `MutationInputMap` (functionId to input
type, like the TypeScript interfaces), `DatabaseFunctionId` / `MutationId`, and the
runtime maps `DATABASE_FUNCTION_INPUT_MAP` / `MUTATION_INPUT_MAP`.

The module imports only the standard library: a TypedDict with both required and
optional keys is a required base class and a `total=False` class on it (instead of
`NotRequired`, which Python 3.10 only has from typing_extensions), so
`__required_keys__` and `__optional_keys__` are right at runtime on every version.
A schema with no type (`unknown`) is `object`, never `Any`. Classes are written before
anything that uses them, and annotations are not postponed.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field

from basedb.contracts.inputs import ContractInputs, FunctionInput
from basedb.contracts.shapes import (
    NEVER,
    AllOf,
    AnyOf,
    ArrayOf,
    Const,
    JsonScalar,
    Obj,
    OptionRef,
    Prim,
    Prop,
    Shape,
    comment_lines,
    string_literal,
)

OUTPUT_PATH = "src/generated/function_inputs.py"

_PRIMITIVES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "unknown": "object",
    "never": "object",
}
_CONSTANTS = (
    "DATABASE_FUNCTION_PARAMETER_OPTIONS", "MUTATION_PARAMETER_OPTIONS",
    "DATABASE_FUNCTION_INPUT_MAP", "MUTATION_INPUT_MAP",
)
_MAP_TYPES = ("DatabaseFunctionInputMap", "MutationInputMap", "DatabaseFunctionId",
              "MutationId", "DatabaseFunctionParameterOptions", "MutationParameterOptions")
# Module-level names a generated class must not take.
_RESERVED = frozenset({"Final", "Literal", "NoReturn", "Sequence", "TypedDict",
                       "annotations", *_CONSTANTS, *_MAP_TYPES})
_WORD = re.compile(r"[A-Za-z0-9]+")

# One key of a TypedDict: comment lines, the key, its type.
_Entry = tuple[list[str], str, str]


def render_python(inputs: ContractInputs) -> str:
    writer = _Writer()
    function_types = [(fn, writer.function_type(fn)) for fn in inputs.database_functions]
    mutation_types = [(fn, writer.function_type(fn)) for fn in inputs.mutations]
    options = [writer.options_type(inputs.database_functions,
                                   "DatabaseFunctionParameterOptions"),
               writer.options_type(inputs.mutations, "MutationParameterOptions")]
    maps = [writer.input_map(function_types, "DatabaseFunction"),
            writer.input_map(mutation_types, "Mutation")]
    typing_names = {"Final", "TypedDict"} | writer.typing_names
    lines = [
        *inputs.header("#"),
        '"""Typed inputs of this site\'s Database Functions, FaaS and Mutations."""',
        "",
    ]
    if writer.uses_sequence:
        lines.append("from collections.abc import Sequence")
    lines.append(f"from typing import {', '.join(sorted(typing_names))}")
    for block in writer.blocks:
        lines += ["", "", *block]
    lines += ["", "", "# The allowed values of each param that declares an enum, by functionId."]
    lines += [f"DATABASE_FUNCTION_PARAMETER_OPTIONS: Final[{options[0]}] = "
              + _options(inputs.database_functions)]
    lines += ["", f"MUTATION_PARAMETER_OPTIONS: Final[{options[1]}] = "
              + _options(inputs.mutations)]
    lines += ["", "# Input type of each Database Function (SQL) and FaaS, by functionId.",
              f"DATABASE_FUNCTION_INPUT_MAP: Final[dict[{maps[0]}, object]] = "
              + _map(function_types)]
    lines += ["", "# Input type of each Mutation, by functionId.",
              f"MUTATION_INPUT_MAP: Final[dict[{maps[1]}, object]] = " + _map(mutation_types)]
    return "\n".join(lines) + "\n"


def literal(value: JsonScalar) -> str:
    if isinstance(value, str):
        return string_literal(value)
    return repr(value)  # None, True/False, ints and (finite) floats


def pascal_case(text: str) -> str:
    words = _WORD.findall(text)
    return "".join(w[:1].upper() + w[1:] for w in words) or "Field"


def _options(functions: tuple[FunctionInput, ...]) -> str:
    with_options = [f for f in functions if f.options]
    if not with_options:
        return "{}"
    lines = ["{"]
    for fn in with_options:
        lines.append(f"    {string_literal(fn.function_id)}: {{")
        for param, values in fn.options:
            items = ", ".join(literal(v) for v in values) + ("," if len(values) == 1 else "")
            lines.append(f"        {string_literal(param)}: ({items}),")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines)


def _map(entries: list[tuple[FunctionInput, str]]) -> str:
    if not entries:
        return "{}"
    body = [f"    {string_literal(fn.function_id)}: {name}," for fn, name in entries]
    return "\n".join(["{", *body, "}"])


def _is_class_field(name: str) -> bool:
    # Class syntax cannot spell keywords, and mangles names like `__secret`.
    return name.isidentifier() and not keyword.iskeyword(name) and not (
        name.startswith("__") and not name.endswith("__"))


@dataclass(slots=True)
class _Writer:
    blocks: list[list[str]] = field(default_factory=list)
    names: set[str] = field(default_factory=lambda: set(_RESERVED))
    typing_names: set[str] = field(default_factory=set)
    uses_sequence: bool = False

    def claim(self, wanted: str) -> str:
        name, n = wanted, 2
        while name in self.names or keyword.iskeyword(name):
            name, n = f"{wanted}_{n}", n + 1
        self.names.add(name)
        return name

    def function_type(self, fn: FunctionInput) -> str:
        """Define the input type of `fn` and return its name."""
        wanted = pascal_case(fn.function_id) + "Input"
        shape = fn.shape
        if isinstance(shape, Obj) and (shape.props or shape.extra is None):
            return self.typed_dict(shape, wanted, fn.description)
        members = shape.members if isinstance(shape, AnyOf) else (shape,)
        parts = [self.expr(m, f"{wanted}{i}") for i, m in enumerate(members, 1)]
        name = self.claim(wanted)
        text = " | ".join(dict.fromkeys(parts))
        self.blocks.append([*(f"# {line}" for line in comment_lines(fn.description)),
                            f"{name} = {text}"])
        return name

    def expr(self, shape: Shape, hint: str) -> str:
        """A type expression for `shape`; objects become classes named after `hint`."""
        if isinstance(shape, Prim):
            return _PRIMITIVES[shape.name]
        if isinstance(shape, (Const, OptionRef)):
            return self._literal_type(shape.values)
        if isinstance(shape, ArrayOf):
            self.uses_sequence = True
            return f"Sequence[{self.expr(shape.item, hint + 'Item')}]"
        if isinstance(shape, Obj):
            if shape.props or shape.extra is None:
                return self.typed_dict(shape, hint, "")
            return f"dict[str, {self.expr(shape.extra, hint + 'Value')}]"
        if isinstance(shape, AnyOf):
            parts = [self.expr(m, f"{hint}{i}") for i, m in enumerate(shape.members, 1)]
            return " | ".join(dict.fromkeys(parts))
        return self._intersection(shape, hint)

    def _intersection(self, shape: AllOf, hint: str) -> str:
        # Python has no intersection type; objects merge, anything else is left open.
        if all(isinstance(m, Obj) for m in shape.members):
            props: dict[str, Prop] = {}
            for member in shape.members:
                assert isinstance(member, Obj)
                for prop in member.props:
                    props[prop.name] = prop
            closed = all(isinstance(m, Obj) and m.extra is None for m in shape.members)
            merged = Obj(props=tuple(props[k] for k in sorted(props)),
                         extra=None if closed else Prim("unknown"))
            return self.expr(merged, hint)
        return "object"

    def _literal_type(self, values: tuple[JsonScalar, ...]) -> str:
        exact = [v for v in values if not isinstance(v, float)]
        parts = []
        if exact:
            self.typing_names.add("Literal")
            parts.append(f"Literal[{', '.join(dict.fromkeys(literal(v) for v in exact))}]")
        if len(exact) < len(values):
            parts.append("float")  # Literal[] cannot hold floats
        return " | ".join(parts)

    def typed_dict(self, obj: Obj, hint: str, description: str) -> str:
        fields: list[tuple[Prop, str]] = []
        for prop in obj.props:
            if prop.shape == NEVER:
                continue  # a property that must never be present
            fields.append((prop, self.expr(prop.shape, hint + pascal_case(prop.name))))
        name = self.claim(hint)
        comments = [f"# {line}" for line in comment_lines(description)]

        def entries(required: bool) -> list[_Entry]:
            return [([f"# {line}" for line in comment_lines(prop.description)], prop.name, text)
                    for prop, text in fields if prop.required == required]

        required, optional = entries(True), entries(False)
        if not (required and optional):
            self.blocks.append(comments + _typed_dict(name, required or optional,
                                                      total=not optional))
            return name
        # Required keys in a base class, optional ones in a total=False class on it.
        base = self.claim(f"_{name}Required")
        self.blocks.append(_typed_dict(base, required, total=True))
        if all(_is_class_field(key) for _, key, _ in optional):
            self.blocks.append(comments + _typed_dict(name, optional, total=False, base=base))
        else:  # keys only the functional syntax can spell: a second base, then the union
            rest = self.claim(f"_{name}Optional")
            self.blocks.append(_typed_dict(rest, optional, total=False))
            self.blocks.append([*comments, f"class {name}({base}, {rest}):", "    pass"])
        return name

    def options_type(self, functions: tuple[FunctionInput, ...], name: str) -> str:
        """The TypedDict of a PARAMETER_OPTIONS constant: functionId -> param -> a tuple
        of the param's Literal values."""
        keys: list[_Entry] = []
        for fn in functions:
            if not fn.options:
                continue
            params: list[_Entry] = []
            for param, values in fn.options:
                # A name for the param's values, as TypeScript gets from `typeof …[number]`.
                alias = self.claim(pascal_case(fn.function_id) + pascal_case(param))
                self.blocks.append([f"{alias} = {self._literal_type(values)}"])
                params.append(([], param, f"tuple[{alias}, ...]"))
            per_function = self.claim(pascal_case(fn.function_id) + "Options")
            self.blocks.append(_typed_dict(per_function, params, total=True))
            keys.append(([], fn.function_id, per_function))
        self.blocks.append(_typed_dict(name, keys, total=True))
        return name

    def input_map(self, entries: list[tuple[FunctionInput, str]], kind: str) -> str:
        """`{kind}InputMap` (functionId -> input type) and `{kind}Id`; returns the Id."""
        keys: list[_Entry] = [([], fn.function_id, type_name) for fn, type_name in entries]
        block = _typed_dict(f"{kind}InputMap", keys, total=True)
        ids = [string_literal(fn.function_id) for fn, _ in entries]
        if ids:
            self.typing_names.add("Literal")
            one_line = f"{kind}Id = Literal[{', '.join(ids)}]"
            block += ["", ""]
            block += ([one_line] if len(one_line) <= 100 else
                      [f"{kind}Id = Literal[", *(f"    {i}," for i in ids), "]"])
        else:
            self.typing_names.add("NoReturn")
            block += ["", "", f"{kind}Id = NoReturn  # no function of this kind"]
        self.blocks.append(block)
        return f"{kind}Id"


def _typed_dict(name: str, entries: list[_Entry], *, total: bool,
                base: str = "TypedDict") -> list[str]:
    """A TypedDict in class syntax, or in the functional one when a key is not a name
    that class syntax can spell (a keyword, `meta-data`, `__secret`)."""
    total_arg = "" if total else ", total=False"
    if base != "TypedDict" or all(_is_class_field(key) for _, key, _ in entries):
        block = [f"class {name}({base}{total_arg}):"]
        for comments, key, text in entries:
            block += [f"    {c}" for c in comments]
            block.append(f"    {key}: {text}")
        if not entries:
            block.append("    pass")
        return block
    block = [f"{name} = TypedDict({string_literal(name)}, {{"]
    for comments, key, text in entries:
        block += [f"    {c}" for c in comments]
        block.append(f"    {string_literal(key)}: {text},")
    block.append(f"}}{total_arg})")
    return block
