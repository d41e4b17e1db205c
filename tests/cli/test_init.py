"""`basedb init`: the command, its output, and a clean `check` on what it writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from basedb.cli import cli


def invoke(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    runner = CliRunner()
    if cwd is None:
        result = runner.invoke(cli, list(args), prog_name="basedb")
    else:
        previous = Path.cwd()
        os.chdir(cwd)
        try:
            result = runner.invoke(cli, list(args), prog_name="basedb")
        finally:
            os.chdir(previous)
    return result.exit_code, result.stdout, result.stderr


def test_init_example_prints_next_steps(tmp_path: Path) -> None:
    code, out, err = invoke("init", str(tmp_path / "site"))
    assert code == 0, err
    assert "from template 'example'" in out
    assert "(new, with sample records)" in out
    assert f"cd {tmp_path / 'site'}" in out
    assert "basedb check" in out and "basedb deploy" in out
    assert (tmp_path / "site" / "database-functions" / "listTeamLeave" / "main.sql").is_file()


def test_init_json_reports_workspace_token_template_and_files(tmp_path: Path) -> None:
    code, out, err = invoke("init", str(tmp_path / "site"), "--template", "blank", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert set(doc) == {"workspace", "appToken", "baseToken", "template", "files"}
    assert doc["workspace"] == str((tmp_path / "site").resolve())
    assert doc["appToken"].startswith("Prj") and doc["baseToken"].startswith("bas")
    assert doc["template"] == "blank"
    assert doc["files"] == sorted(doc["files"])
    assert {".gitignore", "base-database.jsonc", "catalog.json", "README.md",
            "src/index.html"} == set(doc["files"])
    assert not any(name.startswith("_template") for name in doc["files"])


def test_init_in_the_current_empty_directory_skips_cd(tmp_path: Path) -> None:
    here = tmp_path / "here"  # tmp_path itself holds the platform's data dir
    here.mkdir()
    code, out, err = invoke("init", "--title", "请假", "--template", "blank", cwd=here)
    assert code == 0, err
    assert "cd " not in out
    assert (here / "base-database.jsonc").is_file()


def test_init_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<p>mine</p>", encoding="utf-8")
    code, out, err = invoke("init", str(tmp_path))
    assert code == 2
    assert out == ""
    assert str(tmp_path) in err and "not empty" in err and "index.html" in err
    assert [p.name for p in tmp_path.iterdir()] == ["index.html"]


def test_init_refusal_in_json_mode_is_an_error_envelope(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("", encoding="utf-8")
    code, out, err = invoke("init", str(tmp_path), "--json")
    assert code == 2 and out == ""
    envelope = json.loads(err)
    assert envelope["ok"] is False
    assert envelope["error"]["code"] == "TARGET_NOT_EMPTY"
    assert str(tmp_path) in envelope["error"]["message"]


def test_init_unknown_template_lists_the_choices(tmp_path: Path) -> None:
    code, _out, err = invoke("init", str(tmp_path / "s"), "--template", "kanban")
    assert code == 2
    assert "'kanban'" in err and "blank, example" in err
    assert not (tmp_path / "s").exists()


def test_init_help_describes_the_options() -> None:
    code, out, _err = invoke("init", "--help")
    assert code == 0
    for option in ("--template", "--title", "--base-token", "--json"):
        assert option in out


def _check_available() -> None:
    for module in ("basedb.check.declarations", "basedb.check.sql.rules",
                   "basedb.check.mutations", "basedb.check.faas", "basedb.check.agent_tools",
                   "basedb.check.reporters", "basedb.contracts"):
        pytest.importorskip(module)


@pytest.mark.parametrize("template", ["example", "blank"])
def test_check_on_a_fresh_workspace_has_no_errors_and_no_hints(tmp_path: Path,
                                                                template: str) -> None:
    _check_available()
    from basedb.check.run import check_workspace
    from basedb.contracts import stale_findings
    from basedb.workspace import load_workspace

    site = tmp_path / "site"
    code, _out, err = invoke("init", str(site), "--template", template)
    assert code == 0, err
    result = check_workspace(load_workspace(site), contracts=stale_findings)
    assert [e.to_dict() for e in result.errors] == []
    assert [h.to_dict() for h in result.hints] == []
    if template == "example":
        assert result.exclude == ["debugSubmissionIntegrity"]
        assert "listTeamLeave" in result.tools and "summarizeLeave" in result.tools


def test_basedb_check_command_passes_on_the_example(tmp_path: Path) -> None:
    _check_available()
    site = tmp_path / "site"
    assert invoke("init", str(site))[0] == 0
    code, out, err = invoke("check", "--json", "-C", str(site))
    assert code == 0, out + err
    report = json.loads(out)
    assert report["ok"] is True
    assert report["errors"] == [] and report["functionHints"] == []
