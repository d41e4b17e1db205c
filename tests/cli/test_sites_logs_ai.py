"""`basedb sites`, `basedb logs` and `basedb ai-functions` on the embedded platform."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from basedb.protocol import Code
from tests.cli.deploy_support import app_token_of, error_json, ok_json, platform_data, run


def test_sites_list_shows_the_workspace_site_and_delete_needs_yes(site: Path) -> None:
    token = app_token_of(site)
    listing = ok_json("sites", "list")
    assert token in [s["appToken"] for s in listing["sites"]]
    assert listing["total"] == len(listing["sites"])
    text = run("sites", "list", cwd=site)
    assert text.exit_code == 0 and "(this workspace)" in text.stdout

    refused = run("sites", "delete", token)
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    assert platform_data("GET", f"/sites/{token}")["appToken"] == token

    deleted = ok_json("sites", "delete", token, "--yes")
    assert deleted["appToken"] == token and deleted["deleted"] is True
    assert token not in [s["appToken"] for s in ok_json("sites", "list")["sites"]]
    gone = run("deployments", "list", "-C", str(site), "--json")
    assert gone.exit_code == 1 and error_json(gone)["code"] == Code.BAD_REQUEST


def test_logs_show_calls_and_find_a_log_id(site: Path) -> None:
    assert run("deploy", "-C", str(site)).exit_code == 0
    token = app_token_of(site)
    ok = run("api", "POST", f"/sites/{token}/functions/listPeriods/invoke",
             "--params", json.dumps({"env": "preview"}), "--data", '{"params": {}}',
             cwd=site)
    assert ok.exit_code == 0, ok.stderr
    bad = run("api", "POST", f"/sites/{token}/functions/listPeriods/invoke",
              "--params", json.dumps({"env": "preview"}), "--data", '{"params": {"x": 1}}',
              cwd=site)
    assert bad.exit_code == 1
    log_id = _log_id(bad.stdout + bad.stderr)

    shown = run("logs", "-C", str(site))
    assert shown.exit_code == 0, shown.stderr
    lines = [line for line in shown.stdout.splitlines() if "listPeriods" in line]
    assert len(lines) == 2 and "[preview] ok" in lines[0] and log_id in lines[1]

    one = ok_json("logs", log_id, "-C", str(site))
    assert one["appToken"] == token and [e["logId"] for e in one["entries"]] == [log_id]

    missing = run("logs", "20990101000000ABCDEF", "-C", str(site), "--json")
    assert missing.exit_code == 1 and error_json(missing)["code"] == "LOG_ID_NOT_FOUND"
    conflict = run("logs", log_id, "--follow", "-C", str(site))
    assert conflict.exit_code == 2


def _log_id(text: str) -> str:
    marker = "LogID: "
    start = text.index(marker) + len(marker)
    return text[start:].split()[0].strip('".,}')


def test_ai_functions_sync_overwrites_at_once_and_prints_what_it_deleted(site: Path) -> None:
    token = app_token_of(site)
    synced = ok_json("ai-functions", "sync", "-C", str(site))
    assert synced == {"appToken": token, "keys": ["summarizeLeave"], "added": ["summarizeLeave"],
                      "updated": [], "deleted": [], "dryRun": False}
    listed = ok_json("ai-functions", "list", "-C", str(site))
    assert [i["key"] for i in listed["aiFunctions"]] == ["summarizeLeave"]
    got = ok_json("ai-functions", "get", "summarizeLeave", "-C", str(site))
    assert got["declaration"]["capability"] == "text"

    shutil.rmtree(site / "ai" / "summarizeLeave")
    # --dry-run previews the deletion and sends nothing
    preview = run("ai-functions", "sync", "--dry-run", "-C", str(site))
    assert preview.exit_code == 0, preview.stderr
    assert "would be deleted (ai/ lacks them): summarizeLeave" in preview.stdout
    planned = ok_json("ai-functions", "sync", "--dry-run", "-C", str(site))
    assert planned["dryRun"] is True and planned["deleted"] == ["summarizeLeave"]
    assert [i["key"] for i in ok_json("ai-functions", "list", "-C", str(site))[
        "aiFunctions"]] == ["summarizeLeave"]

    # upstream's rule: an explicit sync overwrites in full at once, off a terminal too
    emptied = run("ai-functions", "sync", "-C", str(site))
    assert emptied.exit_code == 0, emptied.stderr
    assert "deleted (ai/ lacks them): summarizeLeave" in emptied.stdout
    assert ok_json("ai-functions", "list", "-C", str(site))["aiFunctions"] == []
    # --yes, which earlier versions needed, is still accepted
    again = ok_json("ai-functions", "sync", "--yes", "-C", str(site))
    assert again["deleted"] == [] and again["keys"] == []


def test_ai_functions_invoke_rejects_params_that_are_not_an_object(site: Path) -> None:
    result = run("ai-functions", "invoke", "summarizeLeave", "--params", "[1]",
                 "-C", str(site))
    assert result.exit_code == 2 and "--params must be a JSON object" in result.stderr
