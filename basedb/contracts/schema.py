"""FaaS `inputSchema` (JSON Schema) to input shapes.

Covers what input schemas use in practice: types, `properties`/`required`,
`additionalProperties`, `enum`/`const`, arrays, nested objects, local `$ref`s, `anyOf`/
`oneOf` (unions) and `allOf` (merged when its parts are plain objects, an intersection
otherwise). A combinator next to an object's own properties is read as upstream writes
conditional requirements: each branch is merged into the base object, so a branch that
narrows `action` to "create" and requires `title` yields `{action: "create"; title: …}`.
Anything else becomes `unknown`, which is always safe for a caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from basedb.contracts.shapes import (
    NEVER,
    UNKNOWN,
    AllOf,
    ArrayOf,
    Const,
    JsonScalar,
    Obj,
    Prim,
    Prop,
    Shape,
    any_of,
    is_json_scalar,
    nullable,
    scalar_key,
)
from basedb.core.json_schema import merge_schemas

# Deeply nested or combinatorially exploding schemas stop being described precisely here;
# the rest of the type becomes `unknown` rather than the generator slowing down.
MAX_DEPTH = 32
NODE_BUDGET = 10_000

_COMBINATORS = ("allOf", "anyOf", "oneOf")
_OBJECT_KEYWORDS = ("properties", "required", "additionalProperties", "patternProperties")
_PRIMITIVE_TYPES: dict[str, Prim] = {
    "string": Prim("string"),
    "integer": Prim("integer"),
    "number": Prim("number"),
    "boolean": Prim("boolean"),
    "null": Prim("null"),
}


def schema_shape(schema: Any) -> Shape:
    """The input shape a JSON Schema describes (local `$ref`s resolve against `schema`)."""
    return _Converter(schema).convert(schema, 0)


def _is_object_like(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if kind is not None and kind != "object":
        return False
    return kind == "object" or any(k in schema for k in _OBJECT_KEYWORDS)


class _Converter:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.budget = NODE_BUDGET
        self.active_refs: list[str] = []  # refs being expanded, to stop on recursion

    def convert(self, schema: Any, depth: int) -> Shape:
        self.budget -= 1
        if self.budget < 0 or depth > MAX_DEPTH:
            return UNKNOWN
        if schema is True:
            return UNKNOWN
        if schema is False:
            return NEVER
        if not isinstance(schema, dict):
            return UNKNOWN
        if isinstance(schema.get("$ref"), str):
            return self._ref(schema, depth)
        if isinstance(schema.get("allOf"), list) and schema["allOf"]:
            return self._all_of(schema, depth)
        for key in ("oneOf", "anyOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return self._branches(schema, key, depth)
        shape = self._plain(schema, depth)
        return nullable(shape) if schema.get("nullable") is True else shape

    # ------------------------------------------------------------------ references

    def _lookup(self, ref: str) -> Any:
        """The target of a local reference ("#", "#/$defs/x"), or None."""
        if ref == "#":
            return self.root
        if not ref.startswith("#/"):
            return None
        node = self.root
        for raw in ref[2:].split("/"):
            token = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif (isinstance(node, list) and token.isascii() and token.isdigit()
                  and int(token) < len(node)):
                node = node[int(token)]
            else:
                return None
        return node

    def _ref(self, schema: dict[str, Any], depth: int) -> Shape:
        ref: str = schema["$ref"]
        target = self._lookup(ref)
        if target is None or ref in self.active_refs:
            return UNKNOWN
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        if isinstance(target, dict) and rest:
            target = merge_schemas(target, rest)
        self.active_refs.append(ref)
        try:
            return self.convert(target, depth + 1)
        finally:
            self.active_refs.pop()

    def _deref(self, schema: Any) -> Any:
        """`schema` with a top-level local `$ref` replaced by its target (None if unusable)."""
        seen: list[str] = []
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            target = self._lookup(ref)
            if target is None or ref in seen or ref in self.active_refs:
                return None
            seen.append(ref)
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = merge_schemas(target, rest) if isinstance(target, dict) else target
        return schema

    # ---------------------------------------------------------------- combinators

    def _all_of(self, schema: dict[str, Any], depth: int) -> Shape:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        others: list[Any] = []
        for part in schema["allOf"]:
            resolved = self._deref(part)
            base_is_object = _is_object_like(merged) or _only_annotations(merged)
            if (base_is_object and isinstance(resolved, dict) and _is_object_like(resolved)
                    and not any(k in resolved for k in _COMBINATORS)):
                merged = merge_schemas(merged, resolved)
            else:
                others.append(part)
        shapes = [self.convert(merged, depth + 1)]
        shapes += [self.convert(part, depth + 1) for part in others]
        return _intersection(shapes)

    def _branches(self, schema: dict[str, Any], key: str, depth: int) -> Shape:
        base = {k: v for k, v in schema.items() if k != key}
        members: list[Shape] = []
        for branch in schema[key]:
            resolved = self._deref(branch)
            if resolved is False:
                continue
            if resolved is True or (isinstance(resolved, dict) and not resolved):
                members.append(self.convert(base, depth + 1))
            elif isinstance(resolved, dict):
                members.append(self.convert(merge_schemas(base, resolved), depth + 1))
            else:
                members.append(UNKNOWN)
        return any_of(members)

    # ----------------------------------------------------------------- plain types

    def _plain(self, schema: dict[str, Any], depth: int) -> Shape:
        if "const" in schema:
            value = schema["const"]
            return Const((value,)) if is_json_scalar(value) else UNKNOWN
        if "enum" in schema and isinstance(schema["enum"], list):
            return _enum(schema["enum"])
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = list(dict.fromkeys(k for k in kind if isinstance(k, str)))
            return any_of([self._typed(schema, k, depth) for k in kinds])
        if isinstance(kind, str):
            return self._typed(schema, kind, depth)
        if _is_object_like(schema):
            return self._object(schema, depth)
        if "items" in schema or "prefixItems" in schema:
            return self._array(schema, depth)
        return UNKNOWN

    def _typed(self, schema: dict[str, Any], kind: str, depth: int) -> Shape:
        if kind == "object":
            return self._object(schema, depth)
        if kind == "array":
            return self._array(schema, depth)
        return _PRIMITIVE_TYPES.get(kind, UNKNOWN)

    def _object(self, schema: dict[str, Any], depth: int) -> Obj:
        declared = schema.get("properties")
        declared = declared if isinstance(declared, dict) else {}
        required_list = schema.get("required")
        required = {r for r in required_list if isinstance(r, str)} if isinstance(
            required_list, list) else set()
        extra = self._extra(schema, depth)
        props = []
        for name in sorted(set(declared) | required):
            if name in declared:
                shape = self.convert(declared[name], depth + 1)
            else:
                shape = extra if extra is not None else UNKNOWN
            props.append(Prop(name=name, shape=shape, required=name in required,
                              description=self._description(declared.get(name))))
        return Obj(props=tuple(props), extra=extra)

    def _extra(self, schema: dict[str, Any], depth: int) -> Shape | None:
        additional = schema.get("additionalProperties", schema.get("unevaluatedProperties", True))
        shapes: list[Shape] = []
        patterns = schema.get("patternProperties")
        if isinstance(patterns, dict):
            shapes += [self.convert(patterns[k], depth + 1) for k in sorted(patterns)]
        if additional is not False:
            shapes.append(self.convert(additional, depth + 1))
        return any_of(shapes) if shapes else None

    def _array(self, schema: dict[str, Any], depth: int) -> ArrayOf:
        parts: list[Shape] = []
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        if isinstance(prefix, list):
            parts += [self.convert(p, depth + 1) for p in prefix]
        if isinstance(items, list):  # draft 4-7 tuple form
            parts += [self.convert(p, depth + 1) for p in items]
            extra_items = schema.get("additionalItems", True)
            parts.append(self.convert(extra_items, depth + 1))
        elif items is not None:
            parts.append(self.convert(items, depth + 1))
        elif isinstance(prefix, list):
            parts.append(UNKNOWN)
        return ArrayOf(any_of(parts) if parts else UNKNOWN)

    def _description(self, schema: Any) -> str:
        for candidate in (schema, self._deref(schema)):
            if isinstance(candidate, dict) and isinstance(candidate.get("description"), str):
                return str(candidate["description"])
        return ""


def _only_annotations(schema: Mapping[str, Any]) -> bool:
    return all(k in ("description", "title", "$comment", "examples", "default", "$defs",
                     "definitions", "$schema", "$id") for k in schema)


def _enum(values: list[Any]) -> Shape:
    if not values:
        return NEVER
    if not all(is_json_scalar(v) for v in values):
        return UNKNOWN
    unique: dict[tuple[str, object], JsonScalar] = {}
    for value in values:
        unique.setdefault(scalar_key(value), value)
    return Const(tuple(unique.values()))


def _intersection(shapes: list[Shape]) -> Shape:
    if NEVER in shapes:
        return NEVER
    kept = [s for s in shapes if s != UNKNOWN]
    if not kept:
        return UNKNOWN
    return kept[0] if len(kept) == 1 else AllOf(tuple(kept))
