"""A test run that leaves a file in the checkout fails, naming the file
(tests/conftest.py): tests write under temporary directories only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, tree_changes


@pytest.mark.slow  # a whole pytest session in a subprocess (about 13 s)
@pytest.mark.skipif(tree_changes() is None, reason="not a git checkout")
def test_a_file_left_in_the_checkout_fails_the_run(tmp_path: Path) -> None:
    probe = ROOT / f"left-behind-{os.getpid()}.txt"
    test_file = tmp_path / "test_leaves_a_file.py"
    test_file.write_text(f"def test_it():\n    open({str(probe)!r}, 'w').write('x')\n",
                         encoding="utf-8")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider",
             "-q", "-n0", "-m", "", "--rootdir", str(tmp_path), "-c", os.devnull,
             str(test_file)],
            cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    finally:
        probe.unlink(missing_ok=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "files the tests left in the checkout" in done.stdout
    assert probe.name in done.stdout
