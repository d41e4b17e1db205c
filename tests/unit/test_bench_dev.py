"""The dev benchmark measures what it says: every function edit sent a draft."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.registry import BenchContext, Settings
from bench.suites.dev import dev_benchmark

pytestmark = pytest.mark.slow


def test_a_quick_run_measures_both_edits(tmp_path: Path) -> None:
    ctx = BenchContext(Settings(functions=200, runs=1, startup_runs=20, seed=7, quick=True,
                                profile=False), tmp_path)
    result = dev_benchmark(ctx)
    [figure] = result.figures
    assert figure.peer is not None
    assert len(figure.measure.seconds) == len(figure.peer.seconds) == 5
    assert result.details["draftsSent"] >= 6
