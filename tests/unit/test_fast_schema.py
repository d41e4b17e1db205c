"""The compiled `is_valid` (basedb.platform.domain.fast_schema) answers what jsonschema's
Draft 2020-12 validator answers, on schemas of the vocabulary it compiles and on the
schemas the platform builds for functions' params. The validator compared with is the
platform's (`bounded_schema`): jsonschema's, with patterns on RE2 and a linear
uniqueItems; test_bounded_schema.py compares those with jsonschema's own."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basedb.platform.domain.bounded_schema import bounded_class
from basedb.platform.domain.fast_schema import FastValidator, compile_is_valid
from basedb.platform.domain.schemas import DATE_PATTERN, DATETIME_PATTERN

Draft202012Validator = bounded_class({})

TYPES = ["string", "number", "integer", "boolean", "null", "array", "object"]
NAMES = ["a", "b", "状态", "x y"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.integers(),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0.0, 1.0, -2.0, 2.5]),
    st.text(max_size=6), st.sampled_from(["2024-01-31", "2024-1-31", "", "a", "ab", "状态"]))
instances = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                     st.dictionaries(st.sampled_from(NAMES), inner, max_size=4)),
    max_leaves=10)


def _keywords(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    counts = st.integers(0, 3)
    bounds = st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -1.5, 2.0]))
    return st.fixed_dictionaries({}, optional={
        "type": st.one_of(st.sampled_from(TYPES), st.lists(st.sampled_from(TYPES), min_size=1,
                                                           max_size=3, unique=True)),
        "enum": st.lists(scalars, max_size=4),
        "minimum": bounds, "maximum": bounds, "exclusiveMinimum": bounds,
        "exclusiveMaximum": bounds,
        "minLength": counts, "maxLength": counts,
        "pattern": st.sampled_from(["^a", "b$", "[0-9]", DATE_PATTERN, DATETIME_PATTERN]),
        "minItems": counts, "maxItems": counts, "uniqueItems": st.booleans(),
        "items": inner,
        "properties": st.dictionaries(st.sampled_from(NAMES), inner, max_size=3),
        "required": st.lists(st.sampled_from(NAMES), max_size=3, unique=True),
        "additionalProperties": st.one_of(st.booleans(), inner),
        "title": st.text(max_size=3), "description": st.text(max_size=3),
        "format": st.sampled_from(["date", "date-time", "email"]),
    })


schemas = st.recursive(st.one_of(st.booleans(), _keywords(st.just(True))), _keywords,
                       max_leaves=6)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, instance=instances)
def test_it_answers_what_jsonschema_answers(schema: Any, instance: Any) -> None:
    fast = compile_is_valid(schema)
    assert fast is not None, schema
    assert fast(instance) == Draft202012Validator(schema).is_valid(instance), (schema, instance)


PARAMS_SCHEMA: dict[str, Any] = {
    "type": "object", "title": "ordersOfCustomer", "additionalProperties": False,
    "required": ["customer"],
    "properties": {
        "customer": {"type": "string", "minLength": 1, "description": "Customer code"},
        "status": {"type": ["string", "null"], "enum": ["paid", "open", None],
                   "description": "Order status"},
        "since": {"type": ["string", "null"], "format": "date", "pattern": DATE_PATTERN},
        "amounts": {"type": ["array", "null"], "items": {"type": "number", "minimum": 0},
                    "maxItems": 3},
        "limit": {"type": "integer", "minimum": 1},
    },
}


@pytest.mark.parametrize("params", [
    {"customer": "C1"}, {"customer": ""}, {}, {"customer": "C1", "other": 1},
    {"customer": "C1", "status": "paid"}, {"customer": "C1", "status": "PAID"},
    {"customer": "C1", "status": None}, {"customer": 1}, {"customer": True},
    {"customer": "C1", "since": "2024-02-30"}, {"customer": "C1", "since": "2024-2-3"},
    {"customer": "C1", "amounts": [1, 2.5]}, {"customer": "C1", "amounts": [1, -1]},
    {"customer": "C1", "amounts": [1, 2, 3, 4]}, {"customer": "C1", "amounts": [True]},
    {"customer": "C1", "limit": 1.0}, {"customer": "C1", "limit": 1.5},
    {"customer": "C1", "limit": 0}, {"customer": "C1", "limit": False}, [], "C1", None,
])
def test_a_params_schema_answers_what_jsonschema_answers(params: Any) -> None:
    validator = FastValidator(Draft202012Validator(PARAMS_SCHEMA))
    assert compile_is_valid(PARAMS_SCHEMA) is not None
    assert validator.is_valid(params) == Draft202012Validator(PARAMS_SCHEMA).is_valid(params)


@pytest.mark.parametrize("schema", [
    {"$ref": "#/$defs/x", "$defs": {"x": {"type": "string"}}},
    {"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}},
    {"enum": [[1, 2], {"a": 1}]},
    {"type": "strin"},
    {"pattern": "(?<!"},
    {"minLength": -1},
    {"minimum": "1"},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer"},
    {"type": "object", "patternProperties": {"^a": {"type": "string"}}},
])
def test_what_it_does_not_compile_is_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert compile_is_valid(schema) is None


def test_errors_always_come_from_jsonschema() -> None:
    validator = FastValidator(Draft202012Validator(PARAMS_SCHEMA))
    errors = list(validator.iter_errors({"customer": 1, "other": True}))
    assert {error.validator for error in errors} == {"type", "additionalProperties"}
    assert validator.schema is PARAMS_SCHEMA


@pytest.mark.parametrize(("schema", "instance"), [
    ({"enum": [1]}, True), ({"enum": [0]}, False), ({"enum": [True]}, 1),
    ({"enum": [False]}, 0), ({"enum": [1.0]}, 1), ({"enum": [1]}, 1.0), ({"enum": [None]}, 0),
    ({"enum": ["1"]}, 1), ({"enum": [1]}, [1]), ({"type": "integer"}, 2.0),
    ({"type": "integer"}, True), ({"type": "number"}, False), ({"minimum": 5}, True),
    ({"minLength": 2}, "状态"), ({"minLength": 3}, "😀😀"), ({"maxItems": 0}, {}),
    ({"required": ["a"]}, []), ({"additionalProperties": False}, "x"),
])
def test_equality_and_types_as_jsonschema_has_them(schema: dict[str, Any], instance: Any) -> None:
    fast = compile_is_valid(schema)
    assert fast is not None
    assert fast(instance) == Draft202012Validator(schema).is_valid(instance)
