"""What PostgreSQL's semantics and the site's time zone cost a Database Function call,
against the invoke floor: the same compiled query in raw sqlite3 on the same database.

In-process (no HTTP: the invoke benchmark measures that), on the orders table of the
invoke benchmark, each call paired with its floor in alternating order:
- runtime: the platform's query path (`run_query`: parameters bound by type, the
  statement run in a query worker under the read-only authorizer and SQLite's limits,
  cells decoded by type) for the invoke benchmark's query;
- timezone: the per-call work the site's zone adds, alone — now() in the zone and a
  DATETIME parameter converted as a timestamp (`CompiledQuery.parameters`) — for a
  query that uses both;
- zoned: that query run through `run_query` in Asia/Shanghai against the same query
  compiled for UTC (what the zone costs end to end: ≈ 1×).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any

from bench.orders_site import OrdersSite, build_orders_site
from bench.registry import BenchContext, BenchResult, Figure, Target, register
from bench.timing import Samples

ZONED_SQL = ('SELECT "订单号", "金额", "下单时间", now() AS checked_at FROM "订单"\n'
             'WHERE "客户" = $1 AND "状态" = $2 AND "下单时间" >= $3\n'
             'ORDER BY "下单时间" DESC LIMIT 50\n')
ZONED_KINDS = ["TEXT", "TEXT", "DATETIME"]
SINCE = "2025-03-01 08:00:00"
# A site in another zone than UTC must not make its calls slower.
ZONED_TARGET = Target(1.1, "ratio")


@register("sqlsemantics", "per-call cost of PostgreSQL semantics and the site's time zone "
                          "in Database Function calls, against the raw sqlite3 floor")
def sql_semantics_benchmark(ctx: BenchContext) -> BenchResult:
    from basedb.platform.domain.revision import catalog_revision
    from basedb.platform.domain.runtimes.sql import QueryLimits, run_query
    from basedb.platform.storage.sql_compile import compile_for_sqlite
    from basedb.sql.analysis import analyze_sql
    from basedb.sql.sqlite.query import prepare_connection
    from basedb.workspace.catalog import build_catalog

    records = 20_000 if ctx.settings.quick else 100_000
    calls = 500 if ctx.settings.quick else 3_000
    ctx.log(f"sqlsemantics: loading {records:,} orders …")
    site = build_orders_site(ctx.scratch / "sqlsemantics-data", records=records,
                             seed=ctx.settings.seed)
    catalog_doc = _catalog(site)
    catalog, _ = build_catalog(catalog_doc)
    analysis = analyze_sql(ZONED_SQL, catalog, 3, param_kinds=ZONED_KINDS)
    zoned = compile_for_sqlite(analysis, catalog, timezone="Asia/Shanghai")
    utc = compile_for_sqlite(analysis, catalog, timezone="UTC")
    params = [list(values.values()) for values in site.params_sequence(calls, ctx.settings.seed)]
    uri = f"{site.database.as_uri()}?mode=ro"
    raw = sqlite3.connect(uri, uri=True, isolation_level=None)
    platform = sqlite3.connect(uri, uri=True, isolation_level=None)
    prepare_connection(platform)
    revision = catalog_revision(platform)
    limits = QueryLimits()

    def floor(values: list[Any]) -> Any:
        return raw.execute(site.compiled.sql, site.compiled.parameters(values, None)).fetchall()

    def runtime(values: list[Any]) -> Any:
        return run_query(site.database, site.compiled, values, catalog_revision=revision,
                         user_id="ou_bench", function_id="bench", log_id="bench",
                         limits=limits)

    def zone_work(values: list[Any]) -> Any:
        return zoned.parameters([*values, SINCE], "ou_bench")

    def zoned_call(values: list[Any]) -> Any:
        return run_query(site.database, zoned, [*values, SINCE], catalog_revision=revision,
                         user_id="ou_bench", function_id="bench", log_id="bench",
                         limits=limits)

    def utc_call(values: list[Any]) -> Any:
        return run_query(site.database, utc, [*values, SINCE], catalog_revision=revision,
                         user_id="ou_bench", function_id="bench", log_id="bench",
                         limits=limits)

    try:
        ctx.log(f"sqlsemantics: {calls:,} calls per measure …")
        runtime_pair = _pairs(runtime, floor, params, "run_query (typed binding, query worker, "
                              "authorizer, decoding)", "raw sqlite3, same compiled query")
        zone_pair = _pairs(zone_work, floor, params, "now() and a DATETIME param in "
                           "Asia/Shanghai, bound (per call)", "raw sqlite3, same compiled query")
        zoned_pair = _pairs(zoned_call, utc_call, params, "run_query, query with now() and a "
                            "DATETIME param, Asia/Shanghai", "the same compiled for UTC")
    finally:
        raw.close()
        platform.close()
    figures = [Figure("runtime", *runtime_pair),
               Figure("timezone", *zone_pair),
               Figure("zoned", *zoned_pair, target=ZONED_TARGET)]
    micro = zone_pair[0].median * 1e6
    return BenchResult("sqlsemantics", figures, details={
        "records": records, "calls": calls, "zonedSql": zoned.sql,
        "zoneWorkMicroseconds": round(micro, 2)}, notes=[
        f"sqlsemantics: {records:,} orders, {calls:,} calls per measure, in-process.",
        f"  the site's zone adds {micro:.1f} µs per call (now() in Asia/Shanghai and a "
        "DATETIME parameter bound as a timestamp), against the raw query's "
        f"{zone_pair[1].median * 1e6:.0f} µs.",
    ])


def _catalog(site: OrdersSite) -> dict[str, Any]:
    from basedb.client.client import EMBEDDED_BASE_URL, Client
    from basedb.client.transport import InProcessTransport
    from basedb.platform import open_platform

    platform = open_platform(site.data_dir)
    try:
        with Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                    transport=InProcessTransport(platform.app)) as client:
            data: dict[str, Any] = client.request(
                "GET", f"/sites/{site.app_token}/catalog")["data"]
            return data
    finally:
        platform.close()


def _pairs(measure: Callable[[list[Any]], Any], peer: Callable[[list[Any]], Any],
           params: list[list[Any]], label: str, peer_label: str) -> tuple[Samples, Samples]:
    """Each input through both, alternating which goes first; seconds per call."""
    mine, theirs = Samples(label), Samples(peer_label)
    for number, values in enumerate(params):
        order = ((measure, mine), (peer, theirs)) if number % 2 else ((peer, theirs),
                                                                      (measure, mine))
        for function, samples in order:
            started = time.perf_counter()
            function(values)
            samples.seconds.append(time.perf_counter() - started)
    return mine, theirs
