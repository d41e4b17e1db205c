"""The faas benchmark's parts against a real `basedb serve` on a small site: a release
with its handlers, warm calls paired with the Database Function, a cold start, the node
floor, and the misbehaving handlers that the responsiveness figure runs beside."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator

import pytest

from bench.orders_site import OrdersSite, build_orders_site
from bench.registry import basedb_command, isolated_env
from bench.serve_process import served
from bench.suites.faas import Caller, measure_cold, measure_warm, node_round_trip, release
from bench.timing import BenchError

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> OrdersSite:
    return build_orders_site(tmp_path_factory.mktemp("orders") / "data", records=200, seed=7)


@pytest.fixture(scope="module")
def caller(site: OrdersSite, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Caller]:
    scratch = tmp_path_factory.mktemp("serve")
    with served(basedb_command(sys.executable), site.data_dir, env=isolated_env(scratch),
                log=scratch / "serve.log", cpus=None) as server:
        found = Caller(server, site)
        release(found, 0)
        yield found
        found.close()


def test_warm_calls_are_paired_and_checked(caller: Caller, site: OrdersSite) -> None:
    params = site.params_sequence(12, 7)
    warm, database = measure_warm(caller, params, warmup=2)
    assert len(warm.seconds) == len(database.seconds) == 10
    assert all(s > 0 for s in warm.seconds + database.seconds)


def test_a_cold_start_is_the_first_call_of_a_new_release(caller: Caller) -> None:
    cold = measure_cold(caller, 2, first_version=7)
    assert len(cold.seconds) == 2


def test_misbehaving_handlers_end_in_the_errors_the_figure_expects(caller: Caller) -> None:
    for function_id in ("spin", "hog", "flood"):
        _, status, document = caller.invoke(function_id, {})
        assert document["code"] == 800004005 and status in (500, 504), document


def test_the_node_floor_echoes_each_line() -> None:
    node = shutil.which("node")
    assert node is not None
    floor = node_round_trip(node, None, 30, 10)
    assert len(floor.seconds) == 20


def test_a_wrong_echo_is_refused(caller: Caller) -> None:
    from bench.suites.faas import _check_echo

    with pytest.raises(BenchError, match="answered"):
        _check_echo(caller.invoke("echo", {"text": "a"}), {"text": "b"})
