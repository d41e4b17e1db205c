"""A JSON Schema's `is_valid`, compiled to nested Python closures for the small part of
the vocabulary that functions' input schemas use.

    validator = FastValidator(jsonschema_validator)
    validator.is_valid(params)        # the closures when the schema allows, else jsonschema
    validator.iter_errors(params)     # always jsonschema's, for the messages

Every call's params are checked against its function's inputSchema; jsonschema walks the
schema anew for each (about 50 µs for a handful of params), the closures take a few.
They answer exactly what Draft 2020-12 `is_valid` answers (without format assertion,
which jsonschema does not do by default either), and only for schemas they understand
through and through: any other keyword, a `$ref`, another dialect or a pattern RE2
cannot run leaves the schema to jsonschema (`compile_is_valid` returns None).
tests/unit/test_fast_schema.py compares the two on generated schemas and instances.

Every keyword the closures implement costs time linear in the instance: patterns run on
RE2 (`basedb.core.schema_regex`), `enum` looks numbers up in a set, `uniqueItems`
hashes each item once (`bounded_schema.all_unique`). So a schema they compile
(`FastValidator.linear`) may be checked on the server's event loop; any other is
validated in a worker thread, under a step budget (`basedb.platform.domain.invoke`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from basedb.core.schema_regex import PatternUnsupported, compile_pattern
from basedb.platform.domain.bounded_schema import all_unique

Predicate = Callable[[Any], bool]

DIALECT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
# Keywords that only annotate: they never make an instance invalid.
_ANNOTATIONS = frozenset({"title", "description", "$comment", "examples", "default",
                          "deprecated", "readOnly", "writeOnly", "format", "$schema"})
_SUPPORTED = _ANNOTATIONS | {
    "type", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "pattern", "items", "minItems", "maxItems", "uniqueItems",
    "properties", "required", "additionalProperties"}


class Unsupported(Exception):
    """The schema uses something the closures do not implement."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_TYPES: dict[str, Predicate] = {
    "string": lambda value: isinstance(value, str),
    "number": _is_number,
    "integer": _is_integer,
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
    "array": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, dict),
}


class FastValidator:
    """A jsonschema validator whose `is_valid` runs compiled closures when it can."""

    __slots__ = ("_fast", "_validator", "schema")

    def __init__(self, validator: Any) -> None:
        self._validator = validator
        self.schema = validator.schema
        self._fast = compile_is_valid(self.schema)

    @property
    def linear(self) -> bool:
        """Whether `is_valid` runs the closures (time linear in the instance)."""
        return self._fast is not None

    def is_valid(self, instance: Any) -> bool:
        if self._fast is not None:
            return self._fast(instance)
        return bool(self._validator.is_valid(instance))

    def iter_errors(self, instance: Any) -> Iterator[Any]:
        return self._validator.iter_errors(instance)


def compile_is_valid(schema: Any) -> Predicate | None:
    """`is_valid` of `schema` as closures, or None when it is not for them."""
    if isinstance(schema, dict) and schema.get("$schema", DIALECT_2020_12) != DIALECT_2020_12:
        return None
    try:
        return _compile(schema)
    except (Unsupported, PatternUnsupported, RecursionError):
        return None


def _compile(schema: Any) -> Predicate:
    if schema is True:
        return lambda value: True
    if schema is False:
        return lambda value: False
    if not isinstance(schema, dict) or any(key not in _SUPPORTED for key in schema):
        raise Unsupported
    checks = [check for check in (_type(schema), _enum(schema), _numeric(schema),
                                  _string(schema), _array(schema), _object(schema))
              if check is not None]
    if not checks:
        return lambda value: True
    if len(checks) == 1:
        return checks[0]
    return lambda value: all(check(value) for check in checks)


def _type(schema: dict[str, Any]) -> Predicate | None:
    if "type" not in schema:
        return None
    names = schema["type"]
    names = [names] if isinstance(names, str) else names
    if not isinstance(names, list) or not names or any(
            not isinstance(name, str) or name not in _TYPES for name in names):
        raise Unsupported
    tests = tuple(_TYPES[name] for name in names)
    if len(tests) == 1:
        return tests[0]
    return lambda value: any(test(value) for test in tests)


def _enum(schema: dict[str, Any]) -> Predicate | None:
    if "enum" not in schema:
        return None
    members = schema["enum"]
    if not isinstance(members, list) or any(
            not (member is None or isinstance(member, (str, bool, int, float)))
            for member in members):
        raise Unsupported  # arrays or objects: compared deeply by jsonschema
    texts = frozenset(member for member in members if isinstance(member, str))
    numbers = frozenset(member for member in members if _is_number(member))
    has_true = any(member is True for member in members)
    has_false = any(member is False for member in members)
    has_null = any(member is None for member in members)

    def member(value: Any) -> bool:
        if isinstance(value, str):
            return value in texts
        if value is None:
            return has_null
        if isinstance(value, bool):
            return has_true if value else has_false
        if isinstance(value, (int, float)):
            return value in numbers  # 1 == 1.0, with equal hashes
        return False

    return member


def _limit(schema: dict[str, Any], key: str) -> float | None:
    bound = schema.get(key)
    if bound is None and key not in schema:
        return None
    if not _is_number(bound) or (isinstance(bound, float) and not math.isfinite(bound)):
        raise Unsupported
    return bound


def _numeric(schema: dict[str, Any]) -> Predicate | None:
    low, high = _limit(schema, "minimum"), _limit(schema, "maximum")
    above, below = _limit(schema, "exclusiveMinimum"), _limit(schema, "exclusiveMaximum")
    if low is None and high is None and above is None and below is None:
        return None

    def within(value: Any) -> bool:
        if not _is_number(value):
            return True
        return ((low is None or value >= low) and (high is None or value <= high)
                and (above is None or value > above) and (below is None or value < below))

    return within


def _count(schema: dict[str, Any], key: str) -> int | None:
    count = schema.get(key)
    if count is None and key not in schema:
        return None
    if isinstance(count, float) and count.is_integer():
        count = int(count)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise Unsupported
    return count


def _string(schema: dict[str, Any]) -> Predicate | None:
    shortest, longest = _count(schema, "minLength"), _count(schema, "maxLength")
    pattern = schema.get("pattern")
    if "pattern" in schema and not isinstance(pattern, str):
        raise Unsupported
    search = compile_pattern(pattern).search if pattern is not None else None
    if shortest is None and longest is None and search is None:
        return None

    def text(value: Any) -> bool:
        if not isinstance(value, str):
            return True
        return ((shortest is None or len(value) >= shortest)
                and (longest is None or len(value) <= longest)
                and (search is None or search(value) is not None))

    return text


def _array(schema: dict[str, Any]) -> Predicate | None:
    fewest, most = _count(schema, "minItems"), _count(schema, "maxItems")
    item = _compile(schema["items"]) if "items" in schema else None
    unique = schema.get("uniqueItems", False)
    if not isinstance(unique, bool):
        raise Unsupported
    if fewest is None and most is None and item is None and not unique:
        return None

    def array(value: Any) -> bool:
        if not isinstance(value, list):
            return True
        return ((fewest is None or len(value) >= fewest)
                and (most is None or len(value) <= most)
                and (item is None or all(item(element) for element in value))
                and (not unique or all_unique(value)))

    return array


def _object(schema: dict[str, Any]) -> Predicate | None:
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list) or any(
            not isinstance(name, str) for name in required):
        raise Unsupported
    checks = {name: _compile(sub) for name, sub in properties.items()}
    other = _compile(extra)
    if not checks and not required and extra is True:
        return None
    names = tuple(required)

    def obj(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name in names:
            if name not in value:
                return False
        for key, item in value.items():
            check = checks.get(key)
            if check is None:
                if not other(item):
                    return False
            elif not check(item):
                return False
        return True

    return obj
