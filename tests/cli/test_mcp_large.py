"""`basedb mcp` on a generated 200-function site: tools/list fits a context (the meta
tools only, unless asked), pages by cursor when it serves many, and discover_functions
searches."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError

from basedb.agent_tools.mcp_server import build_server
from basedb.agent_tools.site_tools import (
    DISCOVER,
    META_TOOLS,
    TOOLS_PAGE_SIZE,
    SiteTools,
)
from basedb.client.client import connect
from basedb.client.profiles import LOCAL
from basedb.platform import open_platform
from bench.tokens import estimate_tokens
from tests.generated_site import GeneratedSite, deploy_generated

MAX_LIST_TOKENS = 20_000


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> GeneratedSite:
    return deploy_generated(tmp_path_factory.mktemp("mcp"), functions=200)


@pytest.fixture(autouse=True)
def _on_site(site: GeneratedSite, monkeypatch: pytest.MonkeyPatch) -> None:
    site.use(monkeypatch)


@pytest.fixture
def client(site: GeneratedSite) -> Iterator[Any]:
    with connect(LOCAL, embedded=open_platform) as client:
        yield client


def pages(tools: SiteTools) -> list[types.ListToolsResult]:
    async def main() -> list[types.ListToolsResult]:
        async with Client(build_server(tools)) as mcp:
            found = [await mcp.list_tools()]
            while found[-1].next_cursor is not None:
                found.append(await mcp.list_tools(cursor=found[-1].next_cursor))
            return found

    result: list[types.ListToolsResult] = anyio.run(main)
    return result


def call(tools: SiteTools, name: str, arguments: dict[str, Any]) -> Any:
    async def main() -> types.CallToolResult:
        async with Client(build_server(tools)) as mcp:
            return await mcp.call_tool(name, arguments)

    result = anyio.run(main)
    assert result.is_error is False, result.content
    [content] = result.content
    assert isinstance(content, types.TextContent)
    return json.loads(content.text)


def size_in_tokens(results: list[types.ListToolsResult]) -> int:
    return sum(estimate_tokens(result.model_dump_json(by_alias=True, exclude_none=True))
               for result in results)


def test_a_large_site_lists_the_meta_tools_only(site: GeneratedSite, client: Any) -> None:
    tools = SiteTools(client, site.app_token)
    listed = pages(tools)
    assert len(listed) == 1
    assert [tool.name for tool in listed[0].tools] == list(META_TOOLS)
    assert size_in_tokens(listed) < MAX_LIST_TOKENS
    assert DISCOVER in tools.instructions() and "query" in tools.instructions()


def test_all_tools_page_by_cursor(site: GeneratedSite, client: Any) -> None:
    tools = SiteTools(client, site.app_token, serve="all")
    listed = pages(tools)
    names = [tool.name for result in listed for tool in result.tools]
    assert len(listed) > 2 and all(len(r.tools) <= TOOLS_PAGE_SIZE + 3 for r in listed)
    assert len(names) == len(set(names)) > 150
    callable_now = {f["functionId"] for f in site.functions(client)
                    if f["schemaStatus"] in ("ready", "missing")}
    assert set(names) == callable_now | set(META_TOOLS)


def test_a_table_glob_serves_that_tables_functions(site: GeneratedSite, client: Any) -> None:
    tools = SiteTools(client, site.app_token, tables=("invoice*",))
    [listed] = pages(tools)
    names = {tool.name for tool in listed.tools} - set(META_TOOLS)
    expected = {f["functionId"] for f in site.functions(client, table="Invoices")}
    assert names and names == expected


def test_a_cursor_the_server_never_gave_is_refused(site: GeneratedSite, client: Any) -> None:
    async def main() -> None:
        async with Client(build_server(SiteTools(client, site.app_token))) as mcp:
            with pytest.raises(MCPError, match="cursor") as raised:
                await mcp.list_tools(cursor="page-two")
            assert raised.value.code == types.INVALID_PARAMS

    anyio.run(main)


def test_discover_searches_and_summarises_tables(site: GeneratedSite, client: Any) -> None:
    tools = SiteTools(client, site.app_token)
    overview = call(tools, DISCOVER, {})
    assert "functions" not in overview and overview["functionCount"] > 150
    invoices = next(t for t in overview["tables"] if t["table"] == "Invoices")
    assert invoices["reads"] > 0 and invoices["writes"] > 0
    found = call(tools, DISCOVER, {"query": "invoice", "access": "read"})
    assert found["functions"] and found["functions"][0]["table"] == "Invoices"
    assert all(f["access"] == "read" and f["tool"] == "invoke_function"
               for f in found["functions"])
    more = call(tools, DISCOVER, {"query": "invoice", "access": "read",
                                  "pageToken": found["pageToken"]}) if found["hasMore"] \
        else {"functions": []}
    assert not {f["functionId"] for f in more["functions"]} & {
        f["functionId"] for f in found["functions"]}
