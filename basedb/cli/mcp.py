"""`basedb mcp`: serve a site's open functions as MCP tools over stdio."""

from __future__ import annotations

from pathlib import Path

import click

from basedb.cli.common import connection_options, open_client, workspace_option


@click.command("mcp")
@click.option("--site", default=None, metavar="URL|TOKEN",
              help="The site: its app token or link (default: the site of the current "
                   "workspace).")
@click.option("--env", type=click.Choice(["prod", "preview"]), default="prod",
              show_default=True,
              help="Which release to serve (preview: the site's owners and admins only).")
@click.option("--all-tools", is_flag=True,
              help="Serve a tool for every function, however many (by default a site with "
                   "more than 40 gets the discovery, describe and invoke tools only).")
@click.option("--table", "tables", multiple=True, metavar="GLOB",
              help="Serve a tool for each function working on a table matching GLOB "
                   "(case-insensitive, e.g. 'Invoice*'); repeatable.")
@workspace_option
@connection_options
def mcp_command(site: str | None, env: str, all_tools: bool, tables: tuple[str, ...],
                workspace_dir: Path | None, profile: str | None) -> None:
    """Serve the site's functions open to agents as MCP tools over stdio.

    Each callable function is a tool named by its functionId, with its description, its
    live inputSchema and hints (Database Functions read-only; Mutations say whether they
    change or remove what exists, and whether they can be repeated). discover_functions
    (a search by words, table or access), describe_function and invoke_function reach
    every function, including those published after the server started. A site with
    more than 40 callable functions is served through those three alone, so that the
    tool list fits a model's context; --all-tools or --table GLOB serve function tools
    anyway (tools/list pages by 50). stdout carries the protocol; messages go to stderr.
    Needs the MCP SDK: pip install 'basedb-cli[mcp]'.

    \b
    Example client configuration:
      {"command": "basedb", "args": ["mcp", "--site", "APP_TOKEN"]}
    """
    import importlib.util

    from basedb import install_command
    from basedb.core.errors import UsageError

    if importlib.util.find_spec("mcp") is None:
        raise UsageError("`basedb mcp` needs the MCP Python SDK, which is not installed.",
                         code="MCP_NOT_INSTALLED", hint=install_command("mcp"))
    from basedb.agent_tools.mcp_server import run_stdio
    from basedb.agent_tools.site_skill import resolve_site
    from basedb.agent_tools.site_tools import SiteTools
    from basedb.client.profiles import current_profile

    app_token, root = resolve_site(site, workspace_dir)
    resolved, _ = current_profile(profile, root)
    with open_client(resolved) as client:
        run_stdio(SiteTools(client, app_token, env, serve="all" if all_tools else "auto",
                            tables=tables))
