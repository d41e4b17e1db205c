from __future__ import annotations

from pathlib import Path
from typing import Any

from basedb.check.agent_tools import check_agent_tools, plan, validate_exclude
from basedb.protocol.findings import Finding
from tests.unit._builders import ABSENT, build_workspace, check_context

AI = {"name": "summary", "description": "Summarises a task for the reader.",
      "capability": "text", "prompt": "Summarise the task"}
FUNCTIONS: dict[str, Any] = {
    "database-functions/listTasks": {"name": "listTasks", "description": "Lists all tasks.",
                                     "meta": {"params": []}},
    "database-functions/checkTaskQuota": {"name": "checkTaskQuota",
                                          "description": "Checks the quota before submit.",
                                          "meta": {"params": []}},
    "mutations/createTask": {"name": "createTask", "description": "Creates one task.",
                             "spec": {"table": "Tasks", "action": "create", "params": [],
                                      "set": {}}},
    "faas/closePeriod": {"name": "closePeriod", "description": "Closes a reporting period."},
    "ai/summary": AI,
}
ALL_IDS = ["checkTaskQuota", "closePeriod", "createTask", "listTasks", "summary"]


def run(tmp_path: Path, agent_tools: Any, *, functions: dict[str, Any] | None = None,
        skip_ai: bool = False) -> list[Finding]:
    ctx = check_context(tmp_path, functions=FUNCTIONS if functions is None else functions,
                        agent_tools=agent_tools, skip_ai=skip_ai)
    check_agent_tools(ctx)
    return ctx.errors


def codes(findings: list[Finding]) -> list[tuple[str, str]]:
    return sorted((f.code, f.pointer) for f in findings)


def test_absent_file_and_empty_exclude_open_everything(tmp_path: Path) -> None:
    for name, doc in (("absent", ABSENT), ("empty", {"exclude": []}), ("bare", {})):
        assert run(tmp_path / name, doc) == []
        ws = build_workspace(tmp_path / name, functions=FUNCTIONS, agent_tools=doc)
        assert plan(ws, skip_ai=False) == (ALL_IDS, [])


def test_valid_exclude_and_plan(tmp_path: Path) -> None:
    doc = {"exclude": ["checkTaskQuota", "summary"]}
    assert run(tmp_path, doc) == []
    ws = build_workspace(tmp_path, functions=FUNCTIONS, agent_tools=doc)
    assert plan(ws, skip_ai=False) == (["closePeriod", "createTask", "listTasks"],
                                       ["checkTaskQuota", "summary"])


def test_not_an_object(tmp_path: Path) -> None:
    errors = run(tmp_path, ["listTasks"])
    assert codes(errors) == [("AGENT_TOOLS_INVALID", "")]
    assert errors[0].file == "agent-tools.json" and "an array" in errors[0].message


def test_include_is_not_supported(tmp_path: Path) -> None:
    errors = run(tmp_path, {"include": ["listTasks"], "exclude": [], "extra": 1})
    assert codes(errors) == [("AGENT_TOOLS_INVALID", "/extra"),
                             ("AGENT_TOOLS_INVALID", "/include")]
    include = next(e for e in errors if e.pointer == "/include")
    assert "'include'" in include.message and "only \"exclude\" is supported" in include.message


def test_exclude_must_be_an_array_of_strings(tmp_path: Path) -> None:
    errors = run(tmp_path / "a", {"exclude": "listTasks"})
    assert codes(errors) == [("AGENT_TOOLS_INVALID", "/exclude")]
    errors = run(tmp_path / "b", {"exclude": None})
    assert codes(errors) == [("AGENT_TOOLS_INVALID", "/exclude")]
    errors = run(tmp_path / "c", {"exclude": ["listTasks", 3, {"id": "x"}]})
    assert codes(errors) == [("AGENT_TOOLS_INVALID", "/exclude/1"),
                             ("AGENT_TOOLS_INVALID", "/exclude/2")]


def test_unknown_id_lists_legal_ids_and_suggests(tmp_path: Path) -> None:
    errors = run(tmp_path, {"exclude": ["listTask", "database-functions/listTasks"]})
    assert codes(errors) == [("AGENT_TOOLS_INVALID", "/exclude/0"),
                             ("AGENT_TOOLS_INVALID", "/exclude/1")]
    assert ("Legal ids: checkTaskQuota, closePeriod, createTask, listTasks, summary."
            in errors[0].message)
    assert "Did you mean 'listTasks'?" in errors[0].message
    assert "Write only the functionId: 'listTasks'." in errors[1].message
    assert errors[0].fix


def test_duplicates(tmp_path: Path) -> None:
    errors = run(tmp_path, {"exclude": ["listTasks", "summary", "listTasks"]})
    assert codes(errors) == [("AGENT_TOOLS_INVALID", "/exclude/2")]
    assert "/exclude/0" in errors[0].message


def test_unreadable_file_is_reported_once(tmp_path: Path) -> None:
    ctx = check_context(tmp_path, functions=FUNCTIONS, agent_tools='{"exclude": [,]}')
    check_agent_tools(ctx)
    assert ctx.errors == []
    assert [f.code for f in ctx.workspace.load_findings] == ["AGENT_TOOLS_INVALID"]
    # A file that holds JSON null is readable, but not an object.
    assert codes(run(tmp_path / "null", None)) == [("AGENT_TOOLS_INVALID", "")]


def test_skip_ai_keeps_ai_ids_legal_but_out_of_the_plan(tmp_path: Path) -> None:
    doc = {"exclude": ["summary", "checkTaskQuota"]}
    assert run(tmp_path, doc, skip_ai=True) == []
    ws = build_workspace(tmp_path, functions=FUNCTIONS, agent_tools=doc, skip_ai=True)
    assert plan(ws, skip_ai=True) == (["closePeriod", "createTask", "listTasks"],
                                      ["checkTaskQuota"])
    # Also for an open AI function, and for a workspace loaded with AI drafts.
    ws = build_workspace(tmp_path / "open", functions=FUNCTIONS, agent_tools={"exclude": []})
    assert plan(ws, skip_ai=True) == (["checkTaskQuota", "closePeriod", "createTask",
                                       "listTasks"], [])


def test_broken_declarations_are_legal_ids_but_not_tools(tmp_path: Path) -> None:
    functions = {**FUNCTIONS, "faas/broken": "{not json", "mutations/halfDone": {
        "name": "halfDone", "description": "Missing its spec.", "spec": None}}
    doc = {"exclude": ["broken"]}
    assert run(tmp_path, doc, functions=functions) == []
    ws = build_workspace(tmp_path, functions=functions, agent_tools=doc)
    tools, exclude = plan(ws, skip_ai=False)
    assert exclude == ["broken"]
    assert "broken" not in tools and "halfDone" in tools


def test_unknown_ids_stay_out_of_the_plan(tmp_path: Path) -> None:
    ws = build_workspace(tmp_path, functions=FUNCTIONS,
                         agent_tools={"exclude": ["ghost", "listTasks"]})
    assert plan(ws, skip_ai=False) == (["checkTaskQuota", "closePeriod", "createTask",
                                        "summary"], ["listTasks"])


def test_validate_exclude_truncates_long_id_lists() -> None:
    legal = [f"fn{i:03d}" for i in range(45)]
    errors = validate_exclude({"exclude": ["nope"]}, legal, file="request body")
    assert codes(errors) == [("AGENT_TOOLS_INVALID", "/exclude/0")]
    message = errors[0].message
    assert "fn029 … and 15 more" in message and "fn030" not in message
    assert errors[0].file == "request body"


def test_validate_exclude_without_functions() -> None:
    errors = validate_exclude({"exclude": ["x"]}, [], file="agent-tools.json")
    assert "Legal ids: none." in errors[0].message
