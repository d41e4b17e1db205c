"""The invoke benchmark's peers: they answer the same query on the same file with the same
rows, so that a ratio against them compares equal work."""

from __future__ import annotations

import dataclasses
import http.client
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from bench.orders_site import OrdersSite, build_orders_site
from bench.peers import Peer, datasette, datasette_available, minimal_app, named_sql
from bench.registry import isolated_env
from bench.suites.invoke import LOAD_SCRIPT
from bench.timing import BenchError

RECORDS = 1_000


def test_placeholders_are_named_after_their_parameters_outside_quotes() -> None:
    sql = "SELECT '?', \"a?b\" FROM t WHERE x = ? AND y = ? AND z = 'it''s ?' OR w = ?"
    assert named_sql(sql, [1, 2, 1]) == (
        "SELECT '?', \"a?b\" FROM t WHERE x = :customer AND y = :status AND "
        "z = 'it''s ?' OR w = :customer")
    with pytest.raises(BenchError, match="fewer placeholders"):
        named_sql("SELECT ?", [1, 2])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> OrdersSite:
    return build_orders_site(tmp_path_factory.mktemp("orders") / "data", records=RECORDS,
                             seed=7)


def _ask(peer: Peer, values: dict[str, str]) -> list[str]:
    path, body = peer.request(values)
    connection = http.client.HTTPConnection("127.0.0.1", peer.port, timeout=60)
    try:
        connection.request(peer.method, path, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        assert response.status == 200
        return peer.rows(response.read())
    finally:
        connection.close()


def _raw(site: OrdersSite, values: dict[str, str]) -> list[str]:
    with sqlite3.connect(site.database) as raw:
        return [row[0] for row in raw.execute(
            site.compiled.sql, site.compiled.parameters(list(values.values()), None))]


@pytest.mark.slow
@pytest.mark.parametrize("start", [
    minimal_app,
    pytest.param(datasette, marks=pytest.mark.skipif(
        not datasette_available(), reason="Datasette is not installed (.[bench])")),
])
def test_each_peer_answers_the_raw_querys_rows(site: OrdersSite, tmp_path: Path,
                                               start: object) -> None:
    params = site.params_sequence(40, seed=5)
    with start(site, tmp_path, env=isolated_env(tmp_path), cpus=None) as peer:  # type: ignore[operator]
        answers = [_ask(peer, values) for values in params]
        assert answers == [_raw(site, values) for values in params]
        assert any(answers)  # some customers have orders in that status
        if shutil.which("node") is None:
            return
        # The load generator drives it too (GET paths for Datasette, bodies for the app).
        load = ({"paths": [peer.request(values)[0] for values in params]}
                if peer.method == "GET" else
                {"bodies": [{"params": values} for values in params]})
        config = tmp_path / "load.json"
        config.write_text(json.dumps({"url": peer.base_url + peer.path.split("?")[0],
                                      "token": "unused", **load, "concurrency": 2,
                                      "requests": 20}, ensure_ascii=False),
                          encoding="utf-8")
        run = json.loads(subprocess.run(["node", str(LOAD_SCRIPT), str(config)],
                                        capture_output=True, text=True, check=True,
                                        timeout=600).stdout)
        assert run["completed"] == 20 and run["failures"] == 0


@pytest.mark.slow
def test_a_peer_that_cannot_start_is_a_bench_error(site: OrdersSite, tmp_path: Path) -> None:
    missing = dataclasses.replace(site, database=tmp_path / "missing.sqlite")
    with pytest.raises(BenchError, match="exited with status"), minimal_app(
            missing, tmp_path, env=isolated_env(tmp_path), cpus=None):
        pass
