"""How the platform's costs grow with the data and with the number of sites.

Each figure at a size is compared with the same figure at the smallest size (its ratio
is the growth; the target is the one the platform holds itself to), through the
embedded app on the in-process transport, as `basedb` talks to its embedded platform:

- eq_order: `WHERE "客户" = $1 ORDER BY "下单时间" DESC LIMIT 20`, p50 (≤ 1.3×);
- range_order: `WHERE "金额" >= $1 AND "金额" < $2 ORDER BY "金额" LIMIT 20`, p50 (≤ 2×);
- count: `SELECT count(*)`, p50 (no target: it reads the whole table; docs/sql.md);
- last_page: the records listing's last page by page_token, against its first page
  at the same size (≤ 2×); the last page by offset is in the details;
- load: batch_create of 200 rows, seconds per row over the whole load (≤ 1.25×, i.e.
  rows/s at the size ≥ 0.8× of the smallest);
- restart: from opening the platform's data dir again to the first answer of eq_order
  (≤ 1.5×; the sites' dimension is measured apart, in faas_warm);
- faas_warm: a FaaS echo called round-robin across S sites after each site's first
  call, p50, against the figure for 10 sites (≤ 2×).

Sizes are parameters, since a million rows takes minutes to load on a small machine:
`BASEDB_BENCH_SCALE_ROWS` (default 10000,100000; --quick 10000,30000) and
`BASEDB_BENCH_SCALE_SITES` (default 1,10,100; --quick 1,10,20), comma-separated, e.g.
`BASEDB_BENCH_SCALE_ROWS=10000,100000,1000000 python -m bench --only scale`. FaaS
figures need `node`; without it they are skipped with a note.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import time
from typing import TYPE_CHECKING, Any

from bench.orders_site import FIELDS, TABLE, customer_id, order_rows
from bench.registry import BenchContext, BenchError, BenchResult, Figure, Target, register
from bench.timing import Samples

if TYPE_CHECKING:
    from basedb.client.client import Client

ROWS_VARIABLE = "BASEDB_BENCH_SCALE_ROWS"
SITES_VARIABLE = "BASEDB_BENCH_SCALE_SITES"
TARGETS = {"eq_order": Target(1.3, "ratio"), "range_order": Target(2.0, "ratio"),
           "load": Target(1.25, "ratio"), "last_page": Target(2.0, "ratio"),
           "faas_warm": Target(2.0, "ratio"), "restart": Target(1.5, "ratio")}
RESTARTS = 15  # each is tens of milliseconds; the median of few swings with the machine
WARM_UP = 20
PAGE = 100
SQL = {
    "eqOrder": ('SELECT "订单号", "金额", "下单时间" FROM "订单" WHERE "客户" = $1 '
                'ORDER BY "下单时间" DESC LIMIT 20'),
    "rangeOrder": ('SELECT "订单号", "金额" FROM "订单" WHERE "金额" >= $1 AND "金额" < $2 '
                   'ORDER BY "金额" LIMIT 20'),
    "countAll": 'SELECT count(*) AS n FROM "订单"',
}
PARAMS = {
    "eqOrder": [{"name": "customer", "kind": "TEXT", "description": "Customer code"}],
    "rangeOrder": [{"name": "low", "kind": "NUMBER", "description": "Lowest amount"},
                   {"name": "high", "kind": "NUMBER", "description": "Amount above the last"}],
    "countAll": [],
}
ECHO = "export default async (input) => ({code: 0, data: input});\n"


def _sizes(variable: str, default: str) -> list[int]:
    raw = os.environ.get(variable, "").strip() or default
    try:
        sizes = sorted({int(part) for part in raw.split(",") if part.strip()})
    except ValueError:
        raise BenchError(f"${variable} is {raw!r}; it must be whole numbers separated by "
                         "commas, e.g. 10000,100000") from None
    if not sizes or sizes[0] < 1:
        raise BenchError(f"${variable} is {raw!r}; give at least one size of 1 or more")
    return sizes


@register("scale", "growth with the data (10k … 1M rows) and with the sites (1 … 100): "
                   "paged queries, count, listing, bulk load, warm FaaS")
def scale_benchmark(ctx: BenchContext) -> BenchResult:
    quick = ctx.settings.quick
    rows = _sizes(ROWS_VARIABLE, "10000,30000" if quick else "10000,100000")
    site_counts = _sizes(SITES_VARIABLE, "1,10,20" if quick else "1,10,100")
    calls = 100 if quick else 300
    measured: dict[int, dict[str, Samples]] = {}
    details: dict[str, Any] = {"rows": rows, "sites": site_counts}
    for size in rows:
        ctx.log(f"scale: {size:,} rows …")
        measured[size], details[f"rows_{size}"] = _measure_rows(ctx, size, calls)
    figures: list[Figure] = []
    smallest = rows[0]
    for name in ("eq_order", "range_order", "count", "load", "restart"):
        for size in rows:
            figures.append(Figure(f"{name}@{size}", measured[size][name],
                                  peer=measured[smallest][name] if size != smallest else None,
                                  target=TARGETS.get(name) if size != smallest else None))
    for size in rows:
        figures.append(Figure(f"last_page@{size}", measured[size]["last_page"],
                              peer=measured[size]["first_page"], target=TARGETS["last_page"]))
    notes = [f"rows: {', '.join(f'{n:,}' for n in rows)} (set ${ROWS_VARIABLE}); each ratio "
             f"is against {smallest:,} rows, the last page's against the first page"]
    if shutil.which(os.environ.get("BASEDB_NODE") or "node") is None:
        notes.append("faas_warm: skipped, no node on PATH")
    else:
        warm = _measure_sites(ctx, site_counts, rounds=5 if quick else 10)
        reference = warm.get(10) or warm[site_counts[0]]
        for count in site_counts:
            figures.append(Figure(f"faas_warm@{count}_sites", warm[count],
                                  peer=reference if warm[count] is not reference else None,
                                  target=TARGETS["faas_warm"] if count > 10 else None))
        notes.append(f"faas_warm: sites {', '.join(map(str, site_counts))} (set "
                     f"${SITES_VARIABLE}), each ratio against 10 sites")
    for size in rows:
        found = details[f"rows_{size}"]
        notes.append(f"{size:,} rows: load {found['rows_per_second']:,.0f} rows/s; last page "
                     f"by offset {found['offset_last_page_ms']:.2f} ms vs first "
                     f"{found['first_page_ms']:.2f} ms")
    return BenchResult("scale", figures, details=details, notes=notes)


def _measure_rows(ctx: BenchContext, size: int,
                  calls: int) -> tuple[dict[str, Samples], dict[str, Any]]:
    from basedb.client.client import EMBEDDED_BASE_URL, Client
    from basedb.client.transport import InProcessTransport
    from basedb.platform import open_platform
    from basedb.platform.storage.store import DATABASE_FILE

    rng = random.Random(ctx.settings.seed + size)
    data_dir = ctx.scratch / f"scale-{size}"
    platform = open_platform(data_dir)
    out: dict[str, Samples] = {}
    try:
        with Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                    transport=InProcessTransport(platform.app), timeout=300) as client:
            base = client.request("POST", "/bases", json={"name": "商城"})["data"]["base_token"]
            table_id = client.request("POST", f"/bases/{base}/tables", json={
                "name": TABLE, "fields": FIELDS})["data"]["id"]
            records = f"/bases/{base}/tables/{table_id}/records"
            load = Samples(f"batch_create per row at {size:,}")
            started = time.perf_counter()
            for batch in order_rows(size, rng):
                began = time.perf_counter()
                client.request("POST", f"{records}/batch_create",
                               json={"fields": [f["name"] for f in FIELDS], "rows": batch})
                load.seconds.append((time.perf_counter() - began) / len(batch))
            rows_per_second = size / (time.perf_counter() - started)
            out["load"] = load
            app = _site(client, base, table_id, "商城", _database_functions())
            for name, function, params in (
                    ("eq_order", "eqOrder", lambda: {"customer": customer_id(rng)}),
                    ("range_order", "rangeOrder", lambda: _amounts(rng)),
                    ("count", "countAll", dict)):
                out[name] = _calls(client, f"{name} at {size:,}", calls, lambda f=function,
                                   p=params: client.request(
                                       "POST", f"/sites/{app}/functions/{f}/invoke",
                                       json={"params": p()}))
            with sqlite3.connect(platform.data_dir / DATABASE_FILE) as raw:
                last_seq = raw.execute(f"SELECT max(_seq) FROM t_{table_id}").fetchone()[0]
            last_token = f"seq{last_seq - PAGE}"  # the page after that record is the last
            out["first_page"] = _calls(client, f"first page at {size:,}", calls // 3,
                                       lambda: client.request("GET", records,
                                                              params={"limit": PAGE}))
            out["last_page"] = _calls(client, f"last page at {size:,}", calls // 3,
                                      lambda: _last_page(client, records, last_token))
            by_offset = _calls(client, f"last page by offset at {size:,}", calls // 10,
                               lambda: client.request("GET", records, params={
                                   "limit": PAGE, "offset": size - PAGE}))
    finally:
        platform.close()
    try:
        out["restart"] = _restarts(data_dir, app, f"restart at {size:,}", rng)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return out, {"rows_per_second": round(rows_per_second),
                 "first_page_ms": out["first_page"].median * 1000,
                 "offset_last_page_ms": by_offset.median * 1000,
                 **{name: samples.to_json() for name, samples in out.items()},
                 "offset_last_page": by_offset.to_json()}


def _restarts(data_dir: Any, app: str, label: str, rng: random.Random) -> Samples:
    """Seconds from opening the data dir to the first answer of eqOrder, RESTARTS times."""
    from basedb.client.client import EMBEDDED_BASE_URL, Client
    from basedb.client.transport import InProcessTransport
    from basedb.platform import open_platform

    samples = Samples(label)
    for _ in range(RESTARTS):
        began = time.perf_counter()
        platform = open_platform(data_dir)
        try:
            with Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                        transport=InProcessTransport(platform.app), timeout=300) as client:
                client.request("POST", f"/sites/{app}/functions/eqOrder/invoke",
                               json={"params": {"customer": customer_id(rng)}})
                samples.seconds.append(time.perf_counter() - began)
        finally:
            platform.close()
    return samples


def _last_page(client: Client, records: str, token: str) -> Any:
    answer = client.request("GET", records, params={"limit": PAGE, "page_token": token})
    if answer["data"]["has_more"] or len(answer["data"]["record_id_list"]) != PAGE:
        raise BenchError(f"the page after {token} is not the last page of {PAGE} records")
    return answer


def _measure_sites(ctx: BenchContext, counts: list[int], rounds: int) -> dict[int, Samples]:
    """Warm FaaS calls round-robin across the first S of max(counts) sites."""
    from basedb.client.client import EMBEDDED_BASE_URL, Client
    from basedb.client.transport import InProcessTransport
    from basedb.platform import open_platform

    data_dir = ctx.scratch / "scale-sites"
    platform = open_platform(data_dir)
    out: dict[int, Samples] = {}
    try:
        with Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                    transport=InProcessTransport(platform.app), timeout=300) as client:
            base = client.request("POST", "/bases", json={"name": "Sites"})["data"]["base_token"]
            table_id = client.request("POST", f"/bases/{base}/tables", json={
                "name": TABLE, "fields": FIELDS})["data"]["id"]
            ctx.log(f"scale: releasing {counts[-1]} sites with a FaaS …")
            apps = [_site(client, base, table_id, f"Site {n}", [], faas=True)
                    for n in range(counts[-1])]
            for count in counts:
                samples = Samples(f"warm FaaS round-robin across {count} sites")
                for turn in range(rounds + 1):
                    for app in apps[:count]:
                        began = time.perf_counter()
                        answer = client.request("POST", f"/sites/{app}/functions/echo/invoke",
                                                json={"params": {"text": "hi"}})
                        if answer["data"] != {"text": "hi"}:
                            raise BenchError(f"echo answered {answer['data']!r}")
                        if turn:  # the first round starts the workers
                            samples.seconds.append(time.perf_counter() - began)
                out[count] = samples
    finally:
        platform.close()
        shutil.rmtree(data_dir, ignore_errors=True)
    return out


def _calls(client: Client, label: str, count: int, call: Any) -> Samples:
    del client  # the call closes over it
    for _ in range(WARM_UP):
        call()  # caches, the statement cache, the first compile, lazy imports
    samples = Samples(label)
    for _ in range(max(count, 5)):
        began = time.perf_counter()
        call()
        samples.seconds.append(time.perf_counter() - began)
    return samples


def _database_functions() -> list[dict[str, Any]]:
    return [{"functionId": function_id, "sql": sql, "declaration": {
        "name": function_id, "description": f"{function_id}: a scale benchmark query",
        "meta": {"params": PARAMS[function_id]}}} for function_id, sql in SQL.items()]


def _site(client: Client, base: str, table_id: str, title: str,
          database_functions: list[dict[str, Any]], *, faas: bool = False) -> str:
    """A site bound to the table, its functions drafted, deployed and promoted."""
    from basedb.core.site_zip import InputFile, build_site_zip, fingerprint

    app = client.request("POST", "/sites/create", json={"title": title})["data"]["appToken"]
    client.request("POST", f"/sites/{app}/bind_base",
                   json={"baseToken": base, "tableIds": [table_id]})
    handlers = [{"functionId": "echo", "handler": ECHO, "declaration": {
        "name": "echo", "description": "echo: a benchmark handler", "inputSchema": {
            "type": "object", "properties": {"text": {"type": "string",
                                                      "description": "Echoed back"}}}}}]
    client.request("PUT", f"/sites/{app}/draft/functions", json={
        "databaseFunctions": database_functions, "mutations": [],
        "faas": handlers if faas else []})
    inputs = [InputFile.of("README.md", b"# Scale\n"),
              InputFile.of("src/index.html", f"<title>{title}</title>\n".encode())]
    stamp = fingerprint(inputs)
    deployed = client.request("POST", f"/sites/{app}/deployments", data={"fingerprint": stamp},
                              files={"artifact": ("site.zip", build_site_zip(inputs, stamp),
                                                  "application/zip")})["data"]
    client.request("POST", f"/sites/{app}/deployments/{deployed['deploymentId']}/promote")
    return str(app)


def _amounts(rng: random.Random) -> dict[str, float]:
    low = round(rng.uniform(1, 4900), 2)
    return {"low": low, "high": low + 100}
