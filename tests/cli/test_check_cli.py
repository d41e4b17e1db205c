"""`basedb check` through the real command line (click's CliRunner, the lazy group)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from basedb.cli import cli

CASES = Path(__file__).resolve().parents[1] / "cases"

AI_FUNCTION = {
    "name": "summarizeTask",
    "description": "Summarize the comments of a task into three bullet points for a status "
                   "update. Use it when a member asks what happened on a task.",
    "capability": "text",
    "prompt": "Summarize these task comments in three short bullet points: {{comments}}",
    "inputSchema": {"type": "object", "properties": {
        "comments": {"type": "string",
                     "description": "The comment bodies returned by taskComments, joined"}}},
}


def copy_case(name: str, into: Path) -> Path:
    kind = "positive" if (CASES / "positive" / name).is_dir() else "negative"
    target = into / name
    shutil.copytree(CASES / kind / name, target)
    (target / "expected.json").unlink()
    return target


@pytest.fixture(autouse=True)
def outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


@pytest.fixture
def site(repo: Path) -> Path:
    return copy_case("task_site", repo)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["check", *args], catch_exceptions=False)


def assert_no_traceback(result: Result) -> None:
    assert "Traceback" not in result.stdout + result.stderr


# ------------------------------------------------------------------ exit codes


def test_clean_workspace_exits_0(site: Path) -> None:
    result = run("-C", str(site))
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith("No problems found in 8 functions\n")
    assert "Agent tools: 7 open, 1 excluded (checkTaskQuota)" in result.stdout
    assert "\x1b[" not in result.stdout  # not a terminal: no colour
    assert result.stderr == ""


def test_errors_exit_1(repo: Path) -> None:
    ws = copy_case("enum_out_of_domain", repo)
    result = run("-C", str(ws))
    assert result.exit_code == 1
    assert result.stdout.startswith(
        "database-functions/searchTasks/function.json:10:26: ENUM_OUT_OF_DOMAIN Enum value ")
    assert "fix: " in result.stdout
    assert result.stdout.endswith("1 error, 0 hints in 1 function\n")


def test_hints_alone_exit_0(repo: Path) -> None:
    ws = copy_case("every_hint", repo)
    result = run("-C", str(ws))
    assert result.exit_code == 0
    assert result.stdout.startswith("database-functions/findTasks/function.json:")
    assert result.stdout.endswith("No errors, 6 hints in 5 functions\n")


def test_no_workspace_exits_2_with_a_paragraph_on_stderr(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run("-C", str(empty))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "No base-database.jsonc found in" in result.stderr
    assert "basedb init" in result.stderr
    assert_no_traceback(result)


@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_no_workspace_still_gives_a_well_formed_report(tmp_path: Path, fmt: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run("-C", str(empty), "--format", fmt)
    assert result.exit_code == 2
    if fmt == "json":
        report = json.loads(result.stdout)
        assert report["ok"] is False
        assert [(e["code"], e["file"]) for e in report["errors"]] == [
            ("WORKSPACE_NOT_FOUND", "base-database.jsonc")]
        assert report["functionHints"] == []
        envelope = json.loads(result.stderr)  # JSON mode: the error envelope on stderr
        assert envelope["error"]["code"] == "WORKSPACE_NOT_FOUND"
    elif fmt == "sarif":
        (run_,) = json.loads(result.stdout)["runs"]
        # no file to anchor a result to (code scanning would drop it), and nothing could
        # be checked: SARIF's word for that is an unsuccessful execution
        assert run_["results"] == []
        [invocation] = run_["invocations"]
        assert invocation["executionSuccessful"] is False
        [notification] = invocation["toolExecutionNotifications"]
        assert notification["level"] == "error"
        assert "No base-database.jsonc found" in notification["message"]["text"]
    else:
        first = result.stdout.splitlines()[0]
        assert first.startswith("::error file=")
        assert "base-database.jsonc,title=WORKSPACE_NOT_FOUND::No base-database.jsonc" in first


def test_usage_errors_exit_2(site: Path, tmp_path: Path) -> None:
    conflicting = run("-C", str(site), "--json", "--format", "text")
    assert conflicting.exit_code == 2
    assert "--json conflicts with --format text" in conflicting.stderr
    assert run("-C", str(site), "--json", "--format", "json").exit_code == 0
    missing_dir = run("-C", str(tmp_path / "nowhere"))
    assert missing_dir.exit_code == 2
    assert "is not a directory" in missing_dir.stderr
    assert run("-C", str(site), "--format", "xml").exit_code == 2


# ------------------------------------------------------------------------- json


def test_json_shape(site: Path) -> None:
    result = run("-C", str(site), "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert list(report) == ["ok", "errors", "functionHints", "agentTools", "summary"]
    assert report["ok"] is True and report["errors"] == [] and report["functionHints"] == []
    assert report["agentTools"] == {
        "tools": ["closeProject", "createTask", "listProjects", "listTasks", "myOpenTasks",
                  "taskComments", "updateTaskStatus"],
        "exclude": ["checkTaskQuota"],
    }
    assert report["summary"]["errors"] == 0
    assert report["summary"]["functions"] == {"database_function": 5, "mutation": 2,
                                              "faas": 1, "ai_function": 0}


def test_json_errors_and_hints_carry_file_and_pointer(repo: Path) -> None:
    ws = copy_case("every_hint", repo)
    (ws / "database-functions" / "findTasks" / "main.sql").write_text(
        'SELECT "Points" FROM "Tasks" WHERE "Title" = $1\n', encoding="utf-8")
    report = json.loads(run("-C", str(ws), "--json").stdout)
    (error,) = report["errors"]
    assert error["code"] == "SQL_UNKNOWN_FIELD"
    assert error["functionId"] == "findTasks"
    assert error["file"] == "database-functions/findTasks/main.sql"
    assert error["line"] == 1
    for hint in report["functionHints"]:
        assert {"code", "functionId", "message", "file", "pointer"} <= set(hint)
    assert report["ok"] is False


# ------------------------------------------------------------- github and sarif


def test_github_format_from_the_repository_root(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                ) -> None:
    ws = copy_case("every_hint", repo)
    (ws / "agent-tools.json").write_text('{"exclude": ["nope"]}', encoding="utf-8")
    monkeypatch.chdir(repo)
    result = run("-C", ws.name, "--format", "github")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("::error file=every_hint/agent-tools.json,line=1,col=14,"
                               "title=AGENT_TOOLS_INVALID::/exclude/0 is 'nope'")
    notices = [line for line in lines if line.startswith("::notice ")]
    assert len(notices) == 6
    assert all(",line=" in n and "file=every_hint/database-functions/" in n for n in notices)
    assert lines[-1] == "basedb check: 1 error, 6 hints in 5 functions"


def test_sarif_format(site: Path) -> None:
    (site / "mutations" / "createTask" / "function.json").write_text(
        (site / "mutations" / "createTask" / "function.json").read_text(encoding="utf-8")
        .replace('"Title": "$title"', '"Title": "$name"'), encoding="utf-8")
    result = run("-C", str(site), "--format", "sarif")
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("MUTATION_PARAM_UNDECLARED", "error"), ("param_unused", "note")]
    res = results[0]
    region = res["locations"][0]["physicalLocation"]["region"]
    text = (site / "mutations" / "createTask" / "function.json").read_text(encoding="utf-8")
    line = text.splitlines()[region["startLine"] - 1]
    assert line[region["startColumn"] - 1:].startswith('"$name"')


def test_output_writes_the_report_to_a_file(site: Path, tmp_path: Path) -> None:
    target = tmp_path / "reports" / "check.sarif"
    target.parent.mkdir()
    result = run("-C", str(site), "--format", "sarif", "--output", str(target))
    assert result.exit_code == 0
    assert result.stdout == ""
    assert json.loads(target.read_text(encoding="utf-8"))["version"] == "2.1.0"
    same = run("-C", str(site), "--format", "sarif")
    assert target.read_text(encoding="utf-8") == same.stdout


def test_output_into_a_missing_directory_is_a_clear_error(site: Path, tmp_path: Path) -> None:
    result = run("-C", str(site), "-o", str(tmp_path / "no" / "such" / "report.json"))
    assert result.exit_code == 2
    assert "Cannot write the report to" in result.stderr
    assert_no_traceback(result)


# ------------------------------------------------------------ skip AI functions


def with_ai_function(site: Path) -> Path:
    ai_dir = site / "ai" / "summarizeTask"
    ai_dir.mkdir(parents=True)
    (ai_dir / "function.json").write_text(json.dumps(AI_FUNCTION), encoding="utf-8")
    (site / "agent-tools.json").write_text(
        json.dumps({"exclude": ["checkTaskQuota", "summarizeTask"]}), encoding="utf-8")
    return site


def test_ai_functions_count_in_a_normal_run(site: Path) -> None:
    report = json.loads(run("-C", str(with_ai_function(site)), "--json").stdout)
    assert report["ok"] is True
    assert report["agentTools"]["exclude"] == ["checkTaskQuota", "summarizeTask"]
    assert "notices" not in report


def test_skip_ai_functions_notice(site: Path) -> None:
    with_ai_function(site)
    text = run("-C", str(site), "--skip-ai-functions")
    assert text.exit_code == 0
    assert "Notice: AI Functions are not synced this time" in text.stderr
    assert "AI Function 本次未同步，相关 agent-tools 配置未生效" in text.stderr
    report = json.loads(run("-C", str(site), "--skip-ai-functions", "--json").stdout)
    assert report["agentTools"] == {
        "tools": ["closeProject", "createTask", "listProjects", "listTasks", "myOpenTasks",
                  "taskComments", "updateTaskStatus"],
        "exclude": ["checkTaskQuota"],  # the AI id stays legal but leaves the local plan
    }
    assert report["notices"][0].startswith("AI Functions are not synced this time")
    github = run("-C", str(site), "--skip-ai-functions", "--format", "github")
    assert "::notice title=basedb check::AI Functions are not synced" in github.stdout


# ------------------------------------------------------------- finding the root


def test_runs_from_a_subdirectory(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(site / "database-functions" / "listTasks")
    result = run("--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["ok"] is True


def test_workspace_option_accepts_a_subdirectory(site: Path) -> None:
    result = run("--workspace", str(site / "src"))
    assert result.exit_code == 0
    assert result.stdout.endswith("No problems found in 8 functions\n")


def _check_on_a_terminal(workspace: Path, env: dict[str, str]) -> str:
    """What `basedb check` writes to stdout when stdout is a terminal."""
    import pty

    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-m", "basedb", "check", "-C",
                                    str(workspace)], stdout=terminal,
                                   stderr=subprocess.DEVNULL, env=env)
        os.close(terminal)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closes when the process exits (Linux)
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait(timeout=60) == 1
    finally:
        os.close(controller)
    return b"".join(chunks).decode("utf-8")


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_colours_only_on_a_terminal_and_never_with_no_color(tmp_path: Path) -> None:
    site = copy_case("sql_unknown_field", tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    assert "\x1b[" in _check_on_a_terminal(site, env)
    assert "\x1b[" not in _check_on_a_terminal(site, {**env, "NO_COLOR": "1"})
    # no-color.org: an empty NO_COLOR does not turn colours off
    assert "\x1b[" in _check_on_a_terminal(site, {**env, "NO_COLOR": ""})
    piped = CliRunner().invoke(cli, ["check", "-C", str(site)])
    assert piped.exit_code == 1 and "\x1b[" not in piped.output
