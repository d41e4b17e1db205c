"""How a command ends: the embedded platform is closed (its database checkpointed, its
log flushed), and the interpreter's last garbage collection is skipped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from basedb.platform import open_platform

# Registered before the command's own exit handlers, so it runs after them all.
_REPORT_AT_EXIT = """
import atexit, gc, json, sys
atexit.register(lambda: print(json.dumps({"frozen": gc.get_freeze_count()}), file=sys.stderr))
from basedb.cli import main
main(sys.argv[1:])
"""


def _run(*args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, int]]:
    result = subprocess.run([sys.executable, "-c", _REPORT_AT_EXIT, *args],
                            capture_output=True, text=True, timeout=300)
    report = json.loads(result.stderr.strip().splitlines()[-1])
    return result, report


def test_a_deploy_closes_its_platform_and_skips_the_last_collection(
        site: Path, isolated_dirs: dict[str, Path]) -> None:
    open_platform(isolated_dirs["data"]).close()  # the one `site` was made with, here
    for _ in range(2):  # the first deploy, then one with nothing changed
        result, report = _run("deploy", "--json", "-C", str(site))
        assert result.returncode == 0, result.stderr[-2000:]
        assert json.loads(result.stdout)["deploymentId"]
        assert report["frozen"] > 1000  # every module's objects, left to the exit
        database = isolated_dirs["data"] / "platform.db"
        assert database.is_file()
        # Closed at exit: its write-ahead log was checkpointed into it and removed.
        assert not database.with_name("platform.db-wal").exists()


def test_a_failing_command_also_skips_it() -> None:
    result, report = _run("deploy", "--no-such-option")
    assert result.returncode == 2
    assert report["frozen"] > 0
