"""Attacks on site.zip with data before its first entry: a program, an HTML page or
another archive with the site's zip appended. zipfile finds the entries from the end of
the file and reads past the prefix, so such a file passed as a site.zip while being
something else to the next program that opens it. It is refused on upload and on pull."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from basedb.client.sites import SiteApi
from basedb.core.errors import InputError
from basedb.core.site_zip import read_site_zip
from tests.cli.deploy_support import (
    app_token_of,
    error_json,
    forward_to_platform,
    init_site,
    local_client,
    ok_json,
    run,
)
from tests.platform.conftest import Api
from tests.platform.release_support import SITE_FILES, site_zip, task_site, upload

PREFIXES = [b"MZ\x90\x00" + b"\x00" * 60, b"<!doctype html><script>alert(1)</script>",
            b"PK\x03\x04 not an entry"]


@pytest.mark.parametrize("prefix", PREFIXES, ids=["program", "html", "false-header"])
def test_an_upload_with_a_prefix_is_refused(api: Api, prefix: bytes) -> None:
    site = task_site(api).app_token
    archive, fingerprint = site_zip(SITE_FILES)
    answer = upload(api, site, prefix + archive, fingerprint)
    body = answer.json()
    assert answer.status_code == 400 and body["code"] != 0, body
    assert "before its first entry" in body["msg"] or "not start" in body["msg"], body
    assert api.ok("GET", f"/sites/{site}/deployments")["deployments"] == []
    # The same archive without the prefix deploys.
    assert upload(api, site, archive, fingerprint).json()["code"] == 0


def test_pull_refuses_an_artifact_with_a_prefix(tmp_path: Path) -> None:
    workspace = init_site(tmp_path / "site")
    ok_json("deploy", "-C", str(workspace))
    app = app_token_of(workspace)
    with local_client() as client:
        api = SiteApi(client, app)
        artifact = api.artifact(str(api.deployments().preview_deployment_id))
    read_site_zip(artifact)  # the artifact as stored is a plain zip
    with forward_to_platform() as faults:
        faults.answer("GET", "/artifact", httpx.Response(
            200, content=PREFIXES[0] + artifact, headers={"Content-Type": "application/zip"}))
        result = run("pull", str(tmp_path / "copy"), "--profile", "remote", "--json",
                     cwd=workspace)
    assert result.exit_code == 2, result.output
    error = error_json(result)
    assert error["code"] == "ARTIFACT_INVALID" and "before its first entry" in error["message"]
    assert not (tmp_path / "copy").exists()


def test_an_empty_archive_and_a_suffix_are_judged_on_their_own() -> None:
    """Only what comes before the first entry is refused here; an archive without
    entries must still be exactly an end record."""
    archive, _ = site_zip(SITE_FILES)
    read_site_zip(archive)
    empty = b"PK\x05\x06" + b"\x00" * 18
    assert read_site_zip(empty).contents == {}
    with pytest.raises(InputError, match="before its first entry"):
        read_site_zip(b"junk" + empty)
