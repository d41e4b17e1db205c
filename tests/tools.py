"""Third-party tools that tests run against basedb's output (tsc, pyright, MCP Inspector).

They are npm packages pinned in .ci/tools/package.json; .ci/run installs them with
`npm install --prefix .ci/tools`. Tests never install anything while they run: where a
tool is missing (a checkout that has not run that install), the test that needs it is
skipped and says how to get it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / ".ci" / "tools"
BIN = TOOLS / "node_modules" / ".bin"
INSTALL = "npm install --no-audit --no-fund --no-package-lock --prefix .ci/tools"


def npm_tool(name: str) -> Path:
    """The pinned tool `name` from .ci/tools, or skip the test with the command that
    installs it. (A tool of the same name on PATH is not used: it may be another version,
    or a wrapper that downloads one at run time.)"""
    path = BIN / name
    if shutil.which("node") is None:
        pytest.skip(f"{name} needs Node.js, which is not installed")
    if not path.exists():
        pytest.skip(f"{name} is not installed in .ci/tools: run `{INSTALL}` (.ci/run does)")
    return path
