"""Example values an agent can fill a parameter with the first time, and request
examples that pass their own input schema.

A Database Function or Mutation parameter's examples come, in this order, from its
enum, from the options of the select field it is compared with, from the range its
description states ("from 1 to 200"; "50 is a good first page" picks the value), and
from its kind (a date in the format the schema's pattern wants, a record id's shape).
Free text has examples only when its description quotes one ("e.g. 'Q3'"): anything
else would be a guess the agent could take for data.

A declared JSON Schema (FaaS, AI Functions) gets the smallest value that satisfies the
keywords a handler's schema commonly uses (`schema_example`): const, enum, type,
minItems with items (distinct when uniqueItems), minLength, minimum and maximum,
the date and date-time patterns and formats, required properties of nested objects,
and the first branch of oneOf/anyOf.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from basedb.platform.domain.schemas import ParamSpec

MAX_EXAMPLES = 3
LIMIT_EXAMPLE = 20
RECORD_ID_EXAMPLE = "recExample"  # a shape: real ids come from a read function
USER_ID_EXAMPLE = "ou_example"
DATE_EXAMPLE = "2025-01-31"
DATETIME_EXAMPLE = "2025-01-31 09:00:00"
ISO_DATETIME_EXAMPLE = "2025-01-31T09:00:00Z"
_NUMBER = r"-?\d+(?:\.\d+)?"
_RANGE_RE = re.compile(rf"\b(?:from|between)\s+({_NUMBER})\s+(?:to|and)\s+({_NUMBER})\b"
                       rf"|(?:^|[\s(])({_NUMBER})\s*(?:-|–|to)\s*({_NUMBER})\b", re.IGNORECASE)
_PREFERRED_RE = re.compile(rf"\b({_NUMBER})\s+is\s+a\s+good\b|\bdefault(?:s)?\s+(?:is\s+|to\s+)?"
                           rf"({_NUMBER})\b", re.IGNORECASE)
_QUOTED_RE = re.compile(r"\be\.g\.,?\s*['\"“‘]([^'\"”’]{1,40})['\"”’]", re.IGNORECASE)
_OFFSET_NAMES = ("offset", "skip")


def described_range(text: str) -> tuple[float, float, float | None] | None:
    """(low, high, preferred) of a range the description states, else None."""
    match = _RANGE_RE.search(text)
    if match is None:
        return None
    low_text, high_text = (match.group(1), match.group(2)) if match.group(1) is not None \
        else (match.group(3), match.group(4))
    low, high = float(low_text), float(high_text)
    if low > high:
        return None
    preferred = None
    wanted = _PREFERRED_RE.search(text)
    if wanted is not None:
        value = float(wanted.group(1) or wanted.group(2))
        preferred = value if low <= value <= high else None
    return low, high, preferred


def _number(value: float, integer: bool) -> int | float:
    return int(value) if integer or value.is_integer() else value


def spec_examples(spec: ParamSpec) -> tuple[Any, ...]:
    """Examples of one element of the parameter (an array param takes a list of them)."""
    if spec.enum:
        return tuple(spec.enum[:MAX_EXAMPLES])
    if spec.option is not None and spec.option.options:
        return tuple(spec.option.options[:MAX_EXAMPLES])
    kind = spec.kind
    if kind in ("INT", "NUMBER"):
        return (_numeric_example(spec),)
    if kind == "BOOL":
        return (True, False)
    if kind == "DATE":
        return (DATE_EXAMPLE,)
    if kind == "DATETIME":
        return (DATETIME_EXAMPLE,)
    if kind == "USER_ID" or (spec.reference is not None and spec.reference.value == "user"):
        return (USER_ID_EXAMPLE,)
    if kind == "RECORD_ID" or spec.reference is not None:
        return (RECORD_ID_EXAMPLE,)
    quoted = _QUOTED_RE.search(spec.description)
    return (quoted.group(1),) if quoted else ()


def _numeric_example(spec: ParamSpec) -> int | float:
    integer = spec.kind == "INT"
    floor = spec.minimum
    stated = described_range(spec.description)
    if stated is not None:
        low, high, preferred = stated
        if floor is not None:
            low = max(low, floor)
        if low <= high:
            return _number(preferred if preferred is not None else low, integer)
    if floor is not None:  # a LIMIT or OFFSET
        offset = any(word in spec.name.lower() for word in _OFFSET_NAMES)
        return max(floor, 0 if offset else LIMIT_EXAMPLE)
    return 1


def spec_value(spec: ParamSpec) -> Any:
    """The value a request example puts for the parameter."""
    examples = spec_examples(spec)
    value = examples[0] if examples else f"<{spec.name}>"
    return [value] if spec.is_array else value


# ------------------------------------------------------------------ JSON Schema

_DATE_PATTERNS = {r"^\d{4}-\d{2}-\d{2}$": DATE_EXAMPLE}
_FORMATS = {"date": DATE_EXAMPLE, "date-time": ISO_DATETIME_EXAMPLE,
            "time": "09:00:00", "email": "someone@example.com",
            "uri": "https://example.com/", "url": "https://example.com/",
            "uuid": "00000000-0000-4000-8000-000000000000"}


def schema_examples(schema: Any) -> tuple[Any, ...]:
    """A declared property's examples: its own `examples`, else its enum, else one
    value that satisfies it."""
    if not isinstance(schema, Mapping):
        return ()
    own = schema.get("examples")
    if isinstance(own, list) and own:
        return tuple(own[:MAX_EXAMPLES])
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return tuple(enum[:MAX_EXAMPLES])
    value = schema_example(schema, "\x00")
    return () if value == "<\x00>" else (value,)  # free text: no example to give


def schema_example(schema: Any, name: str, depth: int = 0) -> Any:
    """The smallest value `schema` accepts, as far as its common keywords say."""
    if not isinstance(schema, Mapping) or depth > 8:
        return f"<{name}>"
    if "const" in schema:
        return schema["const"]
    own = schema.get("examples")
    if isinstance(own, list) and own:
        return own[0]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("oneOf", "anyOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            rest = {k: v for k, v in schema.items() if k != key}
            first = branches[0] if isinstance(branches[0], Mapping) else {}
            return schema_example({**rest, **first}, name, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = ("object" if "properties" in schema else "array" if "items" in schema
                else "string")
    if kind == "object":
        return _object_example(schema, depth)
    if kind == "array":
        return _array_example(schema, name, depth)
    if kind in ("integer", "number"):
        return _schema_number(schema, kind == "integer")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return _string_example(schema, name)


def _object_example(schema: Mapping[str, Any], depth: int) -> dict[str, Any]:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    names = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
    return {n: schema_example(properties.get(n), n, depth + 1) for n in names}


def _array_example(schema: Mapping[str, Any], name: str, depth: int) -> list[Any]:
    count = schema.get("minItems")
    count = count if isinstance(count, int) and count > 0 else 0
    if count == 0:
        return []
    items = schema.get("items")
    choices = items.get("enum") if isinstance(items, Mapping) else None
    if isinstance(choices, list) and len(choices) >= count:
        return list(choices[:count])
    value = schema_example(items, name, depth + 1)
    if schema.get("uniqueItems") is True and isinstance(value, (int, float)) \
            and not isinstance(value, bool):
        return [value + i for i in range(count)]
    if schema.get("uniqueItems") is True and isinstance(value, str):
        return [value if i == 0 else f"{value}{i + 1}" for i in range(count)]
    return [value] * count


def _schema_number(schema: Mapping[str, Any], integer: bool) -> int | float:
    low = schema.get("minimum")
    if not isinstance(low, (int, float)):
        low = schema.get("exclusiveMinimum")
        low = low + 1 if isinstance(low, (int, float)) else None
    high = schema.get("maximum")
    value: float = low if low is not None else 0
    if isinstance(high, (int, float)) and value > high:
        value = high
    return int(value) if integer else value


def _string_example(schema: Mapping[str, Any], name: str) -> str:
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and pattern in _DATE_PATTERNS:
        return _DATE_PATTERNS[pattern]
    fmt = schema.get("format")
    value = _FORMATS.get(fmt, f"<{name}>") if isinstance(fmt, str) else f"<{name}>"
    if isinstance(pattern, str) and not re.search(pattern, value):
        for candidate in (DATE_EXAMPLE, DATETIME_EXAMPLE, ISO_DATETIME_EXAMPLE, name, "x"):
            if re.search(pattern, candidate):
                return candidate
    low = schema.get("minLength")
    if isinstance(low, int) and len(value) < low:
        value = value + "x" * (low - len(value))
    high = schema.get("maxLength")
    if isinstance(high, int) and len(value) > high:
        value = value[:high]
    return value
