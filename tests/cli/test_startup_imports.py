"""`basedb --version` (and so every command's start-up) imports no heavy dependency: they
load inside the commands that need them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


# What a deploy to the embedded platform has no use for: httpx's own command line client
# (and the rich and pygments it loads), the Lark token store, and the contract generators
# (the workspace has no generated files to compare).
NOT_FOR_A_DEPLOY = ("httpx._main", "rich", "pygments", "filelock",
                    "basedb.client.lark.accounts", "basedb.contracts")


def test_a_deploy_to_the_embedded_platform_imports_only_what_it_uses(site: Path) -> None:
    assert not (site / "src" / "generated").exists()
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "basedb", "deploy",
                             "--json", "-C", str(site)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout)["deploymentId"]
    modules = imported_modules(result.stderr)
    assert "httpx" in modules and "basedb.deploy.pipeline" in modules, "the output was parsed"
    unused = sorted(name for name in modules if name in NOT_FOR_A_DEPLOY)
    assert unused == [], f"basedb deploy imported {unused}"


# What the embedded platform loads only for the routes a deploy never calls: invoking
# functions (the planner, the SQL worker pool, the invoke engine) and the other route
# groups. A deploy calls the drafts and deployments routes alone.
NOT_FOR_THE_DEPLOY_ROUTES = ("basedb.platform.domain.function_plans",
                             "basedb.platform.domain.invoke",
                             "basedb.platform.domain.runtimes.sql_pool",
                             "basedb.platform.domain.logs",
                             "basedb.platform.web.openapi")
DEPLOY_ROUTE_GROUPS = ["deployments", "drafts", "index", "schemas"]


def test_a_deploy_loads_only_the_route_groups_it_calls(site: Path, tmp_path: Path) -> None:
    listing = tmp_path / "modules.json"
    code = ("import atexit, json, sys\n"
            f"atexit.register(lambda: open({str(listing)!r}, 'w').write("
            "json.dumps(sorted(sys.modules))))\n"
            "from basedb.cli import main\n"
            f"main(['deploy', '--json', '-C', {str(site)!r}])\n")
    for _ in range(2):  # the first deploy, then one with nothing changed
        result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-2000:]
        modules = set(json.loads(listing.read_text(encoding="utf-8")))
        assert "basedb.deploy.pipeline" in modules, "the listing was written"
        groups = sorted(name.rsplit(".", 1)[1] for name in modules
                        if name.startswith("basedb.platform.web.routes."))
        assert groups == DEPLOY_ROUTE_GROUPS
        unused = sorted(name for name in modules if name in NOT_FOR_THE_DEPLOY_ROUTES)
        assert unused == [], f"basedb deploy imported {unused}"


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
