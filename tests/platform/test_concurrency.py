"""Concurrent writers and readers: no lost writes, no server errors."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from typing import Any

from tests.platform.conftest import Api, make_table

WRITERS = 8
READERS = 32
SECONDS = 2.0
# Each worker does at least this much, however late it starts or slowly it runs: the
# assertions below depend on the work done, never on what fits in SECONDS.
MIN_STEPS = 6


def test_concurrent_writes_and_reads(api: Api, base: str) -> None:
    table = make_table(api, base, "Load", [
        {"name": "Writer", "type": "number"},
        {"name": "Step", "type": "number"},
        {"name": "No", "type": "auto_number"},
    ])
    records = f"/bases/{base}/tables/{table['id']}/records"
    deadline = time.monotonic() + SECONDS
    statuses: Counter[int] = Counter()
    created: dict[int, list[str]] = {w: [] for w in range(WRITERS)}
    failures: list[Any] = []
    lock = threading.Lock()

    def note(status: int, body: Any) -> None:
        with lock:
            statuses[status] += 1
            if status != 200:
                failures.append(body)

    def writer(number: int) -> None:
        step = 0
        while step < MIN_STEPS or time.monotonic() < deadline:
            step += 1
            if step % 3:
                response = api.call("POST", records, json={"Writer": number, "Step": step})
                if response.status_code == 200:
                    created[number].append(response.json()["data"]["record_id"])
            else:
                response = api.call("POST", f"{records}/batch_create", json={
                    "fields": ["Writer", "Step"], "rows": [[number, step], [number, -step]]})
                if response.status_code == 200:
                    created[number].extend(response.json()["data"]["record_id_list"])
            note(response.status_code, response.json())
            mine = created[number]
            if mine and step % 5 == 0:
                response = api.call("PATCH", f"{records}/{random.choice(mine)}",
                                    json={"Step": step})
                note(response.status_code, response.json())

    def reader() -> None:
        reads = 0
        while reads < MIN_STEPS or time.monotonic() < deadline:
            reads += 1
            response = api.call("GET", records, params={"limit": 50})
            note(response.status_code, response.json())
            ids = response.json()["data"]["record_id_list"] if response.status_code == 200 else []
            if ids:
                response = api.call("GET", f"{records}/{random.choice(ids)}")
                note(response.status_code, response.json())

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    threads += [threading.Thread(target=reader) for _ in range(READERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=SECONDS + 600)  # a guard against a hang, not a window
    assert not any(thread.is_alive() for thread in threads)

    assert failures == [] and set(statuses) == {200}, (statuses, failures[:3])
    written = [rid for ids in created.values() for rid in ids]
    assert all(created.values())  # every writer got work done
    assert len(set(written)) == len(written)
    stored: list[str] = []
    numbers: list[int] = []
    offset = 0
    while True:
        page = api.ok("GET", records, params={"offset": offset, "limit": 200})
        stored += page["record_id_list"]
        numbers += [row[2] for row in page["data"]]
        offset += 200
        if not page["has_more"]:
            break
    assert sorted(stored) == sorted(written)  # nothing lost, nothing invented
    assert numbers == list(range(1, len(stored) + 1))  # auto numbers never collide
