"""What the Agent OpenAPI tells a caller about a deployed function: the list entry, and
the `function` object of a describe with its inputSchema, `parameters[]`, a request
example and the call command (upstream agent-tool-design.md "平台检查与提示")."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from basedb.check.bindings import OPTION_SUMMARY_LIMIT
from basedb.core.frozen import frozen_dataclass
from basedb.core.json_schema import merge_schemas
from basedb.core.paths import API_PREFIX
from basedb.platform.domain.function_plans import FunctionPlan
from basedb.platform.domain.param_examples import (
    schema_example,
    schema_examples,
    spec_examples,
    spec_value,
)
from basedb.platform.domain.schemas import ParamSpec, Reference, mutation_action
from basedb.protocol.codes import CALLABLE_STATUSES, SchemaStatus
from basedb.protocol.findings import pointer


@frozen_dataclass
class FunctionListItem:
    """One entry of `GET …/functions`."""

    function_id: str
    name: str
    description: str
    function_type: str
    schema_status: str
    status_hint: str | None
    internal: bool = False  # excluded from agents; shown to a manager on request
    table: str | None = None  # the main table it works on (FunctionPlan.tables)

    def to_dict(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "functionId": self.function_id, "name": self.name,
            "description": self.description, "functionType": self.function_type,
            "schemaStatus": self.schema_status, "statusHint": self.status_hint,
            "table": self.table}
        if self.internal:
            item["internal"] = True
        return item


@frozen_dataclass
class FunctionDescription:
    """The `function` object of `GET …/functions/{id}`: the list entry, and what a caller
    needs to build a call (the input schema, `parameters[]`, a request example whose
    `replacePaths` hold placeholders, and the command that sends it)."""

    item: FunctionListItem
    deployment_id: str
    action: str | None  # Mutations: lets a caller tell a delete from a create
    input_schema: Mapping[str, Any] | None
    parameters: Sequence[FunctionParameter]
    request_example: Mapping[str, Any] | None
    replace_paths: Sequence[str]
    call_command: str | None  # None while the function cannot be called
    output_schema: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = self.item.to_dict()
        out["deploymentId"] = self.deployment_id
        if self.action is not None:
            out["action"] = self.action
        out.update(inputSchema=self.input_schema,
                   parameters=[p.to_dict() for p in self.parameters],
                   requestExample=self.request_example, replacePaths=list(self.replace_paths),
                   callCommand=self.call_command)
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        return out


def list_item(plan: FunctionPlan, *, internal: bool) -> FunctionListItem:
    return FunctionListItem(
        function_id=plan.function_id, name=plan.name, description=plan.description,
        function_type=plan.kind, schema_status=plan.status, status_hint=plan.status_hint,
        internal=internal, table=plan.tables[0] if plan.tables else None)


def describe_function(plan: FunctionPlan, *, app_token: str, env: str,
                      internal: bool) -> FunctionDescription:
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
        example = {"params": {}} if plan.status == SchemaStatus.MISSING else None
    callable_now = plan.status in CALLABLE_STATUSES
    return FunctionDescription(
        item=list_item(plan, internal=internal), deployment_id=plan.deployment_id,
        action=mutation_action(plan.declaration), input_schema=schema,
        parameters=parameters, request_example=example, replace_paths=paths,
        call_command=call_command(app_token, plan.function_id, env, internal=internal)
        if callable_now else None,
        output_schema=plan.output_schema)


@frozen_dataclass
class OptionSummary:
    """The first options of the option field a param is compared with."""

    table: str
    field: str
    options: tuple[str, ...]
    truncated: bool

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "field": self.field, "options": list(self.options),
                "truncated": self.truncated}


@frozen_dataclass
class FunctionParameter:
    """One entry of a describe's `parameters[]`."""

    name: str
    type: str
    required: bool
    description: str
    enum: Sequence[Any] | None = None
    reference: Reference | None = None
    value_hint: str | None = None  # how to find a referenced id
    option_summary: OptionSummary | None = None
    examples: Sequence[Any] = ()  # values to fill it with (`param_examples`)

    def to_dict(self) -> dict[str, Any]:
        item: dict[str, Any] = {"name": self.name, "type": self.type,
                                "required": self.required, "description": self.description}
        if self.enum is not None:
            item["enum"] = list(self.enum)
        if self.reference is not None:
            item["reference"] = self.reference.to_dict()
        if self.value_hint is not None:
            item["valueHint"] = self.value_hint
        if self.option_summary is not None:
            item["optionSummary"] = self.option_summary.to_dict()
        if self.examples:
            item["examples"] = list(self.examples)
        return item


def parameters_view(specs: Sequence[ParamSpec]) -> list[FunctionParameter]:
    """`parameters[]` of a Database Function or Mutation."""
    out = []
    for spec in specs:
        summary = None
        if spec.option is not None and spec.enum is None and spec.option.options:
            options = spec.option.options
            summary = OptionSummary(spec.option.table, spec.option.field,
                                    tuple(options[:OPTION_SUMMARY_LIMIT]),
                                    len(options) > OPTION_SUMMARY_LIMIT)
        out.append(FunctionParameter(
            name=spec.name, type=spec.type_label, required=spec.required,
            description=spec.description, enum=spec.enum, reference=spec.reference,
            value_hint=spec.description if spec.reference is not None and spec.description
            else None,
            option_summary=summary, examples=_array_examples(spec)))
    return out


def schema_parameters_view(schema: Mapping[str, Any]) -> list[FunctionParameter]:
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
        description = prop.get("description")
        enum = prop.get("enum")
        out.append(FunctionParameter(
            name=name,
            type=kind if isinstance(kind, str) else "/".join(map(str, kind))
            if isinstance(kind, list) else "any",
            required=name in names,
            description=description if isinstance(description, str) else "",
            enum=enum if isinstance(enum, list) else None, examples=schema_examples(prop)))
    return out


def _array_examples(spec: ParamSpec) -> tuple[Any, ...]:
    """Examples of the whole value: a list of element examples for an array param."""
    examples = spec_examples(spec)
    if spec.is_array and examples:
        return (list(examples[:spec.max_items or len(examples)]),)
    return examples


def request_example(specs: Sequence[ParamSpec]) -> tuple[dict[str, Any], list[str]]:
    """`{"params": {…}}` with a placeholder per required param, and their JSON Pointers."""
    params = {spec.name: spec_value(spec) for spec in specs if spec.required}
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
    params = {name: schema_example(properties.get(name), name) for name in names}
    return {"params": params}, [pointer("params", name) for name in params]


def call_command(app_token: str, function_id: str, env: str, *, internal: bool) -> str:
    query: dict[str, Any] = {"env": env}
    if internal:
        query["includeInternal"] = True
    params = json.dumps(query, separators=(",", ":"))
    return (f"basedb api POST {API_PREFIX}/sites/{app_token}/functions/{function_id}/invoke "
            f"--params '{params}' --data @body.json --as user")
