"""The platform's jsonschema validators (basedb.platform.domain.bounded_schema): what
jsonschema answers, at a cost linear in the params, or TooComplex past a step budget."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator

from basedb.platform.domain.bounded_schema import (
    TooComplex,
    all_unique,
    bounded_class,
    json_identity,
    step_budget,
)

values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.0, 1.0, 1.5]),
              st.sampled_from(["", "a", "1"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2)),
    max_leaves=8)


@settings(max_examples=400, deadline=None)
@given(items=st.lists(values, max_size=5))
def test_unique_items_answers_what_jsonschema_answers(items: list[Any]) -> None:
    schema = {"uniqueItems": True}
    assert bounded_class(schema)(schema).is_valid(items) == (
        Draft202012Validator(schema).is_valid(items))


@pytest.mark.parametrize(("one", "two", "equal"), [
    (1, 1.0, True), (True, 1, False), (False, 0, False), (None, False, False),
    ({"a": 1, "b": [1, 2]}, {"b": [1.0, 2], "a": 1}, True), ([1, 2], [2, 1], False),
    ({"a": True}, {"a": 1}, False), ("1", 1, False), ([[]], [{}], False),
])
def test_json_identity_is_json_schema_equality(one: Any, two: Any, equal: bool) -> None:
    assert (json_identity(one) == json_identity(two)) is equal
    assert all_unique([one, two]) is not equal


def test_unique_items_takes_linear_time() -> None:
    """Each item is hashed once: 20,000 distinct objects are checked without comparing
    any two (a pairwise check would make two hundred million comparisons)."""
    items = [{"a": n, "b": [n, str(n)]} for n in range(20_000)]
    assert all_unique(items)
    assert not all_unique([*items, {"b": [7, "7"], "a": 7.0}])


def test_patterns_run_on_re2_in_every_dialect() -> None:
    for schema in ({"pattern": "^(a+)+$"},
                   {"$schema": "http://json-schema.org/draft-07/schema#",
                    "pattern": "^(a+)+$"}):
        validator = bounded_class(schema)(schema)
        assert not validator.is_valid("a" * 50_000 + "!")
        [error] = validator.iter_errors("b")
        assert error.validator == "pattern"
    draft7 = bounded_class({"$schema": "http://json-schema.org/draft-07/schema#"})
    assert draft7.META_SCHEMA == Draft7Validator.META_SCHEMA
    keys = {"type": "object", "patternProperties": {"^(a+)+$": {"type": "integer"}}}
    validator = bounded_class(keys)(keys)
    assert validator.is_valid({"a" * 50_000 + "!": "not checked"})
    assert not validator.is_valid({"aaa": "checked"})


EXPONENTIAL = {"$defs": {"node": {"anyOf": [
    {"type": "array", "items": {"$ref": "#/$defs/node"}, "minItems": 2},
    {"type": "array", "items": {"$ref": "#/$defs/node"}}]}}, "$ref": "#/$defs/node"}


def nested(depth: int) -> list[Any]:
    tree: list[Any] = []
    for _ in range(depth):
        tree = [tree]
    return tree


def test_a_validation_past_its_budget_stops() -> None:
    validator = bounded_class(EXPONENTIAL)(EXPONENTIAL)
    with step_budget(10_000):
        assert validator.is_valid(nested(4))
    with step_budget(10_000), pytest.raises(TooComplex):
        validator.is_valid(nested(60))  # 2^60 keyword evaluations, unbounded
    assert validator.is_valid(nested(3))  # outside a budget nothing is counted
