""".ci/run installs system packages only where it can (root with apt-get), and otherwise
names what it skips and goes on, so a contributor without root or apt can run it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _apt_helpers() -> str:
    """The shell functions .ci/run installs packages with, as its text."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    found = re.search(r"^can_apt\(\).*?^need\(\).*?^}\n", script, re.S | re.M)
    assert found, ".ci/run defines can_apt and need"
    return found.group(0)


def _run(tmp_path: Path, uid: str, body: str) -> subprocess.CompletedProcess[str]:
    """`body` after the helpers, in a bash whose PATH has only a fake `id` (reporting
    `uid`) and `apt-get` (recording its calls) besides bash's own builtins."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "id").write_text(f"#!/bin/sh\necho {uid}\n", encoding="utf-8")
    (bin_dir / "apt-get").write_text(
        f"#!/bin/sh\necho \"$@\" >> {tmp_path}/apt.log\n", encoding="utf-8")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    script = f"set -euo pipefail\n{_apt_helpers()}\n{body}\n"
    return subprocess.run(["/bin/bash", "-c", script], capture_output=True, text=True,
                          env={"PATH": str(bin_dir)}, check=False)


def test_without_root_a_missing_package_is_named_and_skipped(tmp_path: Path) -> None:
    done = _run(tmp_path, "1000", 'need no-such-tool no-such-pkg "the tests" || echo went-on')
    assert done.returncode == 0, done.stderr
    assert "went-on" in done.stdout
    assert "skipping no-such-pkg (the tests): not installed" in done.stderr
    assert not (tmp_path / "apt.log").exists(), "apt-get is never run without root"


def test_as_root_with_apt_the_package_is_installed(tmp_path: Path) -> None:
    done = _run(tmp_path, "0", 'need no-such-tool no-such-pkg "the tests" && echo installed')
    assert done.returncode == 0, done.stderr
    assert "installed" in done.stdout
    calls = (tmp_path / "apt.log").read_text(encoding="utf-8").splitlines()
    assert calls == ["update -qq", "install -y -qq no-such-pkg"]


def test_a_command_that_exists_installs_nothing(tmp_path: Path) -> None:
    done = _run(tmp_path, "1000", 'need id coreutils "ids" && echo present')
    assert done.returncode == 0 and "present" in done.stdout and not done.stderr
