"""What an agent reads to reach a function on a deployed site, in tokens
(`bench.tokens.estimate_tokens`).

Following the site Skill: SKILL.md (frontmatter and body, as installed), then the one
reference file that holds the function's full entry, read whole. On a small site that
is references/functions.md; on a large one the file of the function's table, which
SKILL.md's index names. `skill_reading` gives that sum for every function; the median
and the maximum are the figures.

MCP: the tools/list answer a client puts in the model's context, every page of it, as
JSON (`mcp_list_tokens`).
"""

from __future__ import annotations

import statistics
from typing import Any

from bench.tokens import estimate_tokens


def skill_reading(skill: dict[str, Any]) -> dict[str, int]:
    """functionId → tokens read to reach its full entry, from `GET …/skill`'s data."""
    front = estimate_tokens(skill["markdown"])
    sizes = {name: estimate_tokens(text) for name, text in skill["references"].items()}
    costs: dict[str, int] = {}
    for function in skill["functions"]:
        heading = f"### `{function['functionId']}`"
        holding = [name for name, text in skill["references"].items() if heading in text]
        if not holding:
            raise AssertionError(f"no reference file has {heading}")
        costs[function["functionId"]] = front + min(sizes[name] for name in holding)
    return costs


def skill_body_tokens(skill: dict[str, Any]) -> int:
    """SKILL.md without its frontmatter (the part Agent Skills asks to keep short)."""
    markdown: str = skill["markdown"]
    body = markdown.split("\n---\n", 1)[1] if markdown.startswith("---\n") else markdown
    return estimate_tokens(body)


def summary(costs: dict[str, int]) -> dict[str, float]:
    values = list(costs.values())
    return {"median": statistics.median(values), "max": max(values)}


def mcp_list_tokens(tools: Any) -> tuple[int, int]:
    """(tokens, tools) of every tools/list page `tools` (a SiteTools) serves."""
    import mcp_types as types  # the MCP SDK is an optional dependency

    from basedb.agent_tools.mcp_server import to_mcp_tool

    total = count = 0
    cursor: str | None = None
    while True:
        specs, cursor = tools.tools_page(cursor)
        result = types.ListToolsResult(tools=[to_mcp_tool(s) for s in specs],
                                       next_cursor=cursor)
        total += estimate_tokens(result.model_dump_json(by_alias=True, exclude_none=True))
        count += len(specs)
        if cursor is None:
            return total, count
