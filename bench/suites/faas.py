"""FaaS over loopback HTTP (`basedb serve`): warm calls against a Database Function on the
same server and against a persistent `node` round trip (the floor), throughput with 8
clients, the first call of a new deployment, and a cheap call's p99 while handlers
misbehave.

Figures (medians unless said):
- warm: sequential FaaS calls on one keep-alive connection, each paired with a call of
  the site's Database Function (alternating which goes first): p50 ≤ 3 ms, and ≤ 2× the
  Database Function's p50; a round trip to an already running `node` process (a line
  echoed over pipes) is printed beside them as the floor;
- throughput: 8 keep-alive clients (the Node load generator of the invoke benchmark),
  closed loop, as seconds per call (≤ 2 ms, i.e. ≥ 500 calls/s);
- cold start: the first call after a new deployment is promoted (≤ 60 ms), with spare
  workers as `basedb serve` keeps them; a worker started on demand is in the notes;
- responsive: the Database Function's p99 while 6 handlers spin until their timeout,
  exhaust their memory and flood their logs (≤ 100 ms), beside its p99 on a quiet server.

With two CPUs the server (and the workers it starts) is pinned to one, everything
measuring to the other, as in the invoke benchmark.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any

from bench.orders_site import DECLARATION, FUNCTION_ID, SQL, OrdersSite, build_orders_site
from bench.registry import BenchContext, BenchError, BenchResult, Figure, Target, register
from bench.serve_process import Server, cpu_split, pinned, served
from bench.suites.invoke import load_run, percentile
from bench.timing import Samples

WARM_TARGET = Target(0.003, "seconds")
WARM_RATIO = Target(2.0, "ratio")
MIN_RATE = 500.0
THROUGHPUT_TARGET = Target(1 / MIN_RATE, "seconds")
COLD_TARGET = Target(0.060, "seconds")
RESPONSIVE_TARGET = Target(0.100, "seconds")
CLIENTS = 8
ATTACKERS = 6
SETTLE_S = 1.0  # between a deployment and its first call: deployments are not back to back

ECHO = "export default async (input) => ({code: 0, data: input});\n"
SPIN = "export default async () => { for (;;) {} };\n"
HOG = ("export default async () => { const h = []; "
       "for (;;) h.push(Buffer.alloc(2 ** 24, 1)); };\n")
FLOOD = ("export default async () => { const line = 'x'.repeat(1000); "
         "for (;;) console.log(line); };\n")
NODE_ECHO = ("const rl = require('readline').createInterface({input: process.stdin});"
             "rl.on('line', (line) => process.stdout.write(line + '\\n'));")


@dataclass(frozen=True, slots=True)
class Plan:
    records: int
    sequential: int
    warmup: int
    throughput_runs: int
    throughput_seconds: float
    cold_starts: int
    responsive_calls: int

    @classmethod
    def of(cls, quick: bool) -> Plan:
        if quick:
            return cls(records=2_000, sequential=400, warmup=100, throughput_runs=1,
                       throughput_seconds=2.0, cold_starts=5, responsive_calls=300)
        return cls(records=10_000, sequential=2_000, warmup=200, throughput_runs=3,
                   throughput_seconds=5.0, cold_starts=15, responsive_calls=1_000)


def _faas(function_id: str, source: str, timeout_ms: int = 10_000) -> dict[str, Any]:
    return {"functionId": function_id, "handler": source, "declaration": {
        "name": function_id, "description": f"{function_id}: a benchmark handler",
        "timeoutMs": timeout_ms, "inputSchema": {"type": "object", "properties": {
            "text": {"type": "string", "description": "Any text; echoed back"}}}}}


def _functions(version: int) -> dict[str, Any]:
    echo = ECHO + f"// release {version}\n"
    return {"databaseFunctions": [{"functionId": FUNCTION_ID, "sql": SQL,
                                   "declaration": DECLARATION}], "mutations": [],
            "faas": [_faas("echo", echo), _faas("spin", SPIN, 2_000),
                     _faas("hog", HOG, 5_000), _faas("flood", FLOOD, 2_000)]}


class Caller:
    """Invokes over one keep-alive connection, as the owner."""

    def __init__(self, server: Server, site: OrdersSite) -> None:
        self.site = site
        self.connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        self.headers = {"Authorization": f"Bearer {site.owner_token}",
                        "Content-Type": "application/json"}

    def request(self, method: str, path: str, body: Any = None,
                headers: dict[str, str] | None = None, raw: bytes | None = None,
                ) -> tuple[float, int, dict[str, Any]]:
        payload = raw if raw is not None else (json.dumps(body).encode() if body is not None
                                               else None)
        if self.connection.sock is not None and _peer_closed(self.connection.sock):
            self.connection.close()  # the server closed the idle keep-alive connection
        started = time.perf_counter()
        self.connection.request(method, path, payload, headers or self.headers)
        response = self.connection.getresponse()
        content = response.read()
        seconds = time.perf_counter() - started
        try:
            document = json.loads(content)
        except ValueError:
            document = {"raw": content[:300].decode("utf-8", "replace")}
        return seconds, response.status, document

    def invoke(self, function_id: str, params: dict[str, Any]) -> tuple[float, int,
                                                                        dict[str, Any]]:
        from basedb.core.paths import API_PREFIX

        return self.request("POST", f"{API_PREFIX}/sites/{self.site.app_token}/functions/"
                            f"{function_id}/invoke", {"params": params})

    def close(self) -> None:
        self.connection.close()


def _peer_closed(sock: Any) -> bool:
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)  # an idle keep-alive connection is readable only once closed


def _ok(answer: tuple[float, int, dict[str, Any]], what: str) -> float:
    seconds, status, document = answer
    if status != 200 or document.get("code") != 0:
        raise BenchError(f"{what} answered HTTP {status}: {json.dumps(document)[:300]}")
    return seconds


def release(caller: Caller, version: int) -> str:
    """Draft the functions (a new echo source), deploy a preview and promote it."""
    from basedb.core.paths import API_PREFIX
    from basedb.core.site_zip import InputFile, build_site_zip, fingerprint

    app = f"{API_PREFIX}/sites/{caller.site.app_token}"
    _ok(caller.request("PUT", f"{app}/draft/functions", _functions(version)), "draft")
    inputs = [InputFile.of("README.md", b"# Orders\n"),
              InputFile.of("src/index.html", f"<title>v{version}</title>\n".encode())]
    stamp = fingerprint(inputs)
    archive = build_site_zip(inputs, stamp)
    boundary = "benchboundary7d1f"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"fingerprint\"\r\n\r\n"
            f"{stamp}\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"artifact\"; "
            f"filename=\"site.zip\"\r\nContent-Type: application/zip\r\n\r\n").encode() \
        + archive + f"\r\n--{boundary}--\r\n".encode()
    headers = {"Authorization": caller.headers["Authorization"],
               "Content-Type": f"multipart/form-data; boundary={boundary}"}
    _, status, document = caller.request("POST", f"{app}/deployments", headers=headers,
                                         raw=body)
    if status != 200 or document.get("code") != 0:
        raise BenchError(f"deployment answered HTTP {status}: {json.dumps(document)[:300]}")
    deployment = document["data"]["deploymentId"]
    _ok(caller.request("POST", f"{app}/deployments/{deployment}/promote"), "promote")
    return str(deployment)


@register("faas", "FaaS over loopback HTTP: warm calls vs. a Database Function and a "
                  "node round trip, throughput, cold start, p99 under misbehaving handlers")
def faas_benchmark(ctx: BenchContext) -> BenchResult:
    plan = Plan.of(ctx.settings.quick)
    node = os.environ.get("BASEDB_NODE", "").strip() or shutil.which("node")
    if not node:
        raise BenchError("Node.js is not installed: FaaS cannot run")
    ctx.log(f"faas: a site of {plan.records:,} orders …")
    site = build_orders_site(ctx.scratch / "faas-data", records=plan.records,
                             seed=ctx.settings.seed)
    params = site.params_sequence(plan.warmup + plan.sequential, ctx.settings.seed)
    server_cpus, client_cpus = cpu_split()
    with served(ctx.basedb, site.data_dir, env=ctx.env, log=ctx.scratch / "faas-serve.log",
                cpus=server_cpus) as server, pinned(client_cpus):
        caller = Caller(server, site)
        try:
            release(caller, 0)
            ctx.log(f"faas: {plan.sequential:,} warm calls, each paired with the Database "
                    "Function …")
            warm, database = measure_warm(caller, params, plan.warmup)
            floor = node_round_trip(node, server_cpus, plan.warmup + plan.sequential,
                                    plan.warmup)
            ctx.log(f"faas: throughput, {CLIENTS} clients …")
            runs = measure_throughput(ctx, server, site, plan)
            db_runs = measure_throughput(ctx, server, site, plan, FUNCTION_ID,
                                         [{"params": values} for values in params[:64]])
            ctx.log(f"faas: a cheap call while {ATTACKERS} handlers misbehave …")
            quiet_p99 = percentile(database.seconds, 0.99)
            attacked = measure_responsive(server, site, params, plan.responsive_calls)
            ctx.log(f"faas: {plan.cold_starts} cold starts …")
            cold = measure_cold(caller, plan.cold_starts, first_version=1)
        finally:
            caller.close()
    on_demand = measure_on_demand(ctx, site, server_cpus, client_cpus, plan)
    rates = [run["perSecond"] for run in runs]
    db_rates = [run["perSecond"] for run in db_runs]
    attacked_p99 = percentile(attacked, 0.99)
    figures = [
        Figure("warm", warm, database, target=WARM_RATIO),
        Figure("warm-p50", Samples("FaaS call p50 over HTTP", seconds=warm.seconds),
               target=WARM_TARGET),
        Figure("warm-floor", Samples("FaaS call", seconds=warm.seconds), floor),
        Figure("throughput", Samples(
            f"s per FaaS call, {CLIENTS} clients (= {sorted(rates)[len(rates) // 2]:.0f}/s)",
            seconds=[1 / rate for rate in rates]), Samples(
            f"s per Database Function call (= {sorted(db_rates)[len(db_rates) // 2]:.0f}/s)",
            seconds=[1 / rate for rate in db_rates]), target=THROUGHPUT_TARGET),
        Figure("cold-start", cold, target=COLD_TARGET),
        Figure("responsive", Samples(f"DB Function p99, {ATTACKERS} handlers misbehaving",
                                     seconds=[attacked_p99]),
               Samples("DB Function p99, quiet", seconds=[quiet_p99]),
               target=RESPONSIVE_TARGET),
    ]
    details = {
        "records": plan.records,
        "warm": _summary(warm), "databaseFunction": _summary(database),
        "nodeRoundTrip": _summary(floor), "throughput": runs,
        "databaseFunctionThroughput": db_runs, "coldStart": _summary(cold),
        "coldStartOnDemand": _summary(on_demand),
        "responsive": {"calls": len(attacked), "p50Ms": round(percentile(attacked, 0.5) * 1e3,
                                                              3),
                       "p99Ms": round(attacked_p99 * 1e3, 3), "quietP99Ms":
                       round(quiet_p99 * 1e3, 3)},
        "cpus": {"server": sorted(server_cpus or []), "client": sorted(client_cpus or [])},
    }
    return BenchResult("faas", figures, details=details, notes=notes(details, rates))


def _summary(samples: Samples) -> dict[str, Any]:
    return {"calls": len(samples.seconds),
            "p50Ms": round(percentile(samples.seconds, 0.5) * 1000, 3),
            "p99Ms": round(percentile(samples.seconds, 0.99) * 1000, 3)}


# ------------------------------------------------------------------------ measures


def measure_warm(caller: Caller, params: list[dict[str, str]],
                 warmup: int) -> tuple[Samples, Samples]:
    warm = Samples("FaaS call over HTTP (warm worker)")
    database = Samples("Database Function call, same server")
    for number, values in enumerate(params):
        text = {"text": f"{values['customer']} {values['status']}"}
        if number % 2:
            db_seconds = _ok(caller.invoke(FUNCTION_ID, values), "the Database Function")
            faas_seconds = _check_echo(caller.invoke("echo", text), text)
        else:
            faas_seconds = _check_echo(caller.invoke("echo", text), text)
            db_seconds = _ok(caller.invoke(FUNCTION_ID, values), "the Database Function")
        if number >= warmup:
            warm.seconds.append(faas_seconds)
            database.seconds.append(db_seconds)
    return warm, database


def _check_echo(answer: tuple[float, int, dict[str, Any]], sent: dict[str, str]) -> float:
    seconds = _ok(answer, "the FaaS echo")
    if answer[2]["data"] != sent:
        raise BenchError(f"the FaaS echo answered {answer[2]['data']!r} to {sent!r}")
    return seconds


def node_round_trip(node: str, cpus: set[int] | None, count: int, warmup: int) -> Samples:
    """A line to an already running node process and back, over pipes."""
    samples = Samples("floor: round trip to a running node process")
    process = subprocess.Popen([node, "-e", NODE_ECHO], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    try:
        if cpus is not None:
            os.sched_setaffinity(process.pid, cpus)
        line = json.dumps({"type": "call", "input": {"text": "C0042 已付款"}}).encode() + b"\n"
        for number in range(count):
            started = time.perf_counter()
            process.stdin.write(line)
            process.stdin.flush()
            echoed = process.stdout.readline()
            seconds = time.perf_counter() - started
            if echoed != line:
                raise BenchError("the node echo process answered something else")
            if number >= warmup:
                samples.seconds.append(seconds)
    finally:
        process.kill()
        process.wait()
    return samples


def measure_throughput(ctx: BenchContext, server: Server, site: OrdersSite, plan: Plan,
                       function_id: str = "echo",
                       bodies: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    from basedb.core.paths import API_PREFIX

    node = os.environ.get("BASEDB_NODE", "").strip() or shutil.which("node") or "node"
    config = ctx.scratch / "faas-load.json"
    config.write_text(json.dumps({
        "url": f"{server.base_url}{API_PREFIX}/sites/{site.app_token}/functions/"
               f"{function_id}/invoke",
        "token": site.owner_token,
        "bodies": bodies or [{"params": {"text": f"call {n}"}} for n in range(64)],
        "concurrency": CLIENTS, "warmupSeconds": 1.0, "seconds": plan.throughput_seconds}),
        encoding="utf-8")
    runs = []
    for _ in range(plan.throughput_runs):
        runs.append(load_run(node, config, plan.throughput_seconds, "FaaS calls"))
    return runs


def measure_responsive(server: Server, site: OrdersSite, params: list[dict[str, str]],
                       calls: int) -> list[float]:
    """The Database Function, sequentially, while ATTACKERS clients keep calling handlers
    that spin, hog memory and flood their logs (each ending in an error)."""
    stop = threading.Event()
    failures: list[str] = []

    def attack(function_id: str) -> None:
        attacker = Caller(server, site)
        try:
            while not stop.is_set():
                _, status, document = attacker.invoke(function_id, {})
                if document.get("code") not in (800004005, 503):
                    failures.append(f"{function_id}: HTTP {status} {document}")
        finally:
            attacker.close()

    threads = [threading.Thread(target=attack, args=(name,), daemon=True)
               for name in ("spin", "spin", "hog", "hog", "flood", "flood")[:ATTACKERS]]
    for thread in threads:
        thread.start()
    measurer = Caller(server, site)
    seconds: list[float] = []
    try:
        time.sleep(1.0)  # every attacker is running
        for number in range(calls):
            seconds.append(_ok(measurer.invoke(FUNCTION_ID, params[number % len(params)]),
                               "the Database Function under attack"))
    finally:
        stop.set()
        measurer.close()
        for thread in threads:
            thread.join(timeout=30)
    if failures:
        raise BenchError(f"a misbehaving handler was not stopped as expected: {failures[0]}")
    return seconds


def measure_cold(caller: Caller, count: int, *, first_version: int) -> Samples:
    samples = Samples("first call of a new deployment")
    for version in range(first_version, first_version + count):
        release(caller, version)
        time.sleep(SETTLE_S)
        sent = {"text": f"release {version}"}
        samples.seconds.append(_check_echo(caller.invoke("echo", sent), sent))
    return samples


def measure_on_demand(ctx: BenchContext, site: OrdersSite, server_cpus: set[int] | None,
                      client_cpus: set[int] | None, plan: Plan) -> Samples:
    """The same cold start on a server that keeps no spare worker: Node.js starts in its
    sandbox for the call (reported, not judged)."""
    env = {**ctx.env, "BASEDB_FAAS_SPARES": "0"}
    samples = Samples("first call, worker started on demand (no spares)")
    with served(ctx.basedb, site.data_dir, env=env, log=ctx.scratch / "faas-serve-2.log",
                cpus=server_cpus) as server, pinned(client_cpus):
        caller = Caller(server, site)
        try:
            for version in range(1000, 1000 + max(plan.cold_starts // 2, 3)):
                release(caller, version)
                sent = {"text": f"release {version}"}
                samples.seconds.append(_check_echo(caller.invoke("echo", sent), sent))
        finally:
            caller.close()
    return samples


# ----------------------------------------------------------------------- notes


def notes(details: dict[str, Any], rates: list[float]) -> list[str]:
    warm, database, floor = details["warm"], details["databaseFunction"], details["nodeRoundTrip"]
    cold, demand, responsive = (details["coldStart"], details["coldStartOnDemand"],
                                details["responsive"])
    cpus = details["cpus"]
    lines = [
        f"faas: warm FaaS call p50 {warm['p50Ms']} ms, p99 {warm['p99Ms']} ms (target ≤ "
        f"{WARM_TARGET.limit * 1000:g} ms and ≤ {WARM_RATIO.limit:g}× the Database Function); "
        f"Database Function p50 {database['p50Ms']} ms, p99 {database['p99Ms']} ms; floor: a "
        f"round trip to a running node process p50 {floor['p50Ms']} ms.",
        f"  throughput: {', '.join(f'{r:.0f}' for r in rates)} FaaS calls/s (target ≥ "
        f"{MIN_RATE:g}) with {CLIENTS} keep-alive clients.",
        f"  cold start (first call after a promote, {SETTLE_S:g} s after it): p50 "
        f"{cold['p50Ms']} ms, p99 {cold['p99Ms']} ms (target ≤ {COLD_TARGET.limit * 1000:g} "
        f"ms); with no spare worker (Node.js started in its sandbox for the call): p50 "
        f"{demand['p50Ms']} ms.",
        f"  responsive: Database Function p99 {responsive['p99Ms']} ms (p50 "
        f"{responsive['p50Ms']} ms) while {ATTACKERS} handlers spin, exhaust memory and flood "
        f"logs, against p99 {responsive['quietP99Ms']} ms on a quiet server (target ≤ "
        f"{RESPONSIVE_TARGET.limit * 1000:g} ms).",
    ]
    if cpus["server"]:
        lines.append(f"  CPUs: the server and its workers on {cpus['server']}, the clients and "
                     f"load generator on {cpus['client']}.")
    return lines
