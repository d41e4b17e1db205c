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
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.orders_site import OrdersSite, build_orders_site
from bench.peers import Peer, datasette, datasette_available, minimal_app
from bench.registry import BenchContext, BenchError, BenchResult, Figure, Target, register
from bench.serve_process import Server, cpu_split, pinned, served
from bench.timing import Samples

LOAD_SCRIPT = Path(__file__).resolve().parent.parent / "invoke_load.mjs"
OVERHEAD_TARGET = Target(0.003, "seconds")
MIN_RATE = 500.0  # invokes per second
THROUGHPUT_TARGET = Target(1 / MIN_RATE, "seconds")
CLIENTS = 8
WARMUP_CALLS = 200
# Against the peers answering the same query on the same file (bench/peers.py).
FLOOR_LATENCY_TARGET = Target(1.15, "ratio")  # p50 vs the minimal Starlette app
DATASETTE_TARGET = Target(0.6, "ratio")  # p50 vs Datasette's canned query
FLOOR_THROUGHPUT_TARGET = Target(1.176, "ratio")  # ≥ 0.85× the minimal app's rate
FIRST_INVOKE_TARGET = Target(0.030, "seconds")


@dataclass(frozen=True, slots=True)
class Plan:
    records: int
    sequential: int
    throughput_runs: int
    throughput_seconds: float
    scan_calls: int
    first_invokes: int  # server starts, each timed to its first answer

    @classmethod
    def of(cls, quick: bool) -> Plan:
        if quick:
            return cls(records=20_000, sequential=500, throughput_runs=1,
                       throughput_seconds=2.0, scan_calls=200, first_invokes=2)
        return cls(records=100_000, sequential=2_000, throughput_runs=3,
                   throughput_seconds=5.0, scan_calls=500, first_invokes=5)


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
        ctx.log("invoke: side by side with the peers (a minimal Starlette app"
                + (", Datasette" if datasette_available() else "") + ") …")
        with ExitStack() as stack:
            peers = [stack.enter_context(minimal_app(site, ctx.scratch, env=ctx.env,
                                                     cpus=server_cpus))]
            if datasette_available():
                peers.append(stack.enter_context(datasette(site, ctx.scratch, env=ctx.env,
                                                           cpus=server_cpus)))
            side_by_side = measure_side_by_side(server, peers, site, params,
                                                warmup=WARMUP_CALLS)
            peer_runs = measure_peer_throughput(ctx, server, peers, site, params, plan)
    ctx.log(f"invoke: first answer after start, {plan.first_invokes} starts each …")
    with pinned(client_cpus):
        first = measure_first_invokes(ctx, site, params[0], plan.first_invokes, server_cpus)
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
    figures.extend(peer_figures(side_by_side, peer_runs, first))
    details = {
        "records": plan.records, "loadSeconds": round(site.load_seconds, 3),
        "sql": site.compiled.sql, "queryPlan": query_plan(site),
        "sequential": sequential.summary(), "throughput": runs,
        "cpus": {"server": sorted(server_cpus or []), "client": sorted(client_cpus or [])},
        "server": server_stack(), "indexExperiment": experiment,
        "peers": {name: {"p50Ms": round(percentile(samples.seconds, 0.5) * 1000, 3),
                         "p99Ms": round(percentile(samples.seconds, 0.99) * 1000, 3),
                         "throughput": peer_runs.get(name, [])}
                  for name, samples in side_by_side.items()},
        "firstInvoke": {name: [round(x * 1000, 3) for x in samples.seconds]
                        for name, samples in first.items()},
    }
    return BenchResult("invoke", figures, details=details,
                       notes=notes(plan, site, details, rates))


# ------------------------------------------------------------------------- measuring

BASEDB = "basedb serve"


def measure_side_by_side(server: Server, peers: list[Peer], site: OrdersSite,
                         params: list[dict[str, str]], *, warmup: int) -> dict[str, Samples]:
    """Each set of parameters asked of basedb and of every peer, the order rotating from
    call to call; every peer's rows must equal basedb's."""
    headers = {"Authorization": f"Bearer {site.owner_token}",
               "Content-Type": "application/json"}
    targets: list[tuple[str, http.client.HTTPConnection]] = [
        (BASEDB, http.client.HTTPConnection("127.0.0.1", server.port, timeout=60))]
    targets += [(peer.name, http.client.HTTPConnection("127.0.0.1", peer.port, timeout=60))
                for peer in peers]
    by_name = {peer.name: peer for peer in peers}
    samples = {name: Samples(f"{name}, sequential keep-alive") for name, _ in targets}
    try:
        for number, values in enumerate(params):
            shift = number % len(targets)
            answers: dict[str, list[str]] = {}
            for name, connection in targets[shift:] + targets[:shift]:
                if name == BASEDB:
                    body = json.dumps({"params": values}).encode("utf-8")
                    seconds, status, content = _http_call(connection, site, body, headers)
                    answers[name] = _rows_of(status, content, values)
                else:
                    peer = by_name[name]
                    path, peer_body = peer.request(values)
                    started = time.perf_counter()
                    connection.request(peer.method, path, peer_body, headers)
                    response = connection.getresponse()
                    content = response.read()
                    seconds = time.perf_counter() - started
                    answers[name] = peer.rows(content)
                if number >= warmup:
                    samples[name].seconds.append(seconds)
            for name, rows in answers.items():
                if rows != answers[BASEDB]:
                    raise BenchError(f"{name} returned other rows than basedb for {values}: "
                                     "not the same work")
    finally:
        for _, connection in targets:
            connection.close()
    return samples


def _rows_of(status: int, content: bytes, values: dict[str, str]) -> list[str]:
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    if status != 200 or not isinstance(body, dict) or body.get("code") != 0:
        raise BenchError(f"invoke with {values} answered HTTP {status}: {content[:300]!r}")
    return [row["订单号"] for row in body["data"]["rows"]]


def measure_peer_throughput(ctx: BenchContext, server: Server, peers: list[Peer],
                            site: OrdersSite, params: list[dict[str, str]],
                            plan: Plan) -> dict[str, list[dict[str, Any]]]:
    """The load generator against basedb and each peer in turn, run after run."""
    loads: dict[str, dict[str, Any]] = {
        BASEDB: {"url": server.base_url + site.invoke_path,
                 "bodies": [{"params": values} for values in params]}}
    for peer in peers:
        if peer.method == "POST":
            loads[peer.name] = {"url": peer.base_url + peer.path,
                                "bodies": [{"params": values} for values in params]}
        else:
            loads[peer.name] = {"url": peer.base_url + peer.path,
                                "paths": [peer.request(values)[0] for values in params]}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in loads}
    for _ in range(plan.throughput_runs):
        for name, load in loads.items():
            found = run_load(ctx, {**load, "token": site.owner_token}, plan, runs=1)
            if not found:
                return {}
            runs[name] += found
    return runs


def measure_first_invokes(ctx: BenchContext, site: OrdersSite, values: dict[str, str],
                          starts: int, cpus: set[int] | None) -> dict[str, Samples]:
    """Start the server, ask once as soon as it says it listens, time that answer; for
    basedb and for Datasette, alternately."""
    first = {BASEDB: Samples("first invoke after `basedb serve` starts")}
    if datasette_available():
        first["Datasette"] = Samples("first query after Datasette starts")
    headers = {"Authorization": f"Bearer {site.owner_token}",
               "Content-Type": "application/json"}
    body = json.dumps({"params": values}).encode("utf-8")
    for start in range(starts):
        with served(ctx.basedb, site.data_dir, env=ctx.env, cpus=cpus,
                    log=ctx.scratch / f"invoke-first-{start}.log") as server:
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            try:
                seconds, status, content = _http_call(connection, site, body, headers)
            finally:
                connection.close()
            _rows_of(status, content, values)
            first[BASEDB].seconds.append(seconds)
        if "Datasette" not in first:
            continue
        with datasette(site, ctx.scratch, env=ctx.env, cpus=cpus) as peer:
            path, _ = peer.request(values)
            connection = http.client.HTTPConnection("127.0.0.1", peer.port, timeout=60)
            try:
                started = time.perf_counter()
                connection.request("GET", path)
                content = connection.getresponse().read()
                first["Datasette"].seconds.append(time.perf_counter() - started)
            finally:
                connection.close()
            peer.rows(content)
    return first


def peer_figures(side_by_side: dict[str, Samples], runs: dict[str, list[dict[str, Any]]],
                 first: dict[str, Samples]) -> list[Figure]:
    mine = side_by_side[BASEDB]
    floor = side_by_side.get("minimal Starlette app")
    figures: list[Figure] = []
    if floor is not None:
        figures.append(Figure("vs-floor", mine, floor, FLOOR_LATENCY_TARGET))
    if "Datasette" in side_by_side:
        figures.append(Figure("vs-datasette", mine, side_by_side["Datasette"],
                              DATASETTE_TARGET))

    def per_call(name: str, label: str) -> Samples:
        rates = [run["perSecond"] for run in runs[name]]
        return Samples(f"{label}, {CLIENTS} clients "
                       f"(= {sorted(rates)[len(rates) // 2]:.0f}/s)",
                       seconds=[1 / rate for rate in rates])

    if runs.get(BASEDB) and runs.get("minimal Starlette app"):
        figures.append(Figure("throughput-vs-floor", per_call(BASEDB, "s per invoke"),
                              per_call("minimal Starlette app", "s per call, minimal app"),
                              FLOOR_THROUGHPUT_TARGET))
    if runs.get("Datasette"):
        figures.append(Figure("throughput-vs-datasette", per_call(BASEDB, "s per invoke"),
                              per_call("Datasette", "s per query, Datasette")))
    figures.append(Figure("first-invoke", first[BASEDB], first.get("Datasette"),
                          FIRST_INVOKE_TARGET))
    return figures


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
    return run_load(ctx, {"url": server.base_url + site.invoke_path,
                          "token": site.owner_token,
                          "bodies": [{"params": values} for values in params]},
                    plan, runs=plan.throughput_runs)


def run_load(ctx: BenchContext, load: dict[str, Any], plan: Plan, *,
             runs: int) -> list[dict[str, Any]]:
    """`runs` timed runs of the Node load generator on one target (`url` and `bodies`,
    or `url` and GET `paths`); [] (and a note) when Node is not installed."""
    node = os.environ.get("BASEDB_NODE", "").strip() or shutil.which("node")
    if not node:
        ctx.log("invoke: Node.js not found: throughput not measured")
        return []
    config = ctx.scratch / "invoke-load.json"
    config.write_text(json.dumps({
        **load, "concurrency": CLIENTS, "warmupSeconds": 1.0,
        "seconds": plan.throughput_seconds}, ensure_ascii=False), encoding="utf-8")
    found = []
    for _ in range(runs):
        found.append(load_run(node, config, plan.throughput_seconds, "invokes"))
    return found


def load_run(node: str, config: Path, seconds: float, what: str) -> dict[str, Any]:
    """One run of the Node load generator on `config`: its figures, rounded; a
    BenchError when it fails or any of its `what` (calls) failed."""
    done = subprocess.run([node, str(LOAD_SCRIPT), str(config)], capture_output=True,
                          text=True, check=False, timeout=seconds + 120)
    if done.returncode != 0:
        raise BenchError(f"the load generator exited with status {done.returncode}: "
                         f"{done.stderr.strip()[-500:]}")
    run = json.loads(done.stdout)
    if run["failures"] or not run["completed"]:
        raise BenchError(f"{run['failures']} of {run['completed']} {what} under load "
                         f"failed (statuses {run['statuses']}): {run['sampleFailure']}")
    return {key: round(value, 3) if isinstance(value, float) else value
            for key, value in run.items() if key != "sampleFailure"}


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
    peers = details["peers"]
    lines.append("  side by side (the same parameters, rotating order, rows checked equal): "
                 + "; ".join(f"{name} p50 {found['p50Ms']} ms, p99 {found['p99Ms']} ms"
                             for name, found in peers.items()) + ".")
    rates = {name: [run["perSecond"] for run in found["throughput"]]
             for name, found in peers.items() if found["throughput"]}
    if rates:
        lines.append(f"  throughput, {CLIENTS} clients, run by run: " + "; ".join(
            f"{name} {', '.join(f'{rate:.0f}' for rate in values)}/s"
            for name, values in rates.items()) + ".")
    lines.append("  first answer after start: " + "; ".join(
        f"{name} {', '.join(f'{ms:g}' for ms in values)} ms"
        for name, values in details["firstInvoke"].items())
        + f" (target ≤ {FIRST_INVOKE_TARGET.limit * 1000:g} ms for basedb).")
    if not datasette_available():
        lines.append("  Datasette: not installed, not compared (pip install -e '.[bench]').")
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
