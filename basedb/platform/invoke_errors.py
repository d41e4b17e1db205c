"""Turn a jsonschema validation error into upstream's "not executed" message (800004002).

The message names the parameter by JSON Pointer relative to the request body
(`/params/periodId`, `/params/tags/1`), echoes at most 64 characters of what was
received, says how to fix it, and for enum params lists up to three allowed values
closest to the received one. It never quotes the schema's internals beyond that.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from basedb.check.findings import pointer
from basedb.platform.cells import closest
from basedb.platform.describe import DATE_PATTERN, DATETIME_PATTERN
from basedb.platform.errors import PARAMETER_INVALID, ApiFailure, clip, quote, unexecuted_message
from basedb.platform.function_plans import FunctionPlan

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


def parameter_failure(error: Any, plan: FunctionPlan) -> ApiFailure:
    """The 800004002 failure for the most relevant error of a validation."""
    reason, at, fix, received, candidates = _explain(error, plan)
    kwargs: dict[str, Any] = {} if received is _MISSING else {"received": received}
    return ApiFailure(PARAMETER_INVALID, unexecuted_message(
        reason, parameter=at, fix=fix, candidates=candidates, **kwargs))


def _explain(error: Any, plan: FunctionPlan) -> tuple[str, str, str, Any, list[Any]]:
    path = [str(p) for p in error.absolute_path]
    at = pointer("params", *path)
    name = _label(path)
    kind = error.validator
    value = error.validator_value
    instance = error.instance
    if kind == "required" and isinstance(instance, dict):
        missing = next((n for n in value if n not in instance), str(value))
        description = _description(error.schema, missing)
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
    return (f"{name} is invalid: {clip(error.message, 160)}", at,
            f"send a value that matches the function's inputSchema (GET …/functions/"
            f"{plan.function_id})", instance, [])


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
