"""Parameters an agent can fill the first time: `examples` on parameters and request
examples that pass their own inputSchema, over every function of a generated site, and
the rules underneath (basedb.platform.domain.param_examples)."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from basedb.platform.domain.param_examples import described_range, schema_example
from tests.generated_site import GeneratedSite, deploy_generated

NUMBER_KINDS = ("INT", "NUMBER", "integer", "number")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> GeneratedSite:
    return deploy_generated(tmp_path_factory.mktemp("examples"), functions=200)


@pytest.fixture(autouse=True)
def _on_site(site: GeneratedSite, monkeypatch: pytest.MonkeyPatch) -> None:
    site.use(monkeypatch)


def descriptions(site: GeneratedSite) -> list[dict[str, Any]]:
    with site.client() as client:
        return [client.request("GET", f"/sites/{site.app_token}/functions/{f['functionId']}",
                               params={"env": "prod"})["data"]["function"]
                for f in site.functions(client)]


def test_every_request_example_passes_its_own_schema(site: GeneratedSite) -> None:
    check_request_examples(site)


def check_request_examples(site: GeneratedSite) -> None:
    checked = 0
    for function in descriptions(site):
        schema = function["inputSchema"]
        if schema is None:
            continue
        errors = [e.message for e in Draft202012Validator(schema).iter_errors(
            function["requestExample"]["params"])]
        assert errors == [], (function["functionId"], errors)
        for parameter in function["parameters"]:
            for example in parameter.get("examples", []):
                one = Draft202012Validator(schema["properties"][parameter["name"]])
                assert one.is_valid(example), (function["functionId"], parameter, example)
        checked += 1
    assert checked > 150


def test_parameters_with_a_source_carry_examples(site: GeneratedSite) -> None:
    """Enums, select options, numbers, booleans, dates and ids always have examples."""
    for function in descriptions(site):
        for parameter in function["parameters"]:
            typed = parameter["type"].rstrip("[]")
            if parameter.get("enum") or parameter.get("optionSummary") or typed in (
                    *NUMBER_KINDS, "BOOL", "DATE", "DATETIME", "RECORD_ID", "USER_ID",
                    "boolean"):
                assert parameter.get("examples"), (function["functionId"], parameter)


def test_a_stated_range_picks_the_example(site: GeneratedSite) -> None:
    [function] = [f for f in descriptions(site) if f["functionId"] == "assetsByStatus"]
    limit = next(p for p in function["parameters"] if p["name"] == "limit")
    assert "from 1 to 200" in limit["description"] and limit["examples"] == [50]
    assert function["requestExample"]["params"]["limit"] == 50


def test_described_ranges() -> None:
    assert described_range("from 1 to 200; 50 is a good first page") == (1, 200, 50)
    assert described_range("Between 0 and 10 days") == (0, 10, None)
    assert described_range("Page size 1-500, defaults to 100") == (1, 500, 100)
    assert described_range("Due on 2025-01-31") is None
    assert described_range("Any text") is None


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "array", "minItems": 2, "uniqueItems": True,
      "items": {"type": "string", "enum": ["a", "b", "c"]}}, ["a", "b"]),
    ({"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"}, "2025-01-31"),
    ({"type": "string", "format": "email"}, "someone@example.com"),
    ({"type": "integer", "minimum": 1, "maximum": 200}, 1),
    ({"type": "number", "exclusiveMinimum": 0}, 1),
    ({"type": "object", "required": ["id"], "properties": {"id": {"type": "string",
                                                                   "minLength": 3}}},
     {"id": "<id>"}),
    ({"oneOf": [{"const": "open"}, {"const": "close"}]}, "open"),
    ({"type": ["null", "boolean"]}, False),
])
def test_schema_examples_satisfy_their_schema(schema: dict[str, Any], expected: Any) -> None:
    value = schema_example(schema, "id")
    assert value == expected
    assert Draft202012Validator(schema).is_valid(value)
