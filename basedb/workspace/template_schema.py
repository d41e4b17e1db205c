"""The Base a template needs: `_template.json` (tables, fields and sample records).

`_template.json` is not part of the workspace; `basedb init` uses it to create the Base
(or, with no platform, to derive a placeholder catalog)::

    {"title": "团队休假报备",
     "tables": [{"name": "报备周期",
                 "fields": [{"name": "状态", "type": "select", "options": ["开放", "已关闭"]},
                            {"name": "周期", "type": "link", "linkTable": "报备周期"}, …]}],
     "records": {"报备周期": [{"_key": "p1", "标题": "2027 春节报备", …}],
                 "休假填报": [{"周期": ["p1"], …}]}}

Record values use the cell encodings of the Open API, with two exceptions, because the
ids they would hold do not exist before the Base does:

- a link names records of its target table by the `_key` given to them here;
- a user field names a user as `"@current_user"` (whoever runs `basedb init`) or
  `"@user:<name>"` (a sample colleague: a provisioner creates such users where it can,
  as on the local platform, and otherwise leaves the cell empty).

Read-only fields (created_by, …) take no values: the platform fills them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

from basedb.core.errors import InputError
from basedb.core.frozen import frozen_dataclass
from basedb.protocol.findings import pointer
from basedb.workspace import files
from basedb.workspace.declarations import json_type
from basedb.workspace.model import FIELD_TYPES, READ_ONLY_FIELD_TYPES

CURRENT_USER = "@current_user"
USER_REFERENCE_PREFIX = "@user:"
RECORD_KEY = "_key"
DATETIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d")
# Types a sample record may give a value; the rest are read-only or have no sample form.
_FIELD_KEYS = frozenset({"name", "type", "multiple", "options", "linkTable", "description"})
_WRITABLE_SAMPLE_TYPES = frozenset(
    {"text", "number", "select", "datetime", "checkbox", "user", "link"})


@frozen_dataclass
class TemplateField:
    name: str
    type: str
    multiple: bool = False
    options: tuple[str, ...] = ()
    link_table: str | None = None  # the *name* of another table of the template
    description: str = ""


@frozen_dataclass
class TemplateTable:
    name: str
    fields: tuple[TemplateField, ...]

    def field(self, name: str) -> TemplateField | None:
        return next((f for f in self.fields if f.name == name), None)


@frozen_dataclass
class SampleRecord:
    key: str | None  # the `_key` links use to name this record
    values: Mapping[str, Any]  # field name -> value, `_key` removed


@frozen_dataclass
class TemplateSchema:
    title: str
    tables: tuple[TemplateTable, ...]
    records: Mapping[str, tuple[SampleRecord, ...]]  # table name -> sample records

    def table(self, name: str) -> TemplateTable | None:
        return next((t for t in self.tables if t.name == name), None)

    def records_of(self, table_name: str) -> tuple[SampleRecord, ...]:
        return self.records.get(table_name, ())

    def sample_user_names(self) -> list[str]:
        """Names of the `"@user:<name>"` users the sample records refer to, sorted."""
        names: set[str] = set()
        for table in self.tables:
            user_fields = [f.name for f in table.fields if f.type == "user"]
            for record in self.records_of(table.name):
                for field_name in user_fields:
                    value = record.values.get(field_name)
                    for item in value if isinstance(value, list) else [value]:
                        name = user_reference_name(item)
                        if name:
                            names.add(name)
        return sorted(names)


def user_reference_name(value: Any) -> str | None:
    """The name in a `"@user:<name>"` sample value, or None for anything else."""
    if isinstance(value, str) and value.startswith(USER_REFERENCE_PREFIX):
        return value[len(USER_REFERENCE_PREFIX):].strip() or None
    return None


def load_template_schema(path: Path) -> TemplateSchema:
    """Read and validate a `_template.json`; InputError names the file and pointer."""
    label = str(path)
    try:
        doc = files.read_json(path, label=label, limit=files.LIMIT_CATALOG)
    except files.FileProblem as problem:
        raise InputError(problem.message, code="TEMPLATE_INVALID", hint=problem.fix) from None
    return parse_template_schema(doc, label=label)


def parse_template_schema(doc: Any, *, label: str = "_template.json") -> TemplateSchema:
    """Validate a parsed `_template.json` document and build its `TemplateSchema`."""
    if not isinstance(doc, dict):
        _invalid(label, "", f"must be an object, not {json_type(doc)}")
    title = doc.get("title")
    if not isinstance(title, str) or not title.strip():
        _invalid(label, "/title", "must be a non-empty string")
    raw_tables = doc.get("tables")
    if not isinstance(raw_tables, list) or not raw_tables:
        _invalid(label, "/tables", "must be a non-empty array of tables")
    tables = [_table(raw, ti, label) for ti, raw in enumerate(raw_tables)]
    names = [t.name for t in tables]
    for ti, table in enumerate(tables):
        if table.name in names[:ti]:
            _invalid(label, pointer("tables", ti, "name"),
                     f"repeats the table name {table.name!r}")
        for fi, f in enumerate(table.fields):
            if f.type == "link" and f.link_table not in names:
                _invalid(label, pointer("tables", ti, "fields", fi, "linkTable"),
                         f"names table {f.link_table!r}, which the template does not define "
                         f"(tables: {', '.join(names)})")
    schema = TemplateSchema(title=title.strip(), tables=tuple(tables), records={})
    records = _records(doc.get("records", {}), schema, label)
    return TemplateSchema(title=schema.title, tables=schema.tables, records=records)


def _invalid(label: str, where: str, problem: str) -> NoReturn:
    at = where or "the document"
    raise InputError(f"{label}: {at} {problem}.", code="TEMPLATE_INVALID",
                     hint=f"Fix {at} in {label}.")


def _table(raw: Any, ti: int, label: str) -> TemplateTable:
    at = pointer("tables", ti)
    if not isinstance(raw, dict):
        _invalid(label, at, f"must be an object, not {json_type(raw)}")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        _invalid(label, f"{at}/name", "must be a non-empty string")
    raw_fields = raw.get("fields")
    if not isinstance(raw_fields, list) or not raw_fields:
        _invalid(label, f"{at}/fields", "must be a non-empty array of fields")
    fields: list[TemplateField] = []
    for fi, raw_field in enumerate(raw_fields):
        f = _field(raw_field, pointer("tables", ti, "fields", fi), label)
        if f.name in {g.name for g in fields}:
            _invalid(label, pointer("tables", ti, "fields", fi, "name"),
                     f"repeats the field name {f.name!r} of table {name!r}")
        fields.append(f)
    return TemplateTable(name=name, fields=tuple(fields))


def _field(raw: Any, at: str, label: str) -> TemplateField:
    if not isinstance(raw, dict):
        _invalid(label, at, f"must be an object, not {json_type(raw)}")
    name, ftype = raw.get("name"), raw.get("type")
    if not isinstance(name, str) or not name.strip():
        _invalid(label, f"{at}/name", "must be a non-empty string")
    if name == "record_id":
        _invalid(label, f"{at}/name", "must not be record_id, the pseudo-column every "
                 "table already has")
    if ftype not in FIELD_TYPES:
        _invalid(label, f"{at}/type", f"is {ftype!r}; expected one of {', '.join(FIELD_TYPES)}")
    multiple = raw.get("multiple", False)
    if not isinstance(multiple, bool):
        _invalid(label, f"{at}/multiple", "must be true or false")
    options: list[str] = []
    if ftype == "select":
        raw_options = raw.get("options")
        if not isinstance(raw_options, list) or not raw_options:
            _invalid(label, f"{at}/options", "must be a non-empty array of option names")
        for oi, option in enumerate(raw_options):
            if not isinstance(option, str) or not option.strip() or option in options:
                _invalid(label, f"{at}/options/{oi}",
                         "must be a non-empty option name that appears once")
            options.append(option)
    elif "options" in raw:
        _invalid(label, f"{at}/options", f"is only allowed on select fields, not {ftype}")
    link_table = raw.get("linkTable")
    if ftype == "link":
        if not isinstance(link_table, str) or not link_table:
            _invalid(label, f"{at}/linkTable", "must name the linked table")
    elif link_table is not None:
        _invalid(label, f"{at}/linkTable", f"is only allowed on link fields, not {ftype}")
    description = raw.get("description", "")
    if not isinstance(description, str):
        _invalid(label, f"{at}/description", "must be a string")
    unknown = sorted(set(raw) - _FIELD_KEYS)
    if unknown:
        _invalid(label, f"{at}/{unknown[0]}", "is not a field property (a field has "
                 f"{', '.join(sorted(_FIELD_KEYS))})")
    return TemplateField(name=name, type=ftype, multiple=multiple, options=tuple(options),
                         link_table=link_table if ftype == "link" else None,
                         description=description)


def _records(raw: Any, schema: TemplateSchema, label: str,
             ) -> dict[str, tuple[SampleRecord, ...]]:
    if not isinstance(raw, dict):
        _invalid(label, "/records", f"must be an object keyed by table name, not {json_type(raw)}")
    parsed: list[tuple[TemplateTable, tuple[SampleRecord, ...]]] = []
    keys: dict[str, set[str]] = {}
    for table_name, rows in raw.items():
        at = pointer("records", table_name)
        table = schema.table(table_name)
        if table is None:
            _invalid(label, at, f"names table {table_name!r}, which the template does not "
                     "define")
        if not isinstance(rows, list):
            _invalid(label, at, f"must be an array of records, not {json_type(rows)}")
        records: list[SampleRecord] = []
        seen: set[str] = set()
        for ri, row in enumerate(rows):
            rat = pointer("records", table_name, ri)
            if not isinstance(row, dict):
                _invalid(label, rat, f"must be an object, not {json_type(row)}")
            key = row.get(RECORD_KEY)
            if key is not None and (not isinstance(key, str) or not key or key in seen):
                _invalid(label, f"{rat}/{RECORD_KEY}",
                         "must be a non-empty string that no other record of the table uses")
            if key is not None:
                seen.add(key)
            records.append(SampleRecord(
                key=key, values={k: v for k, v in row.items() if k != RECORD_KEY}))
        keys[table_name] = seen
        parsed.append((table, tuple(records)))
    # Values are judged once every table's keys are known, so links may point forward.
    for table, records_ in parsed:
        for ri, record in enumerate(records_):
            for field_name, value in record.values.items():
                at = pointer("records", table.name, ri, field_name)
                field = table.field(field_name)
                if field is None:
                    _invalid(label, at, f"names field {field_name!r}, which table "
                             f"{table.name!r} does not have")
                problem = _value_problem(field, value, keys)
                if problem:
                    _invalid(label, at, problem)
    return {table.name: records_ for table, records_ in parsed}


def _value_problem(field: TemplateField, value: Any, keys: Mapping[str, set[str]]) -> str:
    """Why `value` cannot be a sample value of `field`, or "" when it can."""
    if field.type in READ_ONLY_FIELD_TYPES:
        return f"sets {field.type} field {field.name!r}, which the platform fills itself"
    if field.type not in _WRITABLE_SAMPLE_TYPES:
        return f"sets a {field.type} field, which sample records do not support"
    if value is None:
        return ""
    many = field.type == "link" or (field.type in ("select", "user") and field.multiple)
    if many:
        if not isinstance(value, list):
            return f"must be an array for a multi-valued {field.type} field"
        items = value
    elif isinstance(value, list):
        return f"must be a single value: {field.type} field {field.name!r} is not multiple"
    else:
        items = [value]
    for item in items:
        problem = _item_problem(field, item, keys)
        if problem:
            return problem
    return ""


def _item_problem(field: TemplateField, item: Any, keys: Mapping[str, set[str]]) -> str:
    ftype = field.type
    if ftype == "text" and not isinstance(item, str):
        return f"must be a string, not {json_type(item)}"
    if ftype == "number" and (isinstance(item, bool) or not isinstance(item, (int, float))):
        return f"must be a number, not {json_type(item)}"
    if ftype == "checkbox" and not isinstance(item, bool):
        return f"must be true or false, not {json_type(item)}"
    if ftype == "select" and item not in field.options:
        return f"is {item!r}, not an option of {field.name!r} ({', '.join(field.options)})"
    if ftype == "datetime" and not _is_datetime(item):
        return f"is {item!r}; use \"YYYY-MM-DD HH:MM:SS\" or \"YYYY-MM-DD\""
    if ftype == "user" and item != CURRENT_USER and user_reference_name(item) is None:
        return (f"is {item!r}; a sample user is {CURRENT_USER!r} or "
                f"\"{USER_REFERENCE_PREFIX}<name>\" (real user ids do not exist yet)")
    if ftype == "link":
        target = field.link_table or ""
        if not isinstance(item, str) or item not in keys.get(target, set()):
            return (f"links to {item!r}, which is not the {RECORD_KEY} of a record of table "
                    f"{target!r}")
    return ""


def _is_datetime(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    for fmt in DATETIME_FORMATS:
        try:
            datetime.strptime(value, fmt)
        except ValueError:
            continue
        return True
    return False
