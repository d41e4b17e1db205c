"""A representative workspace for the contracts tests: every param kind, enums on SQL and
Mutation params, upstream's FaaS `oneOf` example, and a FaaS schema that uses nested objects,
local `$ref`s, `anyOf`/`allOf`, `additionalProperties` and awkward property names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit._builders import catalog, field, table, write_workspace

INTENTS = ["不休假", "需要休假"]


def _param(name: str, kind: str, description: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "kind": kind, "description": description, **extra}


DATABASE_FUNCTIONS: dict[str, Any] = {
    "listLeaveByIntent": {
        "name": "listLeaveByIntent",
        "description": ("按休假意向筛选全部填报。要看某个报备周期的全部填报时改用 "
                        "listTeamLeave（只读）"),
        "meta": {"params": [
            _param("intentName", "TEXT", "本次报备的休假意向，按用户明确选择填写", enum=INTENTS),
        ]},
    },
    "listTeamLeave": {
        "name": "listTeamLeave",
        "description": "查看指定报备周期的团队休假填报；按意向筛选时改用 listLeaveByIntent（只读）",
        "meta": {"params": [
            _param("periodId", "TEXT",
                   "报备周期记录ID；先调用 listPeriods，从返回 rows[].period_id 选择"),
            _param("offset", "INT", "跳过的记录数，第一页传 0，每页固定 200 条", required=False),
        ]},
    },
    "searchLeave": {
        "name": "searchLeave",
        "description": "Search leave requests by several optional filters.\nRead-only.",
        "meta": {"params": [
            _param("keywords", "TEXT[]", "Words that must all appear in the title", required=False),
            _param("minDays", "NUMBER", "Only requests of at least this many days", required=False),
            _param("includeClosed", "BOOL", "Whether closed periods count */ too"),
            _param("from", "DATE", "First day, YYYY-MM-DD"),
            _param("until", "DATETIME", "Last moment, YYYY-MM-DD HH:mm:ss", required=False),
            _param("levels", "INT[]", "Approval levels to include", enum=[1, 2, 3]),
            _param("ratio", "NUMBER", "Share of the period taken", enum=[0.5, 1]),
            _param("statuses", "TEXT[]", "Statuses to include", enum=["open", "closed"],
                   required=False),
        ]},
    },
    "countAll": {"name": "countAll", "description": "Counts every leave request; no input.",
                 "meta": {"params": []}},
}

MUTATIONS: dict[str, Any] = {
    "createLeave": {
        "name": "createLeave",
        "description": "Create one leave request for the caller.",
        "spec": {
            "table": "Leave", "action": "create",
            "params": [
                _param("title", "TEXT", "Short title shown in the team list"),
                _param("intent", "TEXT", "Leave intent chosen by the user", enum=INTENTS),
                _param("days", "NUMBER", "Number of days; missing or null skips the field",
                       required=False),
                _param("owner", "USER_ID", "User id of the person on leave"),
            ],
            "set": {"Name": "$title", "Intent": "$intent", "Days": "$days", "Owner": "$owner"},
        },
    },
    "updateLeave": {
        "name": "updateLeave",
        "description": "Change the remark of one leave request.",
        "spec": {
            "table": "Leave", "action": "update", "recordId": "$recordId",
            "params": [
                _param("recordId", "RECORD_ID", "Leave record id from listTeamLeave rows[].id"),
                _param("remark", "TEXT", "New remark; missing or null keeps the old one",
                       required=False),
            ],
            "set": {"Remark": "$remark"},
        },
    },
    "deleteLeaves": {
        "name": "deleteLeaves",
        "description": "Delete several leave requests at once.",
        "spec": {
            "table": "Leave", "action": "delete", "recordId": "$recordIds",
            "params": [
                _param("recordIds", "RECORD_ID", "Record ids from listTeamLeave", list=True),
                _param("reasons", "TEXT", "Why they are deleted", list=True,
                       enum=["duplicate", "mistake"], required=False),
            ],
        },
    },
}

MANAGE_PERIOD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "创建报备周期或关闭已有周期",
    "properties": {
        "action": {"type": "string", "enum": ["create", "close"],
                   "description": "create 创建周期；close 关闭指定周期的填报"},
        "title": {"type": "string", "minLength": 1,
                  "description": "create 时必填，报备周期的业务名称"},
        "start": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$",
                  "description": "create 时必填，开始日期 YYYY-MM-DD，按站点时区解释"},
        "end": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$",
                "description": "create 时必填，结束日期不早于开始日期，单期最多 180 天"},
        "periodId": {"type": "string",
                     "description": ("close 时必填；先调用 listPeriods，"
                                     "从 rows[].period_id 选择记录 ID")},
    },
    "required": ["action"],
    "additionalProperties": False,
    "oneOf": [
        {"type": "object", "properties": {"action": {"type": "string", "enum": ["create"]}},
         "required": ["title", "start", "end"]},
        {"type": "object", "properties": {"action": {"type": "string", "enum": ["close"]}},
         "required": ["periodId"]},
    ],
}

IMPORT_ROWS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "row": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "description": "Row title"},
                "days": {"type": ["number", "null"], "description": "Days, or null"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["title"],
            "additionalProperties": False,
        },
        "node": {
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        },
    },
    "properties": {
        "rows": {"type": "array", "items": {"$ref": "#/$defs/row"},
                 "description": "Rows to import; at most 200"},
        "mode": {"const": "append", "description": "Only appending is supported"},
        "target": {"anyOf": [{"type": "string"}, {"type": "integer"}],
                   "description": "Table name or index"},
        "options": {
            "description": "Import options.\nUnknown keys are rejected.",
            "allOf": [
                {"type": "object", "properties": {"dryRun": {"type": "boolean"}},
                 "required": ["dryRun"]},
                {"type": "object", "properties": {"batchSize": {"type": "integer"}}},
            ],
            "additionalProperties": False,
        },
        "labels": {"type": "object", "additionalProperties": {"type": "string"},
                   "description": "Free labels, name to value"},
        "meta-data": {"type": "object", "properties": {"source": {"type": "string"}},
                      "additionalProperties": {"type": "number"},
                      "description": "Where the rows come from"},
        "tree": {"$ref": "#/$defs/node", "description": "A recursive structure"},
        "class": {"type": "string", "description": "A key that is a keyword in Python"},
    },
    "required": ["rows", "mode"],
}


def write_representative_workspace(root: Path) -> Path:
    functions: dict[str, Any] = {}
    functions.update({f"database-functions/{k}": v for k, v in DATABASE_FUNCTIONS.items()})
    functions.update({f"mutations/{k}": v for k, v in MUTATIONS.items()})
    functions["faas/managePeriod"] = {"name": "managePeriod",
                                      "description": "创建报备周期或关闭已有周期",
                                      "inputSchema": MANAGE_PERIOD_SCHEMA}
    functions["faas/importRows"] = {"name": "importRows",
                                    "description": "Import leave rows from a spreadsheet.",
                                    "inputSchema": IMPORT_ROWS_SCHEMA}
    functions["ai/summarize"] = {"name": "summarize", "description": "Summarise leave.",
                                 "capability": "text", "prompt": "Summarise {{rows}}"}
    return write_workspace(
        root,
        catalog=catalog(table(
            "Leave",
            field("Name", "text"), field("Intent", "select", options=INTENTS),
            field("Days", "number"), field("Owner", "user"), field("Remark", "text"),
        )),
        functions=functions,
    )
