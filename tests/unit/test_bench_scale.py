"""The scale benchmark measures what it says: every size and site count it is given,
each figure against the smallest, and sizes that are not numbers are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.registry import BenchContext, BenchError, Settings
from bench.suites.scale import ROWS_VARIABLE, SITES_VARIABLE, scale_benchmark

pytestmark = pytest.mark.slow


def test_a_small_run_has_every_figure_at_every_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ROWS_VARIABLE, "400,1000")
    monkeypatch.setenv(SITES_VARIABLE, "1,2")
    monkeypatch.setenv("PATH", "/nonexistent")  # no node: the FaaS figures are skipped
    monkeypatch.delenv("BASEDB_NODE", raising=False)
    ctx = BenchContext(Settings(functions=200, runs=1, startup_runs=20, seed=7, quick=True,
                                profile=False), tmp_path)
    result = scale_benchmark(ctx)
    names = [figure.name for figure in result.figures]
    for name in ("eq_order", "range_order", "count", "load", "restart", "last_page"):
        assert f"{name}@400" in names and f"{name}@1000" in names
    larger = {figure.name: figure for figure in result.figures}
    assert larger["eq_order@1000"].peer is larger["eq_order@400"].measure
    assert larger["last_page@1000"].peer is not None  # against the first page
    assert any("no node" in note for note in result.notes)
    assert result.details["rows_1000"]["rows_per_second"] > 0


def test_sizes_must_be_whole_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ROWS_VARIABLE, "10k")
    ctx = BenchContext(Settings(functions=200, runs=1, startup_runs=20, seed=7, quick=True,
                                profile=False), tmp_path)
    with pytest.raises(BenchError, match=ROWS_VARIABLE):
        scale_benchmark(ctx)
