"""`basedb init --app-token`: a new workspace for an existing site, as upstream restores
a remote project "by source: `pull` or `init`"."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.deploy_support import app_token_of, error_json, ok_json, platform_data, run


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".base-database-cli" not in p.parts}


def test_a_deployed_site_is_restored_from_its_latest_deployment(site: Path,
                                                                 tmp_path: Path) -> None:
    deployed = ok_json("deploy", "-C", str(site))
    token = app_token_of(site)
    restored = ok_json("init", "--app-token", token, str(tmp_path / "again"))
    assert restored["appToken"] == token and restored["template"] is None
    assert restored["restoredFrom"] == {"deploymentId": deployed["deploymentId"],
                                        "env": "preview",
                                        "fingerprint": deployed["fingerprint"]}
    again = tmp_path / "again"
    assert restored["workspace"] == str(again.resolve())
    # the same files as the workspace that was deployed, nothing else
    assert _files(again) == _files(site)
    assert sorted(restored["files"]) == sorted(_files(site))
    checked = run("check", "-C", str(again))
    assert checked.exit_code == 0, checked.stdout + checked.stderr


def test_a_site_never_deployed_gets_the_blank_template_bound_to_its_tables(
        site: Path, tmp_path: Path) -> None:
    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    table = catalog["tables"][0]
    other = platform_data("POST", "/sites/create", {"title": "Second site"})["appToken"]
    platform_data("POST", f"/sites/{other}/bind_base",
                  {"baseToken": catalog["baseToken"], "tableIds": [table["tableId"]]})

    result = run("init", "--app-token", other, str(tmp_path / "new"))
    assert result.exit_code == 0, result.stderr
    assert "no deployment yet" in result.stdout and catalog["baseToken"] in result.stdout
    new = tmp_path / "new"
    config = (new / "base-database.jsonc").read_text(encoding="utf-8")
    assert other in config and table["tableId"] in config
    written = json.loads((new / "catalog.json").read_text(encoding="utf-8"))
    assert [t["tableId"] for t in written["tables"]] == [table["tableId"]]
    assert run("check", "-C", str(new)).exit_code == 0
    # and the workspace deploys to that site as it is
    assert ok_json("deploy", "-C", str(new))["appToken"] == other


def test_app_token_refuses_the_options_of_a_new_site(tmp_path: Path) -> None:
    result = run("init", "--app-token", "PrjNoSuchSite00000", "--template", "blank",
                 str(tmp_path / "x"), "--json")
    assert result.exit_code == 2
    error = error_json(result)
    assert error["code"] == "OPTIONS_CONFLICT" and "--template" in error["message"]
    assert not (tmp_path / "x").exists()


def test_app_token_never_writes_into_a_directory_with_files(site: Path,
                                                             tmp_path: Path) -> None:
    ok_json("deploy", "-C", str(site))
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine", encoding="utf-8")
    result = run("init", "--app-token", app_token_of(site), str(busy), "--json")
    assert result.exit_code != 0
    assert error_json(result)["code"] == "TARGET_NOT_EMPTY"
    assert [p.name for p in busy.iterdir()] == ["notes.txt"]
