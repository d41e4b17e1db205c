"""`basedb demo`: the whole journey on the embedded platform, from nothing."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tests.cli.deploy_support import app_token_of, local_client, ok_json, run


def test_demo_creates_deploys_promotes_and_invokes(tmp_path: Path,
                                                   isolated_dirs: dict[str, Path]) -> None:
    assert not isolated_dirs["data"].exists(), "a fresh machine: no platform data yet"
    result = ok_json("demo", str(tmp_path / "demo"))
    workspace = tmp_path / "demo"
    assert result["ok"] is True and result["workspace"] == str(workspace.resolve())
    assert result["appToken"] == app_token_of(workspace)
    assert result["prodDeploymentId"] == result["previewDeploymentId"]
    app = result["appToken"]
    assert result["baseAppUrl"] == f"http://{app.lower()}.localhost:8787/sites/{app}/"
    invoked = result["invoked"]
    assert invoked["functionId"] == "listPeriods" and invoked["rowCount"] == 3
    assert [row["title"] for row in invoked["rows"]] == [
        "2027 春节休假报备", "2026 年末与元旦休假报备", "2026 国庆节休假报备"]
    assert "basedb serve" in result["next"]["open"]
    assert f"basedb agent-tools skill install --site {result['appToken']}" in (
        result["next"]["try"])
    assert isolated_dirs["data"].is_dir()
    with local_client() as client:
        listing = client.request("GET", f"/sites/{result['appToken']}/deployments")["data"]
    assert listing["prodDeploymentId"] == result["prodDeploymentId"]


def test_the_suggested_api_commands_work(tmp_path: Path) -> None:
    result = ok_json("demo", str(tmp_path / "demo"))
    tried = 0
    for line in result["next"]["try"]:
        words = shlex.split(line)
        if words[:2] == ["basedb", "api"]:
            done = run(*words[1:], cwd=tmp_path / "demo")
            assert done.exit_code == 0, (line, done.stderr)
            assert json.loads(done.stdout)["code"] == 0
            tried += 1
        elif words[:4] == ["basedb", "agent-tools", "skill", "install"]:
            done = run(*words[1:], "--dir", str(tmp_path / "skills"), cwd=tmp_path)
            assert done.exit_code == 0, (line, done.stderr)
            assert list((tmp_path / "skills").glob("*/SKILL.md"))
            tried += 1
    assert tried == 4


def test_text_output_shows_rows_url_and_what_to_try(tmp_path: Path) -> None:
    result = run("demo", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert (tmp_path / "basedb-demo" / "base-database.jsonc").is_file(), "the default dir"
    for step in ("init", "check", "preview", "production", "invoke"):
        assert f"  {step} " in out
    assert "title=2027 春节休假报备" in out
    app = app_token_of(tmp_path / "basedb-demo")
    assert f"Production URL: http://{app.lower()}.localhost:8787/sites/{app}/" in out
    assert "basedb serve" in out and "agent-tools skill install" in out


def test_running_the_demo_again_starts_afresh_beside_the_first(tmp_path: Path) -> None:
    first = run("demo", "--json", cwd=tmp_path)
    second = run("demo", "--json", cwd=tmp_path)
    assert first.exit_code == 0 and second.exit_code == 0, second.stderr
    assert json.loads(first.stdout)["workspace"] == str((tmp_path / "basedb-demo").resolve())
    again = json.loads(second.stdout)
    assert again["workspace"] == str((tmp_path / "basedb-demo-2").resolve())
    assert again["appToken"] != json.loads(first.stdout)["appToken"]
    assert (tmp_path / "basedb-demo" / "base-database.jsonc").is_file(), "the first is kept"


def test_demo_refuses_a_non_empty_directory_before_creating_anything(tmp_path: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "mine.txt").write_text("keep", encoding="utf-8")
    result = run("demo", str(target))
    assert result.exit_code == 2 and "not empty" in result.stderr
    # a newcomer running the demo twice is pointed at the demo, not at `basedb init`
    assert "`basedb demo` never overwrites files" in result.stderr
    assert "e.g. `basedb demo another-demo`" in result.stderr
    assert "basedb init" not in result.stderr
    assert sorted(p.name for p in target.iterdir()) == ["mine.txt"]
    with local_client() as client:
        assert client.request("GET", "/sites/list")["data"]["sites"] == []
