"""`{app}` and `{base}` in `basedb api` paths, filled from the workspace."""

from __future__ import annotations

import json
import re
from pathlib import Path

import json5
import pytest

from tests.cli.deploy_support import app_token_of, init_site, ok_json, run

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = init_site(tmp_path / "site")
    ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")
    return site


def dry_run_url(*args: str, cwd: Path | None = None) -> str:
    result = run("api", *args, "--dry-run", cwd=cwd)
    assert result.exit_code == 0, result.stderr
    return str(json.loads(result.stdout)["request"]["url"])


def test_app_and_base_are_filled_from_the_workspace(site: Path) -> None:
    app = app_token_of(site)
    base = json5.loads((site / "base-database.jsonc").read_text(
        encoding="utf-8"))["binding"]["baseToken"]
    assert dry_run_url("GET", "/sites/{app}/functions", cwd=site).endswith(
        f"/open-apis/base/v3/sites/{app}/functions")
    assert f"/bases/{base}/tables" in dry_run_url("GET", "/bases/{base}/tables", cwd=site)
    # -C points at the workspace from anywhere
    assert f"/sites/{app}/" in dry_run_url("GET", "/sites/{app}/catalog", "-C", str(site))


def test_the_readme_examples_work_as_pasted(site: Path) -> None:
    text = README.read_text(encoding="utf-8")
    lines = [line.strip() for line in re.findall(r"^basedb api .*$", text, re.M)]
    assert len(lines) >= 2 and all("{app}" in line for line in lines)
    for line in lines:
        words = line.split()
        method, path = words[2], words[3]
        params = json.loads(line.split("--params ", 1)[1].split("'")[1])
        args = ["api", method, path, "--params", json.dumps(params)]
        if method == "POST":
            args += ["--data", '{"params":{}}']
        result = run(*args, cwd=site)
        assert result.exit_code == 0, (line, result.stderr)
        assert json.loads(result.stdout)["code"] == 0


def test_a_placeholder_without_a_workspace_or_an_unknown_one_is_a_usage_error(
        tmp_path: Path) -> None:
    result = run("api", "GET", "/sites/{app}/functions", cwd=tmp_path)
    assert result.exit_code == 2
    # basedb api reports bad input as lark-cli does: type validation, no code.
    error = json.loads(result.stderr)["error"]
    assert error["type"] == "validation" and "code" not in error
    assert "no workspace here" in error["message"] and "-C/--workspace" in error["hint"]
    unknown = run("api", "GET", "/sites/{site}/functions", cwd=tmp_path)
    assert unknown.exit_code == 2
    error = json.loads(unknown.stderr)["error"]
    assert "which basedb does not fill" in error["message"] and "{app}" in error["hint"]
    # a path without placeholders needs no workspace
    assert run("api", "GET", "/sites/x/functions", "--dry-run", cwd=tmp_path).exit_code == 0
