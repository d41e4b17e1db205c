"""Database Function invoke over loopback HTTP (`basedb serve`) on a 100,000-record table,
against the same compiled query run in raw sqlite3 on the same database file.

Figures (medians; p99 in the notes and JSON):
- latency: sequential invokes on one keep-alive connection (http.client, the lightest
  Python client), each paired with the raw query for the same parameters, in
  alternating order so that neither side always finds the pages the other just read;
- overhead: per pair, HTTP minus raw: what the platform adds to the query (≤ 3 ms);
- throughput: N keep-alive connections from a Node load generator, closed loop, as the
  time per invoke (≤ 2 ms, i.e. ≥ 500 invokes/s);
- unindexed: the latency pair again with the index the platform made at deploy for the
  function's filter dropped by hand (an experiment: what the index is worth); the notes
  add the raw query with an index on the select column alone.

With two CPUs the server is pinned to one and everything measuring (this process, its
raw queries, the load generator) to the other.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.orders_site import OrdersSite, build_orders_site
from bench.registry import BenchContext, BenchError, BenchResult, Figure, Target, register
from bench.serve_process import Server, cpu_split, pinned, served
from bench.timing import Samples

LOAD_SCRIPT = Path(__file__).resolve().parent.parent / "invoke_load.mjs"
OVERHEAD_TARGET = Target(0.003, "seconds")
MIN_RATE = 500.0  # invokes per second
THROUGHPUT_TARGET = Target(1 / MIN_RATE, "seconds")
CLIENTS = 8
WARMUP_CALLS = 200


@dataclass(frozen=True, slots=True)
class Plan:
    records: int
    sequential: int
    throughput_runs: int
    throughput_seconds: float
    scan_calls: int

    @classmethod
    def of(cls, quick: bool) -> Plan:
        if quick:
            return cls(records=20_000, sequential=500, throughput_runs=1,
                       throughput_seconds=2.0, scan_calls=200)
        return cls(records=100_000, sequential=2_000, throughput_runs=3,
                   throughput_seconds=5.0, scan_calls=500)


@dataclass(slots=True)
class Paired:
    http: Samples
    raw: Samples
    overhead: Samples
    rows: int = 0  # rows returned over all measured calls

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"calls": len(self.http.seconds),
                               "rowsPerCall": round(self.rows / max(len(self.http.seconds), 1),
                                                    2)}
        for key, samples in (("http", self.http), ("raw", self.raw),
                             ("overhead", self.overhead)):
            out[f"{key}P50Ms"] = round(percentile(samples.seconds, 0.5) * 1000, 3)
            out[f"{key}P99Ms"] = round(percentile(samples.seconds, 0.99) * 1000, 3)
        return out


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@register("invoke", "Database Function invoke over loopback HTTP on a 100,000-record "
                    "table vs. the same query in raw sqlite3")
def invoke_benchmark(ctx: BenchContext) -> BenchResult:
    plan = Plan.of(ctx.settings.quick)
    ctx.log(f"invoke: loading {plan.records:,} records through batch_create …")
    site = build_orders_site(ctx.scratch / "invoke-data", records=plan.records,
                             seed=ctx.settings.seed)
    params = site.params_sequence(WARMUP_CALLS + plan.sequential, ctx.settings.seed)
    server_cpus, client_cpus = cpu_split()
    with served(ctx.basedb, site.data_dir, env=ctx.env, log=ctx.scratch / "invoke-serve.log",
                cpus=server_cpus) as server, pinned(client_cpus):
        ctx.log(f"invoke: {plan.sequential:,} sequential invokes, each paired with the raw "
                "query …")
        sequential = measure_pairs(server, site, params, warmup=WARMUP_CALLS)
        ctx.log(f"invoke: throughput, {CLIENTS} keep-alive clients, {plan.throughput_runs} × "
                f"{plan.throughput_seconds:g} s …")
        runs = measure_throughput(ctx, server, site, params, plan)
        ctx.log("invoke: the same without the platform's index …")
        experiment = scan_experiment(server, site, params[:WARMUP_CALLS + plan.scan_calls])
    figures = [
        Figure("load", Samples(f"bulk load of {plan.records:,} records",
                               seconds=[site.load_seconds])),
        Figure("latency", sequential.http, sequential.raw),
        Figure("overhead", sequential.overhead, target=OVERHEAD_TARGET),
    ]
    rates = [run["perSecond"] for run in runs]
    if rates:
        figures.append(Figure("throughput", Samples(
            f"s per invoke, {CLIENTS} clients (= {sorted(rates)[len(rates) // 2]:.0f}/s)",
            seconds=[1 / rate for rate in rates]), target=THROUGHPUT_TARGET))
    unindexed: Paired = experiment.pop("paired")
    figures.append(Figure("unindexed", unindexed.http, unindexed.raw))
    details = {
        "records": plan.records, "loadSeconds": round(site.load_seconds, 3),
        "sql": site.compiled.sql, "queryPlan": query_plan(site),
        "sequential": sequential.summary(), "throughput": runs,
        "cpus": {"server": sorted(server_cpus or []), "client": sorted(client_cpus or [])},
        "server": server_stack(), "indexExperiment": experiment,
    }
    return BenchResult("invoke", figures, details=details,
                       notes=notes(plan, site, details, rates))


# ------------------------------------------------------------------------- measuring


def measure_pairs(server: Server, site: OrdersSite, params: list[dict[str, str]], *,
                  warmup: int) -> Paired:
    """Each call once over HTTP and once in raw sqlite3, alternating which goes first;
    every answer is checked against the other (same order numbers, same order)."""
    paired = Paired(Samples("HTTP invoke, sequential keep-alive"),
                    Samples("raw sqlite3, same compiled query"),
                    Samples("HTTP minus raw, per call"))
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    headers = {"Authorization": f"Bearer {site.owner_token}",
               "Content-Type": "application/json"}
    raw = sqlite3.connect(f"{site.database.as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        for number, values in enumerate(params):
            body = json.dumps({"params": values}).encode("utf-8")
            arguments = list(values.values())
            if number % 2:
                raw_seconds, rows = _raw_call(raw, site, arguments)
                http_seconds, status, content = _http_call(connection, site, body, headers)
            else:
                http_seconds, status, content = _http_call(connection, site, body, headers)
                raw_seconds, rows = _raw_call(raw, site, arguments)
            _check_same(status, content, rows, values)
            if number >= warmup:
                paired.http.seconds.append(http_seconds)
                paired.raw.seconds.append(raw_seconds)
                paired.overhead.seconds.append(http_seconds - raw_seconds)
                paired.rows += len(rows)
    finally:
        connection.close()
        raw.close()
    return paired


def _http_call(connection: http.client.HTTPConnection, site: OrdersSite, body: bytes,
               headers: dict[str, str]) -> tuple[float, int, bytes]:
    started = time.perf_counter()
    connection.request("POST", site.invoke_path, body, headers)
    response = connection.getresponse()
    content = response.read()
    return time.perf_counter() - started, response.status, content


def _raw_call(raw: sqlite3.Connection, site: OrdersSite,
              arguments: list[Any]) -> tuple[float, list[Any]]:
    started = time.perf_counter()
    rows = raw.execute(site.compiled.sql, site.compiled.parameters(arguments, None)).fetchall()
    return time.perf_counter() - started, rows


def _check_same(status: int, content: bytes, rows: list[Any], values: dict[str, str]) -> None:
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if status != 200 or not isinstance(body, dict) or body.get("code") != 0:
        raise BenchError(f"invoke with {values} answered HTTP {status}: {content[:300]!r}")
    numbers = [row["订单号"] for row in body["data"]["rows"]]
    if numbers != [row[0] for row in rows]:
        raise BenchError(f"invoke with {values} returned other rows than the raw query "
                         f"({len(numbers)} vs {len(rows)}): not the same work")


def measure_throughput(ctx: BenchContext, server: Server, site: OrdersSite,
                       params: list[dict[str, str]], plan: Plan) -> list[dict[str, Any]]:
    """Runs of the Node load generator; [] (and a note) when Node is not installed."""
    node = os.environ.get("BASEDB_NODE", "").strip() or shutil.which("node")
    if not node:
        ctx.log("invoke: Node.js not found: throughput not measured")
        return []
    config = ctx.scratch / "invoke-load.json"
    config.write_text(json.dumps({
        "url": server.base_url + site.invoke_path, "token": site.owner_token,
        "bodies": [{"params": values} for values in params], "concurrency": CLIENTS,
        "warmupSeconds": 1.0, "seconds": plan.throughput_seconds}), encoding="utf-8")
    runs = []
    for _ in range(plan.throughput_runs):
        done = subprocess.run([node, str(LOAD_SCRIPT), str(config)], capture_output=True,
                              text=True, check=False, timeout=plan.throughput_seconds + 120)
        if done.returncode != 0:
            raise BenchError(f"the load generator exited with status {done.returncode}: "
                             f"{done.stderr.strip()[-500:]}")
        run = json.loads(done.stdout)
        if run["failures"] or not run["completed"]:
            raise BenchError(f"{run['failures']} of {run['completed']} invokes under load "
                             f"failed (statuses {run['statuses']}): {run['sampleFailure']}")
        runs.append({key: round(value, 3) if isinstance(value, float) else value
                     for key, value in run.items() if key != "sampleFailure"})
    return runs


def scan_experiment(server: Server, site: OrdersSite,
                    params: list[dict[str, str]]) -> dict[str, Any]:
    """What the platform's function index is worth: latency with it dropped by hand (the
    query scans), and the raw query with an index on the select column alone (what
    indexing every select field would give). The platform's indexes are restored."""
    from basedb.platform.storage import physical

    table = physical.table_name(site.table_id)
    _, status = site.filter_columns()
    writer = sqlite3.connect(site.database, isolation_level=None)
    try:
        platform_indexes = writer.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND "
            "name LIKE 'bdx%'", (table,)).fetchall()
        for name, _ in platform_indexes:
            writer.execute(f"DROP INDEX {name}")
        paired = measure_pairs(server, site, params, warmup=WARMUP_CALLS)
        paired.http.label = "HTTP invoke, index dropped (experiment)"
        paired.raw.label = "raw sqlite3, no index"
        scan_plan = query_plan(site)
        writer.execute(f"CREATE INDEX bench_by_status ON {table}({status})")
        select_only = _raw_only(site, params[WARMUP_CALLS:])
        select_only_plan = query_plan(site)
        writer.execute("DROP INDEX bench_by_status")
        started = time.perf_counter()
        for _, sql in platform_indexes:
            writer.execute(sql)
        rebuild_seconds = time.perf_counter() - started
    finally:
        writer.close()
    return {"paired": paired,
            "platformIndexes": [sql for _, sql in platform_indexes],
            "platformIndexBuildSeconds": round(rebuild_seconds, 3),
            "withoutIndex": {**paired.summary(), "queryPlan": scan_plan},
            "selectColumnIndex": {"rawP50Ms": round(percentile(select_only, 0.5) * 1000, 3),
                                  "queryPlan": select_only_plan}}


def _raw_only(site: OrdersSite, params: list[dict[str, str]]) -> list[float]:
    raw = sqlite3.connect(f"{site.database.as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        return [_raw_call(raw, site, list(values.values()))[0] for values in params]
    finally:
        raw.close()


def query_plan(site: OrdersSite) -> list[str]:
    raw = sqlite3.connect(f"{site.database.as_uri()}?mode=ro", uri=True)
    try:
        values = site.compiled.parameters(["C0000", "已付款"], None)
        return [row[3] for row in raw.execute("EXPLAIN QUERY PLAN " + site.compiled.sql,
                                              values)]
    finally:
        raw.close()


def server_stack() -> dict[str, Any]:
    """What uvicorn picks with its defaults ("auto"): httptools and uvloop if installed."""
    import importlib.util

    return {"http": "httptools" if importlib.util.find_spec("httptools") else "h11",
            "loop": "uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
            "accessLog": "one JSON line per request, to a file"}


# ----------------------------------------------------------------------------- notes


def notes(plan: Plan, site: OrdersSite, details: dict[str, Any],
          rates: list[float]) -> list[str]:
    seq = details["sequential"]
    cpus = details["cpus"]
    stack = details["server"]
    lines = [
        f"invoke: {plan.records:,} records loaded in {site.load_seconds:.2f} s "
        f"({plan.records / site.load_seconds:,.0f} records/s) by batch_create, 200 rows a "
        "call, on the in-process transport.",
        f"  sequential ({seq['calls']:,} calls on one keep-alive connection, ~"
        f"{seq['rowsPerCall']:g} rows each): HTTP p50 {seq['httpP50Ms']} ms, p99 "
        f"{seq['httpP99Ms']} ms; raw sqlite3 p50 {seq['rawP50Ms']} ms, p99 {seq['rawP99Ms']} "
        f"ms; overhead p50 {seq['overheadP50Ms']} ms, p99 {seq['overheadP99Ms']} ms "
        f"(target ≤ {OVERHEAD_TARGET.limit * 1000:g} ms).",
    ]
    if rates:
        runs = details["throughput"]
        lines.append(f"  throughput: {', '.join(f'{r:.0f}' for r in rates)} invokes/s "
                     f"(target ≥ {MIN_RATE:g}) with {CLIENTS} keep-alive clients (Node), "
                     f"client-side p50 {runs[0]['p50Ms']:.2f} ms, p99 {runs[0]['p99Ms']:.2f} ms.")
    else:
        lines.append("  throughput: not measured (Node.js not found).")
    if cpus["server"]:
        lines.append(f"  CPUs: server pinned to {cpus['server']}, this process, its raw "
                     f"queries and the load generator to {cpus['client']}.")
    else:
        lines.append("  CPUs: one usable CPU, so client and server share it: the figures "
                     "include the client's own time.")
    lines.append(f"  server: basedb serve on uvicorn ({stack['http']}, {stack['loop']}), "
                 f"access log on; query plan: {'; '.join(details['queryPlan'])}.")
    experiment = details["indexExperiment"]
    scan, select_only = experiment["withoutIndex"], experiment["selectColumnIndex"]
    lines.append(f"  platform index: {'; '.join(experiment['platformIndexes']) or 'none'} "
                 f"(built at deploy; rebuilt here in {experiment['platformIndexBuildSeconds']} "
                 "s).")
    lines.append(f"  without it (dropped by hand): raw p50 {scan['rawP50Ms']} ms, HTTP p50 "
                 f"{scan['httpP50Ms']} ms, overhead p50 {scan['overheadP50Ms']} ms "
                 f"({'; '.join(scan['queryPlan'])}); with an index on 状态 alone instead: raw "
                 f"p50 {select_only['rawP50Ms']} ms.")
    return lines
