"""The benchmark runner's own logic: options, ratios and targets, the table, import times.

Nothing here times anything; the measurements themselves run with `python -m bench`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.profiling import _importtime_line
from bench.registry import BenchResult, Figure, Target, isolated_env
from bench.report import render_table, targets_summary
from bench.runner import parse_settings
from bench.timing import Samples


def samples(label: str, *seconds: float) -> Samples:
    return Samples(label, [], list(seconds))


def test_a_figure_is_a_median_ratio_judged_against_its_target() -> None:
    check = Figure("check", samples("check", 0.9, 0.5, 0.6), samples("floor", 0.2, 0.3, 0.25),
                   Target(2.0, "ratio"))
    assert check.measure.median == 0.6 and check.ratio == pytest.approx(2.4)
    assert check.passed is False
    quick = Figure("gen", samples("gen", 0.4), samples("read", 0.01), Target(0.5, "seconds"))
    assert quick.passed is True  # a seconds target ignores the ratio
    assert Figure("load", samples("load", 0.1)).passed is None
    summary = targets_summary([BenchResult("x", [check, quick])])
    assert (summary["met"], summary["missed"]) == (1, 1)
    assert summary["list"][0]["value"] == pytest.approx(2.4)


def test_the_table_shows_every_figure_and_every_error() -> None:
    figure = Figure("version", samples("basedb --version", 0.036),
                    samples("python -c pass", 0.018), Target(6.0, "ratio"))
    text = render_table([BenchResult("startup", [figure], notes=["a note"])],
                        {"check": "the workspace is not clean\nmore"})
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["benchmark", "measure"]
    assert "36.0 ms" in text and "2.00×" in text and "≤ 6×" in text and "pass" in text
    assert "a note" in lines
    assert any(line.startswith("check") and line.rstrip().endswith("ERROR") for line in lines)


def test_importtime_lines_are_parsed_with_their_nesting() -> None:
    assert _importtime_line("import time: self [us] | cumulative | imported package") is None
    assert _importtime_line("something else") is None
    assert _importtime_line("import time:       958 |      15051 | basedb.cli") == (
        958, 15051, "basedb.cli")
    own, cumulative, name = _importtime_line("import time:   1057 |  10603 |     click.core") \
        or (0, 0, "")
    assert (own, cumulative, name.strip()) == (1057, 10603, "click.core")
    assert (len(name) - len(name.lstrip(" "))) // 2 == 2


def test_options_select_benchmarks_in_table_order() -> None:
    _, settings, selected = parse_settings(["--only", "startup,check", "--quick"])
    assert selected == ["check", "startup"]
    assert settings.quick and settings.functions == 200 and settings.startup_runs >= 20
    _, settings, selected = parse_settings(["--runs", "40"])
    assert selected[:3] == ["check", "contracts", "startup"]
    assert settings.runs == 40 and settings.startup_runs == 40


@pytest.mark.parametrize("argv", [["--only", "nope"], ["--only", ","], ["--functions", "3"],
                                  ["--runs", "0"]])
def test_bad_options_are_usage_errors(argv: list[str],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_settings(argv)
    assert exit_info.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_measured_processes_never_touch_the_users_basedb_dirs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BASEDB_PROFILE", "production")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = isolated_env(tmp_path)
    for name in ("BASEDB_DATA_DIR", "BASEDB_CONFIG_DIR", "BASEDB_STATE_DIR"):
        assert Path(env[name]).parent == tmp_path and Path(env[name]).is_dir()
    assert "BASEDB_PROFILE" not in env
    # Bytecode is cached as for an installed basedb, but outside the checkout.
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert Path(env["PYTHONPYCACHEPREFIX"]).parent == tmp_path


def test_memory_figures_print_in_megabytes_and_compare_as_ratios() -> None:
    rss = Figure("rss", Samples("peak RSS, check", seconds=[96 * 2**20], unit="bytes"),
                 Samples("peak RSS, floor", seconds=[32 * 2**20], unit="bytes"),
                 Target(2.0, "ratio"))
    assert rss.ratio == pytest.approx(3.0) and rss.passed is False
    text = render_table([BenchResult("check", [rss])], {})
    assert "96.0 MB" in text and "32.0 MB" in text and "3.00×" in text
    assert rss.measure.to_json()["unit"] == "bytes"


def test_peak_rss_is_the_childs_own() -> None:
    import sys

    from bench.timing import peak_rss

    small = peak_rss([sys.executable, "-c", "pass"], env={})
    big = peak_rss([sys.executable, "-c", "x = bytearray(200 * 2**20); x[::4096] = b'1' * "
                                          "len(x[::4096])"], env={})
    assert 0 < small < big and big - small > 150 * 2**20


def test_token_figures_print_in_tokens_and_are_judged_on_their_median() -> None:
    within = Figure("reach", Samples("Skill: reach a function", seconds=[3_400.0],
                                     unit="tokens"), target=Target(8_000, "tokens"))
    over = Figure("list", Samples("MCP tools/list", seconds=[52_000.0], unit="tokens"),
                  target=Target(20_000, "tokens"))
    assert within.passed is True and over.passed is False
    text = render_table([BenchResult("agents", [within, over])], {})
    assert "3,400 tok" in text and "≤ 20,000 tokens" in text and "MISS" in text
