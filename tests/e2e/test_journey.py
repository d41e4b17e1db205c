"""The newcomer's journey, every step a `basedb` command on the embedded platform:

init the example → check → deploy preview → deploy production → list, describe and
invoke a Database Function, a Mutation and (with Node.js) the FaaS through the Agent
OpenAPI → pull into a new directory (same fingerprint) → a no-change redeploy; plus the
refusals a careful user meets on the way: a stale preview, --yes, rollback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from basedb.core.node import MIN_NODE_MAJOR, node_version
from tests.cli.deploy_support import api_data, error_json, ok_json, run

HAS_NODE = node_version() is not None and int(
    (node_version() or "0").split(".")[0]) >= MIN_NODE_MAJOR


def api(workspace: Path, method: str, path: str, *, data: Any = None,
        params: dict[str, Any] | None = None) -> Any:
    """`basedb api` as an external agent calls it, on production unless `params` says."""
    return api_data(workspace, method, path, data, params or {"env": "prod"})


def test_journey(tmp_path: Path) -> None:
    # init → check
    created = ok_json("init", str(tmp_path / "leave"))
    site, app = tmp_path / "leave", created["appToken"]
    assert ok_json("check", "-C", str(site))["ok"] is True

    # preview → production (--yes is required off a terminal)
    preview = ok_json("deploy", "-C", str(site))
    assert run("deploy", "-C", str(site), "--production").exit_code == 2
    prod = ok_json("deploy", "-C", str(site), "--production", "--yes")
    assert prod["deploymentId"] == preview["deploymentId"]
    assert prod["nextAction"]["externalAgent"]["installation"]["available"] is True

    # discover, describe and call functions as an external agent
    functions = f"/sites/{app}/functions"
    listed = api(site, "GET", functions)["functions"]
    ids = {f["functionId"] for f in listed}
    assert {"listPeriods", "listTeamLeave", "submitLeave", "managePeriod",
            "summarizeLeave"} <= ids
    assert "debugSubmissionIntegrity" not in ids, "excluded by agent-tools.json"
    described = api(site, "GET", f"{functions}/listTeamLeave")["function"]
    assert [p["name"] for p in described["parameters"]] == ["periodId", "offset"]

    periods = api(site, "POST", f"{functions}/listPeriods/invoke", data={"params": {}})["rows"]
    year_end = next(p for p in periods if p["title"] == "2026 年末与元旦休假报备")
    team = api(site, "POST", f"{functions}/listTeamLeave/invoke",
               data={"params": {"periodId": year_end["period_id"], "offset": 0}})["rows"]
    assert len(team) == 6

    spring = next(p for p in periods if p["title"] == "2027 春节休假报备")
    [mine] = api(site, "POST", f"{functions}/getMySubmission/invoke",
                 data={"params": {"periodId": spring["period_id"]}})["rows"]
    assert mine["submission_id"] is None
    assert "outputSchema" in api(site, "GET", f"{functions}/submitLeave")["function"]
    written = api(site, "POST", f"{functions}/submitLeave/invoke", data={"params": {
        "periodId": spring["period_id"], "memberId": mine["member_id"], "intent": "需要休假",
        "startDate": "2027-02-08", "endDate": "2027-02-10", "days": 3}})
    assert len(written["recordIds"]) == 1
    [mine] = api(site, "POST", f"{functions}/getMySubmission/invoke",
                 data={"params": {"periodId": spring["period_id"]}})["rows"]
    assert mine["submission_id"] == written["recordIds"][0] and mine["days"] == 3

    if HAS_NODE:
        made = api(site, "POST", f"{functions}/managePeriod/invoke", data={"params": {
            "action": "create", "title": "2027 五一休假报备", "start": "2027-04-26",
            "end": "2027-05-07"}})
        assert made["status"] == "开放"
        titles = [p["title"] for p in api(site, "POST", f"{functions}/listPeriods/invoke",
                                          data={"params": {}})["rows"]]
        assert "2027 五一休假报备" in titles

    # pull into a new directory: the same files, the same fingerprint
    pulled = ok_json("pull", str(tmp_path / "copy"), cwd=site)
    assert pulled["fingerprint"] == preview["fingerprint"]
    assert pulled["sameAsDeployment"] is True
    plan = ok_json("deploy", "-C", str(tmp_path / "copy"), "--dry-run")
    assert plan["fingerprint"] == preview["fingerprint"]

    # a no-change redeploy: a new preview of the same files
    again = ok_json("deploy", "-C", str(site))
    assert again["fingerprint"] == preview["fingerprint"]
    assert again["deploymentId"] != preview["deploymentId"]
    listing = ok_json("deployments", "list", "-C", str(site))
    assert [d["deploymentId"] for d in listing["deployments"]] == [
        again["deploymentId"], preview["deploymentId"]]


def test_stale_preview_yes_and_rollback(tmp_path: Path) -> None:
    site = tmp_path / "leave"
    ok_json("init", str(site))
    first = ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")

    readme = site / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8") + "\nChanged.\n", encoding="utf-8")
    stale = run("deploy", "-C", str(site), "--production", "--yes", "--json")
    assert stale.exit_code == 1
    assert "preview is stale" in error_json(stale)["message"]

    second = ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")
    assert run("deployments", "rollback", first["deploymentId"], "-C",
               str(site)).exit_code == 2
    back = ok_json("deployments", "rollback", first["deploymentId"], "--yes", "-C", str(site))
    assert back["deploymentId"] == first["deploymentId"]
    status = ok_json("deployments", "status", "-C", str(site))
    assert status["prodDeploymentId"] == first["deploymentId"]
    assert status["previewDeploymentId"] == second["deploymentId"]


@pytest.mark.skipif(not HAS_NODE, reason=f"Node.js {MIN_NODE_MAJOR}+ is not installed")
def test_the_faas_refuses_bad_input_without_running_a_write(tmp_path: Path) -> None:
    site = tmp_path / "leave"
    app = ok_json("init", str(site))["appToken"]
    ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")
    result = run("api", "POST", f"/sites/{app}/functions/managePeriod/invoke", "--params",
                 '{"env":"prod"}', "--data", json.dumps({"params": {
                     "action": "create", "title": "倒序", "start": "2027-05-07",
                     "end": "2027-04-26"}}), cwd=site)
    assert result.exit_code == 1
    error = json.loads(result.stderr)["error"]
    assert error["code"] == 800004003 and "Parameter: /params/end" in error["message"]
