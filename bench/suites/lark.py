"""A command as a Feishu bot: `basedb api GET /sites/list` with a bot profile made of
LARK_APP_ID / LARK_APP_SECRET against the same command with a stored token, both in
fresh processes against one `basedb serve` standing in for Lark.

The bot's tenant access token is fetched once (the warm-up) and then read from the secret
store, so what this measures is what signing in as a bot adds to every command of a CI
job: resolving the implicit profile, reading the cached token, checking its expiry. The
peer is the same request with an endpoint profile, whose token is in config.json.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from bench.registry import BenchContext, BenchResult, Figure, Target, register
from bench.serve_process import cpu_split, pinned, served
from bench.timing import compare_processes

TARGET = Target(1.5, "ratio")


def _post(url: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        found: dict[str, Any] = json.loads(answer.read())
    return found


@register("lark", "a command as a Feishu bot (cached tenant token) vs. a stored token")
def lark_benchmark(ctx: BenchContext) -> BenchResult:
    root = ctx.scratch / "lark"
    root.mkdir(parents=True, exist_ok=True)
    server_cpus, client_cpus = cpu_split()
    with served(ctx.basedb, root / "stand-in", env=ctx.env, log=root / "serve.log",
                cpus=server_cpus) as server, pinned(client_cpus):
        owner = (root / "stand-in" / "owner.token").read_text().strip()
        app = _post(server.base_url + "/_basedb/lark/apps", owner, {"name": "Bench"})["data"]
        env = {**ctx.env, "LARK_APP_ID": app["app_id"], "LARK_APP_SECRET": app["app_secret"],
               "BASEDB_LARK_OPEN_URL": server.base_url,
               "BASEDB_LARK_ACCOUNTS_URL": server.base_url, "BASEDB_SECRET_STORE": "file"}
        login = [*ctx.basedb, "auth", "login", "--endpoint", server.base_url, "--token",
                 owner, "--profile", "stored"]
        compare_processes({"login": login}, runs=0, env=env)
        commands = {
            "bot": [*ctx.basedb, "api", "GET", "/sites/list", "--profile", "ci"],
            "stored token": [*ctx.basedb, "api", "GET", "/sites/list", "--profile", "stored"],
        }
        runs = max(ctx.settings.runs, 5)
        ctx.log(f"lark: {runs} runs of each command …")
        samples = compare_processes(commands, runs=runs, env=env)
    return BenchResult("lark", [Figure("bot command", samples["bot"], samples["stored token"],
                                       TARGET)],
                       notes=["bot: LARK_APP_ID/LARK_APP_SECRET and --profile ci, tenant "
                              "token cached by the warm-up run; peer: an endpoint profile"])
