"""A workspace cloned from git, deployed where its site does not exist.

Built on one platform with the schema commands (`init --schema`, `table`, `field`,
`bind`), committed without its local state, then cloned onto a machine with an empty
data dir: `deploy` refuses (the site is not there), `link --create` recreates the site
and a Base from catalog.json, and the same functions deploy, reach production and
answer. `link --app-token` then points a second clone at that same site.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.deploy_support import ok_json, platform_data, run

SCHEMA = {"title": "任务板", "tables": [
    {"name": "项目", "fields": [{"name": "名称", "type": "text"}]},
    {"name": "任务", "fields": [
        {"name": "标题", "type": "text"},
        {"name": "状态", "type": "select", "options": ["待办", "完成"]},
        {"name": "项目", "type": "link", "linkTable": "项目"}]}]}


def write_json(path: Path, doc: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")


def build(site: Path, tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    write_json(schema, SCHEMA)
    ok_json("init", str(site), "--schema", str(schema))
    ok_json("field", "create", "任务", "负责人", "--type", "user", "-C", str(site))
    write_json(site / "database-functions" / "openTasks" / "function.json", {
        "name": "openTasks",
        "description": "列出某个状态的任务标题；改状态时改用 finishTask",
        "meta": {"params": [{"name": "status", "kind": "TEXT", "enum": ["待办", "完成"],
                             "description": "任务状态，按用户的问题选择"}]}})
    (site / "database-functions" / "openTasks" / "main.sql").write_text(
        'SELECT "标题" AS title FROM "任务" WHERE "状态" = $1 ORDER BY "标题"\n', "utf-8")
    write_json(site / "mutations" / "addTask" / "function.json", {
        "name": "addTask", "description": "新建一个待办任务（写入）；查看任务改用 openTasks",
        "spec": {"table": "任务", "action": "create",
                 "params": [{"name": "title", "kind": "TEXT", "description": "任务的标题文字"}],
                 "set": {"标题": "$title", "状态": "待办"}}})
    assert run("check", "-C", str(site)).exit_code == 0


def clone(site: Path, target: Path) -> Path:
    """What `git clone` gives: the committed files, not .base-database-cli/."""
    shutil.copytree(site, target, ignore=shutil.ignore_patterns(".base-database-cli"))
    return target


def test_link_create_deploys_a_cloned_workspace_to_an_empty_data_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    build(site, tmp_path)
    cloned = clone(site, tmp_path / "cloned")
    old = json.loads((site / "catalog.json").read_text("utf-8"))

    monkeypatch.setenv("BASEDB_DATA_DIR", str(tmp_path / "fresh-data"))
    assert platform_data("GET", "/sites/list")["sites"] == []
    refused = run("deploy", "-C", str(cloned))
    assert refused.exit_code == 1 and "basedb link" in refused.stderr

    linked = ok_json("link", "--create", "-C", str(cloned))
    assert linked["created"] is True and linked["title"] == "任务板"
    new = json.loads((cloned / "catalog.json").read_text("utf-8"))
    assert [t["name"] for t in new["tables"]] == [t["name"] for t in old["tables"]]
    assert {t["tableId"] for t in new["tables"]}.isdisjoint(t["tableId"] for t in old["tables"])
    strip = [[{k: v for k, v in f.items() if k not in ("fieldId", "linkTable")}
              for f in t["fields"]] for t in new["tables"]]
    assert strip == [[{k: v for k, v in f.items() if k not in ("fieldId", "linkTable")}
                      for f in t["fields"]] for t in old["tables"]]
    config = (cloned / "base-database.jsonc").read_text("utf-8")
    assert config.lstrip().startswith("//") and linked["appToken"] in config

    ok_json("deploy", "-C", str(cloned))
    ok_json("deploy", "--production", "--yes", "-C", str(cloned))
    app = linked["appToken"]
    platform_data("POST", f"/sites/{app}/functions/addTask/invoke",
                  {"params": {"title": "写周报"}})
    answer = platform_data("POST", f"/sites/{app}/functions/openTasks/invoke",
                           {"params": {"status": "待办"}})
    assert "写周报" in json.dumps(answer, ensure_ascii=False)

    # A second clone joins that same site.
    second = clone(site, tmp_path / "second")
    joined = ok_json("link", "--app-token", app, "-C", str(second))
    assert joined["created"] is False and joined["baseToken"] == linked["baseToken"]
    assert json.loads((second / "catalog.json").read_text("utf-8")) == new
    assert run("deploy", "-C", str(second)).exit_code == 0


def test_link_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    site = tmp_path / "site"
    build(site, tmp_path)
    both = run("link", "--create", "--app-token", "PrjX", "-C", str(site), "--json")
    assert both.exit_code == 2 and "OPTIONS_CONFLICT" in both.stderr
    neither = run("link", "-C", str(site))
    assert neither.exit_code == 2
    unknown = run("link", "--app-token", "PrjNoSuchSite", "-C", str(site))
    assert unknown.exit_code == 1 and "PrjNoSuchSite" in unknown.stderr
    (site / "catalog.json").write_text('{"baseToken": "", "tables": []}', "utf-8")
    empty = run("link", "--create", "-C", str(site), "--json")
    assert empty.exit_code == 2 and "CATALOG_EMPTY" in empty.stderr
