"""The README opens with the two set-up commands, and CI runs the second one verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block is not None and text.index(block.group(0)) < 200, "no set-up block on top"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_starts_with_install_and_demo_then_tests() -> None:
    first, second = setup_commands()
    assert first == "pip install . && basedb demo"
    assert second.startswith("pip install -e '.[test]'") and second.endswith("pytest")


def test_ci_runs_the_readme_test_command() -> None:
    _, test_command = setup_commands()
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_ci_also_runs_the_slow_tests_and_installs_the_tools_they_need() -> None:
    """`pytest` leaves the slow tests out (pyproject's addopts); CI runs them after the
    default set, with the pinned npm tools installed first."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    _, test_command = setup_commands()
    assert lines.index("pytest -m slow") > lines.index(test_command)
    install = next(i for i, line in enumerate(lines) if "--prefix .ci/tools" in line)
    assert install < lines.index(test_command)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "addopts = \"-q -m 'not slow' -n auto\"" in pyproject
