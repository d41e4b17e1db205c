"""What the Agent OpenAPI tells a caller about a deployed function: the list entry, and
the `function` object of a describe with its inputSchema, `parameters[]`, a request
example and the call command (upstream agent-tool-design.md "平台检查与提示")."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from basedb.check.bindings import OPTION_SUMMARY_LIMIT
from basedb.core.findings import pointer
from basedb.core.json_schema import merge_schemas
from basedb.core.paths import API_PREFIX
from basedb.platform.domain.function_plans import FunctionPlan
from basedb.platform.domain.schemas import ParamSpec, mutation_action


def list_item(plan: FunctionPlan, *, internal: bool) -> dict[str, Any]:
    """One entry of `GET …/functions`."""
    item: dict[str, Any] = {
        "functionId": plan.function_id, "name": plan.name, "description": plan.description,
        "functionType": plan.kind, "schemaStatus": plan.status,
        "statusHint": plan.status_hint}
    if internal:
        item["internal"] = True  # excluded from agents; shown to a manager on request
    return item


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
