"""agent-tools.json: which functions external agents may not use, and the local plan.

Every Database Function, Mutation, FaaS and AI Function is open to external agents
unless its functionId is listed in `exclude` (upstream agent-tools.md). `check`, `deploy`
and the platform's `PUT draft/agent-tools` judge the file with the same function,
`validate_exclude`, against the set of *all* local ids: every function directory on disk,
AI keys included even when AI sync is skipped, and ids whose declaration is broken (the
policy is about the id; fixing the declaration must not change whether it is excluded).

The local plan (`plan`) lists in `tools` only functions whose function.json could be
built into a declaration (ids whose function.json is missing or not JSON are left out:
nothing callable would be deployed for them, and check fails on them anyway); `exclude`
lists every legal excluded id. With
`--skip-ai-functions` AI ids stay legal in `exclude` but are left out of both lists,
because this run does not sync AI Functions.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from basedb.check.context import CheckContext
from basedb.check.messages import bounded_list, did_you_mean, show_json
from basedb.protocol.findings import Finding, pointer
from basedb.workspace.declarations import json_type
from basedb.workspace.model import FunctionKind, Workspace

SUPPORTED_KEYS = ("exclude",)
LEGAL_IDS_SHOWN = 30


def check_agent_tools(ctx: CheckContext) -> None:
    """Add AGENT_TOOLS_INVALID findings for agent-tools.json (absent is fine)."""
    ws = ctx.workspace
    config = ws.agent_tools
    if not config.present or _failed_to_load(ws):
        return  # absent: everything is open; unreadable: the loader reported it
    ctx.extend(validate_exclude(config.raw, ws.ids, file=config.file))


def validate_exclude(doc: Any, legal_ids: Collection[str], *, file: str) -> list[Finding]:
    """Judge an agent-tools document ({"exclude": [functionId, …]}) against the legal ids."""
    findings: list[Finding] = []

    def bad(where: str, message: str, fix: str) -> None:
        findings.append(Finding("AGENT_TOOLS_INVALID", message, file, where, fix=fix))

    if not isinstance(doc, dict):
        bad("", f"{file} must contain a JSON object, not {json_type(doc)}.",
            "Write {\"exclude\": [\"functionId\", …]}, or delete the file to open every "
            "function to external agents.")
        return findings
    for key in doc:
        if key not in SUPPORTED_KEYS:
            why = (" Every function is open unless excluded, so there is no include list."
                   if key == "include" else "")
            bad(pointer(key), f"{file} has unsupported key {key!r}: only \"exclude\" is "
                f"supported.{why}",
                f"Remove {key!r}; list the functionIds to hide from external agents under "
                "\"exclude\".")
    if "exclude" not in doc:
        return findings
    exclude = doc["exclude"]
    if not isinstance(exclude, list):
        bad("/exclude", f"/exclude must be an array of functionIds, not {json_type(exclude)}.",
            "Write \"exclude\": [\"functionId\", …], or [] to open every function.")
        return findings
    legal = set(legal_ids)
    first_at: dict[str, int] = {}
    for i, item in enumerate(exclude):
        at = pointer("exclude", i)
        if not isinstance(item, str):
            bad(at, f"{at} is {json_type(item)} ({show_json(item)}); exclude entries must be "
                "functionId strings.", "Write the function's directory name as a string.")
            continue
        if item in first_at:
            bad(at, f"{item!r} is listed twice in exclude (/exclude/{first_at[item]} and {at}).",
                "Remove the repeated entry.")
            continue
        first_at[item] = i
        if item not in legal:
            bad(at, f"{at} is {item!r}, which is not a function of this workspace. Legal ids: "
                f"{bounded_list(legal, limit=LEGAL_IDS_SHOWN)}.{_suggestion(item, legal)}",
                "Write the functionId (the directory name under database-functions/, "
                "mutations/, faas/ or ai/) of an existing function, or remove the entry.")
    return findings


def plan(ws: Workspace, *, skip_ai: bool) -> tuple[list[str], list[str]]:
    """(ids open to external agents, excluded ids) of the local plan, both sorted."""
    config = ws.agent_tools
    excluded = {x for x in config.exclude if x in ws.ids} if config.present else set()
    tools = sorted(
        function_id for function_id, decl in ws.declarations.items()
        if function_id not in excluded and not (skip_ai and decl.kind == "ai_function")
    )
    if skip_ai:
        excluded = {x for x in excluded if _kind_of(ws, x) != "ai_function"}
    return tools, sorted(excluded)


def _kind_of(ws: Workspace, function_id: str) -> FunctionKind:
    decl = ws.declarations.get(function_id)
    return decl.kind if decl is not None else ws.ids[function_id][0]


def _failed_to_load(ws: Workspace) -> bool:
    config = ws.agent_tools
    return any(getattr(f, "code", None) == "AGENT_TOOLS_INVALID"
               and getattr(f, "file", None) == config.file for f in ws.load_findings)


def _suggestion(item: str, legal: set[str]) -> str:
    # A path such as "database-functions/listTasks" names the right function the wrong way.
    tail = item.rstrip("/").rsplit("/", 1)[-1]
    if tail != item and tail in legal:
        return f" Write only the functionId: {tail!r}."
    return did_you_mean(item, legal)
