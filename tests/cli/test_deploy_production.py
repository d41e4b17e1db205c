"""`basedb deploy --production` and `basedb deployments status|list|rollback`: promotion
of the matching preview, stale-preview refusal, --yes, rollback and read-backs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from basedb.deploy.state import LocalState
from tests.cli.deploy_support import (
    app_token_of,
    error_json,
    forward_to_platform,
    local_client,
    ok_json,
    run,
)


def listing(site: Path) -> dict[str, Any]:
    with local_client() as client:
        data: dict[str, Any] = client.request(
            "GET", f"/sites/{app_token_of(site)}/deployments")["data"]
    return data


def promote_through_remote(site: Path) -> Result:
    """`deploy --production --yes --json` over the stored `remote` profile (whose requests
    reach the embedded platform through `forward_to_platform`'s faults)."""
    return run("deploy", "-C", str(site), "--production", "--yes", "--profile", "remote",
               "--json")


def edit_readme(site: Path, text: str) -> None:
    (site / "README.md").write_text(text, encoding="utf-8")


def test_production_promotes_the_preview_with_the_local_fingerprint(site: Path) -> None:
    preview = ok_json("deploy", "-C", str(site))
    prod = ok_json("deploy", "-C", str(site), "--production", "--yes")
    app = app_token_of(site)
    assert prod["env"] == "prod"
    assert prod["deploymentId"] == preview["deploymentId"]
    assert prod["fingerprint"] == preview["fingerprint"]
    assert prod["baseAppUrl"] == f"http://{app.lower()}.localhost:8787/sites/{app}/"
    assert prod["nextAction"]["externalAgent"]["installation"] == {
        "available": True, "command": f"basedb agent-tools skill install --site {app}"}
    assert [s["stage"] for s in prod["stages"]] == ["build", "find_preview", "promote"]
    assert listing(site)["prodDeploymentId"] == preview["deploymentId"]
    records = LocalState(site).deployments.all()
    assert [(r.env, r.deployment_id) for r in records] == [
        ("preview", preview["deploymentId"]), ("prod", preview["deploymentId"])]


def test_production_hands_over_a_message_for_members(site: Path) -> None:
    set_exclude = json.dumps({"exclude": ["debugSubmissionIntegrity"]})
    (site / "agent-tools.json").write_text(set_exclude, encoding="utf-8")
    ok_json("deploy", "-C", str(site))
    prod = ok_json("deploy", "-C", str(site), "--production", "--yes")
    app = app_token_of(site)
    members = prod["nextAction"]["externalAgent"]["members"]
    # upstream's member install command, runnable in any directory
    assert members["command"] == f"base-database-cli agent-tools skill install --site {app}"
    assert members["command"] in members["message"]
    assert prod["baseAppUrl"] in members["message"]
    assert "listPeriods (read)" in members["functions"]
    assert not any(f.startswith("debugSubmissionIntegrity") for f in members["functions"])
    text = run("deploy", "-C", str(site), "--production", "--yes")
    assert text.exit_code == 0, text.stderr
    assert "Message for site members" in text.stdout
    assert f"  |   base-database-cli agent-tools skill install --site {app}" in text.stdout


def test_production_needs_yes_off_a_terminal(site: Path) -> None:
    ok_json("deploy", "-C", str(site))
    result = run("deploy", "-C", str(site), "--production", "--json")
    assert result.exit_code == 2
    assert error_json(result)["code"] == "CONFIRMATION_REQUIRED"
    assert listing(site)["prodDeploymentId"] is None


def test_a_changed_workspace_makes_the_preview_stale(site: Path) -> None:
    ok_json("deploy", "-C", str(site))
    edit_readme(site, "# Changed after the preview\n")
    result = run("deploy", "-C", str(site), "--production", "--yes", "--json")
    assert result.exit_code == 1
    error = error_json(result)
    assert error["code"] == "PREVIEW_STALE" and error["type"] == "conflict"
    assert "preview is stale" in error["message"] and "Deploy preview first" in error["message"]
    assert listing(site)["prodDeploymentId"] is None
    stages = {s["stage"]: s["status"] for s in error["detail"]["stages"]}
    assert stages == {"build": "ok", "find_preview": "failed"}


def test_a_site_without_any_preview_says_so(site: Path) -> None:
    result = run("deploy", "-C", str(site), "--production", "--yes", "--json")
    assert result.exit_code == 1
    error = error_json(result)
    assert error["code"] == "PREVIEW_STALE"
    assert f"site {app_token_of(site)} has no preview yet" in error["message"]
    assert "files changed" not in error["message"]


def test_an_older_preview_with_the_local_files_is_stale_once_a_newer_exists(
        site: Path) -> None:
    original = (site / "README.md").read_text(encoding="utf-8")
    ok_json("deploy", "-C", str(site))
    edit_readme(site, "# A newer preview\n")
    newer = ok_json("deploy", "-C", str(site))
    edit_readme(site, original)  # local files match the older preview again
    result = run("deploy", "-C", str(site), "--production", "--yes", "--json")
    assert result.exit_code == 1
    error = error_json(result)
    assert error["code"] == "PREVIEW_STALE"
    assert newer["deploymentId"] in error["message"]


def test_production_never_rereads_or_resends_local_policy(site: Path) -> None:
    preview = ok_json("deploy", "-C", str(site))
    with local_client() as client:  # the draft policy changes after the preview
        client.request("PUT", f"/sites/{app_token_of(site)}/draft/agent-tools",
                       json={"exclude": []})
    with forward_to_platform() as faults:
        result = promote_through_remote(site)
        assert result.exit_code == 0, result.stderr
        assert [c for c in faults.calls if c[0] in ("PUT", "PATCH")] == []
        assert faults.count("POST", "/promote") == 1
    with local_client() as client:
        listed = client.request(
            "GET", f"/sites/{app_token_of(site)}/functions",
            params={"env": "prod", "includeInternal": "true"})["data"]["functions"]
    internal = {f["functionId"] for f in listed if f.get("internal")}
    assert internal == {"debugSubmissionIntegrity"}, "prod is the preview's snapshot"
    assert listing(site)["prodDeploymentId"] == preview["deploymentId"]


def test_a_promote_whose_answer_was_lost_is_confirmed_by_reading_back(site: Path) -> None:
    preview = ok_json("deploy", "-C", str(site))
    with forward_to_platform() as faults:
        faults.add("POST", "/promote", "applied_then_timeout")
        result = promote_through_remote(site)
        assert result.exit_code == 0, result.stderr
        assert faults.count("POST", "/promote") == 1
    prod = json.loads(result.stdout)
    assert prod["stages"][-1]["detail"]["confirmedByReadBack"] is True
    assert prod["baseAppUrl"].endswith(f"/sites/{app_token_of(site)}/")
    assert listing(site)["prodDeploymentId"] == preview["deploymentId"]


def test_without_a_deployment_list_the_local_record_is_used(site: Path) -> None:
    preview = ok_json("deploy", "-C", str(site))
    with forward_to_platform() as faults:
        faults.add("GET", "/deployments", "code 9499 400")
        result = promote_through_remote(site)
        assert result.exit_code == 0, result.stderr
    prod = json.loads(result.stdout)
    find = next(s for s in prod["stages"] if s["stage"] == "find_preview")
    assert find["detail"]["source"] == "local state"
    assert listing(site)["prodDeploymentId"] == preview["deploymentId"]


def test_promoting_what_is_already_prod_changes_nothing(site: Path) -> None:
    ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")
    again = ok_json("deploy", "-C", str(site), "--production", "--yes")
    assert again["stages"][-1] == {"stage": "promote", "status": "skipped", "detail": {
        "reason": "already_prod", "deploymentId": again["deploymentId"]}}


def test_production_dry_run_names_the_preview_and_promotes_nothing(site: Path) -> None:
    preview = ok_json("deploy", "-C", str(site))
    plan = ok_json("deploy", "-C", str(site), "--production", "--dry-run")
    assert plan["dryRun"] is True and plan["deploymentId"] == preview["deploymentId"]
    assert listing(site)["prodDeploymentId"] is None


# ---------------------------------------------------------------------- deployments


def test_list_and_status(site: Path) -> None:
    first = ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")
    edit_readme(site, "# second\n")
    second = ok_json("deploy", "-C", str(site))
    listed = ok_json("deployments", "list", "-C", str(site))
    assert [d["deploymentId"] for d in listed["deployments"]] == [
        second["deploymentId"], first["deploymentId"]]
    assert listed["prodDeploymentId"] == first["deploymentId"]
    lines = run("deployments", "list", "-C", str(site)).stdout.splitlines()
    assert lines[0] == f"Site {app_token_of(site)}: production serves {first['deploymentId']}"
    assert lines[1].split() == ["DEPLOYMENT", "CREATED", "FINGERPRINT", "PRODUCTION"]
    assert lines[2].startswith(second["deploymentId"]) and lines[2].endswith("latest preview")
    assert lines[3].startswith(first["deploymentId"]) and lines[3].endswith("prod")

    status = ok_json("deployments", "status", "-C", str(site))
    assert status["deployment"]["deploymentId"] == second["deploymentId"]
    assert status["prodDeploymentId"] == first["deploymentId"]
    assert [s["stage"] for s in status["lastRun"]["stages"] if s["status"] == "ok"][-1] == (
        "deployment")
    one = ok_json("deployments", "status", first["deploymentId"], "-C", str(site))
    assert one["deployment"]["isProd"] is True
    assert one["deployment"]["agentTools"] == {"exclude": ["debugSubmissionIntegrity"]}
    shown = run("deployments", "status", first["deploymentId"], "-C", str(site)).stdout
    assert "(production)" in shown and "Hidden from external agents: debugSub" in shown


def test_list_shows_which_deployments_were_ever_promoted(site: Path) -> None:
    """rollback accepts only a deployment that was production: the list says which."""
    first = ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")
    edit_readme(site, "# second\n")
    second = ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")
    edit_readme(site, "# third\n")
    third = ok_json("deploy", "-C", str(site))
    lines = run("deployments", "list", "-C", str(site)).stdout.splitlines()
    rows = {line.split()[0]: line for line in lines[2:5]}
    assert rows[third["deploymentId"]].endswith("  latest preview")
    assert rows[second["deploymentId"]].endswith("  prod")
    assert "  was prod, promoted 20" in rows[first["deploymentId"]]
    assert lines[-1] == ("Roll back to a deployment that was prod: `basedb deployments "
                         f"rollback {first['deploymentId']}`")
    assert run("deployments", "rollback", first["deploymentId"], "--yes", "-C",
               str(site)).exit_code == 0


def _terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import basedb.cli.common

    monkeypatch.setattr(basedb.cli.common, "stdin_is_tty", lambda: True)
    monkeypatch.setattr(basedb.cli.common, "stderr_is_tty", lambda: True)


def test_the_production_prompt_names_the_preview_and_no_changes_nothing(
        site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    preview = ok_json("deploy", "-C", str(site))
    _terminal(monkeypatch)
    declined = run("deploy", "-C", str(site), "--production", input="n\n")
    assert declined.exit_code == 1
    assert f"Promote preview {preview['deploymentId']} (fingerprint " in declined.stderr
    assert f"to production of {app_token_of(site)}?" in declined.stderr
    assert declined.stderr.rstrip().endswith(
        f"Not promoted: production of {app_token_of(site)} is unchanged.")
    assert "Aborted" not in declined.stderr
    assert listing(site)["prodDeploymentId"] is None
    accepted = run("deploy", "-C", str(site), "--production", input="y\n")
    assert accepted.exit_code == 0, accepted.stderr
    assert listing(site)["prodDeploymentId"] == preview["deploymentId"]


def test_the_rollback_prompt_says_what_did_not_happen(site: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    first = ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")
    edit_readme(site, "# second\n")
    ok_json("deploy", "-C", str(site))
    second = ok_json("deploy", "-C", str(site), "--production", "--yes")
    _terminal(monkeypatch)
    declined = run("deployments", "rollback", first["deploymentId"], "-C", str(site),
                   input="\n")  # the default is no
    assert declined.exit_code == 1 and "Aborted" not in declined.stderr
    assert f"back at {first['deploymentId']}?" in declined.stderr
    assert "Not rolled back: production of" in declined.stderr
    assert listing(site)["prodDeploymentId"] == second["deploymentId"]


def test_status_works_by_app_token_outside_a_workspace(site: Path, tmp_path: Path) -> None:
    preview = ok_json("deploy", "-C", str(site))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    status = ok_json("deployments", "status", "--app-token", app_token_of(site), cwd=elsewhere)
    assert status["deployment"]["deploymentId"] == preview["deploymentId"]
    assert "lastRun" not in status


def test_rollback_returns_prod_to_an_earlier_production(site: Path) -> None:
    first = ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")
    edit_readme(site, "# second\n")
    second = ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")
    assert listing(site)["prodDeploymentId"] == second["deploymentId"]

    refused = run("deployments", "rollback", first["deploymentId"], "-C", str(site))
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    back = ok_json("deployments", "rollback", first["deploymentId"], "--yes", "-C", str(site))
    assert back["env"] == "prod" and back["deploymentId"] == first["deploymentId"]
    assert listing(site)["prodDeploymentId"] == first["deploymentId"]
    assert LocalState(site).deployments.latest(app_token_of(site), "prod").deployment_id == (
        first["deploymentId"])


def test_rollback_to_a_deployment_that_never_was_prod_is_refused(site: Path) -> None:
    only_preview = ok_json("deploy", "-C", str(site))
    result = run("deployments", "rollback", only_preview["deploymentId"], "--yes",
                 "-C", str(site), "--json")
    assert result.exit_code == 1
    error = error_json(result)
    assert error["code"] == 800004020 and error["detail"]["stage"] == "rollback"
    assert listing(site)["prodDeploymentId"] is None


def test_an_unreadable_site_skill_is_not_offered_for_installation(site: Path) -> None:
    ok_json("deploy", "-C", str(site))
    with forward_to_platform() as faults:
        faults.add("GET", "/skill", "503", times=4)
        result = promote_through_remote(site)
        assert result.exit_code == 0, result.stderr
        assert faults.count("GET", "/skill") == 4  # a read: retried, a bounded number of times
    installation = json.loads(result.stdout)["nextAction"]["externalAgent"]["installation"]
    assert installation["available"] is False
    assert installation["reason"].startswith("The production Skill could not be read")
    assert installation["command"].endswith(f"--site {app_token_of(site)}")
    # no member message for a Skill members cannot install yet
    assert "members" not in json.loads(result.stdout)["nextAction"]["externalAgent"]
