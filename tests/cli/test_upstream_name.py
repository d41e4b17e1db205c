"""Scripts written for upstream run under its command name, `base-database-cli`.

The package declares that console script beside `basedb` (pyproject.toml). Here it is
made the way an installer makes it, from the entry point the package declares, and an
upstream-style script runs through it in a real process: init, doctor, check, deploy,
production, the member command, init --app-token, ai-functions sync --dry-run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from basedb.cli import program_name
from basedb.core.node import MIN_NODE_MAJOR, node_version

ROOT = Path(__file__).resolve().parents[2]
NAME = "base-database-cli"


def scripts() -> dict[str, str]:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return dict(tomllib.load(handle)["project"]["scripts"])


def test_the_package_declares_upstreams_name_for_the_same_program() -> None:
    declared = scripts()
    assert declared[NAME] == declared["basedb"] == "basedb.cli:main"


def test_usage_lines_name_the_program_it_was_started_as() -> None:
    assert program_name("/usr/local/bin/base-database-cli") == NAME
    assert program_name("/opt/venv/Scripts/base-database-cli.exe") == NAME
    assert program_name("/usr/bin/basedb") == "basedb"
    assert program_name("/x/basedb/__main__.py") == "basedb"


@pytest.fixture
def upstream_cli(tmp_path: Path) -> Path:
    """A `base-database-cli` launcher on a private PATH, as pip writes one for the
    package's entry point."""
    module, _, attr = scripts()[NAME].partition(":")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / NAME
    launcher.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {attr}\n"
                        f"sys.exit({attr}())\n", encoding="utf-8")
    launcher.chmod(0o755)
    return bin_dir


def _run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT)}
    return subprocess.run([NAME, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=180, check=False)


def _json(bin_dir: Path, *args: str, cwd: Path) -> Any:
    done = _run(bin_dir, *args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow  # a whole journey through a launcher, in subprocesses (about 20 s)
def test_an_upstream_script_runs_under_base_database_cli(upstream_cli: Path,
                                                          tmp_path: Path) -> None:
    helped = _run(upstream_cli, "deploy", "--help", cwd=tmp_path)
    assert helped.returncode == 0 and helped.stdout.startswith(f"Usage: {NAME} deploy")

    assert _json(upstream_cli, "init", "site", cwd=tmp_path)["template"] == "example"
    site = tmp_path / "site"
    _add_project_id_handler(site)
    assert _json(upstream_cli, "doctor", cwd=site)["ok"] is True  # top-level ok
    checked = _run(upstream_cli, "check", cwd=site)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    preview = _json(upstream_cli, "deploy", cwd=site)
    assert preview["baseAppUrl"].startswith("http")  # top-level baseAppUrl
    app = preview["appToken"]
    # as an agent calls: a handler reads upstream's ctx.projectId
    if int((node_version() or "0").split(".")[0]) >= MIN_NODE_MAJOR:
        called = _invoke(upstream_cli, site, app, "whoAmI", {})
        assert called.returncode == 0, called.stderr
        assert json.loads(called.stdout)["data"] == {"projectId": app}
    # a value whose type does not match inputSchema: 9499, the details in msg
    wrong = _invoke(upstream_cli, site, app, "listTeamLeave",
                    {"periodId": "recX", "offset": "3"})
    assert wrong.returncode != 0
    envelope = json.loads(wrong.stderr)
    assert envelope["error"]["code"] == 9499
    assert "Parameter: /params/offset (received \"3\")" in envelope["error"]["message"]
    prod = _json(upstream_cli, "deploy", "--production", "--yes", cwd=site)
    assert prod["baseAppUrl"].startswith("http")
    member = prod["nextAction"]["externalAgent"]["members"]["command"]
    assert member == f"{NAME} agent-tools skill install --site {app}"

    # the member's command, as forwarded, from a directory that is no workspace
    home = tmp_path / "member"
    home.mkdir()
    installed = _json(upstream_cli, *member.split()[1:], "--dir", str(home / "skills"),
                      cwd=home)
    assert installed["appToken"] == app

    restored = _json(upstream_cli, "init", "--app-token", app, "again", cwd=tmp_path)
    assert restored["restoredFrom"]["deploymentId"] == prod["deploymentId"]
    planned = _json(upstream_cli, "ai-functions", "sync", "--dry-run", cwd=tmp_path / "again")
    assert planned["dryRun"] is True and planned["deleted"] == []

    refused = _run(upstream_cli, "init", "--no-such-option", cwd=tmp_path)
    assert refused.returncode == 2 and f"Try '{NAME} init --help'" in refused.stderr


def _invoke(bin_dir: Path, site: Path, app: str, function_id: str,
            params: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return _run(bin_dir, "api", "POST", f"/sites/{app}/functions/{function_id}/invoke",
                "--params", '{"env": "preview"}', "--data", json.dumps({"params": params}),
                cwd=site)


def _add_project_id_handler(site: Path) -> None:
    folder = site / "faas" / "whoAmI"
    folder.mkdir(parents=True)
    (folder / "function.json").write_text(json.dumps({
        "name": "whoAmI", "description": "Return the site's app token as the handler sees it",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
    }), encoding="utf-8")
    (folder / "index.mjs").write_text(
        "export default async function (input, ctx) {\n"
        "  return {code: 0, msg: 'ok', data: {projectId: ctx.projectId}};\n}\n",
        encoding="utf-8")
