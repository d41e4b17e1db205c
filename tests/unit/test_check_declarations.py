from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from basedb.check.declarations import check_declarations, suggest_kind, value_fits_kind
from basedb.protocol.findings import Finding, Hint
from basedb.workspace.model import MUTATION_PARAM_KINDS, SQL_PARAM_KINDS
from tests.unit._builders import check_context

GOOD_DESC = "Period record id; call listPeriods and pass rows[].period_id"


def sql_fn(params: list[Any], description: Any = "Lists tasks of one period; read-only."
           ) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": "fn", "meta": {"params": params}}
    if description is not None:
        doc["description"] = description
    return doc


def mutation_fn(params: list[Any]) -> dict[str, Any]:
    return {"name": "m", "description": "Creates one task from the form input.",
            "spec": {"table": "Tasks", "action": "create", "params": params, "set": {}}}


def run(tmp_path: Path, functions: dict[str, Any], *, skip_ai: bool = False,
        ) -> tuple[list[Finding], list[Hint]]:
    ctx = check_context(tmp_path, functions=functions, skip_ai=skip_ai)
    assert ctx.errors == [] and ctx.hints == []
    ctx.extend(ctx.workspace.load_findings)
    check_declarations(ctx)
    return ctx.errors, ctx.hints


def run_sql(tmp_path: Path, params: list[Any]) -> list[Finding]:
    errors, _ = run(tmp_path, {"database-functions/fn": sql_fn(params)})
    return errors


def codes(items: list[Finding] | list[Hint]) -> list[tuple[str, str]]:
    return sorted((i.code, i.pointer) for i in items)


def p(name: Any = "periodId", kind: Any = "TEXT", description: Any = GOOD_DESC,
      **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = dict(extra)
    if kind is not ...:
        doc["kind"] = kind
    if name is not ...:
        doc["name"] = name
    if description is not ...:
        doc["description"] = description
    return doc


def test_valid_declarations_have_no_findings(tmp_path: Path) -> None:
    errors, hints = run(tmp_path, {
        "database-functions/fn": sql_fn([
            p(), p("offset", "INT"), p("status", "TEXT[]", enum=["open", "closed"]),
            p("day", "DATE", enum=["2024-02-29"]),
            p("at", "DATETIME", enum=["2024-01-01 08:00:00", "2024-01-01T08:00:00+08:00",
                                      "2024-01-01T08:00Z"]),
            p("ratio", "NUMBER", enum=[1, 2.5]), p("flag", "BOOL", enum=[True, False]),
            p("limit", "INT", enum=[10, 20.0]),
        ]),
        "mutations/m": mutation_fn([p("recordId", "RECORD_ID", list=True),
                                    p("owner", "USER_ID", enum=["ou_1"])]),
    })
    assert errors == [] and hints == []


def test_name_missing_blank_or_null(tmp_path: Path) -> None:
    errors = run_sql(tmp_path, [p(name=...), p(name="  "), p(name=None)])
    assert codes(errors) == [("PARAM_NAME_MISSING", f"/meta/params/{i}/name") for i in range(3)]
    assert all(e.file == "database-functions/fn/function.json" and e.function_id == "fn"
               and e.fix for e in errors)


def test_name_invalid(tmp_path: Path) -> None:
    errors = run_sql(tmp_path, [p(name="1st"), p(name="period-id"), p(name=7),
                                p(name="a" * 65), p(name="a" * 64)])
    assert codes(errors) == [("PARAM_NAME_INVALID", f"/meta/params/{i}/name") for i in range(4)]
    assert "periodId" in errors[1].fix  # a sanitised suggestion
    assert "a number" in errors[2].message


def test_name_duplicate_reports_the_repeat(tmp_path: Path) -> None:
    errors = run_sql(tmp_path, [p("x"), p("y"), p("x")])
    assert codes(errors) == [("PARAM_NAME_DUPLICATE", "/meta/params/2/name")]
    assert "parameters 1 and 3" in errors[0].message


def test_description_missing(tmp_path: Path) -> None:
    errors = run_sql(tmp_path, [p("a", description=...), p("b", description=""),
                                p("c", description=" \n\t"), p("d", description=["x"]),
                                p("e", description=None)])
    assert codes(errors) == [("PARAM_DESCRIPTION_MISSING", f"/meta/params/{i}/description")
                             for i in range(5)]
    assert "an array" in errors[3].message


def test_param_description_short_counts_characters(tmp_path: Path) -> None:
    errors, hints = run(tmp_path, {"database-functions/fn": sql_fn([
        p("a", description="周期"), p("b", description="报备周期记录编号"),
        p("c", description="  short  ")])})
    assert errors == []
    assert codes(hints) == [("param_description_short", "/meta/params/0/description"),
                            ("param_description_short", "/meta/params/2/description")]
    assert hints[0].param == "a" and "2 characters" in hints[0].message


@pytest.mark.parametrize(("kind", "expected"), [
    ("text", '"TEXT"'), ("string", '"TEXT"'), ("integer", '"INT"'), ("int[]", '"INT[]"'),
    ("float", '"NUMBER"'), ("boolean", '"BOOL"'), ("timestamp", '"DATETIME"'),
    ("record_id", '"TEXT"'), ("Array<String>", '"TEXT[]"'), ("blob", None),
])
def test_suggest_kind_for_sql(kind: str, expected: str | None) -> None:
    assert suggest_kind(kind, SQL_PARAM_KINDS) == expected


def test_suggest_kind_for_mutations() -> None:
    assert suggest_kind("record", MUTATION_PARAM_KINDS) == '"RECORD_ID"'
    assert suggest_kind("record_id[]", MUTATION_PARAM_KINDS) == '"RECORD_ID" with "list": true'
    assert suggest_kind("user", MUTATION_PARAM_KINDS) == '"USER_ID"'
    assert suggest_kind("text[]", MUTATION_PARAM_KINDS) == '"TEXT[]" (or "TEXT" with "list": true)'


def test_kind_invalid(tmp_path: Path) -> None:
    errors = run_sql(tmp_path, [p("a", "text"), p("b", "RECORD_ID"), p("c", ...),
                                p("d", 3)])
    assert codes(errors) == [("PARAM_KIND_INVALID", f"/meta/params/{i}/kind") for i in range(4)]
    assert "legal kinds are TEXT, INT, NUMBER, BOOL, DATE, DATETIME, TEXT[]" in errors[0].message
    assert 'Use "TEXT"' in errors[0].fix
    assert "RECORD_ID" not in errors[1].message.split("legal kinds are")[1]
    assert "has no kind" in errors[2].message


def test_kind_missing_names_the_key_written_instead(tmp_path: Path) -> None:
    errors = run_sql(tmp_path, [p("a", ..., type="integer")])
    assert codes(errors) == [("PARAM_KIND_INVALID", "/meta/params/0/kind")]
    assert "has no kind (it has 'type', which basedb does not read" in errors[0].message
    assert errors[0].fix.startswith('Rename \'type\' to "kind" and set it to "INT".')


def test_mutation_kinds_include_ids(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {"mutations/m": mutation_fn([p("a", "RECORD_ID"),
                                                           p("b", "user")])})
    assert codes(errors) == [("PARAM_KIND_INVALID", "/spec/params/1/kind")]
    assert 'Use "USER_ID"' in errors[0].fix


def test_enum_empty_null_duplicate(tmp_path: Path) -> None:
    errors = run_sql(tmp_path, [
        p("a", enum=[]),
        p("b", enum=["x", None, "y"]),
        p("c", "INT", enum=[1, 2, 1.0]),
        p("d", "BOOL", enum=[True, False, True]),
    ])
    assert codes(errors) == [
        ("ENUM_DUPLICATE", "/meta/params/2/enum/2"),
        ("ENUM_DUPLICATE", "/meta/params/3/enum/2"),
        ("ENUM_EMPTY", "/meta/params/0/enum"),
        ("ENUM_NULL", "/meta/params/1/enum/1"),
    ]


def test_true_and_one_are_not_duplicates(tmp_path: Path) -> None:
    errors = run_sql(tmp_path, [p("a", "NUMBER", enum=[1, 2])])
    assert errors == []
    errors = run_sql(tmp_path / "b", [p("a", "TEXT", enum=["1", "01"])])
    assert errors == []


def test_enum_type_mismatch(tmp_path: Path) -> None:
    errors = run_sql(tmp_path, [
        p("a", "TEXT", enum=["x", 1]),
        p("b", "INT", enum=[1, 1.5, True, "2"]),
        p("c", "NUMBER", enum=[False]),
        p("d", "BOOL", enum=["true"]),
        p("e", "DATE", enum=["2024-02-30", "2024-01-01"]),
        p("f", "DATETIME", enum=["2024-01-01", "2024-01-01 25:00:00"]),
        p("g", "INT[]", enum=[1, "2"]),
        p("h", "TEXT", enum="x"),
        p("i", "TEXT", enum={"x": 1}),
    ])
    assert codes(errors) == [
        ("ENUM_TYPE_MISMATCH", "/meta/params/0/enum/1"),
        ("ENUM_TYPE_MISMATCH", "/meta/params/1/enum/1"),
        ("ENUM_TYPE_MISMATCH", "/meta/params/1/enum/2"),
        ("ENUM_TYPE_MISMATCH", "/meta/params/1/enum/3"),
        ("ENUM_TYPE_MISMATCH", "/meta/params/2/enum/0"),
        ("ENUM_TYPE_MISMATCH", "/meta/params/3/enum/0"),
        ("ENUM_TYPE_MISMATCH", "/meta/params/4/enum/0"),
        ("ENUM_TYPE_MISMATCH", "/meta/params/5/enum/0"),
        ("ENUM_TYPE_MISMATCH", "/meta/params/5/enum/1"),
        ("ENUM_TYPE_MISMATCH", "/meta/params/6/enum/1"),
        ("ENUM_TYPE_MISMATCH", "/meta/params/7/enum"),
        ("ENUM_TYPE_MISMATCH", "/meta/params/8/enum"),
    ]
    by_pointer = {e.pointer: e for e in errors}
    assert "each element must be a JSON integer" in by_pointer["/meta/params/6/enum/1"].message
    assert "not an array" in by_pointer["/meta/params/7/enum"].message


def test_enum_not_type_checked_when_kind_is_invalid(tmp_path: Path) -> None:
    errors = run_sql(tmp_path, [p("a", "integer", enum=["x"])])
    assert codes(errors) == [("PARAM_KIND_INVALID", "/meta/params/0/kind")]


def test_mutation_list_param_enum_constrains_elements(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {"mutations/m": mutation_fn([
        p("ids", "RECORD_ID", list=True, enum=["rec1", 2]),
        p("user", "USER_ID", enum=[None]),
    ])})
    assert codes(errors) == [("ENUM_NULL", "/spec/params/1/enum/0"),
                             ("ENUM_TYPE_MISMATCH", "/spec/params/0/enum/1")]


@pytest.mark.parametrize(("value", "kind", "fits"), [
    ("2024-02-29", "DATE", True), ("2023-02-29", "DATE", False), ("2024-1-1", "DATE", False),
    ("2024-01-01 08:00:00", "DATETIME", True), ("2024-01-01 08:00", "DATETIME", False),
    ("2024-01-01T08:00:00.123Z", "DATETIME", True), ("2024-01-01T08:00:00+0800", "DATETIME", True),
    ("2024-13-01T08:00:00", "DATETIME", False), (3.0, "INT", True), (True, "INT", False),
    (1, "BOOL", False), ("rec1", "RECORD_ID", True), (1, "USER_ID", False),
])
def test_value_fits_kind(value: Any, kind: str, fits: bool) -> None:
    assert value_fits_kind(value, kind) is fits


def test_function_description_short_for_all_kinds(tmp_path: Path) -> None:
    _, hints = run(tmp_path, {
        "database-functions/fnMissing": sql_fn([], description=None),
        "database-functions/fnOk": sql_fn([], description="八个字符的描述"),  # 7 chars
        "mutations/m": {**mutation_fn([]), "description": "   "},
        "faas/f": {"name": "f", "description": "do it"},
        "ai/a": {"name": "a", "description": "", "capability": "text", "prompt": "Hi"},
    })
    assert codes(hints) == [("function_description_short", "/description")] * 5
    by_id = {h.function_id: h for h in hints}
    assert "is missing" in by_id["fnMissing"].message
    assert "is blank" in by_id["m"].message
    assert "is only 5 characters" in by_id["f"].message
    assert by_id["a"].file == "ai/a/function.json"


def test_eight_chinese_characters_are_enough(tmp_path: Path) -> None:
    _, hints = run(tmp_path, {"database-functions/fn": sql_fn(
        [p("a", description="报备周期记录编号")], description="查看团队休假填报记录")})
    assert hints == []


def test_skip_ai_leaves_ai_functions_alone(tmp_path: Path) -> None:
    ai = {"name": "a", "description": "", "capability": "text", "prompt": "Hi"}
    _, hints = run(tmp_path / "loaded", {"ai/a": ai}, skip_ai=True)
    assert hints == []
    # Also when the workspace was loaded with AI drafts but the run skips them.
    ctx = check_context(tmp_path / "both", functions={"ai/a": ai})
    ctx.skip_ai = True
    check_declarations(ctx)
    assert ctx.hints == []
