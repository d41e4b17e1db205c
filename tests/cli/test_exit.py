"""How a command ends: the embedded platform is closed (its database checkpointed, its
log flushed). (That the interpreter's last garbage collection is skipped is a matter of
speed, which `python -m bench --only deploy` measures.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from basedb.platform import open_platform


def test_a_deploy_closes_its_platform(site: Path, isolated_dirs: dict[str, Path]) -> None:
    open_platform(isolated_dirs["data"]).close()  # the one `site` was made with, here
    for _ in range(2):  # the first deploy, then one with nothing changed
        result = subprocess.run([sys.executable, "-m", "basedb", "deploy", "--json", "-C",
                                 str(site)], capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-2000:]
        assert json.loads(result.stdout)["deploymentId"]
        database = isolated_dirs["data"] / "platform.db"
        assert database.is_file()
        # Closed at exit: its write-ahead log was checkpointed into it and removed.
        assert not database.with_name("platform.db-wal").exists()

