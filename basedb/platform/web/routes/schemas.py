"""JSON Schema pieces shared by the route groups' OpenAPI metadata."""

from __future__ import annotations

from typing import Any

from basedb.platform.domain.bases import MAX_NAME_CHARS
from basedb.platform.web.http import QueryParam
from basedb.workspace.model import FIELD_TYPES

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
BOOLEAN: Schema = {"type": "boolean"}
INTEGER: Schema = {"type": "integer"}
STRINGS: Schema = {"type": "array", "items": STRING}
# An id or token the server looks up: never empty.
ID: Schema = {"type": "string", "minLength": 1}
IDS: Schema = {"type": "array", "items": ID}
# A name as basedb.platform.domain.bases.parse_name takes it: printable text with at
# least one non-blank character; blanks around it are trimmed.
_INNER = MAX_NAME_CHARS - 2
NAME: Schema = {"type": "string", "pattern": (
    r"^\s*(?:[^\s\x00-\x1f]|[^\s\x00-\x1f][^\x00-\x1f]{0," + str(_INNER)
    + r"}[^\s\x00-\x1f])\s*$"),
    "description": f"1 to {MAX_NAME_CHARS} printable characters (blanks around them are "
                   "trimmed)."}


def obj(properties: dict[str, Schema], required: tuple[str, ...] = (), *,
        additional: bool | Schema = False, description: str = "") -> Schema:
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = additional
    if description:
        schema["description"] = description
    return schema


def array(items: Schema, **extra: Any) -> Schema:
    return {"type": "array", "items": items, **extra}


MAX_PAGE = 200
MAX_OFFSET = 10**9

PAGE_QUERY = (
    QueryParam("offset", {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET, "default": 0},
               "How many items to skip."),
    QueryParam("limit", {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 100},
               f"Page size, at most {MAX_PAGE}."),
)

OPTION: Schema = obj({"name": NAME}, ("name",))

FIELD_BODY: Schema = obj({
    "name": {**NAME, "not": {"pattern": r"^\s*record_id\s*$"},
             "description": "Unique within the table; not `record_id` (the record id "
                            "pseudo-column's name)."},
    "type": {"type": "string", "enum": [t for t in FIELD_TYPES
                                        if t not in ("formula", "lookup")]},
    "description": STRING,
    "multiple": {**BOOLEAN, "description": "select and user fields only."},
    "options": array(OPTION, description="select fields only; replaces the whole list."),
    "link_table": {**STRING, "description": "link fields only: a table of the same Base."},
}, ("name", "type"))

FIELD: Schema = obj({
    "id": STRING, "name": STRING, "type": STRING, "description": STRING,
    "multiple": BOOLEAN, "options": array(OPTION), "link_table": STRING,
}, ("id", "name", "type"))

TABLE: Schema = obj({"id": STRING, "name": STRING,
                     "primary_field": {"type": ["string", "null"],
                                       "description": "The id of the first field."},
                     "fields": array(FIELD, description="A local extension: the table's "
                                     "fields, so one call shows the whole table.")},
                    ("id", "name", "primary_field", "fields"))

CELL: Schema = {"description": "A cell value: text string, number, select option name (a "
                "list of names when multiple), datetime \"YYYY-MM-DD HH:mm:ss\", checkbox "
                "bool, user and link [{\"id\": …}], or null to clear."}

RECORD: Schema = obj({"record_id": STRING,
                      "fields": {"type": "object", "additionalProperties": CELL,
                                 "description": "Every field by name."}},
                     ("record_id", "fields"))

CATALOG_FIELD: Schema = obj({
    "fieldId": STRING, "name": STRING, "type": STRING, "multiple": BOOLEAN,
    "options": array(OPTION), "linkTable": STRING, "description": STRING,
}, ("fieldId", "name", "type"))

CATALOG: Schema = obj({
    "baseToken": STRING,
    "tables": array(obj({"tableId": STRING, "name": STRING, "fields": array(CATALOG_FIELD)},
                        ("tableId", "name", "fields"))),
}, ("baseToken", "tables"), description="The catalog.json document of the bound tables.")
