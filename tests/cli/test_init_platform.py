"""`basedb init` on the platform: the site, the Base from the template, sample records
with their links and users, the binding, and the catalog written into the workspace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from basedb.client.client import Client
from basedb.core.errors import ApiError
from basedb.deploy.provision import PlatformProvisioner
from basedb.workspace import files
from basedb.workspace.scaffold import init_workspace
from basedb.workspace.template_schema import parse_template_schema
from tests.cli.deploy_support import (
    app_token_of,
    error_json,
    forward_to_platform,
    init_site,
    local_client,
    ok_json,
    run,
)


def records_of(client: Client, base: str, table_id: str) -> list[dict[str, Any]]:
    """Every record of a table as {field name: value, "record_id": id}."""
    data = client.paginate("GET", f"/bases/{base}/tables/{table_id}/records",
                           params={"limit": 200}, list_field="data")["data"]
    names = data["fields"]
    return [{"record_id": rid, **dict(zip(names, row, strict=True))}
            for rid, row in zip(data["record_id_list"], data["data"], strict=True)]


def config_of(workspace: Path) -> dict[str, Any]:
    text = (workspace / "base-database.jsonc").read_text(encoding="utf-8")
    doc: dict[str, Any] = files.parse_jsonc(text, label="base-database.jsonc")
    return doc


def test_example_creates_site_base_tables_and_sample_records(tmp_path: Path) -> None:
    workspace = init_site(tmp_path / "site")
    config = config_of(workspace)
    catalog = json.loads((workspace / "catalog.json").read_text(encoding="utf-8"))
    with local_client() as client:
        site = client.request("GET", f"/sites/{config['appToken']}")["data"]
        live = client.request("GET", f"/sites/{config['appToken']}/catalog")["data"]
        me = client.request("GET", "/users/me")["data"]["user_id"]
        tables = {t["name"]: t["tableId"] for t in catalog["tables"]}
        base = config["binding"]["baseToken"]
        members = records_of(client, base, tables["成员"])
        periods = records_of(client, base, tables["报备周期"])
        leave = records_of(client, base, tables["休假填报"])
    assert site["title"] == "团队休假报备"
    assert site["binding"] == {"baseToken": base, "tableIds": list(tables.values())}
    assert config["binding"]["tableIds"] == list(tables.values())
    assert live == catalog, "catalog.json is the live catalog"
    assert list(tables) == ["成员", "报备周期", "休假填报"]
    link = next(f for f in catalog["tables"][2]["fields"] if f["name"] == "周期")
    assert link["type"] == "link" and link["linkTable"] == tables["报备周期"]

    assert (len(members), len(periods), len(leave)) == (8, 3, 20)
    by_name = {m["姓名"]: m for m in members}
    assert by_name["林晓"]["用户"] == [{"id": me}], "@current_user is whoever ran init"
    others = {m["用户"][0]["id"] for name, m in by_name.items() if name != "林晓"}
    assert len(others) == 7 and me not in others, "each sample colleague is a user"
    assert by_name["周敏"]["在职"] is False and by_name["林晓"]["部门"] == "研发部"
    titles = {p["record_id"]: p["标题"] for p in periods}
    member_names = {m["record_id"]: m["姓名"] for m in members}
    pairs = {(titles[r["周期"][0]["id"]], member_names[r["成员"][0]["id"]]) for r in leave}
    assert ("2026 国庆节休假报备", "林晓") in pairs and ("2027 春节休假报备", "周敏") in pairs
    assert len(pairs) == 20


def test_the_new_workspace_checks_clean_and_has_real_tokens(tmp_path: Path) -> None:
    workspace = init_site(tmp_path / "site")
    report = ok_json("check", "-C", str(workspace))
    assert report["ok"] is True and report["functionHints"] == []
    assert app_token_of(workspace).startswith("Prj")
    assert "${" not in (workspace / "base-database.jsonc").read_text(encoding="utf-8")


def test_base_token_binds_every_table_of_an_existing_base(tmp_path: Path) -> None:
    with local_client() as client:
        base = client.request("POST", "/bases", json={"name": "Existing"})["data"]["base_token"]
        ids = [client.request("POST", f"/bases/{base}/tables",
                              json={"name": name, "fields": [{"name": "Title",
                                                              "type": "text"}]}
                              )["data"]["id"] for name in ("Projects", "People")]
        before = client.request("GET", f"/bases/{base}/tables")["data"]["total"]
    doc = ok_json("init", str(tmp_path / "site"), "--template", "blank",
                  "--base-token", base)
    assert doc["baseToken"] == base
    config = config_of(tmp_path / "site")
    assert config["binding"] == {"baseToken": base, "tableIds": ids}
    catalog = json.loads((tmp_path / "site" / "catalog.json").read_text(encoding="utf-8"))
    assert [t["name"] for t in catalog["tables"]] == ["Projects", "People"]
    with local_client() as client:
        after = client.request("GET", f"/bases/{base}/tables")["data"]["total"]
    assert after == before == 2, "no table was created in the given Base"


def test_an_unknown_base_token_creates_nothing(tmp_path: Path) -> None:
    result = run("init", str(tmp_path / "site"), "--template", "blank",
                 "--base-token", "basDoesNotExist1", "--json")
    assert result.exit_code == 1
    error = error_json(result)
    assert "basDoesNotExist1" in error["message"]
    assert "Already created" not in (error.get("hint") or "")
    assert not (tmp_path / "site").exists()
    with local_client() as client:
        assert client.request("GET", "/sites/list")["data"]["sites"] == []


def test_a_failure_after_the_site_exists_names_what_was_created(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                ) -> None:
    with local_client() as client:
        base = client.request("POST", "/bases", json={"name": "Existing"})["data"]["base_token"]
        client.request("POST", f"/bases/{base}/tables", json={"name": "T"})

    def refuse_bind(self: PlatformProvisioner, method: str, path: str,
                    body: object = None) -> dict[str, object]:
        if path.endswith("/bind_base"):
            raise ApiError("bind refused", code=9499)
        return real_call(self, method, path, body)

    real_call = PlatformProvisioner._call
    monkeypatch.setattr(PlatformProvisioner, "_call", refuse_bind)
    result = run("init", str(tmp_path / "site"), "--template", "blank",
                 "--base-token", base, "--json")
    assert result.exit_code == 1
    error = error_json(result)
    assert "Already created on the platform: appToken Prj" in error["hint"]
    assert error["detail"]["created"]["appToken"].startswith("Prj")


def test_links_may_point_forward_and_to_their_own_table(tmp_path: Path) -> None:
    schema = parse_template_schema({
        "title": "Tasks",
        "tables": [
            {"name": "Tasks", "fields": [
                {"name": "Title", "type": "text"},
                {"name": "Project", "type": "link", "linkTable": "Projects"},
                {"name": "Blocks", "type": "link", "linkTable": "Tasks"}]},
            {"name": "Projects", "fields": [
                {"name": "Name", "type": "text"},
                {"name": "Lead", "type": "link", "linkTable": "Tasks"}]},
        ],
        "records": {
            "Tasks": [{"_key": "t1", "Title": "Design", "Project": ["p1"], "Blocks": ["t2"]},
                      {"_key": "t2", "Title": "Build", "Project": ["p1"]}],
            "Projects": [{"_key": "p1", "Name": "Site", "Lead": ["t1"]}],
        },
    })
    with local_client() as client:
        site = PlatformProvisioner(client).provision(schema, title="Tasks", base_token=None)
        tasks_id, projects_id = site.table_ids
        tasks = {r["Title"]: r for r in records_of(client, site.base_token, tasks_id)}
        [project] = records_of(client, site.base_token, projects_id)
    assert tasks["Design"]["Blocks"] == [{"id": tasks["Build"]["record_id"]}]
    assert tasks["Design"]["Project"] == [{"id": project["record_id"]}]
    assert tasks["Build"]["Project"] == [{"id": project["record_id"]}]
    assert project["Lead"] == [{"id": tasks["Design"]["record_id"]}]


def test_a_caller_who_cannot_create_users_leaves_sample_users_empty(tmp_path: Path) -> None:
    from basedb.client.client import EMBEDDED_BASE_URL
    from basedb.client.transport import InProcessTransport
    from tests.cli.deploy_support import platform

    with local_client() as owner:
        user = owner.request("POST", "/users", json={"name": "Member"})["data"]
    member = Client(base_url=EMBEDDED_BASE_URL, token=user["token"],
                    transport=InProcessTransport(platform().app))
    with member:
        result = init_workspace(tmp_path / "site", "example",
                                provisioner=PlatformProvisioner(member))
        catalog = json.loads((tmp_path / "site" / "catalog.json").read_text(encoding="utf-8"))
        members = records_of(member, result.base_token, catalog["tables"][0]["tableId"])
    users = {m["姓名"]: m["用户"] for m in members}
    assert users["林晓"] == [{"id": user["user_id"]}]
    assert all(value is None for name, value in users.items() if name != "林晓")


def test_a_stored_profile_is_remembered_in_the_workspace(tmp_path: Path) -> None:
    with forward_to_platform() as faults:
        doc = ok_json("init", str(tmp_path / "site"), "--template", "blank",
                      "--profile", "remote")
    assert config_of(tmp_path / "site")["profile"] == "remote"
    assert config_of(tmp_path / "site")["appToken"] == doc["appToken"]
    assert faults.count("POST", "/sites/create") == 1
    text = (tmp_path / "site" / "base-database.jsonc").read_text(encoding="utf-8")
    assert text.startswith("// Site workspace configuration"), "comments are kept"


@pytest.mark.parametrize("template", ["example", "blank"])
def test_init_refuses_a_non_empty_target_before_creating_anything(tmp_path: Path,
                                                                  template: str) -> None:
    target = tmp_path / "site"
    target.mkdir()
    (target / "keep.txt").write_text("mine", encoding="utf-8")
    result = run("init", str(target), "--template", template)
    assert result.exit_code == 2 and "not empty" in result.stderr
    with local_client() as client:
        assert client.request("GET", "/sites/list")["data"]["sites"] == []


def test_provisioner_errors_are_api_errors(tmp_path: Path) -> None:
    schema = parse_template_schema({"title": "T", "tables": [
        {"name": "A", "fields": [{"name": "x", "type": "text"}]}]})
    with local_client() as client, pytest.raises(ApiError) as caught:
        PlatformProvisioner(client).provision(schema, title="T", base_token="basMissing")
    assert "created" not in caught.value.detail
