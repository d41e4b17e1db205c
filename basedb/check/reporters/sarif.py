"""SARIF 2.1.0, for code scanning: one run, a rule per code, a result per error and hint.

Errors are `error` results and hints `note` results. Locations are relative URIs under
`%SRCROOT%` (the repository checkout), with a region when the line is known; columns
count Unicode code points, which the run declares.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from basedb import __version__
from basedb.check.reporters.locations import (
    Positions,
    repository_path,
    repository_prefix,
)
from basedb.check.reporters.rules import RULES
from basedb.check.result import CheckResult
from basedb.core.findings import ERROR_CODES, HINT_CODES, Finding, Hint

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SARIF_VERSION = "2.1.0"
SRCROOT = "%SRCROOT%"

RULE_CODES: tuple[str, ...] = ERROR_CODES + HINT_CODES


def render(result: CheckResult, *, root: Path, color: bool = False) -> str:
    return json.dumps(sarif_log(result, root=root), ensure_ascii=False, indent=2) + "\n"


def sarif_log(result: CheckResult, *, root: Path) -> dict[str, Any]:
    positions = Positions(root)
    prefix = repository_prefix(root)
    rule_index = {code: i for i, code in enumerate(RULE_CODES)}
    results = [_result(item, "error", rule_index, positions, prefix) for item in result.errors]
    results += [_result(item, "note", rule_index, positions, prefix) for item in result.hints]
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "basedb",
            "version": __version__,
            "rules": [_rule(code) for code in RULE_CODES],
        }},
        "columnKind": "unicodeCodePoints",
        "invocations": [_invocation(result)],
        "results": results,
        "properties": {
            "agentTools": {"tools": list(result.tools), "exclude": list(result.exclude)},
            "summary": result.summary(),
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _rule(code: str) -> dict[str, Any]:
    rule = RULES[code]
    level = "error" if code in ERROR_CODES else "note"
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.short},
        "help": {"text": rule.help},
        "defaultConfiguration": {"level": level},
    }


def _invocation(result: CheckResult) -> dict[str, Any]:
    # Findings in the workspace are results and the run completed; without a workspace
    # (exit 2) nothing could be checked, which SARIF calls an unsuccessful execution.
    missing = [f for f in result.errors if f.code == "WORKSPACE_NOT_FOUND"]
    invocation: dict[str, Any] = {"executionSuccessful": not missing}
    notifications = [{"level": "error", "message": {"text": f.message}} for f in missing]
    notifications += [{"level": "note", "message": {"text": notice}}
                      for notice in result.notices]
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return invocation


def _result(item: Finding | Hint, level: str, rule_index: dict[str, int],
            positions: Positions, prefix: str) -> dict[str, Any]:
    text = item.message
    properties: dict[str, Any] = {"pointer": item.pointer}
    if isinstance(item, Finding):
        if item.fix:
            text += f" Fix: {item.fix}"
            properties["fix"] = item.fix
    else:
        if item.param is not None:
            properties["param"] = item.param
        properties.update({k: v for k, v in item.extra.items() if _is_json(v)})
    function_id = item.function_id
    if function_id is not None:
        properties["functionId"] = function_id
    out: dict[str, Any] = {
        "ruleId": item.code,
        "ruleIndex": rule_index[item.code],
        "level": level,
        "message": {"text": text},
    }
    if item.file:
        location: dict[str, Any] = {"physicalLocation": {"artifactLocation": {
            "uri": quote(repository_path(prefix, item.file), safe="/"),
            "uriBaseId": SRCROOT,
        }}}
        pos = positions.of(item)
        if pos is not None:
            region: dict[str, int] = {"startLine": pos[0]}
            if pos[1] is not None:
                region["startColumn"] = pos[1]
            location["physicalLocation"]["region"] = region
        if function_id:
            location["logicalLocations"] = [{"name": function_id, "kind": "function"}]
        out["locations"] = [location]
    out["properties"] = properties
    return out


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
