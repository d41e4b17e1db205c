"""Render contracts as Python (`src/generated/function_inputs.py`, Python 3.10+).

One `TypedDict` per function input (nested FaaS objects get their own), `Literal[...]` for
enums, `DATABASE_FUNCTION_PARAMETER_OPTIONS` / `MUTATION_PARAMETER_OPTIONS` (tuples of the
allowed values) and `DATABASE_FUNCTION_INPUT_MAP` / `MUTATION_INPUT_MAP` (functionId to its
input type). The module does not postpone annotations, so that `NotRequired` shows in the
classes' `__required_keys__` at runtime; classes are written before anything that uses them.
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
    "unknown": "Any",
    "never": "Any",
}
_CONSTANTS = (
    "DATABASE_FUNCTION_PARAMETER_OPTIONS", "MUTATION_PARAMETER_OPTIONS",
    "DATABASE_FUNCTION_INPUT_MAP", "MUTATION_INPUT_MAP",
)
# Module-level names a generated class must not take.
_RESERVED = frozenset({"Any", "Final", "Literal", "NotRequired", "Sequence", "TypedDict", "sys",
                       "annotations", *_CONSTANTS})
_WORD = re.compile(r"[A-Za-z0-9]+")


def render_python(inputs: ContractInputs) -> str:
    writer = _Writer()
    function_types = [(fn, writer.function_type(fn)) for fn in inputs.database_functions]
    mutation_types = [(fn, writer.function_type(fn)) for fn in inputs.mutations]
    typing_names = {"Any", "Final"} | writer.typing_names
    if writer.uses_not_required:
        # Before 3.11 only typing_extensions' TypedDict understands NotRequired at runtime.
        typing_names.discard("TypedDict")
    lines = [
        *inputs.header("#"),
        '"""Typed inputs of this site\'s Database Functions, FaaS and Mutations."""',
        "",
    ]
    if writer.uses_not_required:
        lines.append("import sys")
    if writer.uses_sequence:
        lines.append("from collections.abc import Sequence")
    lines.append(f"from typing import {', '.join(sorted(typing_names))}")
    if writer.uses_not_required:
        lines += [
            "",
            "if sys.version_info >= (3, 11):",
            "    from typing import NotRequired, TypedDict",
            "else:",
            "    from typing_extensions import NotRequired, TypedDict",
        ]
    options_type = "Final[dict[str, dict[str, tuple[Any, ...]]]]"
    lines += ["", f"DATABASE_FUNCTION_PARAMETER_OPTIONS: {options_type} = "
              + _options(inputs.database_functions)]
    lines += ["", f"MUTATION_PARAMETER_OPTIONS: {options_type} = " + _options(inputs.mutations)]
    for block in writer.blocks:
        lines += ["", "", *block]
    lines += ["", "", "# Input type of each Database Function (SQL) and FaaS, by functionId.",
              "DATABASE_FUNCTION_INPUT_MAP: Final[dict[str, Any]] = " + _map(function_types)]
    lines += ["", "# Input type of each Mutation, by functionId.",
              "MUTATION_INPUT_MAP: Final[dict[str, Any]] = " + _map(mutation_types)]
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
    uses_not_required: bool = False
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
            text = _PRIMITIVES[shape.name]
            if text == "Any":
                self.typing_names.add("Any")
            return text
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
        self.typing_names.add("Any")
        return "Any"

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
        self.typing_names.add("TypedDict")
        total = any(p.required for p, _ in fields) or not fields
        block = [f"# {line}" for line in comment_lines(description)]
        entries: list[tuple[list[str], str, str]] = []
        for prop, text in fields:
            if not prop.required and total:
                self.uses_not_required = True
                text = f"NotRequired[{text}]"
            entries.append(([f"# {line}" for line in comment_lines(prop.description)],
                            prop.name, text))
        total_arg = "" if total else ", total=False"
        if all(_is_class_field(key) for _, key, _ in entries):
            block.append(f"class {name}(TypedDict{total_arg}):")
            for comments, key, text in entries:
                block += [f"    {c}" for c in comments]
                block.append(f"    {key}: {text}")
            if not entries:
                block.append("    pass")
        else:
            block.append(f"{name} = TypedDict({string_literal(name)}, {{")
            for comments, key, text in entries:
                block += [f"    {c}" for c in comments]
                block.append(f"    {string_literal(key)}: {text},")
            block.append(f"}}{total_arg})")
        self.blocks.append(block)
        return name
