"""Sustained concurrent load through the in-process transport the CLI uses.

8 writers and 32 readers share one platform for 10 seconds. Writers create records one
at a time, in batches of two, and through a deployed Mutation, each write carrying a key
of its own; readers list records and invoke Database Functions. Every acknowledged write
must then be stored exactly once, no response may be a server error, and every count a
reader saw must lie between what had been acknowledged before it asked and what had been
acknowledged or sent by the time it got its answer.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from basedb.client.transport import InProcessTransport
from basedb.core.paths import API_PREFIX
from basedb.platform import LocalPlatform
from tests.platform.conftest import Api, make_table
from tests.platform.release_support import deploy

pytestmark = pytest.mark.slow

WRITERS = 8
READERS = 32
SECONDS = 10.0
# Each worker does at least this much whatever the machine's load: the assertions depend
# on the work done (every writer wrote every kind), never on what fits in SECONDS.
MIN_STEPS = 2 * 3
KINDS = ("record", "batch", "mutation")


@dataclass(frozen=True)
class LoadSite:
    app_token: str
    records_path: str  # below the API prefix

    def invoke_path(self, function_id: str) -> str:
        return f"/sites/{self.app_token}/functions/{function_id}/invoke"


def load_site(api: Api) -> LoadSite:
    """A Base table Load(Writer, Step, Key, Via), bound to a site whose prod release has
    a Mutation that adds a row and queries that read rows back."""
    base = api.ok("POST", "/bases", json={"name": "Load"})["base_token"]
    table = make_table(api, base, "Load", [
        {"name": "Writer", "type": "number"},
        {"name": "Step", "type": "number"},
        {"name": "Key", "type": "text"},
        {"name": "Via", "type": "select", "options": [{"name": kind} for kind in KINDS]},
    ])
    app = api.ok("POST", "/sites/create", json={"title": "Load"})["appToken"]
    api.ok("POST", f"/sites/{app}/bind_base",
           json={"baseToken": base, "tableIds": [table["id"]]})

    def param(name: str, kind: str) -> dict[str, Any]:
        return {"name": name, "kind": kind, "description": f"The {name} of the row"}

    api.ok("PUT", f"/sites/{app}/draft/functions", json={
        "databaseFunctions": [
            {"functionId": "rowsOfWriter", "sql": 'SELECT "Key", "Step", "Via" FROM "Load" '
             'WHERE "Writer" = $1 ORDER BY "Step", "Key"',
             "declaration": {"name": "rowsOfWriter", "description": "Rows one writer added",
                             "meta": {"params": [param("writer", "INT")]}}},
            {"functionId": "rowCount", "sql": 'SELECT count(*) AS n FROM "Load"',
             "declaration": {"name": "rowCount", "description": "How many rows there are",
                             "meta": {"params": []}}},
        ],
        "mutations": [{"functionId": "addRow", "declaration": {
            "name": "addRow", "description": "Add one row to the Load table",
            "spec": {"table": "Load", "action": "create",
                     "params": [param("writer", "INT"), param("step", "INT"),
                                param("key", "TEXT")],
                     "set": {"Writer": "$writer", "Step": "$step", "Key": "$key",
                             "Via": "mutation"}}}}],
        "faas": []})
    deployed = deploy(api, app)
    api.ok("POST", f"/sites/{app}/deployments/{deployed['deploymentId']}/promote")
    return LoadSite(app, f"/bases/{base}/tables/{table['id']}/records")


@dataclass
class Ledger:
    """What the threads saw, shared under one lock."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    statuses: Counter[int] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    unexpected: list[Any] = field(default_factory=list)
    # writer -> {key: record id} of acknowledged writes
    acknowledged: dict[int, dict[str, str]] = field(
        default_factory=lambda: {w: {} for w in range(WRITERS)})
    acknowledged_kinds: dict[int, Counter[str]] = field(
        default_factory=lambda: {w: Counter() for w in range(WRITERS)})
    # writer -> rows sent and not yet acknowledged (they may be committed already)
    in_flight: Counter[int] = field(default_factory=Counter)

    def note(self, what: str, response: httpx.Response) -> Any:
        """The envelope's data of a successful call; anything else is recorded."""
        body = response.json()
        with self.lock:
            self.statuses[response.status_code] += 1
            self.calls[what] += 1
            if response.status_code != 200 or body.get("code") != 0:
                self.unexpected.append((what, response.status_code, body))
                return None
        return body["data"]

    def send(self, writer: int, rows: int) -> None:
        with self.lock:
            self.in_flight[writer] += rows

    def acknowledge(self, writer: int, kind: str, written: dict[str, str]) -> None:
        with self.lock:
            self.in_flight[writer] -= len(written)
            self.acknowledged[writer].update(written)
            self.acknowledged_kinds[writer][kind] += 1

    def bounds(self, writer: int | None = None) -> tuple[int, int]:
        """(acknowledged, acknowledged + in flight) rows of one writer, or of all: what
        a read may see is between the first taken before it and the second after it."""
        with self.lock:
            writers = range(WRITERS) if writer is None else (writer,)
            done = sum(len(self.acknowledged[w]) for w in writers)
            return done, done + sum(self.in_flight[w] for w in writers)


@pytest.fixture
def http_clients(platform: LocalPlatform) -> Iterator[list[httpx.Client]]:
    """One client per thread, all on the in-process transport over the one app."""
    clients = [httpx.Client(transport=InProcessTransport(platform.app),
                            base_url="http://basedb.local" + API_PREFIX, timeout=60.0,
                            headers={"Authorization": f"Bearer {platform.owner_token}"})
               for _ in range(WRITERS + READERS)]
    yield clients
    for client in clients:
        client.close()


def test_sustained_writes_and_reads_lose_nothing(api: Api, http_clients: list[httpx.Client]
                                                 ) -> None:
    site = load_site(api)
    ledger = Ledger()
    problems: list[str] = []
    deadline = time.monotonic() + SECONDS

    def write(number: int, client: httpx.Client) -> None:
        step = 0
        while step < max(MIN_STEPS, len(KINDS)) or time.monotonic() < deadline:
            step += 1
            kind = KINDS[step % len(KINDS)]
            key = f"w{number}-s{step}"
            ledger.send(number, 2 if kind == "batch" else 1)
            if kind == "record":
                data = ledger.note(kind, client.post(site.records_path, json={
                    "Writer": number, "Step": step, "Key": key, "Via": kind}))
                written = {key: data["record_id"]} if data else {}
            elif kind == "batch":
                keys = [f"{key}-a", f"{key}-b"]
                data = ledger.note(kind, client.post(f"{site.records_path}/batch_create", json={
                    "fields": ["Writer", "Step", "Key", "Via"],
                    "rows": [[number, step, k, kind] for k in keys]}))
                written = dict(zip(keys, data["record_id_list"], strict=True)) if data else {}
            else:
                data = ledger.note(kind, client.post(site.invoke_path("addRow"), json={
                    "params": {"writer": number, "step": step, "key": key}}))
                if data and data["affected"] != 1:
                    problems.append(f"addRow wrote {data['affected']} rows for {key}")
                written = {key: data["recordIds"][0]} if data else {}
            if written:
                ledger.acknowledge(number, kind, written)

    def read(number: int, client: httpx.Client) -> None:
        chooser = random.Random(number)
        rounds = 0
        while rounds < MIN_STEPS or time.monotonic() < deadline:
            rounds += 1
            writer = chooser.randrange(WRITERS)
            floor, _ = ledger.bounds(writer)
            data = ledger.note("rowsOfWriter", client.post(
                site.invoke_path("rowsOfWriter"), json={"params": {"writer": writer}}))
            if data is not None:
                keys = [row["Key"] for row in data["rows"]]
                _, ceiling = ledger.bounds(writer)
                if not floor <= len(keys) <= ceiling or data["truncated"]:
                    problems.append(f"rowsOfWriter({writer}) saw {len(keys)} rows, "
                                    f"acknowledged {floor}..{ceiling}")
                if len(set(keys)) != len(keys) or not all(
                        k.startswith(f"w{writer}-") for k in keys):
                    problems.append(f"rowsOfWriter({writer}) saw foreign or repeated keys")
            floor, _ = ledger.bounds()
            data = ledger.note("rowCount", client.post(site.invoke_path("rowCount"), json={}))
            _, ceiling = ledger.bounds()
            if data is not None and not floor <= data["rows"][0]["n"] <= ceiling:
                problems.append(f"rowCount saw {data['rows'][0]['n']}, acknowledged "
                                f"{floor}..{ceiling}")
            page = ledger.note("list", client.get(site.records_path, params={
                "offset": chooser.randrange(max(floor, 1)), "limit": 50}))
            if page is not None and page["total"] < floor:
                problems.append(f"a page said total {page['total']}, acknowledged {floor}")

    def guarded(work: Any, number: int, client: httpx.Client) -> None:
        try:
            work(number, client)
        except Exception as exc:  # a crashed thread must fail the test, not vanish
            problems.append(f"{work.__name__} {number}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=guarded, args=(write, n, http_clients[n]))
               for n in range(WRITERS)]
    threads += [threading.Thread(target=guarded, args=(read, n, http_clients[WRITERS + n]))
                for n in range(READERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=SECONDS + 900)  # a guard against a hang, not a window
    assert not any(thread.is_alive() for thread in threads)

    assert problems == []
    assert ledger.unexpected == [], ledger.unexpected[:3]
    assert set(ledger.statuses) == {200}, ledger.statuses
    for writer in range(WRITERS):  # every writer got every kind of write through
        assert set(ledger.acknowledged_kinds[writer]) == set(KINDS), writer
    assert all(ledger.calls[what] > 0 for what in ("rowsOfWriter", "rowCount", "list"))

    stored = stored_rows(api, site)
    keys = Counter(row["Key"] for row in stored.values())
    assert [key for key, seen in keys.items() if seen > 1] == []  # nothing stored twice
    expected = {key: record_id for acks in ledger.acknowledged.values()
                for key, record_id in acks.items()}
    # Every acknowledged write is there, under the record id it was acknowledged with,
    # and nothing else is: every call succeeded, so every write was acknowledged.
    assert {row["Key"]: record_id for record_id, row in stored.items()} == expected
    for record_id, row in stored.items():
        writer, step = (int(part[1:]) for part in row["Key"].split("-")[:2])
        assert (row["Writer"], row["Step"]) == (writer, step), record_id
    counted = api.ok("POST", site.invoke_path("rowCount"), json={})["rows"][0]["n"]
    assert counted == len(stored) == len(expected)
    for writer in range(WRITERS):
        rows = api.ok("POST", site.invoke_path("rowsOfWriter"),
                      json={"params": {"writer": writer}})["rows"]
        assert sorted(row["Key"] for row in rows) == sorted(ledger.acknowledged[writer])
        by_kind = Counter(row["Via"] for row in rows)
        kinds = ledger.acknowledged_kinds[writer]
        assert by_kind == Counter({"record": kinds["record"], "batch": 2 * kinds["batch"],
                                   "mutation": kinds["mutation"]}), writer


def stored_rows(api: Api, site: LoadSite) -> dict[str, dict[str, Any]]:
    """Every record of the Load table: {record id: {field name: value}}."""
    found: dict[str, dict[str, Any]] = {}
    offset = 0
    while True:
        page = api.ok("GET", site.records_path, params={"offset": offset, "limit": 200})
        for record_id, row in zip(page["record_id_list"], page["data"], strict=True):
            assert record_id not in found
            found[record_id] = dict(zip(page["fields"], row, strict=True))
        offset += 200
        if not page["has_more"]:
            return found
