"""`basedb dev`: the page from disk with live reload, an incremental check on every
save, functions synced to the site's development draft, call logs in the terminal."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from basedb.cli.common import (
    connection_options,
    echo_err,
    open_client,
    workspace_option,
    workspace_root,
)

DEFAULT_PORT = 8790


@click.command("dev")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (loopback only unless --allow-remote).")
@click.option("--port", default=DEFAULT_PORT, show_default=True,
              type=click.IntRange(0, 65535), help="Port to listen on; 0 picks a free port.")
@click.option("--allow-remote", is_flag=True,
              help="Allow a non-loopback --host. The page calls functions as you, so "
                   "anyone who can reach it can too.")
@click.option("--skip-ai-functions", is_flag=True,
              help="Leave AI Functions out of the check and of the development draft.")
@workspace_option
@connection_options
@click.pass_context
def dev_command(ctx: click.Context, host: str, port: int, allow_remote: bool,
                skip_ai_functions: bool, workspace_dir: Path | None,
                profile: str | None) -> None:
    """Serve the workspace's page from disk and keep it live while you edit.

    \b
    On every save:
      src/…                  the page reloads
      a function's files     only what changed is checked again (findings print as
                             `basedb check` prints them); with no errors the functions
                             go to the site's development draft, then the page reloads
    Each call the page makes runs on the development draft as you, and prints one line
    (function, result, time, LogID) with the platform log entries of the call.

    Preview and prod are never touched: nothing is deployed, and Ctrl-C discards the
    development draft. Deploy with `basedb deploy` when you are done.

    Exit status: 0 after Ctrl-C, 2 bad usage or no workspace, 3 auth, 4 the platform
    cannot be reached.
    """
    from basedb.cli.serve import bind_socket, is_loopback
    from basedb.core.errors import UsageError

    if not is_loopback(host) and not allow_remote:
        raise UsageError(
            f"Refusing to listen on {host}: the page calls the site's functions with your "
            "credentials, so the dev server listens on this machine only.",
            code="DEV_REMOTE_HOST",
            hint="Use --host 127.0.0.1, or pass --allow-remote if you really mean to expose "
                 "it to your network.")
    root = workspace_root(workspace_dir)

    import asyncio

    from basedb.cli.common import use_colour
    from basedb.client.profiles import current_profile
    from basedb.client.sites import SiteApi
    from basedb.dev.run import DevRunner
    from basedb.dev.session import DevSession, platform_log_details
    from basedb.workspace.config import workspace_app_token

    app_token = workspace_app_token(root)
    resolved, _ = current_profile(profile, root)

    def out(line: str) -> None:
        click.echo(line, err=True)

    with open_client(resolved) as client:
        site = SiteApi(client, app_token)
        session = DevSession(root=root, site=site, out=out, skip_ai=skip_ai_functions,
                             color=use_colour(sys.stderr),
                             log_details=platform_log_details(site))
        sock = bind_socket(host, port)
        runner = DevRunner(session, sock=sock, host=host)
        session.start()
        echo_err(f"basedb dev: {runner.url}")
        echo_err("Watching for changes. Press Ctrl+C to stop (preview and prod are "
                 "unchanged).")
        try:
            asyncio.run(runner.serve())
        except KeyboardInterrupt:
            pass  # Ctrl-C is how dev is meant to end
        finally:
            sock.close()
            session.close()
    echo_err("basedb dev stopped; the development draft was discarded.")
