"""The quick check in front of jsonschema never accepts params that jsonschema refuses,
and accepts the ordinary valid ones (else it would be no quicker)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from basedb.platform.domain.function_plans import schema_validator
from basedb.platform.domain.param_checks import ParamsValidator
from basedb.platform.domain.schemas import KIND_TYPES, ParamSpec, schema_from_specs
from basedb.workspace.model import Mutation


def _declaration() -> Mutation:
    return Mutation(function_id="f", kind="mutation", file="mutations/f/function.json",
                    name="f", description="Quick check test", raw={})


def validator_of(specs: tuple[ParamSpec, ...]) -> tuple[ParamsValidator, Any]:
    schema = schema_from_specs(_declaration(), specs)
    plain = schema_validator(schema)
    return ParamsValidator(plain, specs), plain


KINDS = sorted(KIND_TYPES)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True),
    st.sampled_from([0, 1, 1.0, 3.0, -1, 2**70]),
    st.sampled_from(["", "a", "Open", "Done", "2025-01-31", "2025-13-45", "2025-01-31\n",
                     "2025-01-31 09:00:00", "2025-01-31T09:00:00Z", "2025-01-31T9:00",
                     "rec1", "ou_1"]),
    st.text(max_size=12))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=4), st.dictionaries(
    st.text(max_size=3), SCALARS, max_size=2))


@st.composite
def specs_and_params(draw: st.DrawFn) -> tuple[tuple[ParamSpec, ...], Any]:
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=0, max_size=4,
                          unique=True))
    specs = []
    for name in names:
        kind = draw(st.sampled_from(KINDS))
        enum = draw(st.one_of(st.none(), st.lists(SCALARS.filter(lambda v: v is not None),
                                                  min_size=1, max_size=3, unique_by=repr)))
        specs.append(ParamSpec(
            name=name, kind=kind, is_array=draw(st.booleans()), required=draw(st.booleans()),
            description="d", enum=tuple(enum) if enum is not None else None,
            max_items=draw(st.one_of(st.none(), st.integers(0, 3))),
            minimum=draw(st.one_of(st.none(), st.just(0)))))
    params = draw(st.one_of(VALUES, st.dictionaries(
        st.sampled_from(["a", "b", "c", "d", "e"]), VALUES, max_size=5)))
    return tuple(specs), params


@settings(max_examples=1500, deadline=None)
@given(specs_and_params())
def test_what_the_quick_check_accepts_jsonschema_accepts(
        case: tuple[tuple[ParamSpec, ...], Any]) -> None:
    specs, params = case
    quick, plain = validator_of(specs)
    if quick.accepts(params):
        assert plain.is_valid(params), (specs, params)
    assert quick.is_valid(params) == plain.is_valid(params)
    assert [e.message for e in quick.iter_errors(params)] == [
        e.message for e in plain.iter_errors(params)]


def test_ordinary_valid_params_need_no_jsonschema() -> None:
    specs = (
        ParamSpec("title", "TEXT", False, True, "d"),
        ParamSpec("status", "TEXT", False, True, "d", enum=("Open", "Done")),
        ParamSpec("points", "NUMBER", False, False, "d"),
        ParamSpec("limit", "INT", False, False, "d", minimum=0),
        ParamSpec("due", "DATETIME", False, False, "d"),
        ParamSpec("day", "DATE", False, False, "d"),
        ParamSpec("ids", "RECORD_ID", True, False, "d", max_items=200),
        ParamSpec("done", "BOOL", False, False, "d"),
    )
    quick, _ = validator_of(specs)
    assert quick.accepts({"title": "x", "status": "Open", "points": 2.5, "limit": 3,
                          "due": "2025-01-31 09:00:00", "day": "2025-01-31",
                          "ids": ["rec1", "rec2"], "done": True})
    assert quick.accepts({"title": "x", "status": "Done", "points": None})
    assert not quick.accepts({"status": "Open"})  # title is required
    assert not quick.accepts({"title": "x", "status": "open"})
    assert not quick.accepts({"title": "x", "status": "Open", "extra": 1})
    assert not quick.accepts({"title": "x", "status": "Open", "limit": -1})
    assert not quick.accepts({"title": "x", "status": "Open", "ids": ["rec"] * 201})
    assert not quick.accepts({"title": "x", "status": "Open", "done": 1})
