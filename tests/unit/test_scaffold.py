"""Workspace scaffolding: template schemas, derived catalogs and writing a workspace."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from basedb.core.errors import InputError
from basedb.core.resources import TEMPLATE_SCHEMA_FILE, template_dir, template_names
from basedb.workspace import files
from basedb.workspace.catalog import build_catalog
from basedb.workspace.config import build_config
from basedb.workspace.loader import load_workspace
from basedb.workspace.scaffold import (
    InitResult,
    ProvisionedSite,
    TemplateSchema,
    catalog_from_schema,
    init_workspace,
    load_template_schema,
    write_workspace_files,
)
from basedb.workspace.template_schema import CURRENT_USER, parse_template_schema


def example_doc() -> dict[str, Any]:
    path = template_dir("example") / TEMPLATE_SCHEMA_FILE
    return json.loads(path.read_text(encoding="utf-8"))


def read_config(root: Path) -> dict[str, Any]:
    text = (root / "base-database.jsonc").read_text(encoding="utf-8")
    return files.parse_jsonc(text, label="base-database.jsonc")


class SchemaProvisioner:
    """Provisions without a platform: tokens from a counter, the catalog from the schema
    (the platform provisioner is tested against the real platform in tests/cli)."""

    def __init__(self) -> None:
        self.sites = 0

    def provision(self, schema: TemplateSchema, *, title: str, base_token: str | None,
                  timezone: str | None = None) -> ProvisionedSite:
        self.sites += 1
        token = base_token or f"basSchemaBase{self.sites:04d}"
        catalog = catalog_from_schema(schema, base_token=token)
        return ProvisionedSite(app_token=f"PrjSchemaSite{self.sites:04d}", base_token=token,
                               table_ids=tuple(t["tableId"] for t in catalog["tables"]),
                               catalog=catalog)


def init(target: Path, template: str, **kwargs: Any) -> InitResult:
    return init_workspace(target, template, provisioner=SchemaProvisioner(), **kwargs)


# ------------------------------------------------------------------ template schema


def test_shipped_templates_are_example_and_blank() -> None:
    assert template_names() == ["blank", "example"]


def test_example_schema_has_the_leave_site_tables_and_sample_records() -> None:
    schema = load_template_schema(template_dir("example") / TEMPLATE_SCHEMA_FILE)
    assert [t.name for t in schema.tables] == ["成员", "报备周期", "休假填报"]
    assert len(schema.records_of("成员")) == 8
    assert len(schema.records_of("报备周期")) == 3
    assert len(schema.records_of("休假填报")) == 20
    status = schema.table("报备周期").field("状态")  # type: ignore[union-attr]
    assert status is not None and status.options == ("开放", "已关闭")
    users = [r.values["用户"] for r in schema.records_of("成员")]
    assert users.count(CURRENT_USER) == 1, "exactly one member is the user running init"
    assert schema.sample_user_names() == sorted(
        r.values["姓名"] for r in schema.records_of("成员") if r.values["用户"] != CURRENT_USER)


def test_blank_schema_has_one_table_and_no_records() -> None:
    schema = load_template_schema(template_dir("blank") / TEMPLATE_SCHEMA_FILE)
    assert [(t.name, [f.name for f in t.fields]) for t in schema.tables] == [("数据表", ["名称"])]
    assert dict(schema.records) == {}


def _break(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `doc` with the value at a /-separated path replaced."""
    broken = copy.deepcopy(doc)
    *parents, last = path.split("/")
    node: Any = broken
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return broken


@pytest.mark.parametrize(("path", "value", "expected"), [
    ("title", "  ", "/title must be a non-empty string"),
    ("tables/0/fields/0/type", "rich_text", "/tables/0/fields/0/type is 'rich_text'"),
    ("tables/0/fields/1/name", "姓名", "repeats the field name '姓名'"),
    ("tables/2/fields/0/linkTable", "周期表", "names table '周期表'"),
    ("tables/1/fields/3/options", [], "/tables/1/fields/3/options must be a non-empty array"),
    ("tables/0/fields/0/options", ["x"], "only allowed on select fields"),
    ("records/报备周期/0/状态", "进行中", "is '进行中', not an option of '状态'"),
    ("records/休假填报/0/周期", ["p9"], "links to 'p9'"),
    ("records/休假填报/0/周期", "p1", "must be an array"),
    ("records/休假填报/0/填报人", "ou_x", "which the platform fills itself"),
    ("records/休假填报/0/天数", "2", "must be a number"),
    ("records/成员/0/在职", 1, "must be true or false"),
    ("records/报备周期/0/开始日期", "2026/09/28", "use \"YYYY-MM-DD HH:MM:SS\""),
    ("records/成员/1/_key", "m1", "no other record of the table uses"),
    ("records/成员/0/职位", "组长", "names field '职位'"),
    ("records/成员/1/用户", "ou_8a33a9556227ed47a1d30193", "real user ids do not exist yet"),
    ("records/成员/1/用户", "@user: ", "a sample user is '@current_user'"),
    ("records/成员/1/用户", ["@user:张伟"], "must be a single value"),
])
def test_invalid_template_schema_names_the_place(path: str, value: Any, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_template_schema(_break(example_doc(), path, value), label="t.json")
    assert caught.value.message.startswith("t.json: ")
    assert expected in caught.value.message


def test_unknown_records_table_is_rejected() -> None:
    doc = example_doc()
    doc["records"]["请假"] = []
    with pytest.raises(InputError, match="/records/请假 names table '请假'"):
        parse_template_schema(doc)


def test_template_schema_file_problems_become_input_errors(tmp_path: Path) -> None:
    path = tmp_path / "_template.json"
    path.write_text("{\"title\": ", encoding="utf-8")
    with pytest.raises(InputError, match="is not valid JSON"):
        load_template_schema(path)


# ------------------------------------------------------------------ derived catalog


def test_catalog_from_schema_is_deterministic_and_well_formed() -> None:
    schema = load_template_schema(template_dir("example") / TEMPLATE_SCHEMA_FILE)
    doc = catalog_from_schema(schema, base_token="basTEST")
    assert doc == catalog_from_schema(schema, base_token="basTEST")
    catalog, findings = build_catalog(doc)
    assert findings == []
    assert doc["baseToken"] == "basTEST"
    ids = {t.name: t.table_id for t in catalog.tables}
    for table in catalog.tables:
        assert re.fullmatch(r"tbl[A-Za-z0-9]{14}", table.table_id)
        for field in table.fields:
            assert re.fullmatch(r"fld[A-Za-z0-9]{10}", field.field_id)
    submissions = catalog.table("休假填报")
    assert submissions is not None
    assert submissions.field("周期").link_table == ids["报备周期"]  # type: ignore[union-attr]
    assert submissions.field("成员").link_table == ids["成员"]  # type: ignore[union-attr]
    intent = submissions.field("休假意向")
    assert intent is not None and intent.options == ("不休假", "需要休假")


def test_catalog_ids_depend_on_names() -> None:
    doc = {"title": "t", "tables": [{"name": "A", "fields": [{"name": "x", "type": "text"}]}]}
    renamed = {"title": "t", "tables": [{"name": "B", "fields": [{"name": "x", "type": "text"}]}]}
    first = catalog_from_schema(parse_template_schema(doc), base_token="b")
    second = catalog_from_schema(parse_template_schema(renamed), base_token="b")
    assert first["tables"][0]["tableId"] != second["tables"][0]["tableId"]
    assert first["tables"][0]["fields"][0]["fieldId"] != second["tables"][0]["fields"][0]["fieldId"]


# -------------------------------------------------------------------- writing


def test_init_writes_a_loadable_workspace(tmp_path: Path) -> None:
    target = tmp_path / "site"
    result = init(target, "example")
    assert result.workspace == target.resolve()
    assert result.app_token == "PrjSchemaSite0001"
    assert result.base_token == "basSchemaBase0001"
    written = {p.relative_to(result.workspace).as_posix() for p in result.files}
    assert {"base-database.jsonc", "catalog.json", ".gitignore", "agent-tools.json",
            "README.md", "src/index.html", "src/app.js", "src/style.css",
            "faas/managePeriod/index.mjs", "database-functions/listTeamLeave/main.sql"} <= written
    assert "_template.json" not in written
    assert ".base-database-cli/" in (target / ".gitignore").read_text(encoding="utf-8").split()

    config_text = (target / "base-database.jsonc").read_text(encoding="utf-8")
    assert "${" not in config_text
    config, findings = build_config(read_config(target))
    assert findings == [] and config is not None
    assert config.title == "团队休假报备"
    catalog = json.loads((target / "catalog.json").read_text(encoding="utf-8"))
    assert list(config.binding.table_ids) == [t["tableId"] for t in catalog["tables"]]
    assert config.binding.base_token == catalog["baseToken"] == result.base_token

    ws = load_workspace(target)
    assert ws.load_findings == []
    assert sorted(ws.declarations) == sorted(ws.ids)
    assert len(ws.of_kind("database_function")) == 7
    assert len(ws.of_kind("mutation")) == 4
    assert len(ws.of_kind("faas")) == 1
    assert len(ws.of_kind("ai_function")) == 1


def test_template_files_are_copied_byte_for_byte(tmp_path: Path) -> None:
    result = init(tmp_path / "site", "example")
    source = template_dir("example")
    for path in result.files:
        rel = path.relative_to(result.workspace)
        if (source / rel).is_file() and rel.as_posix() != "base-database.jsonc":
            assert path.read_bytes() == (source / rel).read_bytes(), rel


def test_init_refuses_a_non_empty_directory_and_leaves_it_alone(tmp_path: Path) -> None:
    target = tmp_path / "site"
    target.mkdir()
    (target / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        init(target, "example")
    assert str(target) in caught.value.message and "notes.txt" in caught.value.message
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]
    assert (target / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_init_refuses_a_file_as_target(tmp_path: Path) -> None:
    target = tmp_path / "site"
    target.write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match="is not a directory"):
        init(target, "blank")


def test_init_into_an_existing_empty_directory(tmp_path: Path) -> None:
    result = init(tmp_path, "blank", title="我的站点")
    assert read_config(tmp_path)["title"] == "我的站点"
    assert {p.name for p in result.files} == {
        ".gitignore", "README.md", "base-database.jsonc", "catalog.json", "index.html"}


@pytest.mark.parametrize(("title", "expected"), [
    ("   ", "--name is empty"),
    ("x" * 101, "at most 100"),
    ("a\nb", "control characters"),
])
def test_bad_titles_are_refused(tmp_path: Path, title: str, expected: str) -> None:
    with pytest.raises(InputError, match=expected):
        init(tmp_path / "site", "blank", title=title)
    assert not (tmp_path / "site").exists()


def test_a_given_base_token_reaches_the_provisioner_and_the_config(tmp_path: Path) -> None:
    result = init(tmp_path / "site", "blank", base_token="basREAL123")
    assert result.base_token == "basREAL123"
    assert read_config(tmp_path / "site")["binding"]["baseToken"] == "basREAL123"


def test_a_malformed_base_token_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is not a Base token"):
        init(tmp_path / "site", "blank", base_token="bas token")


class RecordingProvisioner:
    def __init__(self, site: ProvisionedSite) -> None:
        self.site = site
        self.calls: list[tuple[TemplateSchema, str, str | None]] = []

    def provision(self, schema: TemplateSchema, *, title: str, base_token: str | None,
                  timezone: str | None = None) -> ProvisionedSite:
        self.calls.append((schema, title, base_token))
        return self.site


def _provisioned(base_token: str) -> ProvisionedSite:
    schema = load_template_schema(template_dir("example") / TEMPLATE_SCHEMA_FILE)
    catalog = catalog_from_schema(schema, base_token=base_token)
    return ProvisionedSite(app_token="PrjRealSite0000001", base_token=base_token,
                           table_ids=tuple(t["tableId"] for t in catalog["tables"]),
                           catalog=catalog)


def test_a_provisioner_supplies_tokens_and_catalog(tmp_path: Path) -> None:
    provisioner = RecordingProvisioner(_provisioned("basRealBase01"))
    result = init_workspace(tmp_path / "site", "example", title="假期", provisioner=provisioner)
    [(schema, title, base_token)] = provisioner.calls
    assert schema.title == "团队休假报备" and title == "假期" and base_token is None
    assert result.app_token == "PrjRealSite0000001"
    config_text = (tmp_path / "site" / "base-database.jsonc").read_text(encoding="utf-8")
    assert "NOTE" not in config_text
    assert read_config(tmp_path / "site")["appToken"] == "PrjRealSite0000001"


def test_the_provisioner_is_not_called_for_a_non_empty_target(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x", encoding="utf-8")
    provisioner = RecordingProvisioner(_provisioned("basRealBase01"))
    with pytest.raises(InputError):
        init_workspace(tmp_path, "example", provisioner=provisioner)
    assert provisioner.calls == []


def test_a_failed_write_removes_what_it_created(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_open = builtins.open
    opened: list[str] = []

    def failing_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode == "xb":
            opened.append(str(file))
            if len(opened) == 5:
                raise OSError(28, "No space left on device", str(file))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", failing_open)
    target = tmp_path / "new" / "site"
    with pytest.raises(InputError, match="No space left on device"):
        init(target, "example")
    assert len(opened) == 5
    assert not (tmp_path / "new").exists()


def test_write_workspace_files_rejects_an_invalid_catalog(tmp_path: Path) -> None:
    from basedb.core.errors import InternalError

    with pytest.raises(InternalError, match="catalog"):
        write_workspace_files(tmp_path / "site", "blank", title="t", app_token="PrjX",
                              base_token="basX", table_ids=[], catalog={"tables": "nope"})
    assert not (tmp_path / "site").exists()
