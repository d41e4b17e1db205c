"""`basedb deploy` (preview) against the real embedded platform: the result document,
stages and local state, the check gate, dry runs, and AI Function sync."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from basedb.client.sites import SiteApi
from basedb.deploy.state import LocalState
from tests.cli.deploy_support import (
    api_data,
    app_token_of,
    error_json,
    init_site,
    local_client,
    ok_json,
    run,
)

PREVIEW_STAGES = ["check", "build", "draft_functions", "ai_sync", "agent_tools", "deployment"]


def remote(site: Path, rest: str) -> Any:
    with local_client() as client:
        return client.request("GET", f"/sites/{app_token_of(site)}{rest}")["data"]


def set_exclude(site: Path, *ids: str) -> None:
    (site / "agent-tools.json").write_text(json.dumps({"exclude": list(ids)}), encoding="utf-8")


def test_preview_result_document(site: Path) -> None:
    result = ok_json("deploy", "-C", str(site))
    app = app_token_of(site)
    assert result["ok"] is True and result["env"] == "preview"
    assert result["appToken"] == app
    assert result["baseAppUrl"] == f"http://{app.lower()}.localhost:8787/sites/{app}/preview/"
    assert result["fingerprint"].startswith("sha256:")
    assert result["functionHints"] == []
    assert result["aiSync"] == {"status": "synced", "keys": ["summarizeLeave"]}
    assert result["agentTools"] == {"exclude": ["debugSubmissionIntegrity"]}
    assert [s["stage"] for s in result["stages"]] == PREVIEW_STAGES
    assert {s["status"] for s in result["stages"]} == {"ok"}
    assert result["nextAction"]["externalAgent"]["installation"]["available"] is False
    assert result["nextAction"]["externalAgent"]["installation"]["command"] == (
        "basedb agent-tools skill install")

    listing = remote(site, "/deployments")
    assert listing["previewDeploymentId"] == result["deploymentId"]
    assert listing["prodDeploymentId"] is None
    shown = remote(site, f"/deployments/{result['deploymentId']}")
    assert shown["fingerprint"] == result["fingerprint"]
    assert shown["agentTools"] == {"exclude": ["debugSubmissionIntegrity"]}
    assert sorted(shown["functions"]["database_function"])[0] == "debugSubmissionIntegrity"
    assert shown["functions"]["ai_function"] == ["summarizeLeave"]


def test_preview_is_recorded_in_local_state(site: Path) -> None:
    result = ok_json("deploy", "-C", str(site))
    state = LocalState(site)
    [record] = state.deployments.all()
    assert (record.deployment_id, record.env, record.fingerprint) == (
        result["deploymentId"], "preview", result["fingerprint"])
    entries = state.stages.latest_attempt()
    assert [(e.stage, e.status) for e in entries] == [
        (stage, status) for stage in PREVIEW_STAGES for status in ("started", "ok")]
    assert state.load_artifact(result["fingerprint"]) is not None
    assert (site / ".base-database-cli" / "state" / ".gitignore").is_file()


def test_text_mode_prints_the_url_and_next_steps_and_no_progress_off_a_tty(site: Path) -> None:
    result = run("deploy", "-C", str(site))
    assert result.exit_code == 0, result.stderr
    assert "Preview deployed: dpl" in result.stdout
    assert f"/sites/{app_token_of(site)}/preview/" in result.stdout
    assert "basedb deploy --production --yes" in result.stdout
    assert "AI Functions: synced (summarizeLeave)" in result.stdout
    assert result.stderr == "", "progress lines only go to a terminal"


def test_function_hints_are_reported_and_do_not_block(site: Path) -> None:
    path = site / "database-functions" / "listPeriods" / "function.json"
    declaration = json.loads(path.read_text(encoding="utf-8"))
    declaration["description"] = "list"
    path.write_text(json.dumps(declaration, ensure_ascii=False), encoding="utf-8")
    result = ok_json("deploy", "-C", str(site))
    codes = {(h["functionId"], h["code"]) for h in result["functionHints"]}
    assert ("listPeriods", "function_description_short") in codes
    text = run("deploy", "-C", str(site))
    assert "Function hints (1; they do not block deploys):" in text.stdout
    assert "listPeriods [function_description_short]" in text.stdout


def test_check_errors_stop_the_deploy_before_anything_is_sent(site: Path) -> None:
    (site / "database-functions" / "listPeriods" / "main.sql").write_text(
        'SELECT "Nope" FROM "报备周期"', encoding="utf-8")
    result = run("deploy", "-C", str(site), "--json")
    assert result.exit_code == 1 and result.stdout == ""
    error = error_json(result)
    assert error["code"] == "CHECK_FAILED"
    assert "SQL_UNKNOWN_FIELD" in error["message"]
    assert "database-functions/listPeriods/main.sql:1:8: " in error["message"], "file:line:col"
    assert error["detail"]["stage"] == "check"
    assert [e["code"] for e in error["detail"]["errors"]] == ["SQL_UNKNOWN_FIELD"]
    assert remote(site, "/deployments")["deployments"] == []
    assert remote(site, "/draft/functions")["databaseFunctions"] == []


def test_dry_run_plans_and_sends_nothing(site: Path) -> None:
    plan = ok_json("deploy", "-C", str(site), "--dry-run")
    assert plan["dryRun"] is True and plan["env"] == "preview"
    assert plan["files"] == 28 and plan["bytes"] > 0
    assert [s["stage"] for s in plan["stages"]] == PREVIEW_STAGES
    assert [s["status"] for s in plan["stages"]] == ["ok", "ok"] + ["planned"] * 4
    assert plan["stages"][2]["counts"] == {"database_function": 7, "mutation": 4, "faas": 1}
    assert remote(site, "/deployments")["deployments"] == []
    assert remote(site, "/draft/functions")["databaseFunctions"] == []
    assert not (site / ".base-database-cli").exists(), "a dry run writes no local state"
    deployed = ok_json("deploy", "-C", str(site))
    assert deployed["fingerprint"] == plan["fingerprint"]
    text = run("deploy", "-C", str(site), "--dry-run")
    assert "Dry run (preview): nothing was sent." in text.stdout
    assert plan["fingerprint"] in text.stdout


def test_check_errors_in_json_files_are_placed_by_line_and_pointer(site: Path) -> None:
    (site / "agent-tools.json").write_text('{\n  "exclude": ["nope"]\n}\n', encoding="utf-8")
    result = run("deploy", "-C", str(site))
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == "Error: check found 1 error; nothing was deployed: [CHECK_FAILED]"
    assert lines[1].startswith("  agent-tools.json:2:15: AGENT_TOOLS_INVALID /exclude/0 ")
    assert lines[2].startswith("Hint: ")  # the code is not glued to the last finding


def test_a_dry_run_shows_the_function_hints_the_deploy_would_report(site: Path) -> None:
    declaration = site / "database-functions" / "listMembers" / "function.json"
    doc = json.loads(declaration.read_text(encoding="utf-8"))
    declaration.write_text(json.dumps({**doc, "description": "成员"}, ensure_ascii=False),
                           encoding="utf-8")
    assert run("contracts", "generate", "-C", str(site)).exit_code == 0
    plan = ok_json("deploy", "-C", str(site), "--dry-run")
    assert [h["code"] for h in plan["functionHints"]] == ["function_description_short"]
    text = run("deploy", "-C", str(site), "--dry-run")
    assert text.exit_code == 0, text.stderr
    assert "Function hints (1; they do not block deploys):" in text.stdout
    assert "  - listMembers [function_description_short]: " in text.stdout


def test_an_empty_ai_directory_skips_ai_sync(tmp_path: Path) -> None:
    blank = init_site(tmp_path / "blank", "blank")
    result = ok_json("deploy", "-C", str(blank))
    assert result["aiSync"] == {"status": "skipped", "reason": "no_local_ai_functions"}
    [ai_stage] = [s for s in result["stages"] if s["stage"] == "ai_sync"]
    assert ai_stage == {"stage": "ai_sync", "status": "skipped",
                        "detail": {"reason": "no_local_ai_functions"}}


def test_skip_ai_functions_keeps_excludes_only_for_ai_the_site_has(site: Path) -> None:
    set_exclude(site, "debugSubmissionIntegrity", "summarizeLeave")
    first = ok_json("deploy", "-C", str(site), "--skip-ai-functions")
    assert first["aiSync"] == {"status": "skipped", "reason": "skip_ai_functions"}
    assert first["agentTools"] == {"exclude": ["debugSubmissionIntegrity"],
                                   "omitted": ["summarizeLeave"]}
    assert remote(site, "/draft/ai-functions")["aiFunctions"] == []
    assert any("AI Function" in notice for notice in first["notices"])

    ok_json("deploy", "-C", str(site))  # now the site has summarizeLeave
    second = ok_json("deploy", "-C", str(site), "--skip-ai-functions")
    assert second["agentTools"] == {"exclude": ["debugSubmissionIntegrity", "summarizeLeave"]}
    assert remote(site, "/draft/agent-tools")["exclude"] == [
        "debugSubmissionIntegrity", "summarizeLeave"]


def test_a_remote_ai_function_missing_locally_is_never_deleted(site: Path) -> None:
    ok_json("deploy", "-C", str(site))
    shutil.move(site / "ai" / "summarizeLeave", site / "ai" / "summarizeTeamLeave")
    # a change to another function, which the refused deploy must not write either
    declaration = site / "database-functions" / "listPeriods" / "function.json"
    doc = json.loads(declaration.read_text(encoding="utf-8"))
    declaration.write_text(json.dumps({**doc, "description": doc["description"] + " (new)"},
                                      ensure_ascii=False), encoding="utf-8")
    drafts = remote(site, "/draft/hashes")
    before = remote(site, "/deployments")["deployments"]
    result = run("deploy", "-C", str(site), "--json")
    assert result.exit_code == 1
    error = error_json(result)
    assert error["code"] == 800004021
    assert "summarizeLeave" in error["message"] and "ai_sync" in error["message"]
    assert "basedb pull" in error["hint"] and "--skip-ai-functions" in error["hint"]
    assert error["detail"]["stage"] == "ai_sync" and error["detail"]["outcomeKnown"] is True
    assert [item["key"] for item in remote(site, "/draft/ai-functions")["aiFunctions"]] == [
        "summarizeLeave"]
    assert remote(site, "/deployments")["deployments"] == before
    # upstream checks the AI keys first: no draft was written before the refusal
    assert remote(site, "/draft/hashes") == drafts
    stages = {s["stage"]: s["status"] for s in error["detail"]["stages"]}
    assert "draft_functions" not in stages and stages["ai_sync"] == "failed"


def test_the_platform_judges_drafts_against_the_live_catalog(site: Path) -> None:
    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    periods = next(t for t in catalog["tables"] if t["name"] == "报备周期")
    note = next(f for f in periods["fields"] if f["name"] == "说明")
    with local_client() as client:  # the live table changes; catalog.json is now stale
        client.request("DELETE", f"/bases/{catalog['baseToken']}/tables/{periods['tableId']}"
                                 f"/fields/{note['fieldId']}")
    result = run("deploy", "-C", str(site), "--json")
    assert result.exit_code == 1
    error = error_json(result)
    assert error["code"] == 9499 and error["detail"]["stage"] == "draft_functions"
    assert error["detail"]["outcomeKnown"] is True
    assert "changed nothing" in error["message"]
    assert {e["code"] for e in error["detail"]["errors"]} == {"SQL_UNKNOWN_FIELD"}
    assert remote(site, "/deployments")["deployments"] == []


def test_no_workspace_is_a_usage_error(tmp_path: Path) -> None:
    result = run("deploy", "-C", str(tmp_path))
    assert result.exit_code == 2
    assert "base-database.jsonc" in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--yes"], "--yes confirms --production"),
    (["--production", "--skip-ai-functions", "--yes"], "--skip-ai-functions applies"),
])
def test_conflicting_options_are_usage_errors(site: Path, args: list[str],
                                              message: str) -> None:
    result = run("deploy", "-C", str(site), *args)
    assert result.exit_code == 2 and message in result.stderr


def test_a_terminal_gets_one_progress_line_per_stage(site: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import basedb.cli.common

    monkeypatch.setattr(basedb.cli.common, "stderr_is_tty", lambda: True)
    result = run("deploy", "-C", str(site), "--json")
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert [line.split()[1].rstrip(":") for line in lines] == PREVIEW_STAGES
    assert lines[2].split()[0] == "ok" and "PUT draft/functions" in lines[2]
    json.loads(result.stdout)  # stdout stays pure data


def test_a_terminal_sees_which_stage_failed(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import basedb.cli.common

    monkeypatch.setattr(basedb.cli.common, "stderr_is_tty", lambda: True)
    ok_json("deploy", "-C", str(site))
    shutil.move(site / "ai" / "summarizeLeave", site / "ai" / "summarizeTeamLeave")
    result = run("deploy", "-C", str(site))
    assert result.exit_code == 1
    assert "  failed   ai_sync: sync AI Functions" in result.stderr
    assert "Error: Stage 'ai_sync'" in result.stderr


def test_a_corrupt_local_record_does_not_undo_a_deployment(site: Path) -> None:
    state = site / ".base-database-cli" / "state"
    state.mkdir(parents=True)
    (state / "deployments.json").write_text("{not json", encoding="utf-8")
    result = ok_json("deploy", "-C", str(site))
    assert remote(site, "/deployments")["previewDeploymentId"] == result["deploymentId"]
    [notice] = [n for n in result["notices"] if "local record" in n]
    assert result["deploymentId"] in notice and "Delete" in notice
    text = run("deploy", "-C", str(site))
    assert text.exit_code == 0 and "Notice:" in text.stderr and "deployments.json" in text.stderr


@pytest.mark.parametrize("command", [["deploy"], ["catalog", "pull"],
                                     ["deployments", "list"], ["doctor"]])
def test_a_workspace_option_naming_no_directory_is_a_usage_error(site: Path,
                                                                 command: list[str]) -> None:
    result = run(*command, "-C", str(site / "no-such-dir"))
    assert result.exit_code == 2
    assert "no-such-dir is not a directory" in result.stderr


def test_the_workspace_time_zone_travels_with_the_deploy(site: Path) -> None:
    first = ok_json("deploy", "-C", str(site))
    assert remote(site, "/draft/functions")["timezone"] == "Asia/Shanghai"
    config = site / "base-database.jsonc"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('"timezone": "Asia/Shanghai",', ""), encoding="utf-8")
    second = ok_json("deploy", "-C", str(site))
    assert second["fingerprint"] != first["fingerprint"]
    zones = {d["deploymentId"]: d["timezone"] for d in remote(site, "/deployments")[
        "deployments"]}
    assert zones == {first["deploymentId"]: "Asia/Shanghai", second["deploymentId"]: "UTC"}


def test_init_creates_the_base_in_the_templates_time_zone(site: Path) -> None:
    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    periods = next(t for t in catalog["tables"] if t["name"] == "报备周期")
    ms = 1738285200000  # 2025-01-31T01:00:00Z: 09:00 in Shanghai
    created = api_data(site, "POST", f"/open-apis/base/v3/bases/{catalog['baseToken']}/tables/"
                       f"{periods['tableId']}/records", {"标题": "tz", "开始日期": ms})
    assert created["fields"]["开始日期"] == "2025-01-31 09:00:00"


@pytest.mark.parametrize("stage", ["put_draft_ai_functions", "put_draft_agent_tools",
                                   "create_deployment"])
def test_a_deploy_whose_drafts_another_deploy_rewrote_is_refused(
        site: Path, monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    before = remote(site, "/deployments")["deployments"]
    original = getattr(SiteApi, stage)

    def after_another_deploy(self: SiteApi, *args: Any, **kwargs: Any) -> Any:
        # Another deploy of the site writes its functions just before this write.
        with local_client() as client:
            client.request("PUT", f"/sites/{app_token_of(site)}/draft/functions", json={})
        return original(self, *args, **kwargs)

    monkeypatch.setattr(SiteApi, stage, after_another_deploy)
    result = run("deploy", "-C", str(site), "--json")
    assert result.exit_code == 1, result.stderr
    error = error_json(result)
    assert error["code"] == 800004020
    assert "another deploy of this site ran at the same time; run deploy again" in (
        error["message"])
    # Nothing was deployed from drafts that mix two workspaces.
    assert remote(site, "/deployments")["deployments"] == before
