"""The `basedb` command line: a thin click layer over the core.

Commands are imported only when invoked, so that `basedb --version` and friends start
about as fast as the interpreter itself. The top layer: it may import every package,
and it is the only one that opens the platform (`basedb.cli.common.open_client` hands
the embedded platform to the client).
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
import types
from typing import Any

import click

from basedb import __version__
from basedb.cli.groups import HelpfulGroup

# name -> (module, attribute, one-line help). The help is repeated here so that
# `basedb --help` does not need to import every command module.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("basedb.cli.init", "init_command", "Create a site workspace (and its site and Base)."),
    "link": ("basedb.cli.link", "link_command",
             "Connect the workspace to an existing or a new site."),
    "base": ("basedb.cli.schema", "base_group", "Create a Base."),
    "table": ("basedb.cli.schema", "table_group", "List, create and delete a Base's tables."),
    "field": ("basedb.cli.schema", "field_group",
              "List, create, update and delete a table's fields."),
    "bind": ("basedb.cli.bind", "bind_command",
             "Bind tables to the site, refresh catalog.json and binding.tableIds."),
    "unbind": ("basedb.cli.bind", "unbind_command", "Unbind tables from the site (asks first)."),
    "check": ("basedb.cli.check", "check_command",
              "Validate the workspace's declarations, SQL and agent-tools policy."),
    "contracts": ("basedb.cli.contracts", "contracts_group",
                  "Generate typed contracts from the declarations."),
    "catalog": ("basedb.cli.catalog", "catalog_group",
                "Refresh catalog.json from the site's bound tables."),
    "deploy": ("basedb.cli.deploy", "deploy_command",
               "Deploy a preview release, or promote it to production."),
    "deployments": ("basedb.cli.deployments", "deployments_group",
                    "List deployments, show status, roll back production."),
    "sites": ("basedb.cli.sites", "sites_group", "List your sites, or delete one."),
    "logs": ("basedb.cli.logs", "logs_command",
             "Show a site's platform log, or the entries of one LogID."),
    "ai-functions": ("basedb.cli.ai_functions", "ai_functions_group",
                     "List, show, sync and invoke the site's AI Functions."),
    "secrets": ("basedb.cli.secrets", "secrets_group",
                "Set the secrets a site's FaaS functions read (values never shown)."),
    "pull": ("basedb.cli.pull", "pull_command",
             "Restore a workspace from the latest deployed artifact."),
    "doctor": ("basedb.cli.doctor", "doctor_command",
               "Diagnose the installation, profile, login and workspace."),
    "auth": ("basedb.cli.auth", "auth_group", "Manage profiles and tokens."),
    "api": ("basedb.cli.api", "api_command", "Call any Open API endpoint (lark-cli conventions)."),
    "lark-cli": ("basedb.cli.api", "lark_cli_command",
                 "Run lark-cli with the workspace profile (falls back to `basedb api`)."),
    "dev": ("basedb.cli.dev", "dev_command",
            "Serve the page from disk with live reload; re-check and sync on save."),
    "serve": ("basedb.cli.serve", "serve_command", "Run the local platform over HTTP."),
    "demo": ("basedb.cli.demo", "demo_command",
             "Run the whole journey on the embedded local platform."),
    "agent-tools": ("basedb.cli.agent_tools", "agent_tools_group",
                    "Expose the site's functions to AI agents (site Skill)."),
    "sdk": ("basedb.cli.sdk", "sdk_group",
            "Pack the page SDK as an npm package for bundled pages."),
    "skill": ("basedb.cli.skill", "skill_group",
              "Install the basedb developer Skill into coding agents."),
    "mcp": ("basedb.cli.mcp", "mcp_command",
            "Serve the site's open functions as MCP tools over stdio."),
}


def _available(module: str) -> bool:
    """Whether a command module exists (lets the map name commands still being built)."""
    import importlib.util

    return importlib.util.find_spec(module) is not None


class LazyGroup(HelpfulGroup):
    """A group that imports each subcommand on first use and maps errors to exit codes."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str, str]], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(super().list_commands(ctx)) | set(self._lazy)
        return sorted(n for n in names if n not in self._lazy or _available(self._lazy[n][0]))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self._lazy and _available(self._lazy[cmd_name][0]):
            module, attr, _ = self._lazy[cmd_name]
            command = getattr(importlib.import_module(module), attr)
            if not isinstance(command, click.Command):
                raise TypeError(f"{module}.{attr} is not a click command")
            return command
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, self._lazy[name][2]) for name in self.list_commands(ctx)
                if name in self._lazy]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        from basedb.cli.common import ARGS_KEY

        ctx.meta[ARGS_KEY] = list(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        from basedb.cli.common import run_guarded

        return run_guarded(ctx, lambda: super(LazyGroup, self).invoke(ctx))


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="basedb",
                      message="%(prog)s %(version)s")
def cli() -> None:
    """basedb: build, check and deploy Base Database sites, locally or on Lark.

    With no profile configured, every command talks to the embedded local platform
    (data in $BASEDB_DATA_DIR), so the whole journey works on one machine.
    """


def defer_httpx_cli() -> None:
    """`import httpx` imports httpx's own command line client (`httpx._main`), and with it
    rich and pygments when they are installed: a fifth of the start-up of a command that
    talks to a platform, for a client basedb never runs. Stand in for that module until
    someone calls its `main`, which then loads the real one. Does nothing once httpx is
    imported."""
    if "httpx" in sys.modules or "httpx._main" in sys.modules:
        return
    stand_in = types.ModuleType("httpx._main", "httpx's command line client, loaded on use.")

    def main(*args: Any, **kwargs: Any) -> Any:
        if sys.modules.get("httpx._main") is stand_in:
            del sys.modules["httpx._main"]
        return importlib.import_module("httpx._main").main(*args, **kwargs)

    stand_in.main = main  # type: ignore[attr-defined]
    sys.modules["httpx._main"] = stand_in


def skip_final_collection() -> None:
    """At exit, leave what the process built to the operating system: the interpreter's
    last garbage collection would traverse every module, class and function a command
    loaded (and what a deploy holds) only to free memory the exit frees anyway, a tenth
    of a no-change redeploy. Objects are still released, and files closed, as the modules
    are torn down; only unreachable cycles are left to the exit."""
    gc.freeze()


def close_embedded_platforms() -> None:
    """Close the platforms the command embedded (`basedb.cli.common.EMBEDDED`), if it
    loaded that module at all."""
    common = sys.modules.get("basedb.cli.common")
    if common is not None:
        common.close_embedded_platforms()


# The package installs the program under two names (pyproject.toml [project.scripts]):
# its own, and upstream's, so scripts and CI steps written for upstream run unchanged.
UPSTREAM_NAME = "base-database-cli"


def program_name(argv0: str) -> str:
    """The name usage lines and help show: the one the program was started under, when
    that is upstream's; otherwise basedb (also for `python -m basedb`)."""
    started_as = os.path.basename(argv0).removesuffix(".exe")
    return UPSTREAM_NAME if started_as == UPSTREAM_NAME else "basedb"


def main(argv: list[str] | None = None) -> None:
    # Exit handlers run last-registered first: these two run after every handler the
    # command registers (the FaaS runtime's shutdown, the platform log's flush), the
    # embedded platforms' close before the collection is skipped.
    atexit.register(skip_final_collection)
    atexit.register(close_embedded_platforms)
    defer_httpx_cli()
    cli.main(args=argv, prog_name=program_name(sys.argv[0] if sys.argv else ""))


if __name__ == "__main__":  # pragma: no cover
    main()
