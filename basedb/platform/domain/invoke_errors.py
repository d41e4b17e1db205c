"""Turn jsonschema validation errors into upstream's "not executed" message.

The code follows upstream's troubleshooting: a value whose JSON type does not match the
inputSchema (`"3"` for an integer, a JSON string where an object belongs) is a malformed
request, 9499; every other rule a value breaks (required, enum, pattern, bounds) is
800004002. Both carry the same message, so the details stay in `msg`.

The message names the parameter by JSON Pointer relative to the request body
(`/params/periodId`, `/params/tags/1`), echoes at most 64 characters of what was
received, says how to fix it, and for enum params lists up to three allowed values
closest to the received one. It never quotes the schema's internals beyond that.

Which error is reported matters as much as its wording. For a `oneOf`/`anyOf` whose
cases are told apart by an `enum` or `const` property (upstream's way to express
conditional required fields), the error comes from the case the input chose: a close
call that lacks periodId is told to send periodId, not to switch action to create.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from basedb.platform.domain.function_plans import FunctionPlan
from basedb.platform.domain.schemas import DATE_PATTERN, DATETIME_PATTERN
from basedb.platform.storage.cells import closest
from basedb.protocol import ApiFailure, Code, clip, quote, unexecuted_message
from basedb.protocol.findings import pointer

_MISSING = object()
_TYPE_WORDS = {"string": "text (a JSON string)", "integer": "a whole number",
               "number": "a number", "boolean": "true or false", "array": "an array",
               "object": "an object", "null": "null"}
_TYPE_FIXES = {
    "string": 'send text in double quotes, e.g. "abc"',
    "integer": "send a JSON integer such as 3, not a string or a fraction",
    "number": "send a JSON number such as 12.5, not a string",
    "boolean": "send true or false without quotes",
    "array": 'send a JSON array, e.g. ["a", "b"], not one value or a string',
    "object": "send a JSON object, not a string containing JSON",
}


_BRANCHING = frozenset({"oneOf", "anyOf"})
# Keywords that tell the cases of a oneOf/anyOf apart: failing one means "not this case".
_DISCRIMINATING = frozenset({"const", "enum", "type"})


def parameter_failure(errors: Iterable[Any], plan: FunctionPlan) -> ApiFailure | None:
    """The failure for the most relevant of a validation's errors (9499 for a value of
    the wrong type, else 800004002); None when there are none."""
    chosen = relevant_error(list(errors))
    if chosen is None:
        return None
    error, case = chosen
    reason, at, fix, received, candidates = _explain(error, plan)
    if case:
        reason = f"{reason.rstrip('. ')} (when {case})"
    kwargs: dict[str, Any] = {} if received is _MISSING else {"received": received}
    code = Code.BAD_REQUEST if error.validator == "type" else Code.PARAMETER_INVALID
    return ApiFailure(code, unexecuted_message(
        reason, parameter=at, fix=fix, candidates=candidates, **kwargs))


def relevant_error(errors: list[Any]) -> tuple[Any, str] | None:
    """The error to report, with the oneOf/anyOf case it belongs to (`action is
    "close"`) or "".

    jsonschema's best_match descends into whichever case's error looks most specific,
    which for cases told apart by an enum is usually a case the input did not choose.
    So errors outside oneOf/anyOf come first, and inside one the case whose
    discriminating values the input meets."""
    # Lazy: jsonschema loads with the first invalid call, not with the app.
    from jsonschema.exceptions import best_match  # noqa: PLC0415

    if not errors:
        return None
    direct = [e for e in errors if e.validator not in _BRANCHING]
    if direct:
        return best_match(direct), ""
    return _case_error(min(errors, key=lambda e: len(e.absolute_path)))


def _case_error(error: Any) -> tuple[Any, str]:
    cases: dict[int, list[Any]] = {}
    for sub in error.context or ():
        cases.setdefault(int(sub.relative_schema_path[0]), []).append(sub)
    if not cases:
        return error, ""  # valid under several oneOf cases: _explain words it

    def mismatches(index: int) -> list[Any]:
        return [s for s in cases[index] if s.validator in _DISCRIMINATING]

    best = min(cases, key=lambda i: (len(mismatches(i)), len(cases[i])))
    if mismatches(best):
        merged = _merged_mismatch([mismatches(i)[0] for i in cases])
        if merged is not None:
            return merged, ""  # no case fits: offer what every case allows
    chosen = relevant_error(cases[best]) or (error, "")
    branches = error.validator_value
    case = _case_condition(branches[best] if isinstance(branches, list) else None,
                           error.instance) if not mismatches(best) else ""
    return chosen[0], " and ".join(part for part in (case, chosen[1]) if part)


def _merged_mismatch(firsts: list[Any]) -> Any:
    """One enum (or type) error allowing every case's value, when each case rejects the
    input on the same value for the same reason; None otherwise."""
    # Lazy: jsonschema loads with the first invalid call, not with the app.
    from jsonschema.exceptions import ValidationError  # noqa: PLC0415

    paths = {tuple(e.absolute_path) for e in firsts}
    kinds = {"enum" if e.validator == "const" else e.validator for e in firsts}
    if len(paths) != 1 or len(kinds) != 1:
        return None
    kind = kinds.pop()
    allowed: list[Any] = []
    for e in firsts:
        values = [e.validator_value] if e.validator == "const" or isinstance(
            e.validator_value, str) else list(e.validator_value)
        allowed.extend(v for v in values if v not in allowed)
    return ValidationError("", validator=kind, validator_value=allowed, path=paths.pop(),
                           instance=firsts[0].instance, schema={kind: allowed})


def _case_condition(case: Any, instance: Any) -> str:
    """`action is "close"`: the single-valued properties of a case the input meets."""
    properties = case.get("properties") if isinstance(case, Mapping) else None
    if not isinstance(properties, Mapping) or not isinstance(instance, Mapping):
        return ""
    parts = []
    for name, prop in properties.items():
        if not isinstance(prop, Mapping) or name not in instance:
            continue
        if "const" in prop:
            value = prop["const"]
        elif isinstance(prop.get("enum"), list) and len(prop["enum"]) == 1:
            value = prop["enum"][0]
        else:
            continue
        if instance[name] == value:
            parts.append(f"{name} is {_json(value)}")
    return " and ".join(parts)


def _explain(error: Any, plan: FunctionPlan) -> tuple[str, str, str, Any, list[Any]]:
    path = [str(p) for p in error.absolute_path]
    at = pointer("params", *path)
    name = _label(path)
    kind = error.validator
    value = error.validator_value
    instance = error.instance
    if kind == "required" and isinstance(instance, dict):
        missing = next((n for n in value if n not in instance), str(value))
        # A oneOf case often only lists what it requires; the root schema describes it.
        description = _description(error.schema, missing) or (
            _description(getattr(plan.validator, "schema", None), missing) if not path
            else "")
        fix = f"send {missing}" + (f": {clip(description, 160)}" if description else "")
        return (f"Required parameter {quote(missing)} is missing",
                pointer("params", *path, missing), fix, _MISSING, [])
    if kind == "additionalProperties" and isinstance(instance, dict):
        declared = _properties(error.schema)
        extra = next((k for k in instance if k not in declared), "")
        takes = (f"; the parameters are {', '.join(declared)}" if declared
                 else "; this function takes no parameters")
        return (f"Unknown parameter {quote(extra)}", pointer("params", *path, extra),
                f"remove it or fix its name{takes}", instance.get(extra),
                closest(extra, declared) if declared else [])
    if kind == "type":
        expected = [value] if isinstance(value, str) else list(value)
        wanted = [t for t in expected if t != "null"] or expected
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in wanted)
        nullable = " (or null to leave it out)" if "null" in expected else ""
        fix = _TYPE_FIXES.get(wanted[0], "send a value of the declared type")
        return (f"{name} must be {words}{nullable}", at, fix, instance,
                _enum_of(error.schema)[:3])
    if kind == "enum":
        allowed = [v for v in value if v is not None]
        listing = ", ".join(_json(v) for v in allowed[:20]) + (", …" if len(allowed) > 20
                                                                else "")
        return (f"{name} is not one of the allowed values", at,
                f"use one of {listing}", instance, _closest_values(instance, allowed))
    if kind == "pattern":
        if value == DATE_PATTERN:
            return (f"{name} must be a date", at, "send YYYY-MM-DD, e.g. 2025-01-31",
                    instance, [])
        if value == DATETIME_PATTERN:
            return (f"{name} must be a date and time", at, 'send "YYYY-MM-DD HH:mm:ss" or '
                    "ISO 8601 such as 2025-01-31T09:00:00Z", instance, [])
        return (f"{name} does not have the required format", at,
                f"send a value matching {clip(str(value), 80)}", instance, [])
    if kind == "minLength" and value == 1:
        return f"{name} must not be empty", at, "send a non-empty value", instance, []
    if kind == "const":
        return f"{name} must be {_json(value)}", at, f"send {_json(value)}", instance, [value]
    if kind in _BOUNDS:
        what, fix = _BOUNDS[kind]
        return f"{name} {what.format(value)}", at, fix.format(value), instance, []
    schema_ref = f"the inputSchema of GET …/functions/{plan.function_id}"
    if kind == "oneOf":  # the input fits several cases, so which one is meant is unclear
        return (f"{name} matches more than one case of the inputSchema (oneOf)", at,
                f"send values that fit exactly one case; see {schema_ref}", instance, [])
    return (f"{name} does not meet the {kind} rule of the inputSchema", at,
            f"send a value that matches {schema_ref}", instance, [])


# Bounds of a value: (reason after its name, fix), each formatted with the bound.
_BOUNDS = {
    "minLength": ("must be at least {} characters long", "send at least {} characters"),
    "maxLength": ("must be at most {} characters long", "send at most {} characters"),
    "minItems": ("must have at least {} items", "send at least {} items"),
    "maxItems": ("must have at most {} items", "send at most {} items, or split the call"),
    "minimum": ("must be at least {}", "send a number of {} or more"),
    "maximum": ("must be at most {}", "send a number of {} or less"),
    "exclusiveMinimum": ("must be greater than {}", "send a number greater than {}"),
    "exclusiveMaximum": ("must be less than {}", "send a number less than {}"),
    "uniqueItems": ("must not repeat an item", "send each item once"),
}


def _label(path: Sequence[str]) -> str:
    if not path:
        return "params"
    if len(path) == 1:
        return f"Parameter {quote(path[0])}"
    return f"{pointer(*path[1:])[1:]} of parameter {quote(path[0])}"


def _properties(schema: Any) -> list[str]:
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return list(properties) if isinstance(properties, Mapping) else []


def _description(schema: Any, name: str) -> str:
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    prop = properties.get(name) if isinstance(properties, Mapping) else None
    text = prop.get("description") if isinstance(prop, Mapping) else None
    return text if isinstance(text, str) else ""


def _enum_of(schema: Any) -> list[Any]:
    """The allowed values of an enum schema (or of an array schema's items)."""
    if not isinstance(schema, Mapping):
        return []
    values = schema.get("enum")
    if values is None and isinstance(schema.get("items"), Mapping):
        values = schema["items"].get("enum")
    return [v for v in values if v is not None] if isinstance(values, list) else []


def _closest_values(received: Any, allowed: list[Any]) -> list[Any]:
    """Up to three allowed values most like the received one."""
    if not allowed:
        return []
    texts = [v if isinstance(v, str) else _json(v) for v in allowed]
    wanted = received if isinstance(received, str) else _json(received)
    ranked = difflib.get_close_matches(wanted, texts, n=3, cutoff=0.0)
    return [allowed[texts.index(text)] for text in ranked] or allowed[:3]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
