"""`basedb mcp`: the site's open functions as MCP tools, exercised with the MCP SDK's own
client, in-process over memory streams and once over stdio in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import mcp_types as types
from mcp import Client, StdioServerParameters

from basedb.agent_tools.mcp_server import build_server
from basedb.agent_tools.site_tools import (
    APPROVAL_GUARD,
    MAX_RESULT_CHARS,
    META_TOOLS,
    SiteTools,
    digest,
    tool_input_schema,
)
from basedb.client.client import connect
from basedb.client.profiles import LOCAL
from basedb.platform import open_platform
from tests.cli.deploy_support import app_token_of, init_site, ok_json, run
from tests.tools import npm_tool

CALLABLE = ["deleteSubmissions", "getMySubmission", "leaveStatsByDepartment",
            "listLeaveByIntent", "listMembers", "listPeriods", "listTeamLeave", "managePeriod",
            "registerMember", "submitLeave", "summarizeLeave", "updateLeaveRemark"]


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = init_site(tmp_path / "site")
    ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")
    return site


@pytest.fixture
def site_tools(site: Path) -> Iterator[SiteTools]:
    with connect(LOCAL, embedded=open_platform) as client:
        yield SiteTools(client, app_token_of(site), "prod")


def with_client(tools: SiteTools, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(build_server(tools)) as client:
            return await body(client)

    return anyio.run(main)


def listed(tools: SiteTools) -> dict[str, types.Tool]:
    async def body(client: Client) -> dict[str, types.Tool]:
        result = await client.list_tools()
        return {tool.name: tool for tool in result.tools}

    found: dict[str, types.Tool] = with_client(tools, body)
    return found


def call(tools: SiteTools, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    async def body(client: Client) -> types.CallToolResult:
        return await client.call_tool(name, arguments)

    result: types.CallToolResult = with_client(tools, body)
    return result


def text_of(result: types.CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, types.TextContent)
    return content.text


def data_of(result: types.CallToolResult) -> Any:
    """The JSON of a successful result, without the notes in front of it."""
    assert result.is_error is False, text_of(result)
    lines = [line for line in text_of(result).splitlines() if not line.startswith("Note: ")]
    return json.loads("\n".join(lines))


# ------------------------------------------------------------------------- listing


def test_tools_are_the_open_functions_and_the_meta_tools(site_tools: SiteTools) -> None:
    tools = listed(site_tools)
    assert sorted(tools) == sorted([*CALLABLE, *META_TOOLS])
    assert "debugSubmissionIntegrity" not in tools  # excluded by agent-tools.json


def test_annotations_follow_the_function_kind(site_tools: SiteTools) -> None:
    tools = listed(site_tools)

    def hints(name: str) -> tuple[Any, ...]:
        a = tools[name].annotations
        assert a is not None
        return (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)

    assert hints("listTeamLeave") == (True, None, None, False)
    # delete removes records and update overwrites (set) or empties (clear) a field: in
    # MCP, destructiveHint false promises an additive tool, which only create is.
    assert hints("deleteSubmissions") == (False, True, True, False)
    assert hints("updateLeaveRemark") == (False, True, True, False)
    assert hints("submitLeave") == (False, False, False, False)
    assert hints("managePeriod")[0] is False and hints("managePeriod")[3] is True
    assert hints("summarizeLeave") == (False, False, False, True)
    assert hints("discover_functions")[0] is True and hints("invoke_function")[0] is False


def test_descriptions_and_schemas_come_from_the_live_description(
        site_tools: SiteTools) -> None:
    tools = listed(site_tools)
    described = site_tools.describe("listTeamLeave")
    assert tools["listTeamLeave"].input_schema == described["inputSchema"]
    assert tools["listTeamLeave"].description is not None
    assert tools["listTeamLeave"].description.startswith(described["description"])
    assert APPROVAL_GUARD not in tools["listTeamLeave"].description
    for name in ("deleteSubmissions", "submitLeave", "managePeriod", "summarizeLeave"):
        assert APPROVAL_GUARD in (tools[name].description or ""), name
    assert "cannot be restored" in (tools["deleteSubmissions"].description or "")
    assert "record_not_found" in (tools["submitLeave"].description or "")


def test_no_tool_schema_has_oneof_anyof_or_allof_at_its_root(site_tools: SiteTools) -> None:
    """Anthropic, OpenAI and Gemini refuse such tool schemas (often the whole session);
    managePeriod's conditional cases move into its description instead."""
    tools = listed(site_tools)
    for tool in tools.values():
        assert not {"oneOf", "anyOf", "allOf"} & set(tool.input_schema), tool.name
    described = site_tools.describe("managePeriod")
    assert "oneOf" in described["inputSchema"]  # the platform keeps the full schema
    schema = tools["managePeriod"].input_schema
    assert schema["properties"] == described["inputSchema"]["properties"]
    assert schema["required"] == ["action"] and schema["additionalProperties"] is False
    assert ('Exactly one of these cases applies (the platform checks them): (1) when action '
            'is "create": title, start, end are required; (2) when action is "close": '
            "periodId is required. describe_function returns the complete inputSchema."
            ) in (tools["managePeriod"].description or "")


def test_nullable_params_are_anyof_branches_of_one_type_each(site_tools: SiteTools) -> None:
    tools = listed(site_tools)
    remark = tools["updateLeaveRemark"].input_schema["properties"]["remark"]
    assert remark["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert remark["description"]  # annotations stay beside the branches

    def type_arrays(node: Any, path: str) -> Iterator[str]:
        if isinstance(node, dict):
            if isinstance(node.get("type"), list):
                yield path
            for key, value in node.items():
                yield from type_arrays(value, f"{path}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from type_arrays(value, f"{path}/{i}")

    for name, tool in tools.items():
        assert list(type_arrays(tool.input_schema, name)) == []


def test_portable_schema_splits_an_enum_by_type() -> None:
    from basedb.agent_tools.site_tools import portable_schema

    schema = {"type": "object", "properties": {
        "level": {"type": ["integer", "null"], "enum": [1, 2, None], "description": "d"},
        "tags": {"type": ["array", "null"], "items": {"type": ["string"]}, "maxItems": 3}}}
    assert portable_schema(schema)["properties"] == {
        "level": {"description": "d", "anyOf": [{"type": "integer", "enum": [1, 2]},
                                                {"type": "null"}]},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}, "maxItems": 3},
                           {"type": "null"}]}}


@pytest.mark.slow
def test_mcp_inspector_strict_finds_nothing_to_report(
        site: Path, isolated_dirs: dict[str, Path]) -> None:
    """MCP Inspector's CLI lists the tools of `basedb mcp` over stdio; with --strict it
    reports every tool-schema portability problem (type arrays, untyped schemas, remote
    refs, boolean schemas) on stderr. There must be none."""
    inspector = npm_tool("mcp-inspector")
    env = [item for k, v in isolated_dirs.items()
           for item in ("-e", f"BASEDB_{k.upper()}_DIR={v}")]
    result = subprocess.run(
        # The connect timeout is a ceiling for a loaded machine (the server starts a
        # Python process first), not a window the test relies on.
        [str(inspector), "--cli", "--strict", "--connect-timeout", "600000", "--method",
         "tools/list", *env, "--cwd", str(site.parent), sys.executable, "-m", "basedb",
         "mcp", "--site", app_token_of(site)],
        capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    tools = json.loads(result.stdout)["tools"]
    assert sorted(tool["name"] for tool in tools) == sorted([*CALLABLE, *META_TOOLS])
    assert "Warning:" not in result.stderr and "Error:" not in result.stderr, result.stderr
    assert "portability" not in result.stderr, result.stderr


def test_case_summaries_say_what_they_cannot_render() -> None:
    schema, note = tool_input_schema({
        "type": "object", "properties": {"a": {"type": "string", "description": "A"}},
        "anyOf": [{"required": ["a"]}, {"not": {"required": ["a"]}}],
        "allOf": [{"if": {"required": ["a"]}, "then": {"required": ["b"]}}]})
    assert schema == {"type": "object",
                      "properties": {"a": {"type": "string", "description": "A"}}}
    assert note == ("At least one of these cases applies (the platform checks them): (1) a "
                    "is required; (2) see the complete inputSchema. All of these apply (the "
                    "platform checks them): (1) see the complete inputSchema. "
                    "describe_function returns the complete inputSchema.")
    assert tool_input_schema({"type": "object"}) == ({"type": "object"}, "")


def test_instructions_name_the_site_and_the_approval_guard(site_tools: SiteTools) -> None:
    async def body(client: Client) -> str | None:
        return client.instructions

    instructions = with_client(site_tools, body)
    assert "团队休假报备" in instructions and APPROVAL_GUARD in instructions


# ------------------------------------------------------------------------- calling


def test_a_read_tool_returns_the_data_as_json(site_tools: SiteTools) -> None:
    result = call(site_tools, "listPeriods", {})
    data = json.loads(text_of(result))
    assert data["rowCount"] == len(data["rows"]) > 0 and "period_id" in data["rows"][0]


def test_a_write_tool_writes(site_tools: SiteTools) -> None:
    result = call(site_tools, "registerMember", {"name": "Ada Test", "department": "研发部"})
    written = data_of(result)
    assert written["affected"] == 1 and len(written["recordIds"]) == 1
    assert text_of(result).startswith("Note: fields left unchanged because their optional "
                                      'parameter was missing or null: ["邮箱"].')
    members = data_of(call(site_tools, "listMembers", {}))
    assert "Ada Test" in [row["name"] for row in members["rows"]]


def test_a_partial_write_is_flagged(site_tools: SiteTools) -> None:
    result = call(site_tools, "deleteSubmissions", {"recordIds": ["recDoesNotExist1"]})
    assert text_of(result).startswith("Note: not every record was written "
                                      '(record_not_found: ["recDoesNotExist1"]).')
    assert data_of(result)["record_not_found"] == ["recDoesNotExist1"]


def test_refusals_are_error_results_with_the_platforms_message(
        site_tools: SiteTools) -> None:
    result = call(site_tools, "listTeamLeave", {"periodId": 5})
    assert result.is_error is True
    message = text_of(result)
    assert "Parameter: /params/" in message and "Fix:" in message and "Retry:" in message
    assert "code 800004002" in message and "LogID" in message
    unknown = call(site_tools, "noSuchFunction", {})
    assert unknown.is_error is True and "800004001" in text_of(unknown)
    assert call(site_tools, "not a tool!", {}).is_error is True


def test_meta_tools_reach_any_open_function(site_tools: SiteTools) -> None:
    discovered = json.loads(text_of(call(site_tools, "discover_functions", {})))
    by_id = {f["functionId"]: f for f in discovered["functions"]}
    assert sorted(by_id) == CALLABLE
    assert by_id["listPeriods"]["tool"] == "listPeriods"
    assert by_id["listPeriods"]["access"] == "read"
    assert by_id["submitLeave"]["access"] == "write"
    described = json.loads(text_of(call(site_tools, "describe_function",
                                        {"functionId": "deleteSubmissions"})))
    assert described["action"] == "delete" and described["inputSchema"]["type"] == "object"
    invoked = call(site_tools, "invoke_function", {"functionId": "listPeriods", "params": {}})
    assert json.loads(text_of(invoked))["rows"]
    bad = call(site_tools, "invoke_function", {"functionId": "listPeriods", "params": [1]})
    assert bad.is_error is True and "params must be an object" in text_of(bad)
    missing = call(site_tools, "describe_function", {})
    assert missing.is_error is True and "functionId" in text_of(missing)


def test_preview_tools(site: Path) -> None:
    with connect(LOCAL, embedded=open_platform) as client:
        tools = SiteTools(client, app_token_of(site), "preview")
        assert sorted(listed(tools)) == sorted([*CALLABLE, *META_TOOLS])


def test_large_results_are_cut_with_a_note() -> None:
    text = digest({"rows": ["x" * 1000] * 100})
    data, note = text.rsplit("\n", 1)
    assert len(data) == MAX_RESULT_CHARS
    assert note.startswith(f"[Truncated: showing the first {MAX_RESULT_CHARS} of ")
    assert digest({"a": 1}) == '{"a": 1}'


# ----------------------------------------------------------------------------- CLI


def test_without_the_sdk_the_command_says_how_to_install_it(
        site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mcp" else real(name, *a))
    result = run("mcp", "--env", "prod", cwd=site)
    assert result.exit_code == 2
    assert "pip install 'basedb-cli[mcp]'" in result.stderr


def test_a_site_that_cannot_be_served_fails_at_start(tmp_path: Path) -> None:
    site = init_site(tmp_path / "site")
    result = run("mcp", cwd=site)  # no production release yet
    assert result.exit_code == 1
    assert "800004004" in result.stderr and result.stdout == ""
    outside = run("mcp", "--site", "not a token")
    assert outside.exit_code == 2 and "SITE_INVALID" in outside.stderr


@pytest.mark.slow
def test_stdio_server_in_a_subprocess(site: Path, isolated_dirs: dict[str, Path]) -> None:
    env = {**os.environ, **{f"BASEDB_{k.upper()}_DIR": str(v)
                            for k, v in isolated_dirs.items()}}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "basedb", "mcp", "--site", app_token_of(site)],
                                   env=env, cwd=str(site.parent))

    async def main() -> tuple[list[str], str, str]:
        async with Client(params) as client:
            tools = await client.list_tools()
            read = await client.call_tool("listPeriods", {})
            write = await client.call_tool("registerMember",
                                           {"name": "Stdio Member", "department": "设计部"})
            return [t.name for t in tools.tools], text_of(read), text_of(write)

    names, read, write = anyio.run(main)
    assert sorted(names) == sorted([*CALLABLE, *META_TOOLS])
    assert json.loads(read)["rows"] and '"affected": 1' in write
