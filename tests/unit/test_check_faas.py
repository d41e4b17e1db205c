from __future__ import annotations

from pathlib import Path
from typing import Any

from basedb.check.faas import check_faas, schema_problems
from basedb.protocol.findings import Finding, Hint
from tests.unit._builders import check_context
from tests.unit._contracts_fixture import MANAGE_PERIOD_SCHEMA

DESC = "What the value means and where it comes from"
# Upstream's example: create or close a reporting period, conditional required via oneOf.
PERIOD_SCHEMA = MANAGE_PERIOD_SCHEMA


def faas(schema: Any = ..., description: str = "Creates or closes a reporting period.",
         ) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": "f", "description": description}
    if schema is not ...:
        doc["inputSchema"] = schema
    return doc


def run(tmp_path: Path, functions: dict[str, Any], *, skip_ai: bool = False,
        ) -> tuple[list[Finding], list[Hint]]:
    ctx = check_context(tmp_path, functions=functions, skip_ai=skip_ai)
    check_faas(ctx)
    return ctx.errors, ctx.hints


def run_schema(tmp_path: Path, schema: Any) -> tuple[list[Finding], list[Hint]]:
    return run(tmp_path, {"faas/f": faas(schema)})


def codes(items: list[Finding] | list[Hint]) -> list[tuple[str, str]]:
    return sorted((i.code, i.pointer) for i in items)


def test_upstream_example_is_valid(tmp_path: Path) -> None:
    assert run_schema(tmp_path, PERIOD_SCHEMA) == ([], [])


def test_missing_or_null_schema_is_allowed(tmp_path: Path) -> None:
    assert run_schema(tmp_path / "a", ...) == ([], [])
    assert run_schema(tmp_path / "b", None) == ([], [])


def test_schema_not_object(tmp_path: Path) -> None:
    errors, _ = run_schema(tmp_path / "a", ["x"])
    assert codes(errors) == [("FAAS_SCHEMA_NOT_OBJECT", "/inputSchema")]
    assert "an array" in errors[0].message and errors[0].fix
    errors, _ = run_schema(tmp_path / "b", {"type": "string", "description": "x"})
    assert codes(errors) == [("FAAS_SCHEMA_NOT_OBJECT", "/inputSchema/type")]
    errors, _ = run_schema(tmp_path / "c", {"properties": {"a": {"description": DESC}}})
    assert codes(errors) == [("FAAS_SCHEMA_NOT_OBJECT", "/inputSchema")]
    assert errors[0].file == "faas/f/function.json" and errors[0].function_id == "f"


def test_property_description_missing(tmp_path: Path) -> None:
    errors, _ = run_schema(tmp_path, {"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "string", "description": "  "},
        "c": {"type": "integer", "description": 5}, "d": True,
        "e/f": {"type": "string"}, "ok": {"type": "string", "description": DESC},
    }})
    missing = [e for e in errors if e.code == "FAAS_PROPERTY_DESCRIPTION_MISSING"]
    assert codes(missing) == [("FAAS_PROPERTY_DESCRIPTION_MISSING", f"/inputSchema/properties/{n}")
                              for n in ("a", "b", "c", "d", "e~1f")]
    assert "a number, not a string" in missing[2].message
    # A non-string description is also invalid JSON Schema.
    assert codes([e for e in errors if e not in missing]) == [
        ("FAAS_SCHEMA_INVALID", "/inputSchema/properties/c/description")]


def test_only_top_level_properties_need_descriptions(tmp_path: Path) -> None:
    errors, _ = run_schema(tmp_path, {"type": "object", "properties": {"a": {
        "type": "object", "description": DESC, "properties": {"inner": {"type": "string"}}}}})
    assert errors == []


def test_param_description_short_hint(tmp_path: Path) -> None:
    errors, hints = run_schema(tmp_path, {"type": "object", "properties": {
        "a": {"type": "string", "description": "周期"},
        "b": {"type": "string", "description": "报备周期记录编号"}}})
    assert errors == []
    assert codes(hints) == [("param_description_short", "/inputSchema/properties/a/description")]
    assert hints[0].param == "a"


def test_metaschema_errors_point_into_the_file(tmp_path: Path) -> None:
    errors, _ = run_schema(tmp_path, {"type": "object", "properties": {
        "x": {"type": "strin", "description": DESC},
        "y": {"type": "string", "minLength": -1, "description": DESC},
        "z": {"type": "string", "pattern": "(", "description": DESC},
    }})
    assert codes(errors) == [("FAAS_SCHEMA_INVALID", "/inputSchema/properties/x/type"),
                             ("FAAS_SCHEMA_INVALID", "/inputSchema/properties/y/minLength"),
                             ("FAAS_SCHEMA_INVALID", "/inputSchema/properties/z/pattern")]
    by_pointer = {e.pointer: e for e in errors}
    assert "\"strin\" is not a JSON Schema type" in by_pointer[
        "/inputSchema/properties/x/type"].message
    assert "is not a 'regex'" in by_pointer["/inputSchema/properties/z/pattern"].message


def test_required_must_name_declared_properties(tmp_path: Path) -> None:
    schema = {**PERIOD_SCHEMA, "required": ["action", "titel"], "anyOf": [
        {"required": ["periodId", "reason"]}]}
    errors, _ = run_schema(tmp_path, schema)
    assert codes(errors) == [("FAAS_SCHEMA_INVALID", "/inputSchema/anyOf/0/required/1"),
                             ("FAAS_SCHEMA_INVALID", "/inputSchema/required/1")]
    by_pointer = {e.pointer: e for e in errors}
    assert "Did you mean 'title'?" in by_pointer["/inputSchema/required/1"].message
    schema = {**PERIOD_SCHEMA, "oneOf": [{"required": ["ghost"]}]}
    errors, _ = run_schema(tmp_path / "b", schema)
    assert codes(errors) == [("FAAS_SCHEMA_INVALID", "/inputSchema/oneOf/0/required/0")]


def test_malformed_required_is_a_metaschema_error(tmp_path: Path) -> None:
    errors, _ = run_schema(tmp_path, {"type": "object", "required": "a", "properties": []})
    assert codes(errors) == [("FAAS_SCHEMA_INVALID", "/inputSchema/properties"),
                             ("FAAS_SCHEMA_INVALID", "/inputSchema/required")]


def test_schema_dialect(tmp_path: Path) -> None:
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "properties": {"a": {"type": "string", "description": DESC}},
              "dependencies": {"a": ["a"]}}
    assert run_schema(tmp_path / "a", draft7) == ([], [])
    errors, _ = run_schema(tmp_path / "b", {**draft7, "$schema": "https://example.com/mine"})
    assert codes(errors) == [("FAAS_SCHEMA_INVALID", "/inputSchema/$schema")]
    errors, _ = run_schema(tmp_path / "c", {**draft7, "$schema": 7})
    assert codes(errors) == [("FAAS_SCHEMA_INVALID", "/inputSchema/$schema")]


def test_schema_problems_of_draft_specific_keywords() -> None:
    # draft-04 wants exclusiveMinimum as a boolean; 2020-12 as a number.
    assert schema_problems({"type": "object", "exclusiveMinimum": 1}) == []
    problems = schema_problems({"$schema": "http://json-schema.org/draft-04/schema#",
                                "type": "object", "exclusiveMinimum": 1})
    assert ("exclusiveMinimum",) in [path for path, _ in problems]


def test_ai_function_schema(tmp_path: Path) -> None:
    ai = {"name": "a", "description": "Summarises a task for the reader.",
          "capability": "text", "prompt": "Summarise {{task}}",
          "inputSchema": {"type": "object", "properties": {"task": {"type": 5}}}}
    errors, _ = run(tmp_path / "a", {"ai/a": ai})
    assert codes(errors) == [("FAAS_SCHEMA_INVALID", "/inputSchema/properties/task/type")]
    assert errors[0].file == "ai/a/function.json"
    # No FaaS-only rules for AI drafts (no property descriptions required).
    ok = {**ai, "inputSchema": {"type": "object", "properties": {"task": {"type": "string"}}}}
    assert run(tmp_path / "b", {"ai/a": ok}) == ([], [])


def test_skip_ai_does_not_parse_ai_schemas(tmp_path: Path) -> None:
    ai = {"name": "a", "description": "Summarises a task for the reader.",
          "capability": "text", "prompt": "p", "inputSchema": {"type": 5}}
    assert run(tmp_path / "a", {"ai/a": ai}, skip_ai=True) == ([], [])
    ctx = check_context(tmp_path / "b", functions={"ai/a": ai})
    ctx.skip_ai = True
    check_faas(ctx)
    assert ctx.errors == []


def test_patterns_that_need_backtracking(tmp_path: Path) -> None:
    """What RE2 cannot run is FAAS_PATTERN_UNSUPPORTED where it is written, in a FaaS's
    schema and an AI Function's; a pattern that is no regex at all stays the metaschema's
    FAAS_SCHEMA_INVALID, and a backtracking-prone pattern RE2 runs is fine."""
    schema = {"type": "object", "properties": {
        "a": {"type": "string", "description": DESC, "pattern": r"^(\w+)\1$"},
        "b": {"type": "object", "description": DESC,
              "patternProperties": {"^(?=x)": {"type": "string"}}},
        "c": {"type": "string", "description": DESC, "pattern": "^(a+)+$"},
        "d": {"type": "string", "description": DESC, "pattern": "(unclosed"}}}
    errors, _ = run_schema(tmp_path / "a", schema)
    assert codes(errors) == [
        ("FAAS_PATTERN_UNSUPPORTED", "/inputSchema/properties/a/pattern"),
        ("FAAS_PATTERN_UNSUPPORTED", "/inputSchema/properties/b/patternProperties/^(?=x)"),
        ("FAAS_SCHEMA_INVALID", "/inputSchema/properties/d/pattern")]
    backreference = next(e for e in errors if e.pointer.endswith("/a/pattern"))
    assert "backreference" in backreference.message and backreference.fix
    ai = {"name": "a", "description": "Summarises a task for the reader.",
          "capability": "text", "prompt": "Summarise {{task}}", "inputSchema": {
              "type": "object", "properties": {"task": {"type": "string",
                                                        "pattern": "(?<!x)y"}}}}
    errors, _ = run(tmp_path / "b", {"ai/a": ai})
    assert codes(errors) == [("FAAS_PATTERN_UNSUPPORTED", "/inputSchema/properties/task/pattern")]
