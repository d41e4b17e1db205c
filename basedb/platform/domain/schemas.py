"""The schemas the platform publishes for a function: its params as `ParamSpec`s, the
generated inputSchema, and the output schema of its results (upstream agent-tool-design.md
"平台检查与提示").

Database Functions and Mutations declare params (name, kind, description, enum,
required, list); the server turns them into one named object schema: a property per
param, JSON Schema types from the kinds, arrays for `TEXT[]`-style kinds and list
params, `enum` copied, `required`, no other properties. Optional params also accept
null (missing or null both mean "not given"). A param bound to an option field without
an `enum` gets a bounded option summary in front of its description when the query or
spec proves the binding; a param that takes record or user ids keeps the author's
description as written and is marked as a `reference`. FaaS and AI Functions publish
their declared inputSchema unchanged.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any, Literal

from basedb.check.bindings import OPTION_SUMMARY_LIMIT
from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain.records import MAX_BATCH
from basedb.sql.model import ParamBinding
from basedb.workspace.model import AnyDeclaration, Catalog, Field, Mutation

# JSON Schema type of each param kind (of each element, for arrays).
KIND_TYPES: dict[str, str] = {
    "TEXT": "string", "DATE": "string", "DATETIME": "string", "INT": "integer",
    "NUMBER": "number", "BOOL": "boolean", "RECORD_ID": "string", "USER_ID": "string",
}
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
# "YYYY-MM-DD HH:mm:ss" (the Base cell format), ISO 8601 with a `T`, or a bare date.
DATETIME_PATTERN = (r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?"
                    r"(Z|[+-]\d{2}:?\d{2})?)?$")
_REFERENCE_TYPES = frozenset({"record_id", "link", "user", "created_by", "updated_by"})
MUTATION_ACTIONS = ("create", "update", "delete")


@frozen_dataclass
class OptionBinding:
    """The option field a param is compared with or written to."""

    table: str
    field: str
    options: tuple[str, ...]


@frozen_dataclass
class Reference:
    """A param whose values are ids: records of `record_table`, or users."""

    table: str
    field: str
    value: Literal["record", "user"]
    record_table: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"table": self.table, "field": self.field, "value": self.value}
        if self.record_table is not None:
            out["recordTable"] = self.record_table
        return out


@frozen_dataclass
class ParamSpec:
    """One named param of a Database Function or Mutation, as the platform uses it."""

    name: str
    kind: str  # the element kind: TEXT, INT, …, RECORD_ID, USER_ID
    is_array: bool
    required: bool
    description: str
    enum: tuple[Any, ...] | None = None
    option: OptionBinding | None = None
    reference: Reference | None = None
    max_items: int | None = None  # an array param the platform caps (a Mutation batch)
    minimum: int | None = None  # a number param the query cannot take below this (LIMIT)

    @property
    def type_label(self) -> str:
        return self.kind + "[]" if self.is_array else self.kind


def param_specs(decl: AnyDeclaration, catalog: Catalog,
                bindings: Sequence[ParamBinding] = (),
                non_negative: Collection[int] = ()) -> tuple[ParamSpec, ...]:
    """The declared params with what their bindings say about them; `non_negative` are
    the 1-based numbers of params the query uses as LIMIT or OFFSET. Only call for a
    declaration whose params all have valid names and kinds (schemaStatus ready)."""
    by_param: dict[int, list[ParamBinding]] = {}
    for binding in bindings:
        by_param.setdefault(binding.param_index, []).append(binding)
    batch = _batch_param(decl)
    specs = []
    for param in decl.params:
        found = by_param.get(param.index, [])
        option = next((OptionBinding(b.table.name, b.field.name, b.field.options)
                       for b in found if b.field.is_option), None)
        reference = next((_reference(b.table.name, b.field, catalog) for b in found
                          if b.field.type in _REFERENCE_TYPES), None)
        specs.append(ParamSpec(
            name=str(param.name), kind=param.element_kind, is_array=param.is_array,
            required=param.is_required, description=param.description_str,
            enum=param.enum_values, option=option, reference=reference,
            max_items=MAX_BATCH if param.is_array and param.name == batch else None,
            minimum=0 if param.index + 1 in non_negative and not param.is_array else None))
    return tuple(specs)


def _batch_param(decl: AnyDeclaration) -> str | None:
    """The param naming the records a Mutation updates or deletes ("$recordIds")."""
    spec = decl.spec if isinstance(decl, Mutation) else None
    record_id = spec.record_id if spec is not None else None
    if isinstance(record_id, str) and record_id.startswith("$"):
        return record_id[1:]
    return None


def _reference(table: str, field: Field, catalog: Catalog) -> Reference:
    if field.type == "record_id":
        return Reference(table, field.name, "record", table)
    if field.type == "link":
        target = catalog.table(field.link_table or "")
        return Reference(table, field.name, "record", target.name if target else None)
    return Reference(table, field.name, "user")


def schema_from_specs(decl: AnyDeclaration, specs: Iterable[ParamSpec]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for spec in specs:
        properties[spec.name] = _property_schema(spec)
        if spec.required:
            required.append(spec.name)
    schema: dict[str, Any] = {"type": "object", "title": decl.name}
    if decl.description_str:
        schema["description"] = decl.description_str
    schema["properties"] = properties
    schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _property_schema(spec: ParamSpec) -> dict[str, Any]:
    element: dict[str, Any] = {"type": KIND_TYPES[spec.kind]}
    if spec.kind == "DATE":
        element.update(format="date", pattern=DATE_PATTERN)
    elif spec.kind == "DATETIME":
        element["pattern"] = DATETIME_PATTERN
    elif spec.kind in ("RECORD_ID", "USER_ID"):
        element["minLength"] = 1
    if spec.enum is not None:
        element["enum"] = list(spec.enum)
    if spec.minimum is not None and spec.kind in ("INT", "NUMBER"):
        element["minimum"] = spec.minimum
    schema: dict[str, Any] = {"type": "array", "items": element} if spec.is_array else element
    if spec.max_items is not None:
        schema["maxItems"] = spec.max_items
    if not spec.required:
        schema["type"] = [schema["type"], "null"]
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
    schema["description"] = described(spec)
    return schema


def described(spec: ParamSpec) -> str:
    """The author's description, behind an option summary where one applies."""
    if spec.option is None or spec.enum is not None or not spec.option.options:
        return spec.description
    options = spec.option.options
    shown = ", ".join(options[:OPTION_SUMMARY_LIMIT])
    where = f"{spec.option.table}.{spec.option.field}"
    if len(options) > OPTION_SUMMARY_LIMIT:
        prefix = (f"[First {OPTION_SUMMARY_LIMIT} of {len(options)} options of {where}, "
                  f"not all of them: {shown}, …]")
    else:
        prefix = f"[Options of {where} (may change): {shown}]"
    return f"{prefix} {spec.description}".rstrip()


def mutation_action(decl: AnyDeclaration | None) -> str | None:
    """What a Mutation does to records (create, update or delete); None for other kinds."""
    if isinstance(decl, Mutation) and decl.spec is not None \
            and decl.spec.action in MUTATION_ACTIONS:
        return str(decl.spec.action)
    return None


# ------------------------------------------------------------------ output schemas


def _nullable(kind: str | list[str]) -> list[str]:
    kinds = [kind] if isinstance(kind, str) else list(kind)
    return [*kinds, "null"]


def cell_schema(field: Field | None) -> dict[str, Any]:
    """The JSON Schema of a Database Function result cell that reads `field` directly."""
    if field is None:
        return {}
    ftype = field.type
    if field.is_multi_valued:  # option names, record ids or user ids
        return {"type": ["array", "null"], "items": {"type": "string"}}
    if ftype == "number":
        return {"type": _nullable("number")}
    if ftype == "auto_number":
        return {"type": _nullable("integer")}
    if ftype == "checkbox":
        return {"type": _nullable("boolean")}
    if ftype == "attachment":
        return {"type": ["array", "null"], "items": {"type": "object"}}
    if ftype == "location":
        return {"type": _nullable("object")}
    if ftype in ("formula", "lookup"):
        return {}
    return {"type": _nullable("string")}


def query_output_schema(columns: Sequence[Any]) -> dict[str, Any]:
    """The result of a Database Function whose output columns are known."""
    row_properties = {c.name: {**cell_schema(c.field), "description": _column_origin(c)}
                      for c in columns}
    return {
        "type": "object",
        "properties": {
            "rows": {"type": "array", "items": {"type": "object",
                                                "properties": row_properties}},
            "columns": {"type": "array", "items": {
                "type": "object", "properties": {"name": {"type": "string"},
                                                 "type": {"type": "string"}},
                "required": ["name"]}},
            "rowCount": {"type": "integer"},
            "truncated": {"type": "boolean", "description": "True when more rows matched "
                          "than one call returns; narrow the parameters or page."},
        },
        "required": ["rows", "columns", "rowCount", "truncated"],
    }


def _column_origin(column: Any) -> str:
    if column.field is None or column.table is None:
        return "computed by the query"
    return f"{column.table.name}.{column.field.name} ({column.field.type})"


MUTATION_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "recordIds": {"type": "array", "items": {"type": "string"},
                      "description": "Records created, updated or deleted by this call."},
        "affected": {"type": "integer", "description": "How many records were written."},
        "record_not_found": {"type": "array", "items": {"type": "string"},
                             "description": "Requested record ids that do not exist; "
                             "nothing was written to them."},
        "ignored_fields": {"type": "array", "items": {"type": "string"},
                           "description": "Fields left unchanged because their optional "
                           "parameter was missing or null."},
        "precondition_failed": {"type": "array", "items": {"type": "string"},
                                "description": "Record ids skipped because their current "
                                "values do not meet the function's precondition."},
    },
    "required": ["recordIds", "affected", "record_not_found", "ignored_fields",
                 "precondition_failed"],
    "description": "code 0 does not mean every record was written: check record_not_found, "
                   "precondition_failed and ignored_fields.",
}
