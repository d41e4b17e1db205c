"""The site the invoke benchmark calls: an order table of N records and one selective
Database Function, released to prod on a local platform data dir.

    site = build_orders_site(data_dir, records=100_000, seed=7)
    site.sql, site.compiled          # the function's SQL, and it compiled for SQLite
    site.invoke_path                 # POST it with {"params": {...}}
    site.params_sequence(2000, seed) # varied inputs, the same for every peer

The records go in through the platform's own API (batch_create, 200 rows a call) on the
in-process transport, the way `basedb` talks to the embedded platform; the load time is
part of the result. The filter (one customer of 1,000 and one status of 5) selects about
1/5,000 of the table, so the query is one that an index would serve.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.timing import BenchError

if TYPE_CHECKING:
    from basedb.client.client import Client
    from basedb.sql.sqlite.query import CompiledQuery

TABLE = "订单"
FUNCTION_ID = "ordersOfCustomer"
STATUSES = ("待付款", "已付款", "已发货", "已完成", "已取消")
CUSTOMERS = 1_000
BATCH = 200  # the API's batch_create limit
FIELDS: list[dict[str, Any]] = [
    {"name": "订单号", "type": "text"},
    {"name": "客户", "type": "text"},
    {"name": "状态", "type": "select", "options": [{"name": s} for s in STATUSES]},
    {"name": "金额", "type": "number"},
    {"name": "下单时间", "type": "datetime"},
]
SQL = ('SELECT "订单号", "金额", "下单时间" FROM "订单"\n'
       'WHERE "客户" = $1 AND "状态" = $2\n'
       'ORDER BY "下单时间" DESC\n'
       'LIMIT 50\n')
PARAMS: list[dict[str, Any]] = [
    {"name": "customer", "kind": "TEXT", "description": "Customer code such as C0042"},
    {"name": "status", "kind": "TEXT", "description": "Order status to list",
     "enum": list(STATUSES)},
]
DECLARATION: dict[str, Any] = {
    "name": "ordersOfCustomer",
    "description": "The 50 latest orders of one customer in one status, newest first.",
    "meta": {"params": PARAMS},
}


@dataclass(frozen=True, slots=True)
class OrdersSite:
    data_dir: Path
    database: Path  # the platform's SQLite file
    owner_token: str
    app_token: str
    table_id: str
    records: int
    load_seconds: float
    compiled: CompiledQuery

    @property
    def invoke_path(self) -> str:
        from basedb.core.paths import API_PREFIX

        return f"{API_PREFIX}/sites/{self.app_token}/functions/{FUNCTION_ID}/invoke"

    def filter_columns(self) -> tuple[str, str]:
        """The physical columns of "客户" and "状态" (for the index experiment)."""
        import re

        found = re.findall(r"\.(c_\w+) = \?", self.compiled.sql)
        if len(found) != 2:
            raise BenchError(f"expected two equality filters in the compiled query, found "
                             f"{found}: {self.compiled.sql}")
        return found[0], found[1]

    @staticmethod
    def params_sequence(count: int, seed: int) -> list[dict[str, str]]:
        rng = random.Random(seed)
        return [{"customer": customer_id(rng),
                 "status": rng.choice(STATUSES)} for _ in range(count)]


def customer_id(rng: random.Random) -> str:
    """One of the CUSTOMERS customers, at random."""
    return f"C{rng.randrange(CUSTOMERS):04d}"


def order_rows(count: int, rng: random.Random) -> Iterator[list[list[Any]]]:
    """Batches of `count` order rows (FIELDS' columns), BATCH at a time, drawn from `rng`."""
    batch: list[list[Any]] = []
    for number in range(count):
        batch.append([f"SO{number:07d}", customer_id(rng),
                      rng.choice(STATUSES), round(rng.uniform(1, 5000), 2),
                      f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d} "
                      f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}"])
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def build_orders_site(data_dir: Path, *, records: int, seed: int) -> OrdersSite:
    """Create the Base, load `records` orders, and release the function to prod."""
    from basedb.client.client import EMBEDDED_BASE_URL, Client
    from basedb.client.transport import InProcessTransport
    from basedb.platform import open_platform
    from basedb.platform.storage.store import DATABASE_FILE

    platform = open_platform(data_dir)
    try:
        with Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                    transport=InProcessTransport(platform.app), timeout=300) as client:
            base = client.request("POST", "/bases", json={"name": "商城"})["data"]["base_token"]
            table_id = client.request("POST", f"/bases/{base}/tables", json={
                "name": TABLE, "fields": FIELDS})["data"]["id"]
            started = time.perf_counter()
            for batch in order_rows(records, random.Random(seed)):
                client.request("POST", f"/bases/{base}/tables/{table_id}/records/batch_create",
                               json={"fields": [f["name"] for f in FIELDS], "rows": batch})
            load_seconds = time.perf_counter() - started
            app = client.request("POST", "/sites/create",
                                 json={"title": "商城"})["data"]["appToken"]
            client.request("POST", f"/sites/{app}/bind_base",
                           json={"baseToken": base, "tableIds": [table_id]})
            _release(client, app)
            compiled = _compile(client.request("GET", f"/sites/{app}/catalog")["data"])
        return OrdersSite(data_dir=platform.data_dir,
                          database=platform.data_dir / DATABASE_FILE,
                          owner_token=platform.owner_token, app_token=app, table_id=table_id,
                          records=records, load_seconds=load_seconds, compiled=compiled)
    finally:
        platform.close()


def _release(client: Client, app: str) -> None:
    """Draft the function, deploy a preview with a site.zip built as `basedb deploy`
    builds it, and promote it."""
    from basedb.core.site_zip import InputFile, build_site_zip, fingerprint

    # A function with check findings is refused here (an ApiError naming them).
    client.request("PUT", f"/sites/{app}/draft/functions", json={
        "databaseFunctions": [{"functionId": FUNCTION_ID, "sql": SQL,
                               "declaration": DECLARATION}],
        "mutations": [], "faas": []})
    inputs = [InputFile.of("README.md", b"# Orders\n"),
              InputFile.of("src/index.html", b"<!doctype html><title>Orders</title>\n")]
    stamp = fingerprint(inputs)
    deployed = client.request("POST", f"/sites/{app}/deployments", data={"fingerprint": stamp},
                              files={"artifact": ("site.zip", build_site_zip(inputs, stamp),
                                                  "application/zip")})["data"]
    client.request("POST", f"/sites/{app}/deployments/{deployed['deploymentId']}/promote")


def _compile(catalog_doc: dict[str, Any]) -> CompiledQuery:
    """The function's SQL compiled for SQLite exactly as the platform compiles it."""
    from basedb.platform.storage.sql_compile import compile_for_sqlite
    from basedb.sql.analysis import analyze_sql
    from basedb.workspace.catalog import build_catalog

    catalog, problems = build_catalog(catalog_doc)
    if problems:
        raise BenchError(f"the site's catalog does not load: {problems[0]}")
    analysis = analyze_sql(SQL, catalog, len(PARAMS))
    return compile_for_sqlite(analysis, catalog)
