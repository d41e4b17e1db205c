"""Build a `Catalog` from catalog.json (the data of the platform's Catalog envelope)."""

from __future__ import annotations

from typing import Any

from basedb.protocol.findings import Finding, pointer
from basedb.workspace.declarations import json_type
from basedb.workspace.model import FIELD_TYPES, Catalog, Field, Table

CATALOG_FILE = "catalog.json"


def build_catalog(doc: Any, *, file: str = CATALOG_FILE) -> tuple[Catalog, list[Finding]]:
    """Lenient: broken tables or fields are reported and skipped, the rest is kept."""
    findings: list[Finding] = []

    def bad(where: str, message: str, fix: str) -> None:
        findings.append(Finding("CATALOG_INVALID", message, file, where, fix=fix))

    if not isinstance(doc, dict):
        bad("", f"{file} must contain a JSON object, not {json_type(doc)}.",
            "Run `basedb catalog pull` to rewrite catalog.json from the platform.")
        return Catalog(base_token="", tables=()), findings
    base_token = doc.get("baseToken", "")
    if not isinstance(base_token, str):
        bad("/baseToken", "/baseToken must be a string.", "Run `basedb catalog pull`.")
        base_token = ""
    raw_tables = doc.get("tables")
    if not isinstance(raw_tables, list):
        bad("/tables", f"/tables must be an array, not {json_type(raw_tables)}.",
            "Run `basedb catalog pull` to rewrite catalog.json from the platform.")
        return Catalog(base_token=base_token, tables=()), findings
    tables: list[Table] = []
    seen_tables: set[str] = set()
    for ti, raw in enumerate(raw_tables):
        at = pointer("tables", ti)
        if not isinstance(raw, dict):
            bad(at, f"Table {at} must be an object.", "Run `basedb catalog pull`.")
            continue
        table_id, name = raw.get("tableId"), raw.get("name")
        if not (isinstance(table_id, str) and table_id and isinstance(name, str) and name):
            bad(at, f"Table {at} needs a string tableId and name.", "Run `basedb catalog pull`.")
            continue
        if name in seen_tables or table_id in seen_tables:
            bad(at, f"Table {name!r} ({table_id}) appears more than once.",
                "Remove the duplicate table from catalog.json or run `basedb catalog pull`.")
            continue
        seen_tables.update((name, table_id))
        fields = _fields(raw.get("fields"), ti, bad)
        tables.append(Table(table_id=table_id, name=name, fields=tuple(fields), pointer=at))
    return Catalog(base_token=base_token, tables=tuple(tables)), findings


def _fields(raw_fields: Any, ti: int, bad: Any) -> list[Field]:
    at = pointer("tables", ti, "fields")
    if not isinstance(raw_fields, list):
        bad(at, f"{at} must be an array of fields.", "Run `basedb catalog pull`.")
        return []
    fields: list[Field] = []
    seen: set[str] = set()
    for fi, raw in enumerate(raw_fields):
        fat = f"{at}/{fi}"  # an index needs no escaping; a catalog has many fields
        if not isinstance(raw, dict):
            bad(fat, f"Field {fat} must be an object.", "Run `basedb catalog pull`.")
            continue
        field_id, name, ftype = raw.get("fieldId"), raw.get("name"), raw.get("type")
        if not (isinstance(field_id, str) and field_id and isinstance(name, str) and name):
            bad(fat, f"Field {fat} needs a string fieldId and name.", "Run `basedb catalog pull`.")
            continue
        if ftype not in FIELD_TYPES:
            bad(f"{fat}/type", f"Field {name!r} has unknown type {ftype!r}; expected one of "
                f"{', '.join(FIELD_TYPES)}.", "Run `basedb catalog pull`.")
            continue
        if name in seen:
            bad(fat, f"Field {name!r} appears more than once in its table.",
                "Remove the duplicate field or run `basedb catalog pull`.")
            continue
        seen.add(name)
        options: list[str] = []
        raw_options = raw.get("options", [])
        if ftype == "select":
            if not isinstance(raw_options, list):
                bad(f"{fat}/options", f"Field {name!r} options must be an array.",
                    "Run `basedb catalog pull`.")
                raw_options = []
            for oi, opt in enumerate(raw_options):
                opt_name = opt.get("name") if isinstance(opt, dict) else opt
                if not isinstance(opt_name, str):
                    bad(f"{fat}/options/{oi}", f"Option {oi} of field {name!r} needs a "
                        "string name.", "Run `basedb catalog pull`.")
                    continue
                options.append(opt_name)
        link_table = raw.get("linkTable")
        multiple = raw.get("multiple", False)
        fields.append(Field(
            field_id=field_id,
            name=name,
            type=ftype,
            multiple=multiple is True,
            options=tuple(options),
            link_table=link_table if isinstance(link_table, str) else None,
            description=_string(raw.get("description")),
            pointer=fat,
        ))
    return fields


def catalog_to_dict(catalog: Catalog) -> dict[str, Any]:
    """The catalog.json document for a Catalog (inverse of `build_catalog`)."""
    tables = []
    for t in catalog.tables:
        fields = []
        for f in t.fields:
            doc: dict[str, Any] = {"fieldId": f.field_id, "name": f.name, "type": f.type}
            if f.type in ("select", "user"):
                doc["multiple"] = f.multiple
            if f.type == "select":
                doc["options"] = [{"name": o} for o in f.options]
            if f.type == "link" and f.link_table:
                doc["linkTable"] = f.link_table
            if f.description:
                doc["description"] = f.description
            fields.append(doc)
        tables.append({"tableId": t.table_id, "name": t.name, "fields": fields})
    return {"baseToken": catalog.base_token, "tables": tables}


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""
