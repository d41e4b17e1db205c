"""`basedb check` applies the rules a deploy applies to the workspace's files as a whole
(names, count, total size, symlinks), so a workspace that passes check can be deployed,
and a deploy refuses one that cannot before it changes anything on the platform."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from basedb.core.site_zip.read import MAX_ZIP_SIZE
from basedb.platform.web.routes.deployments import MAX_UPLOAD_BYTES
from basedb.workspace import inputs
from tests.cli.deploy_support import app_token_of, error_json, local_client, run


def check(site: Path) -> tuple[int, dict[str, Any]]:
    result = run("check", "-C", str(site), "--json")
    return result.exit_code, json.loads(result.stdout)


def codes(report: dict[str, Any]) -> list[str]:
    return [error["code"] for error in report["errors"]]


def test_a_name_that_is_not_utf8_is_refused_once_escaped(site: Path) -> None:
    name = os.fsencode(site / "src") + b"/caf\xe9.txt"
    with open(name, "wb") as handle:
        handle.write(b"latin-1")
    code, report = check(site)
    assert code == 1 and codes(report) == ["INPUT_INVALID"]
    error = report["errors"][0]
    assert error["file"] == "src/caf\\xe9.txt", "each byte shown once as \\xNN"
    assert error["message"].startswith('"src/caf\\xe9.txt" ')
    assert "Rename" in error["fix"]


def test_a_workspace_over_the_size_limit_fails_check_and_deploys_nothing(site: Path) -> None:
    with open(site / "src" / "video.bin", "wb") as handle:
        handle.truncate(inputs.MAX_INPUT_BYTES + 1)  # sparse: nothing written
    code, report = check(site)
    assert code == 1 and codes(report) == ["INPUT_TOO_LARGE"]
    assert "src/video.bin" in report["errors"][0]["fix"]
    deployed = run("deploy", "-C", str(site), "--json")
    assert deployed.exit_code == 1
    error = error_json(deployed)
    assert error["detail"]["stage"] == "check"
    assert [e["code"] for e in error["detail"]["errors"]] == ["INPUT_TOO_LARGE"]
    with local_client() as client:
        held = client.request("GET", f"/sites/{app_token_of(site)}/draft/hashes")["data"]
    assert not held.get("functions"), "the drafts were not touched"


def test_too_many_files_fail_check(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "MAX_INPUT_FILES", 5)
    code, report = check(site)
    assert code == 1 and codes(report) == ["INPUT_TOO_MANY_FILES"]


def test_a_symlink_out_of_the_workspace_fails_check(site: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("private", encoding="utf-8")
    os.symlink(tmp_path / "outside.txt", site / "src" / "data.txt")
    code, report = check(site)
    assert code == 1 and codes(report) == ["INPUT_SYMLINK"]
    assert report["errors"][0]["file"] == "src/data.txt"


def test_an_app_token_that_cannot_be_one_fails_check(site: Path) -> None:
    config = site / "base-database.jsonc"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace(f'"{app_token_of(site)}"', '"hello world"'), encoding="utf-8")
    code, report = check(site)
    assert code == 1 and codes(report) == ["WORKSPACE_CONFIG_INVALID"]
    assert report["errors"][0]["pointer"] == "/appToken"
    assert "'hello world' is not an app token" in report["errors"][0]["message"]


def test_the_platform_accepts_every_site_zip_the_format_allows() -> None:
    # One limit: what check and deploy let through, the platform takes as an upload.
    assert MAX_UPLOAD_BYTES >= MAX_ZIP_SIZE
