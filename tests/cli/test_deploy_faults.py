"""Injected faults at each deploy stage: a write whose outcome is unknown is read back,
never sent again, and the failure names its stage and whether its outcome is known.

The workspace talks to the real platform through a stored HTTP profile whose requests
respx hands to the in-process app (`tests.cli.deploy_support.Faults`); only the faulty
request is answered differently.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from basedb.deploy.state import LocalState
from tests.cli.deploy_support import (
    Faults,
    app_token_of,
    error_json,
    forward_to_platform,
    local_client,
    run,
)


@pytest.fixture
def faults() -> Iterator[Faults]:
    with forward_to_platform() as found:
        yield found


def deploy(site: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """(exit code, the result document or the error envelope's error)."""
    result = run("deploy", "-C", str(site), "--profile", "remote", "--json", *args)
    if result.exit_code == 0:
        return 0, json.loads(result.stdout)
    assert result.stdout == ""
    return result.exit_code, error_json(result)


def deployments(site: Path) -> list[dict[str, Any]]:
    with local_client() as client:
        data = client.request("GET", f"/sites/{app_token_of(site)}/deployments")["data"]
    found: list[dict[str, Any]] = data["deployments"]
    return found


def stage_of(document: dict[str, Any], stage: str) -> dict[str, Any]:
    stages = document["detail"]["stages"] if "detail" in document else document["stages"]
    return next(s for s in stages if s["stage"] == stage)


def test_a_write_that_never_arrived_is_reported_not_resent(site: Path, faults: Faults) -> None:
    faults.add("PUT", "/draft/functions", "timeout")
    code, error = deploy(site)
    assert code == 4
    assert error["detail"]["stage"] == "draft_functions"
    assert error["detail"]["outcomeKnown"] is True
    assert "Reading back showed the write did not take effect" in error["message"]
    assert "nothing was re-sent" in error["message"]
    assert faults.count("PUT", "/draft/functions") == 1
    assert faults.count("GET", "/draft/functions") == 1
    assert faults.count("POST", "/deployments") == 0
    assert deployments(site) == []
    assert stage_of(error, "draft_functions")["detail"]["readBack"] == "not applied"


def test_a_refused_connection_sent_nothing_so_it_is_tried_again(site: Path,
                                                                faults: Faults) -> None:
    faults.add("PUT", "/draft/functions", "refused")
    code, result = deploy(site)
    assert code == 0, result
    assert faults.count("PUT", "/draft/functions") == 2  # the refused one, then the real one
    assert faults.count("GET", "/draft/functions") == 0, "nothing to read back"


def test_reads_are_retried_writes_are_not(site: Path, faults: Faults) -> None:
    faults.add("GET", "/draft/ai-functions", "503", times=2)
    faults.add("PUT", "/draft/agent-tools", "500")
    code, error = deploy(site)
    assert code == 4 and error["detail"]["stage"] == "agent_tools"
    assert faults.count("GET", "/draft/ai-functions") == 3
    assert faults.count("PUT", "/draft/agent-tools") == 1, "a write is never sent blindly"


def test_a_write_whose_connection_was_refused_is_known_to_have_changed_nothing(
        site: Path, faults: Faults) -> None:
    faults.add("PUT", "/draft/functions", "refused", times=4)
    code, error = deploy(site)
    assert faults.count("PUT", "/draft/functions") == 4  # bounded: 1 try and 3 retries
    assert code == 4
    assert error["detail"]["stage"] == "draft_functions"
    assert error["detail"]["outcomeKnown"] is True
    assert "Its outcome is known: this stage changed nothing" in error["message"]
    assert "unknown" not in error["message"] + error["hint"]
    assert "never reached the platform" in error["hint"]
    assert faults.count("GET", "/draft/functions") == 0, "nothing to read back"
    assert stage_of(error, "draft_functions")["detail"]["outcome"] == "known"


@pytest.mark.parametrize("fault", ["applied_then_timeout", "applied_then_500"])
def test_a_write_that_took_effect_is_confirmed_by_reading_back(site: Path, faults: Faults,
                                                               fault: str) -> None:
    faults.add("PUT", "/draft/functions", fault)
    code, result = deploy(site)
    assert code == 0, result
    assert faults.count("PUT", "/draft/functions") == 1, "never sent twice"
    assert stage_of(result, "draft_functions")["detail"]["confirmedByReadBack"] is True
    assert [d["deploymentId"] for d in deployments(site)] == [result["deploymentId"]]


def test_a_deployment_created_before_the_answer_was_lost_is_found(site: Path,
                                                                  faults: Faults) -> None:
    faults.add("POST", "/deployments", "applied_then_500")
    code, result = deploy(site)
    assert code == 0, result
    assert faults.count("POST", "/deployments") == 1
    [created] = deployments(site)
    assert result["deploymentId"] == created["deploymentId"]
    assert result["baseAppUrl"].endswith("/preview/")
    assert stage_of(result, "deployment")["detail"] == {
        "deploymentId": created["deploymentId"], "confirmedByReadBack": True}
    assert LocalState(site).deployments.all()[0].deployment_id == created["deploymentId"]


def test_a_deployment_that_was_not_created_names_what_earlier_stages_changed(
        site: Path, faults: Faults) -> None:
    faults.add("POST", "/deployments", "503")
    code, error = deploy(site)
    assert code == 4
    assert error["detail"]["stage"] == "deployment" and error["detail"]["outcomeKnown"]
    assert "Earlier stages changed the site's drafts" in error["message"]
    assert "no new deployment was created" in error["message"]
    assert faults.count("POST", "/deployments") == 1
    assert deployments(site) == []


def test_an_unknown_outcome_stays_unknown_when_reading_back_fails(site: Path,
                                                                  faults: Faults) -> None:
    faults.add("PUT", "/draft/agent-tools", "reset")
    faults.add("GET", "/draft/agent-tools", "timeout", times=4)
    code, error = deploy(site)
    assert code == 4
    assert error["detail"]["stage"] == "agent_tools"
    assert error["detail"]["outcomeKnown"] is False
    assert "unknown outcome" in error["message"] and "Nothing was re-sent" in error["message"]
    assert "basedb deployments status" in error["hint"]
    assert faults.count("PUT", "/draft/agent-tools") == 1
    assert stage_of(error, "agent_tools")["status"] == "unknown"
    logged = [(e.stage, e.status) for e in LocalState(site).stages.latest_attempt()]
    assert logged[-2:] == [("agent_tools", "started"), ("agent_tools", "unknown")]

    status = run("deployments", "status", "-C", str(site), "--json")
    assert status.exit_code == 0, status.stderr
    last = json.loads(status.stdout)["lastRun"]["stages"]
    assert (last[-1]["stage"], last[-1]["status"]) == ("agent_tools", "unknown")


@pytest.mark.parametrize(("method", "suffix", "stage"), [
    ("PUT", "/draft/functions", "draft_functions"),
    ("PUT", "/draft/ai-functions", "ai_sync"),
    ("PUT", "/draft/agent-tools", "agent_tools"),
    ("POST", "/deployments", "deployment"),
])
def test_every_write_stage_reads_back_instead_of_resending(site: Path, faults: Faults,
                                                           method: str, suffix: str,
                                                           stage: str) -> None:
    faults.add(method, suffix, "applied_then_timeout")
    code, result = deploy(site)
    assert code == 0, result
    assert faults.count(method, suffix) == 1
    assert stage_of(result, stage)["detail"]["confirmedByReadBack"] is True


def test_a_business_error_is_a_known_failure_of_its_stage(site: Path, faults: Faults) -> None:
    faults.add("GET", "/draft/ai-functions", "code 800004011 400")
    code, error = deploy(site)
    assert code == 1
    assert error["code"] == 800004011 and error["detail"]["stage"] == "ai_sync"
    assert error["detail"]["outcomeKnown"] is True
    assert "--skip-ai-functions" in error["hint"] and "auth login" in error["hint"]
    assert faults.count("PUT", "/draft/ai-functions") == 0


def test_skipping_ai_needs_the_remote_ai_list_and_stops_when_it_fails(site: Path,
                                                                      faults: Faults) -> None:
    (site / "agent-tools.json").write_text(
        json.dumps({"exclude": ["debugSubmissionIntegrity", "summarizeLeave"]}),
        encoding="utf-8")
    faults.add("GET", "/draft/ai-functions", "503", times=4)
    code, error = deploy(site, "--skip-ai-functions")
    assert code == 4
    assert error["detail"]["stage"] == "agent_tools"
    assert faults.count("PUT", "/draft/agent-tools") == 0, "no guessing the remote state"


def test_skipping_ai_deploys_on_an_account_without_ai_functions(site: Path,
                                                               faults: Faults) -> None:
    # 800004011 tells the user to deploy with --skip-ai-functions; that deploy must not
    # stop on the same code when agent-tools.json excludes an AI Function.
    (site / "agent-tools.json").write_text(
        json.dumps({"exclude": ["debugSubmissionIntegrity", "summarizeLeave"]}),
        encoding="utf-8")
    faults.add("GET", "/draft/ai-functions", "code 800004011 400", times=10)
    code, result = deploy(site, "--skip-ai-functions")
    assert code == 0, result
    assert result["agentTools"] == {"exclude": ["debugSubmissionIntegrity"],
                                    "omitted": ["summarizeLeave"]}
    assert faults.count("PUT", "/draft/ai-functions") == 0
    assert [d["deploymentId"] for d in deployments(site)] == [result["deploymentId"]]


def test_a_platform_without_the_policy_endpoint_keeps_its_policy_when_no_file(
        site: Path, faults: Faults) -> None:
    (site / "agent-tools.json").unlink()
    faults.add("PUT", "/draft/agent-tools", "404")
    code, result = deploy(site)
    assert code == 0, result
    assert result["agentTools"]["status"] == "unsupported_by_platform"
    assert stage_of(result, "agent_tools")["status"] == "skipped"


def test_with_the_file_present_a_missing_policy_endpoint_stops_the_deploy(
        site: Path, faults: Faults) -> None:
    faults.add("PUT", "/draft/agent-tools", "404")
    code, error = deploy(site)
    assert code == 4, "an answer that is not an envelope is a platform failure"
    assert error["detail"]["stage"] == "agent_tools" and error["detail"]["outcomeKnown"]
    assert faults.count("GET", "/draft/agent-tools") == 0, "a 404 needs no read-back"
    assert deployments(site) == []



def test_an_unknown_deployment_outcome_claims_nothing_about_previews(site: Path,
                                                                    faults: Faults) -> None:
    faults.add("POST", "/deployments", "applied_then_timeout")
    faults.add("GET", "/deployments", "timeout", times=4, after=("POST", "/deployments"))
    code, error = deploy(site)
    assert code == 4
    assert error["detail"]["stage"] == "deployment"
    assert error["detail"]["outcomeKnown"] is False
    assert "no new deployment was created" not in error["message"]
    assert "production is as it was" in error["message"]
    assert len(deployments(site)) == 1, "it was created; the user is told to check"


def test_ctrl_c_during_a_write_exits_130_naming_the_stage(site: Path, faults: Faults) -> None:
    faults.add("POST", "/deployments", "applied_then_ctrl_c")
    code, error = deploy(site)
    assert code == 130
    assert error["type"] == "interrupted" and error["code"] == "INTERRUPTED"
    assert error["detail"]["stage"] == "deployment"
    assert error["detail"]["outcomeKnown"] is False
    assert "interrupted (Ctrl-C) while its write was in flight" in error["message"]
    assert "Earlier stages changed the site's drafts" in error["message"]
    assert "deployments status" in error["hint"]
    assert stage_of(error, "deployment")["status"] == "unknown"
    assert faults.count("POST", "/deployments") == 1, "an interrupted write is not re-sent"
    logged = LocalState(site).stages.entries()
    assert logged[-1].stage == "deployment" and logged[-1].status == "unknown"


def test_ctrl_c_during_a_read_says_nothing_changed(site: Path, faults: Faults) -> None:
    faults.add("GET", "/draft/hashes", "ctrl_c")
    code, error = deploy(site)
    assert code == 130
    assert error["detail"]["stage"] == "draft_functions"
    assert error["detail"]["outcomeKnown"] is True
    assert "this stage changed nothing" in error["message"]
    assert "No earlier stage had changed anything on the platform." in error["message"]


def test_ctrl_c_outside_a_stage_exits_130_not_1(site: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("basedb.deploy.pipeline.check_workspace", interrupted)
    result = run("deploy", "-C", str(site))
    assert result.exit_code == 130
    assert "Interrupted (Ctrl-C)" in result.stderr and "Aborted!" not in result.stderr
    as_json = run("deploy", "-C", str(site), "--json")
    assert as_json.exit_code == 130, "and in JSON mode, an error envelope"
    assert error_json(as_json)["type"] == "interrupted"
