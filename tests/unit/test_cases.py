"""The data-driven check suite: every workspace under tests/cases against its expected.json.

Each case is a small complete workspace. `expected.json` holds the multiset of error codes
and hint codes that `check` must report, `{"errors": [...], "hints": [...]}`: positive
cases have no errors (hints allowed), negative cases at least one. A mismatch prints what
was missing and what was unexpected, with the message, file and pointer of each surprise.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pytest

from basedb.check.result import CheckResult
from basedb.check.run import check_workspace
from basedb.contracts import stale_findings
from basedb.protocol.findings import ERROR_CODES, HINT_CODES
from basedb.workspace import load_workspace

CASES = Path(__file__).resolve().parents[1] / "cases"
# Tested through the CLI instead: a workspace that cannot be found cannot be a case, and
# the files as a whole (names that are not UTF-8, symlinks, a workspace over the size
# limit) cannot be committed as one: tests/cli/test_check_inputs.py makes them.
CODES_WITHOUT_CASE = {"WORKSPACE_NOT_FOUND", "INPUT_INVALID", "INPUT_SYMLINK",
                      "INPUT_UNREADABLE", "INPUT_TOO_MANY_FILES", "INPUT_TOO_LARGE"}


def case_dirs(kind: str) -> list[Path]:
    return sorted(p.parent for p in (CASES / kind).glob("*/expected.json"))


ALL_CASES = [*case_dirs("positive"), *case_dirs("negative")]


def read_expected(case: Path) -> dict[str, list[str]]:
    doc = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    assert isinstance(doc, dict) and set(doc) == {"errors", "hints"}, (
        f"{case.name}/expected.json must be {{\"errors\": [...], \"hints\": [...]}}")
    return doc


def describe_mismatch(kind: str, expected: Counter[str], actual: Counter[str],
                      items: Iterable[tuple[str, str]]) -> list[str]:
    lines: list[str] = []
    missing = expected - actual
    unexpected = actual - expected
    if missing:
        lines.append(f"  {kind} expected but not reported: "
                     + ", ".join(f"{code} x{n}" if n > 1 else code
                                 for code, n in sorted(missing.items())))
    if unexpected:
        lines.append(f"  {kind} reported but not expected:")
        lines += [f"    {detail}" for code, detail in items if code in unexpected]
    return lines


def mismatch_report(case: Path, expected: dict[str, list[str]], result: CheckResult) -> str:
    errors = [(f.code, f"{f.code} {f.file}{f.pointer or ''}"
               + (f":{f.line}" if f.line else "") + f": {f.message}") for f in result.errors]
    hints = [(h.code, f"{h.code} [{h.function_id}] {h.file}{h.pointer}: {h.message}")
             for h in result.hints]
    lines = [f"case {case.parent.name}/{case.name} does not match expected.json:"]
    lines += describe_mismatch("errors", Counter(expected["errors"]),
                               Counter(code for code, _ in errors), errors)
    lines += describe_mismatch("hints", Counter(expected["hints"]),
                               Counter(code for code, _ in hints), hints)
    return "\n".join(lines)


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case(case: Path) -> None:
    expected = read_expected(case)
    result = check_workspace(load_workspace(case), contracts=stale_findings)
    actual_errors = Counter(f.code for f in result.errors)
    actual_hints = Counter(h.code for h in result.hints)
    if actual_errors != Counter(expected["errors"]) or actual_hints != Counter(
            expected["hints"]):
        pytest.fail(mismatch_report(case, expected, result), pytrace=False)
    assert result.ok == (not expected["errors"])


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case_is_well_formed(case: Path) -> None:
    expected = read_expected(case)
    assert set(expected["errors"]) <= set(ERROR_CODES), expected["errors"]
    assert set(expected["hints"]) <= set(HINT_CODES), expected["hints"]
    if case.parent.name == "positive":
        assert expected["errors"] == [], "positive cases expect no errors"
    else:
        assert expected["errors"], "negative cases expect at least one error"
    for name in ("base-database.jsonc", "catalog.json", "README.md"):
        assert (case / name).is_file(), f"{case.name} lacks {name}"
    kinds = ("database-functions", "mutations", "faas", "ai")
    assert any((case / kind).is_dir() for kind in kinds), f"{case.name} declares nothing"


def test_every_error_code_has_a_negative_case() -> None:
    covered = {code for case in case_dirs("negative") for code in read_expected(case)["errors"]}
    missing = set(ERROR_CODES) - CODES_WITHOUT_CASE - covered
    assert not missing, f"error codes without a negative case: {sorted(missing)}"


def test_the_suite_has_the_planned_positive_cases() -> None:
    names = {case.name for case in case_dirs("positive")}
    assert {"task_site", "cjk_names", "cte_joins_subqueries", "optional_filters",
            "batch_mutation", "faas_one_of"} <= names
    hinted = {code for case in case_dirs("positive") for code in read_expected(case)["hints"]}
    assert hinted == set(HINT_CODES), "every hint code appears in some positive case"


def test_mismatches_are_reported_readably(tmp_path: Path) -> None:
    from basedb.protocol.findings import Finding, Hint

    result = CheckResult(
        errors=[Finding("SQL_UNKNOWN_FIELD", "Tasks has no field 'Points'.",
                        "database-functions/x/main.sql", "", "x", line=1, column=8)],
        hints=[Hint("param_unused", "x", "Parameter 'a' is never used.",
                    "database-functions/x/function.json", "/meta/params/0", "a")],
        tools=[], exclude=[], counts={})
    report = mismatch_report(tmp_path / "negative" / "x",
                             {"errors": ["SQL_UNKNOWN_TABLE", "SQL_UNKNOWN_TABLE"],
                              "hints": ["param_unused"]}, result)
    assert report.splitlines() == [
        "case negative/x does not match expected.json:",
        "  errors expected but not reported: SQL_UNKNOWN_TABLE x2",
        "  errors reported but not expected:",
        "    SQL_UNKNOWN_FIELD database-functions/x/main.sql:1: Tasks has no field 'Points'.",
    ]
