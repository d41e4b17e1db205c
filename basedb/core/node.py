"""Finding Node.js, which runs FaaS handlers: `$BASEDB_NODE`, else `node` on PATH.

Shared by the platform's FaaS runtime and `basedb doctor`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache

from basedb.core import environment

MIN_NODE_MAJOR = 20
# The PATH a Node.js child process gets: system directories only.
CHILD_PATH = "/usr/local/bin:/usr/bin:/bin"


def node_executable() -> str | None:
    """The Node.js binary FaaS handlers run with: $BASEDB_NODE, else `node` on PATH."""
    configured = os.environ.get(environment.NODE, "").strip()
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("node")


def node_version() -> str | None:
    """The version of that Node.js (such as "20.11.1"), or None when there is none."""
    executable = node_executable()
    return None if executable is None else version_of(executable)


@lru_cache(maxsize=8)
def version_of(executable: str) -> str | None:
    try:
        done = subprocess.run([executable, "--version"], capture_output=True, text=True,
                              timeout=10, env={"PATH": CHILD_PATH}, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.fullmatch(r"v?(\d+\.\d+\.\d+)\S*", done.stdout.strip())
    return match.group(1) if done.returncode == 0 and match else None


def version_tuple(version: str) -> tuple[int, int]:
    major, minor, _ = version.split(".", 2)
    return int(major), int(minor)
