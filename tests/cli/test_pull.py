"""`basedb pull`: restore a workspace from the latest deployment, with the live catalog
and remote AI drafts; never overwrite local changes without --force; refuse archives
whose entries escape the workspace."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import httpx
import pytest

from basedb.core.site_zip import fingerprint
from basedb.workspace.inputs import collect_inputs
from tests.cli.deploy_support import (
    app_token_of,
    error_json,
    forward_to_platform,
    init_site,
    ok_json,
    platform_data,
    run,
)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    workspace = init_site(tmp_path / "site")
    ok_json("deploy", "-C", str(workspace))
    return workspace


def inputs_of(workspace: Path) -> dict[str, bytes]:
    return {item.path: item.data for item in collect_inputs(workspace)}


def test_pull_into_a_new_directory_restores_the_deployed_files(site: Path,
                                                               tmp_path: Path) -> None:
    result = ok_json("pull", str(tmp_path / "copy"), cwd=site)
    copy = tmp_path / "copy"
    assert result["sameAsDeployment"] is True
    assert result["fingerprint"] == fingerprint(collect_inputs(site))
    assert inputs_of(copy) == inputs_of(site), "byte-for-byte the deployed workspace"
    assert result["overwritten"] == [] and result["unchanged"] == []
    assert len(result["created"]) == 28
    assert result["ai"] == {"status": "restored", "keys": ["summarizeLeave"]}
    assert ".base-database-cli/" in (copy / ".gitignore").read_text(encoding="utf-8")
    assert ok_json("check", "-C", str(copy))["ok"] is True


def test_pull_by_app_token_from_anywhere(site: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run("pull", "--app-token", app_token_of(site), "restored", cwd=elsewhere)
    assert result.exit_code == 0, result.stderr
    assert "(the deployed one)" in result.stdout
    assert "AI Functions restored: summarizeLeave" in result.stdout
    assert app_token_of(elsewhere / "restored") == app_token_of(site)


def test_pull_into_the_current_workspace_refuses_local_changes(site: Path) -> None:
    sql = site / "database-functions" / "listPeriods" / "main.sql"
    deployed = sql.read_bytes()
    sql.write_text("SELECT 1 -- my local edit\n", encoding="utf-8")
    (site / "notes.txt").write_text("untracked", encoding="utf-8")
    result = run("pull", "--json", cwd=site)
    assert result.exit_code == 1
    error = error_json(result)
    assert error["code"] == "PULL_LOCAL_CHANGES"
    assert "database-functions/listPeriods/main.sql" in error["message"]
    assert "--force" in error["hint"]
    assert sql.read_text(encoding="utf-8") == "SELECT 1 -- my local edit\n"

    forced = ok_json("pull", "--force", cwd=site)
    assert forced["overwritten"] == ["database-functions/listPeriods/main.sql"]
    assert sql.read_bytes() == deployed
    assert (site / "notes.txt").read_text(encoding="utf-8") == "untracked", "never deleted"


def test_an_unchanged_workspace_pulls_as_all_unchanged(site: Path) -> None:
    result = ok_json("pull", cwd=site)
    assert result["created"] == [] and result["overwritten"] == []
    assert len(result["unchanged"]) == 28


def test_the_catalog_comes_from_the_live_tables(site: Path, tmp_path: Path) -> None:
    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    members = catalog["tables"][0]
    platform_data("POST", f"/bases/{catalog['baseToken']}/tables/{members['tableId']}/fields",
             {"name": "工号", "type": "text"})
    result = ok_json("pull", str(tmp_path / "copy"), cwd=site)
    pulled = json.loads((tmp_path / "copy" / "catalog.json").read_text(encoding="utf-8"))
    assert "工号" in [f["name"] for f in pulled["tables"][0]["fields"]]
    assert result["sameAsDeployment"] is False
    assert result["deployedFingerprint"] != result["fingerprint"]


def test_newly_bound_tables_are_merged_into_the_binding(site: Path, tmp_path: Path) -> None:
    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    base = catalog["baseToken"]
    new_table = platform_data("POST", f"/bases/{base}/tables",
                         {"name": "值班", "fields": [{"name": "日期", "type": "datetime"}]})
    platform_data("POST", f"/sites/{app_token_of(site)}/bind_base",
             {"baseToken": base, "tableIds": [new_table["id"]]})
    ok_json("pull", str(tmp_path / "copy"), cwd=site)
    text = (tmp_path / "copy" / "base-database.jsonc").read_text(encoding="utf-8")
    assert text.startswith("// Site workspace configuration"), "comments survive"
    assert f'"{new_table["id"]}"' in text
    assert ok_json("check", "-C", str(tmp_path / "copy"))["ok"] is True


def test_ai_functions_come_from_the_remote_drafts(site: Path, tmp_path: Path) -> None:
    app = app_token_of(site)
    drafts = platform_data("GET", f"/sites/{app}/draft/ai-functions")["aiFunctions"]
    changed = dict(drafts[0]["declaration"], description="Summarize a period's leave plans "
                                                         "for the team lead")
    extra = {"name": "draftReply", "description": "Draft a reply to a leave request",
             "capability": "text", "prompt": "Reply to: {{text}}"}
    platform_data("PUT", f"/sites/{app}/draft/ai-functions", {"aiFunctions": [
        {"key": "summarizeLeave", "declaration": changed},
        {"key": "draftReply", "declaration": extra}]})
    result = ok_json("pull", str(tmp_path / "copy"), cwd=site)
    assert result["ai"] == {"status": "restored", "keys": ["draftReply", "summarizeLeave"]}
    ai = tmp_path / "copy" / "ai"
    assert json.loads((ai / "draftReply" / "function.json").read_text("utf-8")) == extra
    assert json.loads((ai / "summarizeLeave" / "function.json").read_text("utf-8")) == changed


def test_no_ai_directory_when_ai_functions_are_not_enabled(site: Path, tmp_path: Path) -> None:
    with forward_to_platform() as faults:
        faults.add("GET", "/draft/ai-functions", "code 800004011 400")
        result = run("pull", str(tmp_path / "copy"), "--profile", "remote", cwd=site)
    assert result.exit_code == 0, result.stderr
    assert "AI Functions are not enabled" in result.stdout
    assert not (tmp_path / "copy" / "ai").exists()
    assert (tmp_path / "copy" / "database-functions" / "listPeriods" / "main.sql").is_file()


def _evil_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("base-database.jsonc", "{}")
        archive.writestr("../outside.txt", "escaped")
    return buffer.getvalue()


def test_archive_entries_that_escape_the_workspace_are_refused(site: Path,
                                                               tmp_path: Path) -> None:
    with forward_to_platform() as faults:
        faults.answer("GET", "/artifact", httpx.Response(
            200, content=_evil_zip(), headers={"Content-Type": "application/zip"}))
        result = run("pull", str(tmp_path / "copy"), "--profile", "remote", "--json",
                     cwd=site)
    assert result.exit_code == 2
    error = error_json(result)
    assert error["code"] == "ARTIFACT_UNSAFE_PATH" and "../outside.txt" in error["message"]
    assert not (tmp_path / "copy").exists()
    assert not (tmp_path / "outside.txt").exists()


def test_env_prod_pulls_what_production_serves(site: Path, tmp_path: Path) -> None:
    refused = run("pull", str(tmp_path / "none"), "--env", "prod", "--json", cwd=site)
    assert refused.exit_code == 1
    assert error_json(refused)["code"] == "PULL_NO_DEPLOYMENT"
    ok_json("deploy", "-C", str(site), "--production", "--yes")
    (site / "README.md").write_text("# A newer preview\n", encoding="utf-8")
    ok_json("deploy", "-C", str(site))
    prod = ok_json("pull", str(tmp_path / "prod"), "--env", "prod", cwd=site)
    preview = ok_json("pull", str(tmp_path / "preview"), cwd=site)
    assert prod["deploymentId"] != preview["deploymentId"]
    assert (tmp_path / "preview" / "README.md").read_text("utf-8") == "# A newer preview\n"
    assert (tmp_path / "prod" / "README.md").read_text("utf-8") != "# A newer preview\n"


def test_a_site_without_deployments_has_nothing_to_pull(tmp_path: Path) -> None:
    fresh = init_site(tmp_path / "fresh", "blank")
    result = run("pull", str(tmp_path / "copy"), "--json", cwd=fresh)
    assert result.exit_code == 1
    assert error_json(result)["code"] == "PULL_NO_DEPLOYMENT"


def test_pulling_another_site_into_a_workspace_is_refused(site: Path, tmp_path: Path) -> None:
    other = init_site(tmp_path / "other", "blank")
    result = run("pull", "--app-token", app_token_of(other), cwd=site)
    assert result.exit_code == 2 and "NEW_DIR" in result.stderr
    result = run("pull", str(site), "--app-token", app_token_of(other), cwd=tmp_path)
    assert result.exit_code == 2 and "belongs" not in result.stderr
    assert app_token_of(other) in result.stderr


def test_outside_a_workspace_pull_needs_an_app_token(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("pull", cwd=empty).exit_code == 2
    result = run("pull", "copy", cwd=empty)
    assert result.exit_code == 2 and "--app-token" in result.stderr
