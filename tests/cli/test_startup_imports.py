"""`basedb --version` (and so every command's start-up) imports no heavy dependency: they
load inside the commands that need them. Which modules a deploy loads beyond that is a
matter of speed: `python -m bench --only deploy` and `--only startup` measure it."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("sqlglot", "httpx", "jsonschema", "starlette", "uvicorn", "yaml", "json5", "mcp")


def imported_modules(stderr: str) -> set[str]:
    """Module names from `python -X importtime` output (`import time: a | b | name`)."""
    names: set[str] = set()
    for line in stderr.splitlines():
        if not line.startswith("import time:") or line.count("|") != 2:
            continue
        name = line.rsplit("|", 1)[1].strip()
        if name != "imported package":  # the header line
            names.add(name)
    return names


def test_version_imports_no_heavy_module() -> None:
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "basedb", "--version"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("basedb ")
    modules = imported_modules(result.stderr)
    assert "basedb.cli" in modules, "the output was parsed"
    heavy = sorted(name for name in modules if name.split(".")[0] in HEAVY)
    assert heavy == [], f"basedb --version imported {heavy}"


def test_the_parser_reads_nested_imports() -> None:
    sample = ("import time: self [us] | cumulative | imported package\n"
              "import time:       120 |        120 |     sqlglot.expressions\n"
              "import time:        80 |        200 |   sqlglot\n"
              "noise\n")
    assert imported_modules(sample) == {"sqlglot.expressions", "sqlglot"}


def test_httpx_still_runs_its_command_line_client_when_asked() -> None:
    code = ("import sys\n"
            "from basedb.cli import defer_httpx_cli\n"
            "defer_httpx_cli()\n"
            "import httpx\n"
            "assert 'httpx._main' in sys.modules and 'rich' not in sys.modules\n"
            "httpx.main(['--help'])\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "Usage: httpx" in result.stdout or "httpx [OPTIONS] URL" in result.stdout
