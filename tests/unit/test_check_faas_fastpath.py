"""`plainly_valid` may only ever accept schemas that the full metaschema accepts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema.validators import Draft202012Validator

from basedb.check.faas import plainly_valid, schema_problems

META = Draft202012Validator(Draft202012Validator.META_SCHEMA,
                            format_checker=Draft202012Validator.FORMAT_CHECKER)

KEYWORDS = ["type", "description", "title", "minLength", "maxLength", "minimum", "maximum",
            "multipleOf", "uniqueItems", "enum", "const", "required", "pattern", "items",
            "properties", "oneOf", "anyOf", "allOf", "additionalProperties", "$defs", "not",
            "format", "$ref", "dependentRequired", "minItems"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.floats(-2, 2),
                    st.sampled_from(["string", "object", "integer", "strnig", "(", "^a$", ""]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from([*KEYWORDS, "a", "b"]), inner, max_size=3)), max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYWORDS), values, max_size=4))
def test_plainly_valid_never_accepts_an_invalid_schema(schema: dict) -> None:
    if plainly_valid(schema):
        assert META.is_valid(schema), schema


def test_plain_schema_is_accepted_without_problems() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "minLength": 1,
                                                     "description": "x"}},
              "required": ["a"], "oneOf": [{"required": ["a"]}]}
    assert plainly_valid(schema)
    assert schema_problems(schema) == []


def test_unusual_keywords_take_the_full_path() -> None:
    assert not plainly_valid({"type": "object", "$ref": "#/$defs/x"})
    assert not plainly_valid({"type": "object", "minLength": 1.0})
    assert schema_problems({"type": "strnig"})  # still reported through jsonschema
