"""What machine and software a run measured: recorded with every result."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


def sqlglot_build() -> dict[str, Any]:
    """sqlglot's version, and whether its compiled build (sqlglotc) is in use.

    sqlglotc ships no module of its own: it replaces sqlglot's modules with compiled
    ones, so the build shows in where sqlglot's tokenizer core was loaded from. check,
    the floor and contracts all run on this interpreter, hence on the same build.
    """
    import sqlglot
    from sqlglot import tokenizer_core

    origin = getattr(tokenizer_core, "__file__", "") or ""
    return {"version": getattr(sqlglot, "__version__", "unknown"),
            "compiled": not origin.endswith(".py"),
            "sqlglotc": _distribution_version("sqlglotc")}


def machine_info() -> dict[str, Any]:
    affinity = getattr(os, "sched_getaffinity", None)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "cpuCount": os.cpu_count(),
        "usableCpus": len(affinity(0)) if affinity else os.cpu_count(),
        "loadAverage": [round(x, 2) for x in load] if load else None,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": {"version": platform.python_version(),
                   "implementation": platform.python_implementation(),
                   "executable": sys.executable},
        "sqlglot": sqlglot_build(),
        "basedb": {"version": _distribution_version("basedb"), **_git_revision()},
    }


def _distribution_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _git_revision() -> dict[str, Any]:
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True,
                                  text=True, check=False, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status)}
