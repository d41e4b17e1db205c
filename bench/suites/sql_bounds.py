"""A cheap call's latency while one site floods the platform with expensive queries.

`basedb serve` on loopback holds two sites. The hostile one publishes Database Functions
that would each run for ever (a recursive CTE that never ends, and a straight line of
quadratic strpos() calls no interrupt reaches); 40 clients keep 40 of them in flight
the whole time, each sending the next as soon as the last is answered (stopped at the
deadline, or refused with 99991400 once the site's slow-query slots are taken). A
victim site's cheap Database Function is called meanwhile, one call after another.

Figure: the cheap call's p99 under the flood (median of the rounds' p99s), against the
same call's p99 with no flood in the same run; target ≤ 100 ms.
"""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.registry import BenchContext, BenchError, BenchResult, Figure, Target, register
from bench.serve_process import Server, served
from bench.timing import Samples

TARGET = Target(0.100, "seconds")
FLOOD = 40
CHEAP_SQL = 'SELECT count(*) AS n FROM "Tasks" WHERE "Done" = $1'
HEAVY = {
    "countForever": 'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) '
                    'SELECT count(*) AS c FROM r, "Tasks"',
    "straightLine": "SELECT " + " + ".join(
        f"strpos(repeat('a', {262_143 - i}) || 'b', repeat('a', 131071) || 'b')"
        for i in range(40)) + ' AS n FROM "Tasks" LIMIT 1',
}


@dataclass(frozen=True, slots=True)
class Plan:
    rounds: int
    calls: int  # cheap calls per round

    @classmethod
    def of(cls, quick: bool) -> Plan:
        return cls(rounds=2, calls=150) if quick else cls(rounds=3, calls=400)


@dataclass(frozen=True, slots=True)
class Sites:
    owner_token: str
    hostile: str
    victim: str


@register("sql-bounds", "a cheap call's p99 while 40 expensive queries of another site run")
def sql_bounds_benchmark(ctx: BenchContext) -> BenchResult:
    plan = Plan.of(ctx.settings.quick)
    scratch = ctx.scratch / "sql-bounds"
    ctx.log("sql-bounds: building two sites …")
    sites = build_sites(scratch / "data")
    with served(ctx.basedb, scratch / "data", env=ctx.env, log=scratch / "serve.log",
                cpus=None) as server:
        idle = Samples("cheap call, no flood")
        loaded = Samples(f"cheap call, {FLOOD} expensive queries in flight")
        answers: dict[int, int] = {}
        idle_p50: list[float] = []
        loaded_p50: list[float] = []
        for round_number in range(plan.rounds):
            ctx.log(f"sql-bounds: round {round_number + 1} of {plan.rounds} …")
            calls = cheap_calls(server, sites, plan.calls)
            idle.seconds.append(p99(calls))
            idle_p50.append(statistics.median(calls))
            with Flood(server, sites) as flood:
                calls = cheap_calls(server, sites, plan.calls)
            loaded.seconds.append(p99(calls))
            loaded_p50.append(statistics.median(calls))
            for code, count in flood.answers.items():
                answers[code] = answers.get(code, 0) + count
    figure = Figure("cheap p99 under flood", loaded, idle, TARGET)
    notes = [f"cheap call p50: {median_ms(idle_p50):.1f} ms idle, {median_ms(loaded_p50):.1f} "
             "ms under the flood",
             f"the flood's answers by code: {dict(sorted(answers.items()))} "
             "(800004005 stopped at the deadline, 99991400 refused a slow slot)"]
    return BenchResult("sql-bounds", [figure], details={"floodAnswers": answers}, notes=notes)


def median_ms(seconds: list[float]) -> float:
    return statistics.median(seconds) * 1000


def p99(seconds: list[float]) -> float:
    ordered = sorted(seconds)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def cheap_calls(server: Server, sites: Sites, calls: int) -> list[float]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    path = f"/open-apis/base/v3/sites/{sites.victim}/functions/cheap/invoke"
    headers = {"Authorization": f"Bearer {sites.owner_token}",
               "Content-Type": "application/json"}
    seconds = []
    try:
        for number in range(calls + 10):
            started = time.perf_counter()
            connection.request("POST", path, body=json.dumps({"params": {
                "done": number % 2 == 0}}), headers=headers)
            response = connection.getresponse()
            body = response.read()
            if response.status != 200:
                raise BenchError(f"the cheap call answered HTTP {response.status}: "
                                 f"{body[:300]!r}")
            if number >= 10:  # the first ones warm the connection and the worker
                seconds.append(time.perf_counter() - started)
    finally:
        connection.close()
    return seconds


class Flood:
    """FLOOD clients, each keeping one expensive call of the hostile site in flight."""

    def __init__(self, server: Server, sites: Sites) -> None:
        self.server, self.sites = server, sites
        self.stop = threading.Event()
        self.answers: dict[int, int] = {}
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._client, args=(number,), daemon=True)
                        for number in range(FLOOD)]

    def __enter__(self) -> Flood:
        for thread in self.threads:
            thread.start()
        time.sleep(1.0)  # every client has a call in flight before measuring
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=60)

    def _client(self, number: int) -> None:
        function_id = sorted(HEAVY)[number % len(HEAVY)]
        path = f"/open-apis/base/v3/sites/{self.sites.hostile}/functions/{function_id}/invoke"
        headers = {"Authorization": f"Bearer {self.sites.owner_token}",
                   "Content-Type": "application/json"}
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        try:
            while not self.stop.is_set():
                connection.request("POST", path, body=b'{"params": {}}', headers=headers)
                response = connection.getresponse()
                code = json.loads(response.read()).get("code", response.status)
                with self.lock:
                    self.answers[code] = self.answers.get(code, 0) + 1
        finally:
            connection.close()


def build_sites(data_dir: Path) -> Sites:
    """A hostile and a victim site, each bound to its own small Tasks table, released."""
    from basedb.client.client import EMBEDDED_BASE_URL, Client
    from basedb.client.transport import InProcessTransport
    from basedb.platform import open_platform

    platform = open_platform(data_dir)
    try:
        with Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                    transport=InProcessTransport(platform.app), timeout=120) as client:
            hostile = _site(client, "Hostile", [
                _function(name, sql) for name, sql in HEAVY.items()])
            victim = _site(client, "Victim", [_function("cheap", CHEAP_SQL, [{
                "name": "done", "kind": "BOOL", "description": "Whether the task is done"}])])
        return Sites(platform.owner_token, hostile, victim)
    finally:
        platform.close()


def _function(function_id: str, sql: str,
              params: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"functionId": function_id, "sql": sql, "declaration": {
        "name": function_id, "description": f"{function_id}, for the benchmark",
        "meta": {"params": params or []}}}


def _site(client: Any, title: str, functions: list[dict[str, Any]]) -> str:
    from basedb.core.site_zip import InputFile, build_site_zip, fingerprint

    base = client.request("POST", "/bases", json={"name": title})["data"]["base_token"]
    table = client.request("POST", f"/bases/{base}/tables", json={"name": "Tasks", "fields": [
        {"name": "Title", "type": "text"}, {"name": "Done", "type": "checkbox"}]})["data"]
    client.request("POST", f"/bases/{base}/tables/{table['id']}/records/batch_create",
                   json={"fields": ["Title", "Done"],
                         "rows": [[f"Task {n}", n % 3 == 0] for n in range(200)]})
    app = client.request("POST", "/sites/create", json={"title": title})["data"]["appToken"]
    client.request("POST", f"/sites/{app}/bind_base",
                   json={"baseToken": base, "tableIds": [table["id"]]})
    client.request("PUT", f"/sites/{app}/draft/functions",
                   json={"databaseFunctions": functions, "mutations": [], "faas": []})
    inputs = [InputFile.of("README.md", f"# {title}\n".encode()),
              InputFile.of("src/index.html", b"<!doctype html><title>Tasks</title>\n")]
    stamp = fingerprint(inputs)
    deployed = client.request("POST", f"/sites/{app}/deployments", data={"fingerprint": stamp},
                              files={"artifact": ("site.zip", build_site_zip(inputs, stamp),
                                                  "application/zip")})["data"]
    client.request("POST", f"/sites/{app}/deployments/{deployed['deploymentId']}/promote")
    return str(app)
