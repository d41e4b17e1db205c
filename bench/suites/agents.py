"""What an agent reads to reach a function, at 12, 200 and 1,000 functions: the site
Skill (SKILL.md, then the reference file holding the function's entry; median and
maximum over every function, `bench.agent_reading`) and the size of MCP's tools/list.
Tokens are the estimate of bench/tokens.py (characters / 4 for ASCII, 1 per other
character).

The 12-function site is the example template (`basedb init --template example`); the
others are `python -m bench.generate` workspaces provisioned on the embedded platform
(bench/agent_site.py). Each is deployed to preview, then production, by the CLI in a
fresh process. Targets, at 200 and 1,000: a median under 8,000 tokens to reach a
function, tools/list under 20,000, and SKILL.md's body under 5,000.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.agent_reading import mcp_list_tokens, skill_body_tokens, skill_reading, summary
from bench.agent_site import provision_site
from bench.generate import generate_workspace
from bench.registry import BenchContext, BenchResult, Figure, Target, register
from bench.timing import Samples, run_process

SIZES = (12, 200, 1_000)
QUICK_SIZES = (12, 200)
REACH_TARGET = Target(8_000, "tokens")
LIST_TARGET = Target(20_000, "tokens")
BODY_TARGET = Target(5_000, "tokens")


@register("agents", "tokens an agent reads to reach a function through the site Skill, "
                    "and MCP tools/list, at 12, 200 and 1,000 functions")
def agents_benchmark(ctx: BenchContext) -> BenchResult:
    figures: list[Figure] = []
    details: dict[str, Any] = {}
    for size in QUICK_SIZES if ctx.settings.quick else SIZES:
        measured = measure_size(ctx, size)
        details[str(size)] = measured
        large = size >= 200
        figures += [
            Figure(f"reach-median-{size}", _tokens(f"Skill: reach a function, median, {size:,} "
                                                  "functions", measured["reach"]["median"]),
                   target=REACH_TARGET if large else None),
            Figure(f"reach-max-{size}", _tokens(f"Skill: reach a function, max, {size:,} "
                                               "functions", measured["reach"]["max"])),
            Figure(f"skill-body-{size}", _tokens(f"SKILL.md body, {size:,} functions",
                                                measured["skillBody"]),
                   target=BODY_TARGET if large else None),
            Figure(f"mcp-list-{size}", _tokens(f"MCP tools/list ({measured['mcpTools']} tools), "
                                              f"{size:,} functions", measured["mcpList"]),
                   target=LIST_TARGET if large else None),
        ]
    notes = ["agents: tokens are estimated (ASCII characters / 4 + one per other "
             "character); reaching a function = SKILL.md + the one reference file with its "
             "entry, read whole."]
    return BenchResult("agents", figures, details=details, notes=notes)


def _tokens(label: str, value: float) -> Samples:
    return Samples(label, seconds=[float(value)], unit="tokens")


def measure_size(ctx: BenchContext, size: int) -> dict[str, Any]:
    root = ctx.scratch / f"agents-site-{size}"
    if size == 12:
        run_process([*ctx.basedb, "init", str(root), "--template", "example", "--json"],
                    env=ctx.env, ok=frozenset({0}))
    else:
        ctx.log(f"agents: generating and deploying {size:,} functions …")
        generate_workspace(root, functions=size, seed=ctx.settings.seed)
        with _client(ctx) as client:
            provision_site(client, root)
    for extra in ([], ["--production", "--yes"]):
        run_process([*ctx.basedb, "deploy", "-C", str(root), "--json", *extra], env=ctx.env,
                    ok=frozenset({0}))
    app_token = _app_token(root)
    from basedb.agent_tools.site_tools import SiteTools

    with _client(ctx) as client:
        skill = client.request("GET", f"/sites/{app_token}/skill",
                               params={"env": "prod"})["data"]
        tokens, count = mcp_list_tokens(SiteTools(client, app_token))
    reach = summary(skill_reading(skill))
    return {"functions": len(skill["functions"]), "reach": reach,
            "skillBody": skill_body_tokens(skill), "references": len(skill["references"]),
            "mcpList": tokens, "mcpTools": count}


def _app_token(root: Path) -> str:
    from basedb.workspace.config import workspace_app_token

    return workspace_app_token(root)


class _client:
    """A client of the embedded platform in the benchmark's data dir (closed after)."""

    def __init__(self, ctx: BenchContext) -> None:
        self.ctx = ctx

    def __enter__(self) -> Any:
        from basedb.client.client import EMBEDDED_BASE_URL, Client
        from basedb.client.transport import InProcessTransport
        from basedb.platform import open_platform

        self.platform = open_platform(Path(self.ctx.env["BASEDB_DATA_DIR"]))
        self.client = Client(base_url=EMBEDDED_BASE_URL, token=self.platform.owner_token,
                             transport=InProcessTransport(self.platform.app))
        return self.client.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.client.__exit__(*exc)
        self.platform.close()
