"""SARIF 2.1.0, for code scanning: one run, a rule per code, a result per error and hint.

Errors are `error` results and hints `note` results. Each rule carries its whole
documentation (`fullDescription`, `help` in text and Markdown) from `rules.RULES`.

GitHub code scanning shows a result only where it can anchor it, so every result has one
location: a relative URI of a *file* under `%SRCROOT%` (the repository checkout) and a
region with at least `startLine` (a directory finding points at a file in it, see
`locations.Anchor`); columns count Unicode code points, which the run declares.

Re-uploads must not duplicate alerts, so every result has `partialFingerprints`: a hash
of what the finding is about that does not move when unrelated lines do (the rule, the
file, the JSON Pointer and function, or for a finding with no pointer the text of its
line), numbered when identical results repeat. The key is basedb's own: GitHub's
`primaryLocationLineHash` is a hash of its own algorithm, which upload-sarif recomputes.
A workspace that was not found is a failed invocation (a notification), not a result.
"""

from __future__ import annotations

import hashlib
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
from basedb.protocol.findings import ERROR_CODES, HINT_CODES, Finding, Hint

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SARIF_VERSION = "2.1.0"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "basedbFinding/v1"

RULE_CODES: tuple[str, ...] = ERROR_CODES + HINT_CODES


def render(result: CheckResult, *, root: Path, color: bool = False) -> str:
    return json.dumps(sarif_log(result, root=root), ensure_ascii=False, indent=2) + "\n"


def sarif_log(result: CheckResult, *, root: Path) -> dict[str, Any]:
    positions = Positions(root)
    prefix = repository_prefix(root)
    rule_index = {code: i for i, code in enumerate(RULE_CODES)}
    items: list[tuple[Finding | Hint, str]] = [
        (item, "error") for item in result.errors if item.code != "WORKSPACE_NOT_FOUND"]
    items += [(item, "note") for item in result.hints]
    seen: dict[str, int] = {}
    results = []
    for item, level in items:
        out = _result(item, level, rule_index, positions, prefix)
        identity = _identity(item, positions)
        seen[identity] = seen.get(identity, 0) + 1
        out["partialFingerprints"] = {FINGERPRINT_KEY: f"{identity}:{seen[identity]}"}
        results.append(out)
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
        "fullDescription": {"text": rule.full_description},
        "help": {"text": rule.help_text(), "markdown": rule.help_markdown()},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": ["basedb", "error" if code in ERROR_CODES else "hint"]},
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
    anchor = positions.anchor(item)
    region: dict[str, int] = {"startLine": anchor.line, "startColumn": anchor.column}
    location: dict[str, Any] = {"physicalLocation": {
        "artifactLocation": {"uri": quote(repository_path(prefix, anchor.file), safe="/"),
                             "uriBaseId": SRCROOT},
        "region": region,
    }}
    if function_id:
        location["logicalLocations"] = [{"name": function_id, "kind": "function"}]
    out["locations"] = [location]
    if item.file != anchor.file:
        properties["file"] = item.file  # what the finding is about: a directory, or nothing
    out["properties"] = properties
    return out


def _identity(item: Finding | Hint, positions: Positions) -> str:
    """What a result is about, hashed: stable across runs and unrelated edits."""
    anchor = positions.anchor(item)
    context = ""
    if not item.pointer and anchor.exact:
        # SQL findings know a line, not a pointer: the line's text moves with it.
        context = positions.line_text(anchor.file, anchor.line)
    parts = [item.code, item.file, item.pointer, item.function_id or "", context]
    if isinstance(item, Hint):
        parts.append(item.param or "")
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:32]


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
