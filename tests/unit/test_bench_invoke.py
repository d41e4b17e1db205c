"""The invoke benchmark's parts on a small table: the site, the paired measure against a
real `basedb serve`, the load generator, and the refusals that keep a figure honest."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.orders_site import FUNCTION_ID, STATUSES, OrdersSite, build_orders_site
from bench.registry import basedb_command, isolated_env
from bench.serve_process import Server, cpu_split, served
from bench.suites.invoke import LOAD_SCRIPT, _check_same, measure_pairs, query_plan
from bench.timing import BenchError

RECORDS = 1_000


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> OrdersSite:
    return build_orders_site(tmp_path_factory.mktemp("orders") / "data", records=RECORDS,
                             seed=7)


@pytest.fixture(scope="module")
def server(site: OrdersSite, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    scratch = tmp_path_factory.mktemp("serve")
    with served(basedb_command(sys.executable), site.data_dir, env=isolated_env(scratch),
                log=scratch / "serve.log", cpus=cpu_split()[0]) as running:
        yield running


def test_the_site_holds_the_records_and_an_indexed_function(site: OrdersSite) -> None:
    with sqlite3.connect(site.database) as conn:
        count = conn.execute(f"SELECT count(*) FROM t_{site.table_id}").fetchone()[0]
    assert count == RECORDS
    assert site.invoke_path.endswith(f"/functions/{FUNCTION_ID}/invoke")
    assert any(re.search(r"USING (COVERING )?INDEX bdx_", step) for step in query_plan(site))
    params = site.params_sequence(50, seed=1)
    assert params == site.params_sequence(50, seed=1)  # the same inputs for every peer
    assert {p["status"] for p in params} <= set(STATUSES)


@pytest.mark.slow
def test_pairs_are_measured_against_the_served_platform(site: OrdersSite,
                                                        server: Server) -> None:
    paired = measure_pairs(server, site, site.params_sequence(30, seed=2), warmup=5)
    assert len(paired.http.seconds) == len(paired.raw.seconds) == 25
    assert paired.overhead.seconds == [h - r for h, r in zip(paired.http.seconds,
                                                               paired.raw.seconds,
                                                               strict=True)]
    summary = paired.summary()
    assert summary["calls"] == 25 and summary["httpP50Ms"] > 0
    # The access log of the server shows the calls were real HTTP requests (a line is
    # written just after its response is sent, so the last ones may still be on the way).
    deadline = time.monotonic() + 30
    while server.log.read_text(encoding="utf-8").count('"status": 200') < 30:
        assert time.monotonic() < deadline, server.log.read_text(encoding="utf-8")[-2000:]
        time.sleep(0.05)


def test_an_answer_that_differs_from_the_raw_query_stops_the_benchmark() -> None:
    body = json.dumps({"code": 0, "msg": "success", "data": {"rows": [
        {"订单号": "SO0000001"}]}}).encode()
    _check_same(200, body, [("SO0000001",)], {})
    with pytest.raises(BenchError, match="other rows"):
        _check_same(200, body, [("SO0000002",)], {})
    with pytest.raises(BenchError, match="HTTP 400"):
        _check_same(400, b'{"code":9499,"msg":"bad"}', [], {})


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_the_load_generator_counts_successes(site: OrdersSite, server: Server,
                                             tmp_path: Path) -> None:
    config = tmp_path / "load.json"
    config.write_text(json.dumps({
        "url": server.base_url + site.invoke_path, "token": site.owner_token,
        "bodies": [{"params": p} for p in site.params_sequence(20, seed=3)],
        "concurrency": 2, "warmupRequests": 2, "requests": 20}), encoding="utf-8")
    # Counted, not timed: every answer counts however slow the machine is. (The timeout
    # only guards against a hang.)
    done = subprocess.run(["node", str(LOAD_SCRIPT), str(config)], capture_output=True,
                          text=True, check=True, timeout=600)
    run = json.loads(done.stdout)
    assert run["completed"] == 20 and run["failures"] == 0 and run["statuses"] == {
        "200": 20}
    config.write_text(json.dumps({
        "url": server.base_url + site.invoke_path, "token": "bdb_wrong",
        "bodies": [{"params": {}}], "concurrency": 1, "requests": 3}), encoding="utf-8")
    refused = json.loads(subprocess.run(["node", str(LOAD_SCRIPT), str(config)],
                                        capture_output=True, text=True, check=True,
                                        timeout=600).stdout)
    assert refused["failures"] == refused["completed"] == 3
    assert "99991663" in refused["sampleFailure"]


@pytest.mark.slow
def test_a_server_that_cannot_start_is_a_bench_error(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(BenchError, match="exited with status"), served(
            basedb_command(sys.executable), not_a_dir, env={**isolated_env(tmp_path),
                                                           "PATH": os.environ["PATH"]},
            log=tmp_path / "serve.log", cpus=None):
        pass
