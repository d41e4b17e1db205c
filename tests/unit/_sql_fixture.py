"""A small catalog with CJK names and every interesting field type, and an in-memory
SQLite database laid out as the platform lays out Base tables (basedb.platform.storage.physical),
for the SQL analysis and compilation tests."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from basedb.platform.storage import physical
from basedb.workspace.catalog import build_catalog
from basedb.workspace.model import Catalog

CATALOG_DOC: dict[str, Any] = {
    "baseToken": "bas_test",
    "tables": [
        {"tableId": "tblTask", "name": "任务", "fields": [
            {"fieldId": "fldTitle", "name": "标题", "type": "text"},
            {"fieldId": "fldStatus", "name": "状态", "type": "select",
             "options": [{"name": "进行中"}, {"name": "完成"}, {"name": "搁置"}]},
            {"fieldId": "fldTags", "name": "标签", "type": "select", "multiple": True,
             "options": [{"name": "前端"}, {"name": "后端"}, {"name": "紧急"}]},
            {"fieldId": "fldProject", "name": "项目", "type": "link", "linkTable": "tblProject"},
            {"fieldId": "fldOwner", "name": "负责人", "type": "user"},
            {"fieldId": "fldWatchers", "name": "关注人", "type": "user", "multiple": True},
            {"fieldId": "fldDone", "name": "已完成", "type": "checkbox"},
            {"fieldId": "fldPoints", "name": "points", "type": "number"},
            {"fieldId": "fldDue", "name": "截止", "type": "datetime"},
        ]},
        {"tableId": "tblProject", "name": "项目", "fields": [
            {"fieldId": "fldName", "name": "名称", "type": "text"},
            {"fieldId": "fldLead", "name": "Lead", "type": "user"},
        ]},
        {"tableId": "tblNote", "name": "Notes", "fields": [
            {"fieldId": "fldBody", "name": "body", "type": "text"},
            {"fieldId": "fldTask", "name": "task", "type": "link", "linkTable": "tblTask"},
            {"fieldId": "fldQuote", "name": 'say "hi"', "type": "text"},
        ]},
    ],
}


def make_catalog() -> Catalog:
    catalog, findings = build_catalog(CATALOG_DOC)
    assert not findings
    return catalog


def _j(value: list[str] | None) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


TASKS: list[tuple[Any, ...]] = [
    # record_id, 标题, 状态, 标签, 项目, 负责人, 关注人, 已完成, points, 截止
    ("recT1", "写接口", "进行中", _j(["后端"]), _j(["recP1"]), "ou_ann", _j(["ou_bob"]), 0, 3,
     "2024-05-17 10:30:00"),
    ("recT2", "画页面", "完成", _j(["前端", "紧急"]), _j(["recP1", "recP2"]), "ou_bob",
     _j(["ou_ann", "ou_cat"]), 1, 5, "2024-06-01 09:00:00"),
    ("recT3", "写文档", "搁置", None, None, "ou_ann", None, 0, None, None),
    ("recT4", "修缺陷", "进行中", _j(["紧急"]), _j(["recP2"]), "ou_cat", _j([]), 0, 8,
     "2024-05-20 18:00:00"),
]
PROJECTS: list[tuple[Any, ...]] = [("recP1", "平台", "ou_ann"), ("recP2", "门户", "ou_bob")]
NOTES: list[tuple[Any, ...]] = [("recN1", "first", _j(["recT1"]), "x"),
                                ("recN2", "second", _j(["recT2"]), "y")]


def make_database(catalog: Catalog) -> sqlite3.Connection:
    """An in-memory database with one physical table per catalog table, filled with rows."""
    conn = sqlite3.connect(":memory:")
    rows = {"tblTask": TASKS, "tblProject": PROJECTS, "tblNote": NOTES}
    for table in catalog.tables:
        columns = ", ".join(f"{physical.column_name(f.field_id)} {physical.column_affinity(f)}"
                            for f in table.fields)
        name = physical.table_name(table.table_id)
        conn.execute(f"CREATE TABLE {name} (record_id TEXT PRIMARY KEY, _seq INTEGER, "
                     f"{columns})")
        for seq, row in enumerate(rows[table.table_id], start=1):
            marks = ", ".join("?" for _ in range(len(row) + 1))
            conn.execute(f"INSERT INTO {name} VALUES ({marks})", (row[0], seq, *row[1:]))
    conn.commit()
    return conn
