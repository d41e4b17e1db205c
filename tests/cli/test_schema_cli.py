"""`basedb base|table|field …`, `bind`, `unbind` and `init --schema` on the embedded
platform: the blank template grown into a site with only these commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.deploy_support import error_json, init_site, ok_json, platform_data, run

COMMENTED_BINDING = """\
// my notes about this site
{
  "appToken": "APP",
  "title": "T",
  "binding": {
    "baseToken": "BASE",
    // the tables, one per line
    "tableIds": [
      "FIRST", // the blank template's table
    ],
  },
}
"""


@pytest.fixture
def blank(tmp_path: Path) -> Path:
    return init_site(tmp_path / "site", "blank")


def config(site: Path) -> dict[str, Any]:
    from basedb.workspace.files import parse_jsonc

    parsed: dict[str, Any] = parse_jsonc((site / "base-database.jsonc").read_text("utf-8"),
                                         label="config")
    return parsed


def catalog_tables(site: Path) -> dict[str, dict[str, Any]]:
    doc = json.loads((site / "catalog.json").read_text("utf-8"))
    return {t["name"]: t for t in doc["tables"]}


def commented(site: Path) -> None:
    """Rewrite the site's config in a hand-written style with comments."""
    doc = config(site)
    text = (COMMENTED_BINDING.replace("APP", doc["appToken"])
            .replace("BASE", doc["binding"]["baseToken"])
            .replace("FIRST", doc["binding"]["tableIds"][0]))
    (site / "base-database.jsonc").write_text(text, "utf-8")


def test_tables_fields_and_binding_from_the_command_line(blank: Path) -> None:
    commented(blank)
    base = config(blank)["binding"]["baseToken"]
    created = ok_json("table", "create", "任务", "--field", "标题:text", "-C", str(blank))
    assert created["baseToken"] == base and created["bound"] is False
    assert [f["name"] for f in created["fields"]] == ["标题"]
    project = ok_json("table", "create", "项目", "--field", "名称:text", "--bind",
                      "-C", str(blank))
    assert project["bound"] is True
    for args in (["状态", "--type", "select", "--option", "待办", "--option", "完成"],
                 ["负责人", "--type", "user", "--multiple", "--description", "谁来做"],
                 ["截止", "--type", "datetime"], ["完成", "--type", "checkbox"],
                 ["工时", "--type", "number"], ["附件", "--type", "attachment"],
                 ["项目", "--type", "link", "--link-table", "项目"]):
        added = ok_json("field", "create", "任务", *args, "-C", str(blank))
        assert added["field"]["name"] == args[0]
        assert added["catalogRefreshed"] is False  # 任务 is not bound yet
    listed = ok_json("field", "list", "任务", "-C", str(blank))
    link = next(f for f in listed["fields"] if f["name"] == "项目")
    assert link["link_table"] == project["tableId"]

    bound = ok_json("bind", "任务", "-C", str(blank))
    assert bound["tables"] == [{"tableId": created["tableId"], "name": "任务"}]
    assert bound["binding"]["added"] == [created["tableId"]]
    assert set(catalog_tables(blank)) == {"数据表", "项目", "任务"}
    text = (blank / "base-database.jsonc").read_text("utf-8")
    assert "// my notes about this site" in text and "// the blank template's table" in text
    # A bound table's change reaches catalog.json at once.
    updated = ok_json("field", "update", "任务", "状态", "--option", "待办", "--option",
                      "进行中", "--option", "完成", "--name", "进度", "-C", str(blank))
    assert updated["catalogRefreshed"] is True
    fields = {f["name"]: f for f in catalog_tables(blank)["任务"]["fields"]}
    assert [o["name"] for o in fields["进度"]["options"]] == ["待办", "进行中", "完成"]
    assert fields["负责人"]["multiple"] is True and fields["负责人"]["description"] == "谁来做"
    deleted = ok_json("field", "delete", "任务", "工时", "--yes", "-C", str(blank))
    assert deleted["deleted"] is True and "工时" not in {
        f["name"] for f in catalog_tables(blank)["任务"]["fields"]}

    tables = ok_json("table", "list", "-C", str(blank))["tables"]
    assert [(t["name"], t["bound"]) for t in tables] == [
        ("数据表", True), ("任务", True), ("项目", True)]
    check = run("check", "-C", str(blank))
    assert check.exit_code == 0, check.stdout + check.stderr


def test_unbind_asks_then_takes_the_ids_out_keeping_comments(blank: Path) -> None:
    commented(blank)
    ok_json("table", "create", "任务", "--field", "标题:text", "--bind", "-C", str(blank))
    first = config(blank)["binding"]["tableIds"][0]
    refused = run("unbind", "数据表", "-C", str(blank), "--json")
    assert refused.exit_code == 2 and error_json(refused)["code"] == "CONFIRMATION_REQUIRED"
    assert first in config(blank)["binding"]["tableIds"]

    gone = ok_json("unbind", "数据表", "--yes", "-C", str(blank))
    assert gone["binding"]["removed"] == [first] and first not in gone["bound"]
    assert config(blank)["binding"]["tableIds"] == [gone["bound"][0]]
    assert set(catalog_tables(blank)) == {"任务"}
    text = (blank / "base-database.jsonc").read_text("utf-8")
    assert "// my notes about this site" in text and "// the tables, one per line" in text
    site = platform_data("GET", f"/sites/{config(blank)['appToken']}")
    assert site["binding"]["tableIds"] == gone["bound"]
    # The table itself stays in the Base.
    assert "数据表" in {t["name"] for t in ok_json("table", "list", "-C", str(blank))["tables"]}


def test_deleting_a_bound_table_drops_it_from_the_workspace(blank: Path) -> None:
    ok_json("table", "create", "任务", "--field", "标题:text", "--bind", "-C", str(blank))
    task_id = catalog_tables(blank)["任务"]["tableId"]
    refused = run("table", "delete", "任务", "-C", str(blank))
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    done = ok_json("table", "delete", "任务", "--yes", "-C", str(blank))
    assert done["deleted"] is True and done["catalogRefreshed"] is True
    assert task_id not in config(blank)["binding"]["tableIds"]
    assert set(catalog_tables(blank)) == {"数据表"}


@pytest.mark.parametrize(("args", "code", "named"), [
    (["field", "create", "数据表", "状态", "--type", "select"], "FIELD_OPTION_INVALID",
     "--option"),
    (["field", "create", "数据表", "x", "--type", "text", "--option", "a"],
     "FIELD_OPTION_INVALID", "--option"),
    (["field", "create", "数据表", "x", "--type", "text", "--multiple"],
     "FIELD_OPTION_INVALID", "--multiple"),
    (["field", "create", "数据表", "x", "--type", "link"], "FIELD_OPTION_INVALID",
     "--link-table"),
    (["field", "create", "数据表", "x", "--type", "formula"], "FIELD_TYPE_INVALID", "--type"),
    (["field", "create", "数据表", "x", "--type", "link", "--link-table", "nope"],
     "NOT_FOUND", "--link-table"),
    (["field", "create", "没有", "x", "--type", "text"], "NOT_FOUND", "TABLE"),
    (["field", "update", "数据表", "名称"], "FIELD_UPDATE_EMPTY", "--name"),
    (["field", "update", "数据表", "没有", "--name", "y"], "NOT_FOUND", "FIELD"),
    (["table", "create", "T", "--field", "x"], "FIELD_OPTION_INVALID", "--field"),
    (["bind", "没有"], "NOT_FOUND", "TABLE"),
    (["unbind", "没有", "--yes"], "NOT_FOUND", "TABLE"),
])
def test_bad_input_names_the_parameter_and_exits_2(blank: Path, args: list[str], code: str,
                                                    named: str) -> None:
    result = run(*args, "-C", str(blank), "--json")
    assert result.exit_code == 2, result.stderr
    error = error_json(result)
    assert error["code"] == code
    assert named in error["message"] + error.get("hint", "")
    assert "Traceback" not in result.stderr


def test_a_platform_refusal_is_an_api_error(blank: Path) -> None:
    result = run("table", "create", "数据表", "-C", str(blank), "--json")
    assert result.exit_code == 1
    assert "already exists" in error_json(result)["message"]


def test_without_a_workspace_the_base_token_is_required(tmp_path: Path) -> None:
    result = run("table", "list", "--json", cwd=tmp_path)
    assert result.exit_code == 2 and error_json(result)["code"] == "BASE_TOKEN_REQUIRED"
    base = ok_json("base", "create", "Scratch", cwd=tmp_path)["baseToken"]
    assert ok_json("table", "list", "--base-token", base, cwd=tmp_path)["tables"] == []
    ok_json("table", "create", "T", "--base-token", base, cwd=tmp_path)
    assert [t["name"] for t in ok_json("table", "list", "--base-token", base,
                                       cwd=tmp_path)["tables"]] == ["T"]


def test_bind_a_first_base_and_refuse_a_second(tmp_path: Path, blank: Path) -> None:
    other = ok_json("base", "create", "Other")["baseToken"]
    ok_json("table", "create", "外部", "--base-token", other)
    result = run("bind", "外部", "--base-token", other, "-C", str(blank), "--json")
    assert result.exit_code == 2 and error_json(result)["code"] == "BASE_TOKEN_MISMATCH"


SCHEMA_YAML = """\
title: 项目看板
tables:
  - name: 项目
    fields:
      - {name: 名称, type: text}
      - {name: 截止, type: datetime, description: 项目的截止日期}
  - name: 任务
    fields:
      - {name: 标题, type: text}
      - {name: 项目, type: link, linkTable: 项目}
      - {name: 状态, type: select, options: [待办, 完成]}
      - {name: 负责人, type: user, multiple: true}
records:
  项目: [{_key: p1, 名称: 官网, 截止: 2027-01-01}]
  任务: [{标题: 首页, 项目: [p1], 状态: 待办, 负责人: ["@current_user"]}]
"""


def test_init_schema_yaml_creates_tables_fields_and_records(tmp_path: Path) -> None:
    schema = tmp_path / "schema.yaml"
    schema.write_text(SCHEMA_YAML, "utf-8")
    created = ok_json("init", str(tmp_path / "s"), "--schema", str(schema), "--description",
                      "项目与任务")
    assert created["template"] == "blank"
    site = tmp_path / "s"
    assert config(site)["title"] == "项目看板" and config(site)["description"] == "项目与任务"
    tables = catalog_tables(site)
    assert list(tables) == ["项目", "任务"]
    fields = {f["name"]: f for f in tables["任务"]["fields"]}
    assert fields["项目"]["linkTable"] == tables["项目"]["tableId"]
    assert fields["负责人"]["multiple"] is True
    deadline = {f["name"]: f for f in tables["项目"]["fields"]}["截止"]
    assert deadline["description"] == "项目的截止日期"
    records = platform_data("GET", f"/bases/{created['baseToken']}/tables/"
                                   f"{tables['任务']['tableId']}/records")
    assert records["total"] == 1


def test_init_schema_json_named_by_name(tmp_path: Path) -> None:
    schema = tmp_path / "orders.json"
    schema.write_text(json.dumps({"tables": [{"name": "订单", "fields": [
        {"name": "编号", "type": "text"}, {"name": "金额", "type": "number"}]}]}), "utf-8")
    ok_json("init", str(tmp_path / "a"), "--schema", str(schema), "--name", "订单")
    assert config(tmp_path / "a")["title"] == "订单"
    ok_json("init", str(tmp_path / "b"), "--schema", str(schema))
    assert config(tmp_path / "b")["title"] == "orders"  # no title: the file's name


@pytest.mark.parametrize(("text", "suffix", "pointer"), [
    ("tables: [{name: T, fields: [{name: a, type: nope}]}]", ".yaml", "/tables/0/fields/0/type"),
    ("tables: [{name: T, fields: [{name: a, type: link, linkTable: X}]}]", ".yml",
     "/tables/0/fields/0/linkTable"),
    ("tables: [{name: T, fields: [{name: a, type: text, colour: red}]}]", ".yaml",
     "/tables/0/fields/0/colour"),
    ("tables: [{name: T, fields: [a: b: c]}]", ".yaml", "line 1"),
    ('{"tables": []}', ".json", "/tables"),
    ("[1, 2]", ".json", "object"),
])
def test_a_bad_schema_file_is_named_with_its_pointer(tmp_path: Path, text: str, suffix: str,
                                                     pointer: str) -> None:
    schema = tmp_path / f"schema{suffix}"
    schema.write_text(text, "utf-8")
    result = run("init", str(tmp_path / "s"), "--schema", str(schema), "--json")
    assert result.exit_code == 2, result.stderr
    error = error_json(result)
    assert error["code"] == "SCHEMA_INVALID"
    assert str(schema) in error["message"] and pointer in error["message"]
    assert not (tmp_path / "s").exists()
    assert platform_data("GET", "/sites/list")["sites"] == []  # nothing was created


def test_init_schema_conflicts(tmp_path: Path) -> None:
    schema = tmp_path / "s.json"
    schema.write_text('{"tables": [{"name": "T", "fields": [{"name": "a", "type": "text"}]}]}')
    for extra in (["--template", "example"], ["--base-token", "basX"]):
        result = run("init", str(tmp_path / "s"), "--schema", str(schema), *extra, "--json")
        assert result.exit_code == 2 and error_json(result)["code"] == "OPTIONS_CONFLICT"
    missing = run("init", str(tmp_path / "s"), "--schema", str(tmp_path / "nope.yaml"))
    assert missing.exit_code == 2 and "nope.yaml" in missing.stderr
