"""What the contracts describe: the usable declarations of a workspace, as input shapes.

Database Functions and FaaS go into one input map (both are called with named inputs from
a Page), Mutations into another; AI Functions are not part of the contracts. A declaration
whose inputs cannot be described (an unknown kind, a broken enum, a schema that is not an
object) is skipped with a reason, and the rest is still generated: `basedb check` reports
the error itself.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from basedb.contracts.schema import schema_shape
from basedb.contracts.shapes import (
    ArrayOf,
    JsonScalar,
    Obj,
    OptionRef,
    Prim,
    Prop,
    Shape,
    is_json_scalar,
    nullable,
    scalar_key,
)
from basedb.workspace.model import (
    MUTATION_PARAM_KINDS,
    PARAM_NAME_RE,
    SQL_PARAM_KINDS,
    DatabaseFunction,
    FaaS,
    FunctionKind,
    Mutation,
    Param,
    Workspace,
)

KIND_SHAPES: dict[str, Prim] = {
    "TEXT": Prim("string"),
    "DATE": Prim("string"),
    "DATETIME": Prim("string"),
    "INT": Prim("integer"),
    "NUMBER": Prim("number"),
    "BOOL": Prim("boolean"),
    "RECORD_ID": Prim("string"),
    "USER_ID": Prim("string"),
}

OptionList = tuple[tuple[str, tuple[JsonScalar, ...]], ...]


@dataclass(frozen=True, slots=True)
class FunctionInput:
    """One function's input: an object shape (or a union of them, for FaaS `oneOf`)."""

    function_id: str
    kind: FunctionKind
    description: str
    shape: Shape
    options: OptionList = ()  # (param, enum values) of params that declare an enum


@dataclass(frozen=True, slots=True)
class SkippedDeclaration:
    function_id: str
    file: str
    reason: str


@dataclass(frozen=True, slots=True)
class ContractInputs:
    database_functions: tuple[FunctionInput, ...]  # SQL and FaaS, sorted by functionId
    mutations: tuple[FunctionInput, ...]  # sorted by functionId
    skipped: tuple[SkippedDeclaration, ...]
    input_hash: str


def collect_inputs(ws: Workspace) -> ContractInputs:
    functions: list[FunctionInput] = []
    mutations: list[FunctionInput] = []
    skipped: list[SkippedDeclaration] = []
    canonical: dict[str, list[dict[str, Any]]] = {"databaseFunctions": [], "mutations": []}
    for function_id in sorted(ws.declarations):
        decl = ws.declarations[function_id]
        problem: str | None
        if isinstance(decl, DatabaseFunction):
            item, problem = _params_input(decl, decl.params, SQL_PARAM_KINDS,
                                          "database_function")
            target, group = functions, "databaseFunctions"
        elif isinstance(decl, Mutation):
            if decl.spec is None:
                item, problem = None, "its spec is invalid"
            else:
                item, problem = _params_input(decl, decl.params, MUTATION_PARAM_KINDS,
                                              "mutation")
            target, group = mutations, "mutations"
        elif isinstance(decl, FaaS):
            item, problem = _faas_input(decl)
            target, group = functions, "databaseFunctions"
        else:
            continue  # AI Functions have no contracts
        if item is None:
            skipped.append(SkippedDeclaration(function_id, decl.file, problem or "unusable"))
            continue
        target.append(item)
        canonical[group].append(_canonical(decl))
    return ContractInputs(
        database_functions=tuple(functions),
        mutations=tuple(mutations),
        skipped=tuple(skipped),
        input_hash=input_hash(canonical),
    )


def input_hash(document: Any) -> str:
    """SHA-256 of the canonical JSON of `document` (sorted keys, no whitespace, ASCII)."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _canonical(decl: DatabaseFunction | Mutation | FaaS) -> dict[str, Any]:
    out: dict[str, Any] = {"id": decl.function_id, "kind": decl.kind,
                           "description": decl.description_str}
    if isinstance(decl, FaaS):
        out["inputSchema"] = decl.input_schema
        return out
    params = []
    for p in decl.params:
        item: dict[str, Any] = {"name": p.name, "kind": p.kind, "required": p.is_required,
                                "list": p.list is True, "description": p.description_str}
        if p.has_enum:
            item["enum"] = p.enum
        params.append(item)
    out["params"] = params
    return out


def _params_input(decl: DatabaseFunction | Mutation, params: tuple[Param, ...],
                  kinds: tuple[str, ...], group: Literal["database_function", "mutation"],
                  ) -> tuple[FunctionInput | None, str | None]:
    props: list[Prop] = []
    options: list[tuple[str, tuple[JsonScalar, ...]]] = []
    seen: set[str] = set()
    for p in params:
        problem = _param_problem(p, kinds)
        if problem is None and p.name in seen:
            problem = f"param {p.name!r} is declared twice"
        if problem is not None:
            return None, problem
        name: str = p.name
        seen.add(name)
        element: Shape = KIND_SHAPES[p.element_kind]
        values = p.enum_values
        if values is not None:
            element = OptionRef(group=group, function_id=decl.function_id,
                                param=name, values=values)
            options.append((name, values))
        shape: Shape = ArrayOf(element) if p.is_array else element
        if not p.is_required:
            shape = nullable(shape)
        props.append(Prop(name=name, shape=shape, required=p.is_required,
                          description=p.description_str))
    item = FunctionInput(function_id=decl.function_id, kind=decl.kind,
                         description=decl.description_str,
                         shape=Obj(props=tuple(props), extra=None), options=tuple(options))
    return item, None


def _param_problem(p: Param, kinds: tuple[str, ...]) -> str | None:
    if not isinstance(p.name, str) or not PARAM_NAME_RE.match(p.name):
        return f"param {p.pointer} has no valid name"
    if not isinstance(p.kind, str) or p.kind not in kinds:
        return f"param {p.name!r} has an unknown kind {p.kind!r}"
    if not p.has_enum:
        return None
    values = p.enum
    if not isinstance(values, list) or not values:
        return f"the enum of param {p.name!r} is empty or not an array"
    if any(not _fits_kind(p.element_kind, v) for v in values):
        return f"the enum of param {p.name!r} has values that do not match kind {p.kind}"
    if len({scalar_key(v) for v in values}) != len(values):
        return f"the enum of param {p.name!r} repeats a value"
    return None


def _fits_kind(kind: str, value: Any) -> bool:
    if kind == "BOOL":
        return isinstance(value, bool)
    if kind == "INT":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "NUMBER":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and is_json_scalar(
            value)
    return isinstance(value, str)


def _faas_input(decl: FaaS) -> tuple[FunctionInput | None, str | None]:
    schema = decl.input_schema
    if not decl.has_input_schema:
        return None, "it has no inputSchema"
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None, "its inputSchema is not an object schema (\"type\": \"object\")"
    item = FunctionInput(function_id=decl.function_id, kind=decl.kind,
                         description=decl.description_str, shape=schema_shape(schema))
    return item, None
