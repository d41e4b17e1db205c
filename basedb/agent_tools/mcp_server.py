"""`basedb mcp`: a site's open functions as MCP tools over stdio (MCP Python SDK 2.x,
low-level `Server`). What the tools are and say lives in basedb.agent_tools.site_tools;
this module only adapts it to the protocol.

    tools = SiteTools(client, app_token, env)
    server = build_server(tools)
    anyio.run(serve_stdio, server)

The handlers are async; the client is synchronous, so every request to the platform
runs in a worker thread and the event loop keeps serving pings and cancellations.
Importing this module imports `mcp`, which is an optional dependency
(`pip install 'basedb-cli[mcp]'`).
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from basedb import __version__
from basedb.agent_tools.site_tools import InvalidCursor, SiteTools, ToolSpec

SERVER_NAME = "basedb"


def to_mcp_tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(name=spec.name, title=spec.title, description=spec.description,
                      input_schema=spec.input_schema,
                      annotations=types.ToolAnnotations(
                          read_only_hint=spec.annotations.get("readOnlyHint"),
                          destructive_hint=spec.annotations.get("destructiveHint"),
                          idempotent_hint=spec.annotations.get("idempotentHint"),
                          open_world_hint=spec.annotations.get("openWorldHint")))


def build_server(tools: SiteTools) -> Server[Any]:
    """The MCP server of one site; `tools.instructions()` is read once, here."""

    async def list_tools(_ctx: Any, params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        try:
            specs, next_cursor = await anyio.to_thread.run_sync(tools.tools_page, cursor)
        except InvalidCursor as error:
            raise MCPError(types.INVALID_PARAMS, str(error)) from None
        return types.ListToolsResult(tools=[to_mcp_tool(spec) for spec in specs],
                                     next_cursor=next_cursor)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        outcome = await anyio.to_thread.run_sync(tools.call, params.name, arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=outcome.text)],
                                    is_error=outcome.is_error)

    return Server(SERVER_NAME, version=__version__, title=f"basedb: {tools.load_title()}",
                  instructions=tools.instructions(), on_list_tools=list_tools,
                  on_call_tool=call_tool)


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client over this process's stdin and stdout until stdin closes."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(tools: SiteTools) -> None:
    """Check the site can be listed (so a wrong token or a missing deployment fails at
    start, on stderr, not in the first tool call), then serve."""
    tools.functions()
    anyio.run(serve_stdio, build_server(tools))
