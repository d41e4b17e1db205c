"""FaaS input schemas (and AI Function input schemas) as JSON Schema.

Upstream rejects a FaaS `inputSchema` whose top level is not an object or whose top-level
properties lack a description; basedb also rejects schemas that are not valid JSON Schema
(checked against the metaschema of their `$schema`, draft 2020-12 when absent),
`required` names that no top-level property declares, and patterns the platform's
linear-time regex engine cannot run (`basedb.core.schema_regex`: backreferences,
lookaround), which a backtracking engine could spend hours on for one call. A FaaS
without `inputSchema` is allowed (the platform reports `schemaStatus: "missing"`), and so
is `"inputSchema": null`, which says the same thing explicitly.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from basedb.check.context import CheckContext
from basedb.check.declarations import SHORT_DESCRIPTION_CHARS
from basedb.check.messages import clip, did_you_mean, show_json
from basedb.core.json_schema import schema_patterns
from basedb.core.schema_regex import pattern_problem
from basedb.protocol.findings import Finding, Hint, pointer
from basedb.workspace.declarations import json_type
from basedb.workspace.faas_access import (
    MAX_HOST_RULES,
    MAX_SECRETS,
    HostRule,
    parse_host_rule,
    secret_name_problem,
)
from basedb.workspace.model import AIFunction, FaaS

SCHEMA_KEY = "inputSchema"
# Branch keywords whose `required` lists apply to the same object as the top level.
_BRANCH_KEYWORDS = ("oneOf", "anyOf", "allOf")
_SUPPORTED_DIALECTS = "draft-04, draft-06, draft-07, 2019-09 or 2020-12"


def check_faas(ctx: CheckContext) -> None:
    """Add schema findings for FaaS and (unless skipped) AI Function input schemas."""
    ws = ctx.workspace
    for function_id in sorted(ws.declarations):
        decl = ws.declarations[function_id]
        if isinstance(decl, FaaS):
            if decl.input_schema is not None:
                ctx.extend(list(_check_faas_schema(decl)))
            ctx.extend(list(_check_access(decl)))
        elif (isinstance(decl, AIFunction) and not ctx.skip_ai
              and isinstance(decl.input_schema, dict)):
            # A non-object AI schema is DECLARATION_INVALID from the declaration builder.
            ctx.extend(list(_invalid_schema_findings(decl.input_schema, decl.file,
                                                     decl.function_id)))
            ctx.extend(list(_pattern_findings(decl.input_schema, decl.file,
                                              decl.function_id)))


def _check_faas_schema(decl: FaaS) -> Iterator[Finding | Hint]:
    schema = decl.input_schema
    base = pointer(SCHEMA_KEY)
    if not isinstance(schema, dict):
        yield Finding("FAAS_SCHEMA_NOT_OBJECT",
                      f"inputSchema is {json_type(schema)}; it must be a JSON Schema object "
                      "whose top level is {\"type\": \"object\"}.",
                      decl.file, base, decl.function_id,
                      "Write inputSchema as {\"type\": \"object\", \"properties\": {…}}, or "
                      "remove it if the function takes no input.")
        return
    if schema.get("type") != "object":
        where = pointer(SCHEMA_KEY, "type") if "type" in schema else base
        found = (f"has \"type\": {show_json(schema['type'])}" if "type" in schema
                 else "has no \"type\"")
        yield Finding("FAAS_SCHEMA_NOT_OBJECT",
                      f"The top level of inputSchema {found}; it must be \"type\": \"object\" "
                      "because callers pass named parameters ({\"params\": {…}}).",
                      decl.file, where, decl.function_id,
                      "Set \"type\": \"object\" at the top of inputSchema and describe each "
                      "input under \"properties\".")
    yield from _invalid_schema_findings(schema, decl.file, decl.function_id)
    yield from _pattern_findings(schema, decl.file, decl.function_id)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        yield from _property_descriptions(decl, properties)
    yield from _undeclared_required(decl, schema, properties if isinstance(properties, dict)
                                    else {})


def _check_access(decl: FaaS) -> Iterator[Finding]:
    """The hosts it calls (`network.allow`) and the secrets it reads (`secrets`)."""
    seen: dict[str, int] = {}
    for i, text in enumerate(decl.network_allow):
        at = pointer("network", "allow", i)
        rule = parse_host_rule(text)
        problem = rule if isinstance(rule, str) else None
        if isinstance(rule, HostRule):
            if str(rule) in seen:
                problem = f"{text!r} repeats entry {seen[str(rule)]}"
            seen.setdefault(str(rule), i)
        if problem is None and i == MAX_HOST_RULES:
            problem = f"more than {MAX_HOST_RULES} hosts are declared"
        if problem:
            yield Finding("FAAS_NETWORK_INVALID", f"network.allow[{i}]: {problem}.",
                          decl.file, at, decl.function_id,
                          "Declare the public host names the handler calls, such as "
                          "\"api.example.com\" or \"*.example.com\" (port 443 unless "
                          "\":port\" is given); remove repeats.")
    names: dict[str, int] = {}
    for i, name in enumerate(decl.secrets):
        problem = secret_name_problem(name)
        if problem is None and name in names:
            problem = f"{name!r} repeats entry {names[name]}"
        if problem is None and i == MAX_SECRETS:
            problem = f"more than {MAX_SECRETS} secrets are declared"
        names.setdefault(name, i)
        if problem:
            yield Finding("FAAS_SECRET_INVALID", f"secrets[{i}]: {problem}.", decl.file,
                          pointer("secrets", i), decl.function_id,
                          "Name each secret like STRIPE_API_KEY and set its value on the "
                          "platform with `basedb secrets set NAME`, never in the workspace.")


def _property_descriptions(decl: FaaS, properties: Mapping[str, Any],
                           ) -> Iterator[Finding | Hint]:
    for name, prop in properties.items():
        at = pointer(SCHEMA_KEY, "properties", name)
        desc = prop.get("description") if isinstance(prop, dict) else None
        if not isinstance(desc, str) or not desc.strip():
            problem = ("has no description" if desc is None
                       else f"has a description that is {json_type(desc)}, not a string"
                       if not isinstance(desc, str) else "has a blank description")
            yield Finding("FAAS_PROPERTY_DESCRIPTION_MISSING",
                          f"Top-level input property {name!r} {problem}.",
                          decl.file, at, decl.function_id,
                          f"Add \"description\" to inputSchema.properties.{name}: what the "
                          "value means, its format or unit, and where a caller gets it.")
            continue
        length = len(desc.strip())
        if length < SHORT_DESCRIPTION_CHARS:
            yield Hint("param_description_short", decl.function_id,
                       f"The description of input property {name!r} is only {length} "
                       f"characters ({desc.strip()!r}). Say what the value means, its format "
                       "and where it comes from; do not pad it with repeated words.",
                       decl.file, f"{at}/description", name)


def _undeclared_required(decl: FaaS, schema: Mapping[str, Any],
                         properties: Mapping[str, Any]) -> Iterator[Finding]:
    places: list[tuple[tuple[str | int, ...], Any]] = [((), schema.get("required"))]
    for keyword in _BRANCH_KEYWORDS:
        branches = schema.get(keyword)
        if isinstance(branches, list):
            places += [((keyword, i), b.get("required")) for i, b in enumerate(branches)
                       if isinstance(b, dict)]
    for at, required in places:
        if not isinstance(required, list):
            continue  # a malformed `required` is a metaschema error, reported elsewhere
        for i, name in enumerate(required):
            if isinstance(name, str) and name not in properties:
                yield Finding(
                    "FAAS_SCHEMA_INVALID",
                    f"inputSchema requires property {name!r}, which is not declared in the "
                    f"top-level properties.{did_you_mean(name, properties)}",
                    decl.file, pointer(SCHEMA_KEY, *at, "required", i), decl.function_id,
                    f"Declare {name!r} under inputSchema.properties with a type and "
                    "description, or remove it from required.")


def _invalid_schema_findings(schema: Mapping[str, Any], file: str, function_id: str,
                             ) -> Iterator[Finding]:
    for tokens, message in schema_problems(schema):
        yield Finding("FAAS_SCHEMA_INVALID", f"inputSchema is not a valid JSON Schema: "
                      f"{message}", file, pointer(SCHEMA_KEY, *tokens), function_id,
                      "Fix the keyword at this place so that the schema follows JSON Schema "
                      "(draft 2020-12 unless $schema names another draft).")


def _pattern_findings(schema: Mapping[str, Any], file: str, function_id: str,
                      ) -> Iterator[Finding]:
    """Patterns RE2 cannot run. One that is no regular expression at all is the
    metaschema's to report (FAAS_SCHEMA_INVALID, format "regex")."""
    for tokens, pattern in sorted(schema_patterns(schema), key=lambda found: str(found[0])):
        problem = pattern_problem(pattern) if _compiles(pattern) else None
        if problem is not None:
            yield Finding("FAAS_PATTERN_UNSUPPORTED",
                          f"The pattern {clip(show_json(pattern), limit=80)} uses {problem}; the "
                          "platform runs patterns on RE2, which matches in linear time.",
                          file, pointer(SCHEMA_KEY, *tokens), function_id,
                          "Rewrite it without backreferences or lookaround (list the "
                          "allowed forms, or check the rest in the handler), with "
                          "repetition counts of at most 1000.")


def schema_problems(schema: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """Metaschema violations of `schema`, as (path inside the schema, message) pairs."""
    if "$schema" not in schema and plainly_valid(schema):
        return []  # certainly valid: skip importing jsonschema and walking the metaschema
    # Lazy: jsonschema loads only for a workspace with FaaS schemas.
    from jsonschema.exceptions import best_match  # noqa: PLC0415
    from jsonschema.validators import Draft202012Validator, validator_for  # noqa: PLC0415

    dialect = schema.get("$schema", None)
    if "$schema" in schema and not isinstance(dialect, str):
        return [(("$schema",), f"$schema is {json_type(dialect)}; it must be a URI string "
                 f"naming a JSON Schema draft ({_SUPPORTED_DIALECTS}).")]
    cls = validator_for(schema, default=None) if dialect is not None else Draft202012Validator
    if cls is None:
        return [(("$schema",), f"$schema {dialect!r} names no JSON Schema draft that can be "
                 f"checked; use {_SUPPORTED_DIALECTS}, e.g. "
                 "\"https://json-schema.org/draft/2020-12/schema\", or remove $schema.")]
    meta = cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
    problems: list[tuple[tuple[str | int, ...], str]] = []
    try:
        for error in meta.iter_errors(schema):
            best = best_match([error])
            path = tuple(best.absolute_path)
            if path and path[-1] == "type" and best.validator in ("anyOf", "oneOf"):
                message = (f"{show_json(best.instance)} is not a JSON Schema type; use one of "
                           "array, boolean, integer, null, number, object, string.")
            else:
                message = clip(best.message) + "."
            problems.append((path, message))
    except RecursionError:
        problems.append(((), "it nests too deeply to be checked."))
    return problems


# Keywords whose well-formedness `plainly_valid` can judge exactly (draft 2020-12).
_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_SUBSCHEMA = frozenset({"additionalProperties", "items", "contains", "not", "propertyNames",
                        "if", "then", "else", "unevaluatedProperties", "unevaluatedItems"})
_SUBSCHEMA_LISTS = frozenset({"oneOf", "anyOf", "allOf", "prefixItems"})
_SUBSCHEMA_MAPS = frozenset({"properties", "$defs"})
_COUNTS = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minProperties",
                     "maxProperties", "minContains", "maxContains"})
_NUMBERS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_STRINGS = frozenset({"description", "title", "$comment", "format", "contentEncoding",
                      "contentMediaType"})
_BOOLEANS = frozenset({"uniqueItems", "deprecated", "readOnly", "writeOnly"})


def plainly_valid(schema: Any) -> bool:
    """Whether `schema` is certainly valid under the 2020-12 metaschema, judged without
    jsonschema: it uses only the keywords above, each well-formed. False means "not
    sure" ($ref, $schema, unknown keywords, anything malformed): validate it fully."""
    try:
        return _plain_node(schema)
    except RecursionError:
        return False


def _plain_node(node: Any) -> bool:
    if isinstance(node, bool):
        return True
    if not isinstance(node, dict):
        return False
    return all(_plain_keyword(key, value) for key, value in node.items())


def _plain_keyword(key: str, value: Any) -> bool:
    if key == "type":
        kinds = value if isinstance(value, list) else [value]
        return (bool(kinds) and len(set(map(str, kinds))) == len(kinds)
                and all(isinstance(k, str) and k in _TYPES for k in kinds))
    if key in _STRINGS:
        return isinstance(value, str)
    if key in _COUNTS:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if key in _NUMBERS:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if key == "multipleOf":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    if key in _BOOLEANS:
        return isinstance(value, bool)
    if key in ("enum", "examples"):
        return isinstance(value, list)
    if key in ("const", "default"):
        return True
    if key == "required":
        return (isinstance(value, list) and all(isinstance(v, str) for v in value)
                and len(set(value)) == len(value))
    if key == "pattern":
        return isinstance(value, str) and _compiles(value)
    if key in _SUBSCHEMA:
        return _plain_node(value)
    if key in _SUBSCHEMA_LISTS:
        return isinstance(value, list) and bool(value) and all(map(_plain_node, value))
    if key in _SUBSCHEMA_MAPS:
        return isinstance(value, dict) and all(map(_plain_node, value.values()))
    return False  # $ref, $schema, $id, dependentRequired, unknown keywords, …


def _compiles(pattern: str) -> bool:
    # The metaschema's format "regex", as jsonschema's format checker judges it.
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True
