"""What the Agent OpenAPI tells a caller about a function: the generated inputSchema,
`parameters[]`, a request example and the call command (upstream agent-tool-design.md
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

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from basedb.check.bindings import OPTION_SUMMARY_LIMIT, ParamBinding
from basedb.core.findings import pointer
from basedb.core.paths import API_PREFIX
from basedb.workspace.model import AnyDeclaration, Catalog, DatabaseFunction, Field, Mutation

if TYPE_CHECKING:
    from basedb.platform.domain.function_plans import FunctionPlan

# JSON Schema type of each param kind (of each element, for arrays).
KIND_TYPES: dict[str, str] = {
    "TEXT": "string", "DATE": "string", "DATETIME": "string", "INT": "integer",
    "NUMBER": "number", "BOOL": "boolean", "RECORD_ID": "string", "USER_ID": "string",
}
# The most records one Mutation call updates or deletes (basedb.platform.domain.runtimes.mutation).
MAX_BATCH = 200
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
# "YYYY-MM-DD HH:mm:ss" (the Base cell format), ISO 8601 with a `T`, or a bare date.
DATETIME_PATTERN = (r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?"
                    r"(Z|[+-]\d{2}:?\d{2})?)?$")
_REFERENCE_TYPES = frozenset({"record_id", "link", "user", "created_by", "updated_by"})
MUTATION_ACTIONS = ("create", "update", "delete")


@dataclass(frozen=True, slots=True)
class OptionBinding:
    """The option field a param is compared with or written to."""

    table: str
    field: str
    options: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Reference:
    """A param whose values are ids: records of `record_table`, or users."""

    table: str
    field: str
    value: Literal["record", "user"]
    record_table: str | None = None


@dataclass(frozen=True, slots=True)
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

    @property
    def type_label(self) -> str:
        return self.kind + "[]" if self.is_array else self.kind


def param_specs(decl: AnyDeclaration, catalog: Catalog,
                bindings: Sequence[ParamBinding] = ()) -> tuple[ParamSpec, ...]:
    """The declared params with what their bindings say about them. Only call for a
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
            max_items=MAX_BATCH if param.is_array and param.name == batch else None))
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


# ------------------------------------------------------------------- input schema


def input_schema(decl: AnyDeclaration, catalog: Catalog, analysis: Any = None) -> dict[str, Any]:
    """The inputSchema published for a function and used to validate its calls.

    For a Database Function, `analysis` (its SqlAnalysis against `catalog`) supplies the
    bindings; without it the SQL is analysed here. FaaS and AI Functions return their
    declared schema, or `{}` (anything) when they declare none.
    """
    if isinstance(decl, DatabaseFunction):
        if analysis is None and decl.sql is not None:
            from basedb.check.sql.analysis import analyze_sql
            from basedb.check.sql.rules import declared_param_count

            analysis = analyze_sql(decl.sql, catalog, declared_param_count(decl))
        bindings = analysis.bindings if analysis is not None else ()
        return schema_from_specs(decl, param_specs(decl, catalog, bindings))
    if isinstance(decl, Mutation):
        from basedb.platform.domain.runtimes.mutation import mutation_bindings

        return schema_from_specs(decl, param_specs(decl, catalog,
                                                   mutation_bindings(decl, catalog)))
    schema = getattr(decl, "input_schema", None)
    return dict(schema) if isinstance(schema, dict) else {}


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


# ---------------------------------------------------------------- describe output


def list_item(plan: FunctionPlan, *, internal: bool) -> dict[str, Any]:
    """One entry of `GET …/functions`."""
    item: dict[str, Any] = {
        "functionId": plan.function_id, "name": plan.name, "description": plan.description,
        "functionType": plan.kind, "schemaStatus": plan.status,
        "statusHint": plan.status_hint}
    if internal:
        item["internal"] = True  # excluded from agents; shown to a manager on request
    return item


def mutation_action(decl: AnyDeclaration | None) -> str | None:
    """What a Mutation does to records (create, update or delete); None for other kinds."""
    if isinstance(decl, Mutation) and decl.spec is not None \
            and decl.spec.action in MUTATION_ACTIONS:
        return str(decl.spec.action)
    return None


def describe_function(plan: FunctionPlan, *, app_token: str, env: str,
                      internal: bool) -> dict[str, Any]:
    """The `function` object of `GET …/functions/{id}`."""
    out = list_item(plan, internal=internal)
    out["deploymentId"] = plan.deployment_id
    action = mutation_action(plan.declaration)
    if action is not None:
        out["action"] = action  # lets a caller tell a delete from a create before calling
    schema = plan.input_schema if plan.ready else None
    example: dict[str, Any] | None
    if plan.kind in ("database_function", "mutation"):
        parameters = parameters_view(plan.specs) if plan.ready else []
        example, paths = request_example(plan.specs) if plan.ready else (None, [])
    elif schema is not None:
        parameters = schema_parameters_view(schema)
        example, paths = schema_request_example(schema)
    else:  # missing: the input is whatever the description says; unavailable: nothing
        parameters, paths = [], []
        example = {"params": {}} if plan.status == "missing" else None
    out.update(inputSchema=schema, parameters=parameters, requestExample=example,
               replacePaths=paths)
    callable_now = plan.status in ("ready", "missing")
    out["callCommand"] = call_command(app_token, plan.function_id, env,
                                      internal=internal) if callable_now else None
    if plan.output_schema is not None:
        out["outputSchema"] = plan.output_schema
    return out


def parameters_view(specs: Sequence[ParamSpec]) -> list[dict[str, Any]]:
    """`parameters[]` of a Database Function or Mutation."""
    out = []
    for spec in specs:
        item: dict[str, Any] = {"name": spec.name, "type": spec.type_label,
                                "required": spec.required, "description": spec.description}
        if spec.enum is not None:
            item["enum"] = list(spec.enum)
        if spec.reference is not None:
            ref = spec.reference
            reference: dict[str, Any] = {"table": ref.table, "field": ref.field,
                                         "value": ref.value}
            if ref.record_table is not None:
                reference["recordTable"] = ref.record_table
            item["reference"] = reference
            if spec.description:
                item["valueHint"] = spec.description
        if spec.option is not None and spec.enum is None and spec.option.options:
            options = spec.option.options
            item["optionSummary"] = {
                "table": spec.option.table, "field": spec.option.field,
                "options": list(options[:OPTION_SUMMARY_LIMIT]),
                "truncated": len(options) > OPTION_SUMMARY_LIMIT}
        out.append(item)
    return out


def schema_parameters_view(schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`parameters[]` of a FaaS or AI Function: the top-level properties of its schema."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return []
    required = schema.get("required")
    names = set(required) if isinstance(required, list) else set()
    out = []
    for name, prop in properties.items():
        prop = prop if isinstance(prop, dict) else {}
        kind = prop.get("type")
        item: dict[str, Any] = {
            "name": name,
            "type": kind if isinstance(kind, str) else "/".join(map(str, kind))
            if isinstance(kind, list) else "any",
            "required": name in names,
            "description": prop.get("description") if isinstance(
                prop.get("description"), str) else ""}
        if isinstance(prop.get("enum"), list):
            item["enum"] = prop["enum"]
        out.append(item)
    return out


def placeholder(spec: ParamSpec) -> Any:
    """A value of the right shape that a caller must replace."""
    value: Any
    if spec.enum:
        value = spec.enum[0]
    elif spec.reference is not None or spec.kind in ("RECORD_ID", "USER_ID"):
        is_user = spec.kind == "USER_ID" or (spec.reference is not None
                                             and spec.reference.value == "user")
        value = "ou_example" if is_user else "recExample"
    else:
        value = {"TEXT": f"<{spec.name}>", "INT": 0, "NUMBER": 0, "BOOL": False,
                 "DATE": "2025-01-31", "DATETIME": "2025-01-31 09:00:00"}[spec.kind]
    return [value] if spec.is_array else value


def request_example(specs: Sequence[ParamSpec]) -> tuple[dict[str, Any], list[str]]:
    """`{"params": {…}}` with a placeholder per required param, and their JSON Pointers."""
    params = {spec.name: placeholder(spec) for spec in specs if spec.required}
    return {"params": params}, [pointer("params", name) for name in params]


def schema_request_example(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The same for a declared JSON Schema: its required top-level properties, with the
    first `oneOf`/`anyOf` branch's requirements (a conditional schema's first case)."""
    from basedb.contracts.schema import merge_schemas

    merged: Mapping[str, Any] = schema
    for key in ("oneOf", "anyOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches and isinstance(branches[0], dict):
            merged = merge_schemas({k: v for k, v in schema.items() if k != key}, branches[0])
            break
    properties = merged.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = merged.get("required")
    names = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
    params = {name: _schema_placeholder(name, properties.get(name)) for name in names}
    return {"params": params}, [pointer("params", name) for name in params]


def _schema_placeholder(name: str, schema: Any) -> Any:
    if not isinstance(schema, dict):
        return f"<{name}>"
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    return {"integer": 0, "number": 0, "boolean": False, "array": [], "object": {},
            "null": None}.get(str(kind), f"<{name}>")


def call_command(app_token: str, function_id: str, env: str, *, internal: bool) -> str:
    query: dict[str, Any] = {"env": env}
    if internal:
        query["includeInternal"] = True
    params = json.dumps(query, separators=(",", ":"))
    return (f"basedb api POST {API_PREFIX}/sites/{app_token}/functions/{function_id}/invoke "
            f"--params '{params}' --data @body.json --as user")


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
