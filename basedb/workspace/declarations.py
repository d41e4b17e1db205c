"""Build declaration objects from parsed function.json documents.

Used by the workspace loader (documents read from disk) and by the local platform (the
same documents received in a draft upload), so both judge declarations identically.
Only structure is judged here (DECLARATION_INVALID); the meaning of names, kinds,
descriptions and enums is left to `basedb.check`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from basedb.protocol.findings import Finding, pointer
from basedb.workspace.model import (
    KIND_DIRS,
    AIFunction,
    AnyDeclaration,
    DatabaseFunction,
    FaaS,
    FunctionKind,
    Mutation,
    MutationSpec,
    Param,
)

MUTATION_ACTIONS = ("create", "update", "delete")
FAAS_MAX_TIMEOUT_MS = 120_000


def declaration_file(kind: FunctionKind, function_id: str) -> str:
    return f"{KIND_DIRS[kind]}/{function_id}/function.json"


def sql_file(function_id: str) -> str:
    return f"{KIND_DIRS['database_function']}/{function_id}/main.sql"


def handler_file(function_id: str) -> str:
    return f"{KIND_DIRS['faas']}/{function_id}/index.mjs"


class _Collector:
    def __init__(self, function_id: str, file: str) -> None:
        self.function_id = function_id
        self.file = file
        self.findings: list[Finding] = []

    def invalid(self, where: str, message: str, fix: str) -> None:
        self.findings.append(Finding(
            "DECLARATION_INVALID", message, self.file, where, self.function_id, fix))


def _params(doc: Any, at: tuple[str, ...], c: _Collector, *, allow_list: bool) -> tuple[Param, ...]:
    if doc is None:
        return ()
    where = pointer(*at)
    if not isinstance(doc, list):
        c.invalid(where, f"{where} must be an array of parameter objects, "
                  f"not {_json_type(doc)}.",
                  "Write params as [{\"name\": …, \"kind\": …, \"description\": …}, …].")
        return ()
    out: list[Param] = []
    for i, item in enumerate(doc):
        p = pointer(*at, i)
        if not isinstance(item, dict):
            c.invalid(p, f"Parameter {p} must be an object, not {_json_type(item)}.",
                      "Declare each parameter as {\"name\", \"kind\", \"description\"}.")
            continue
        required = item.get("required", True)
        if not isinstance(required, bool):
            c.invalid(f"{p}/required", f"{p}/required must be true or false.",
                      "Set required to a boolean, or leave it out (defaults to true).")
            required = True
        is_list = item.get("list", False) if allow_list else False
        if allow_list and not isinstance(is_list, bool):
            c.invalid(f"{p}/list", f"{p}/list must be true or false.",
                      "Set list to a boolean, or leave it out (defaults to false).")
            is_list = False
        out.append(Param(
            index=i,
            pointer=p,
            name=item.get("name"),
            kind=item.get("kind"),
            description=item.get("description"),
            enum=item.get("enum"),
            has_enum="enum" in item,
            required=required,
            list=is_list,
            unknown=tuple((key, value) for key, value in item.items() if key not in _PARAM_KEYS),
        ))
    return tuple(out)


# The keys a parameter declaration may have (Database Function and Mutation params).
_PARAM_KEYS = frozenset({"name", "kind", "description", "enum", "required", "list"})


class _Header(NamedTuple):
    """What every declaration has, whatever its kind."""

    name: str
    description: str | None


def _begin(kind: FunctionKind, function_id: str, doc: Any,
           ) -> tuple[_Collector, _Header | None]:
    """The findings collector of one declaration, and its header (None when the document
    is not an object, so that nothing else can be read from it)."""
    c = _Collector(function_id, declaration_file(kind, function_id))
    if not isinstance(doc, dict):
        c.invalid("", f"{c.file} must contain a JSON object, not {_json_type(doc)}.",
                  "Write the declaration as {\"name\": …, \"description\": …, …}.")
        return c, None
    name = doc.get("name", function_id)
    if not isinstance(name, str) or not name.strip():
        c.invalid("/name", "/name must be a non-empty string.",
                  f"Set \"name\" to the function's stable name, usually {function_id!r}.")
        name = function_id
    description = doc.get("description")
    if description is not None and not isinstance(description, str):
        c.invalid("/description", "/description must be a string.",
                  "Describe what the function does, when to use it and when not to.")
        description = None
    return c, _Header(name, description)


def build_database_function(function_id: str, doc: Any, sql: str | None,
                            ) -> tuple[DatabaseFunction | None, list[Finding]]:
    c, header = _begin("database_function", function_id, doc)
    if header is None:
        return None, c.findings
    meta = doc.get("meta", {})
    params: tuple[Param, ...] = ()
    if not isinstance(meta, dict):
        c.invalid("/meta", f"/meta must be an object, not {_json_type(meta)}.",
                  "Write meta as {\"params\": [...]}.")
    else:
        params = _params(meta.get("params"), ("meta", "params"), c, allow_list=False)
    decl = DatabaseFunction(
        function_id=function_id, kind="database_function", file=c.file, name=header.name,
        description=header.description, raw=doc, sql=sql, sql_file=sql_file(function_id),
        declared_params=params,
    )
    return decl, c.findings


def build_mutation(function_id: str, doc: Any) -> tuple[Mutation | None, list[Finding]]:
    c, header = _begin("mutation", function_id, doc)
    if header is None:
        return None, c.findings
    raw_spec = doc.get("spec")
    spec: MutationSpec | None = None
    as_written: MutationSpec | None = None
    if not isinstance(raw_spec, dict):
        c.invalid("/spec", "/spec is missing or not an object.",
                  "Declare {\"spec\": {\"table\", \"action\", \"params\", \"set\", …}}.")
    else:
        spec, as_written = _mutation_spec(raw_spec, c)
    decl = Mutation(function_id=function_id, kind="mutation", file=c.file, name=header.name,
                    description=header.description, raw=doc, spec=spec,
                    spec_as_written=as_written)
    return decl, c.findings


def _mutation_spec(raw: Mapping[str, Any], c: _Collector,
                   ) -> tuple[MutationSpec | None, MutationSpec]:
    """The spec when its structure is valid (else None), and what could be read of it.

    Each rule judges one key on its own: a rule that depends on the action (recordId,
    set on a delete) is only judged when the action is one of the three, so a wrong
    action is reported once, not followed by messages that assume another action.
    """
    ok = True
    table = raw.get("table")
    if not isinstance(table, str) or not table:
        c.invalid("/spec/table", "/spec/table must be the name of a bound table.",
                  "Set spec.table to a table name from catalog.json.")
        ok = False
    action = raw.get("action")
    if action not in MUTATION_ACTIONS:
        c.invalid("/spec/action", f"/spec/action is {_shown(action)}; it must be one of "
                  f"{', '.join(MUTATION_ACTIONS)}.", "Set spec.action to create, update or delete"
                  f"{_action_advice(action)}.")
        ok = False
    mappings: dict[str, Mapping[str, Any]] = {}
    for key in ("set", "precondition", "clear"):
        value = raw.get(key, {})
        if not isinstance(value, dict):
            c.invalid(f"/spec/{key}", f"/spec/{key} must be an object mapping field names to "
                      f"values, not {_json_type(value)}.", f"Write spec.{key} as {{\"field\": …}}.")
            ok = False
            value = {}
        mappings[key] = value
    record_id = raw.get("recordId")
    if action in ("update", "delete"):
        if not (isinstance(record_id, str) and record_id.startswith("$")):
            article = "An" if action == "update" else "A"
            c.invalid("/spec/recordId", f"{article} {action} mutation needs /spec/recordId set "
                      "to a \"$param\" reference.", "Set spec.recordId to \"$recordId\" and "
                      "declare that param with kind RECORD_ID (list: true for a batch).")
            ok = False
    elif action == "create" and record_id is not None:
        c.invalid("/spec/recordId", "A create mutation must not set /spec/recordId.",
                  "Remove spec.recordId, or change the action to update or delete.")
        ok = False
    if action == "delete" and mappings["set"]:
        c.invalid("/spec/set", "A delete mutation must not set fields.",
                  "Remove spec.set from the delete mutation.")
        ok = False
    params = _params(raw.get("params"), ("spec", "params"), c, allow_list=True)
    as_written = MutationSpec(table=table if isinstance(table, str) and table else None,
                              action=action if action in MUTATION_ACTIONS else None,
                              params=params, set=mappings["set"], record_id=record_id,
                              precondition=mappings["precondition"], clear=mappings["clear"])
    return (as_written if ok else None), as_written


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else _json_type(value)


def _action_advice(action: Any) -> str:
    """Which action someone writing `action` wants: an upsert is an update of a record
    that exists, or a create of one that does not."""
    if isinstance(action, str) and action.strip().lower() in ("upsert", "save", "merge"):
        return ("; an upsert is two Mutations (update with recordId, create without), or "
                "one FaaS that decides")
    if isinstance(action, str) and action.strip().lower() in MUTATION_ACTIONS:
        return f" (lower case: {action.strip().lower()!r})"
    return ""


def build_faas(function_id: str, doc: Any, *, has_handler: bool,
               ) -> tuple[FaaS | None, list[Finding]]:
    c, header = _begin("faas", function_id, doc)
    if header is None:
        return None, c.findings
    timeout = doc.get("timeoutMs")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int)
        or not 1 <= timeout <= FAAS_MAX_TIMEOUT_MS
    ):
        c.invalid("/timeoutMs", f"/timeoutMs is {timeout!r}; it must be an integer from 1 to "
                  f"{FAAS_MAX_TIMEOUT_MS}.", "Set timeoutMs in milliseconds, or leave it out.")
        timeout = None
    if not has_handler:
        c.invalid("", f"{handler_file(function_id)} does not exist.",
                  "Add index.mjs exporting `default async function (input, ctx)`.")
    network = doc.get("network")
    allow: Any = []
    if network is not None:
        allow = network.get("allow", []) if isinstance(network, dict) else None
        if not isinstance(network, dict) or set(network) - {"allow"}:
            c.invalid("/network", "/network must be an object with one key, \"allow\".",
                      'Write "network": {"allow": ["api.example.com"]}, or leave it out.')
            allow = []
    if not isinstance(allow, list) or not all(isinstance(h, str) for h in allow):
        c.invalid("/network/allow", "/network/allow must be an array of host names.",
                  'Write "allow": ["api.example.com", "*.example.org"].')
        allow = []
    secret_names = doc.get("secrets", [])
    if not isinstance(secret_names, list) or not all(isinstance(n, str) for n in secret_names):
        c.invalid("/secrets", "/secrets must be an array of environment variable names.",
                  'Write "secrets": ["STRIPE_API_KEY"]; set the values with `basedb secrets '
                  'set`.')
        secret_names = []
    decl = FaaS(function_id=function_id, kind="faas", file=c.file, name=header.name,
                description=header.description, raw=doc, input_schema=doc.get("inputSchema"),
                has_input_schema="inputSchema" in doc, timeout_ms=timeout,
                handler_file=handler_file(function_id), has_handler=has_handler,
                network_allow=tuple(allow), secrets=tuple(secret_names))
    return decl, c.findings


def build_ai_function(key: str, doc: Any) -> tuple[AIFunction | None, list[Finding]]:
    c, header = _begin("ai_function", key, doc)
    if header is None:
        return None, c.findings
    for name in ("capability", "prompt"):
        if not isinstance(doc.get(name), str) or not doc[name].strip():
            c.invalid(f"/{name}", f"/{name} must be a non-empty string.",
                      f"Set \"{name}\" in the AI Function draft.")
    schema = doc.get("inputSchema")
    if schema is not None and not isinstance(schema, dict):
        c.invalid("/inputSchema", "/inputSchema must be a JSON Schema object.",
                  "Write inputSchema as {\"type\": \"object\", \"properties\": {…}}.")
    decl = AIFunction(function_id=key, kind="ai_function", file=c.file, name=header.name,
                      description=header.description, raw=doc, capability=doc.get("capability"),
                      prompt=doc.get("prompt"), input_schema=schema)
    return decl, c.findings


def build_declaration(kind: FunctionKind, function_id: str, doc: Any, *,
                      sql: str | None = None, has_handler: bool = True,
                      ) -> tuple[AnyDeclaration | None, list[Finding]]:
    """Build any kind from its document (and main.sql text, for Database Functions)."""
    if kind == "database_function":
        return build_database_function(function_id, doc, sql)
    if kind == "mutation":
        return build_mutation(function_id, doc)
    if kind == "faas":
        return build_faas(function_id, doc, has_handler=has_handler)
    return build_ai_function(function_id, doc)


def duplicate_id_findings(ids: Mapping[str, list[FunctionKind]],
                          places: Mapping[str, list[str]], fix: str) -> list[Finding]:
    """FUNCTION_ID_DUPLICATE for every declaration after the first that uses an id;
    `places` names where each use of the id is (directories, request pointers)."""
    findings: list[Finding] = []
    for function_id, kinds in ids.items():
        for kind in kinds[1:]:
            findings.append(Finding(
                "FUNCTION_ID_DUPLICATE",
                f"functionId {function_id!r} is used by {' and '.join(places[function_id])}; "
                "ids must be unique across Database Functions, Mutations, FaaS and AI "
                "Functions.", declaration_file(kind, function_id), "", function_id, fix))
    return findings


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


json_type = _json_type
