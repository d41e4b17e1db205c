"""Writes on the local platform against raw sqlite3 writing the same rows.

- Mutation create: a released Mutation (`action: create`) invoked with one order;
- batch: `records/batch_create` with 200 orders (the API's limit).

Both go through the in-process transport — the ASGI app exactly as `basedb` embeds it:
authentication, routing, validation, the write and its COMMIT, the JSON answer; no
socket. The floor inserts the same values into the same physical table of the same
database file with one prepared INSERT (executemany for the batch) and a COMMIT, with the
platform's own durability settings. Platform call and raw write alternate, so the table
grows alike under both.
"""

from __future__ import annotations

import random
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.orders_site import BATCH, FIELDS, STATUSES, TABLE
from bench.registry import BenchContext, BenchError, BenchResult, Figure, Target, register
from bench.timing import Samples

if TYPE_CHECKING:
    from basedb.client.client import Client

MUTATION_ID = "createOrder"
CREATE_TARGET = Target(5.0, "ratio")
BATCH_TARGET = Target(2.0, "ratio")
MUTATION: dict[str, Any] = {
    "name": MUTATION_ID,
    "description": "Create one order.",
    "spec": {"table": TABLE, "action": "create", "params": [
        {"name": "number", "kind": "TEXT", "description": "Order number such as SO0000001"},
        {"name": "customer", "kind": "TEXT", "description": "Customer code such as C0042"},
        {"name": "status", "kind": "TEXT", "description": "Order status",
         "enum": list(STATUSES)},
        {"name": "amount", "kind": "NUMBER", "description": "Amount in yuan"},
    ], "set": {"订单号": "$number", "客户": "$customer", "状态": "$status",
               "金额": "$amount"}},
}


@dataclass(frozen=True, slots=True)
class Plan:
    creates: int
    batches: int

    @classmethod
    def of(cls, quick: bool) -> Plan:
        return cls(creates=300, batches=20) if quick else cls(creates=2_000, batches=100)


@register("records", "writes: a Mutation creating one record and batch_create of 200, "
                     "through the embedded app, vs. raw sqlite3 INSERT + COMMIT")
def records_benchmark(ctx: BenchContext) -> BenchResult:
    from basedb.client.client import EMBEDDED_BASE_URL, Client
    from basedb.client.transport import InProcessTransport
    from basedb.platform import open_platform
    from basedb.platform.storage.store import DATABASE_FILE

    plan = Plan.of(ctx.settings.quick)
    rng = random.Random(ctx.settings.seed)
    platform = open_platform(ctx.scratch / "records-data")
    try:
        with Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                    transport=InProcessTransport(platform.app), timeout=300) as client:
            base, table_id, app = _site(client)
            raw = _RawWriter(platform.data_dir / DATABASE_FILE, table_id)
            try:
                ctx.log(f"records: {plan.creates:,} Mutation creates, each paired with a raw "
                        "INSERT + COMMIT …")
                create, create_raw = _creates(client, raw, app, plan.creates, rng)
                ctx.log(f"records: {plan.batches} batches of {BATCH}, each paired with a raw "
                        "executemany + COMMIT …")
                batch, batch_raw = _batches(client, raw, base, table_id, plan.batches, rng)
                rows = raw.count()
            finally:
                raw.close()
    finally:
        platform.close()
    expected = 2 * (plan.creates + 10) + 2 * (plan.batches + 2) * BATCH
    if rows != expected:
        raise BenchError(f"the table holds {rows} records, {expected} expected: some write "
                         "was not done")
    return BenchResult("records", [
        Figure("create", create, create_raw, CREATE_TARGET),
        Figure("batch", batch, batch_raw, BATCH_TARGET),
    ], details={"creates": plan.creates, "batches": plan.batches, "batchSize": BATCH,
                "rows": rows},
       notes=[f"records: through the in-process transport (no socket); the floor writes "
              f"the same values to the same table and file. Mutation create p50 "
              f"{create.median * 1000:.3f} ms vs raw {create_raw.median * 1000:.3f} ms; "
              f"batch of {BATCH} p50 {batch.median * 1000:.2f} ms vs raw "
              f"{batch_raw.median * 1000:.2f} ms."])


def _site(client: Client) -> tuple[str, str, str]:
    """A Base with the orders table, a site bound to it with the Mutation released."""
    from basedb.core.site_zip import InputFile, build_site_zip, fingerprint

    base = client.request("POST", "/bases", json={"name": "商城"})["data"]["base_token"]
    table_id = client.request("POST", f"/bases/{base}/tables", json={
        "name": TABLE, "fields": FIELDS})["data"]["id"]
    app = client.request("POST", "/sites/create", json={"title": "商城"})["data"]["appToken"]
    client.request("POST", f"/sites/{app}/bind_base",
                   json={"baseToken": base, "tableIds": [table_id]})
    client.request("PUT", f"/sites/{app}/draft/functions", json={
        "databaseFunctions": [], "faas": [],
        "mutations": [{"functionId": MUTATION_ID, "declaration": MUTATION}]})
    inputs = [InputFile.of("README.md", b"# Orders\n"),
              InputFile.of("src/index.html", b"<!doctype html><title>Orders</title>\n")]
    stamp = fingerprint(inputs)
    deployed = client.request("POST", f"/sites/{app}/deployments", data={"fingerprint": stamp},
                              files={"artifact": ("site.zip", build_site_zip(inputs, stamp),
                                                  "application/zip")})["data"]
    client.request("POST", f"/sites/{app}/deployments/{deployed['deploymentId']}/promote")
    return base, table_id, app


def _order(rng: random.Random, number: int) -> dict[str, Any]:
    return {"number": f"SO{number:07d}", "customer": f"C{rng.randrange(1000):04d}",
            "status": rng.choice(STATUSES), "amount": round(rng.uniform(1, 5000), 2)}


def _creates(client: Client, raw: _RawWriter, app: str, count: int,
             rng: random.Random) -> tuple[Samples, Samples]:
    path = f"/sites/{app}/functions/{MUTATION_ID}/invoke"
    platform = Samples("Mutation create, in-process transport")
    floor = Samples("raw sqlite3 INSERT + COMMIT")
    for number in range(count + 10):  # the first ten warm up
        order = _order(rng, number)
        started = time.perf_counter()
        answer = client.request("POST", path, json={"params": order})
        platform_seconds = time.perf_counter() - started
        if answer.get("code") != 0:
            raise BenchError(f"the Mutation answered {answer}")
        raw_seconds = raw.insert([order])
        if number >= 10:
            platform.seconds.append(platform_seconds)
            floor.seconds.append(raw_seconds)
    return platform, floor


def _batches(client: Client, raw: _RawWriter, base: str, table_id: str, count: int,
             rng: random.Random) -> tuple[Samples, Samples]:
    path = f"/bases/{base}/tables/{table_id}/records/batch_create"
    names = [field["name"] for field in FIELDS[:4]]
    platform = Samples(f"batch_create of {BATCH}, in-process transport")
    floor = Samples(f"raw sqlite3 executemany of {BATCH} + COMMIT")
    for round_number in range(count + 2):  # the first two warm up
        orders = [_order(rng, 10_000_000 + round_number * BATCH + n) for n in range(BATCH)]
        rows = [[o["number"], o["customer"], o["status"], o["amount"]] for o in orders]
        started = time.perf_counter()
        client.request("POST", path, json={"fields": names, "rows": rows})
        platform_seconds = time.perf_counter() - started
        raw_seconds = raw.insert(orders)
        if round_number >= 2:
            platform.seconds.append(platform_seconds)
            floor.seconds.append(raw_seconds)
    return platform, floor


class _RawWriter:
    """Inserts orders straight into the platform's physical table: the floor."""

    def __init__(self, database: Path, table_id: str) -> None:
        from basedb.platform.storage import physical

        self.table = physical.table_name(table_id)
        self.conn = sqlite3.connect(database, isolation_level=None, timeout=30)
        # The platform's own durability (basedb/platform/storage/store.py): WAL, NORMAL.
        if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            raise BenchError("the platform's database is not in WAL mode")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        columns = {row[1] for row in self.conn.execute(f"PRAGMA table_info({self.table})")}
        fields = {row[0]: row[1] for row in self.conn.execute(
            "SELECT name, field_id FROM fields WHERE table_id = ?", (table_id,))}
        self.columns = [physical.column_name(fields[name]) for name in
                        ("订单号", "客户", "状态", "金额")]
        if not set(self.columns) <= columns:
            raise BenchError(f"the physical table {self.table} lacks {self.columns}")
        marks = ", ".join("?" * (6 + len(self.columns)))
        self.sql = (f"INSERT INTO {self.table} (record_id, _seq, _created_at, _updated_at, "
                    f"_created_by, _updated_by, {', '.join(self.columns)}) VALUES ({marks})")

    def insert(self, orders: list[dict[str, Any]]) -> float:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        ids = [f"rec{uuid.uuid4().hex[:16]}" for _ in orders]
        started = time.perf_counter()
        self.conn.execute("BEGIN IMMEDIATE")
        # The next sequence numbers, as the platform takes them (both write this table).
        seq = self.conn.execute(f"SELECT COALESCE(MAX(_seq), 0) FROM {self.table}").fetchone()[0]
        self.conn.executemany(self.sql, [
            (record_id, seq + offset, now, now, "bench", "bench", order["number"],
             order["customer"], order["status"], order["amount"])
            for offset, (record_id, order) in enumerate(zip(ids, orders, strict=True), 1)])
        self.conn.execute("COMMIT")
        return time.perf_counter() - started

    def count(self) -> int:
        return int(self.conn.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0])

    def close(self) -> None:
        self.conn.close()
