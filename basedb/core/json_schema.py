"""Helpers over JSON Schema documents, shared by the contracts generator, the
platform's request examples, and `check` and the platform judging a schema's patterns."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

# Keywords whose value is a schema, a list of schemas, or a map of names to schemas, in
# every draft from 4 to 2020-12.
_ONE_SCHEMA = frozenset({"additionalProperties", "additionalItems", "items", "contains",
                         "not", "propertyNames", "if", "then", "else",
                         "unevaluatedProperties", "unevaluatedItems", "contentSchema"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                          "dependentSchemas", "dependencies"})

Tokens = tuple[str | int, ...]


def schema_patterns(schema: Any) -> Iterator[tuple[Tokens, str]]:
    """Every regular expression of `schema`: each `pattern` value and each key of a
    `patternProperties`, with the JSON Pointer tokens of where it is written."""
    stack: list[tuple[Tokens, Any]] = [((), schema)]
    while stack:
        at, node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield (*at, key), value
            if key == "patternProperties" and isinstance(value, Mapping):
                yield from (((*at, key, name), name) for name in value if isinstance(name, str))
            if key in _ONE_SCHEMA and isinstance(value, Mapping):
                stack.append(((*at, key), value))
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                stack.extend(((*at, key, i), item) for i, item in enumerate(value))
            elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
                stack.extend(((*at, key, name), item) for name, item in value.items())


def merge_schemas(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`base` narrowed by `extra`: properties merge per key, `required` and `type` combine."""
    out = dict(base)
    for key, value in extra.items():
        current = out.get(key)
        if key == "properties" and isinstance(value, dict) and isinstance(current, dict):
            merged = dict(current)
            for name, sub in value.items():
                old = merged.get(name)
                merged[name] = {**old, **sub} if isinstance(old, dict) and isinstance(
                    sub, dict) else sub
            out[key] = merged
        elif key == "required" and isinstance(value, list) and isinstance(current, list):
            names = [n for n in (*current, *value) if isinstance(n, str)]
            out[key] = list(dict.fromkeys(names))
        elif key == "type" and current is not None:
            out[key] = _intersect_types(current, value)
        else:
            out[key] = value
    return out


def _intersect_types(a: Any, b: Any) -> Any:
    left = [a] if isinstance(a, str) else a if isinstance(a, list) else None
    right = [b] if isinstance(b, str) else b if isinstance(b, list) else None
    if left is None or right is None:
        return b if right is not None else a

    def widen(types: list[Any]) -> set[str]:
        # "integer" is a subset of "number": keep it when the other side says number.
        found = {t for t in types if isinstance(t, str)}
        return found | {"integer"} if "number" in found else found

    both = [t for t in right if isinstance(t, str) and t in widen(left)]
    both += [t for t in left if isinstance(t, str) and t in widen(right) and t not in both]
    return both[0] if len(both) == 1 else both
