"""Which site a site command acts on, and the client to reach it: `--app-token`, else
the appToken of the workspace at or above `-C DIR` (or the current directory)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from basedb.cli.common import check_app_token, open_client

app_token_option = click.option(
    "--app-token", default=None, callback=check_app_token,
    help="The site (default: the appToken of the current workspace).")


def resolve_site(workspace_dir: Path | None, app_token: str | None) -> tuple[str, Path | None]:
    """(the site's appToken, the workspace root when there is one)."""
    from basedb.cli.deploy import workspace_root
    from basedb.core.errors import WorkspaceNotFound
    from basedb.workspace.config import workspace_app_token

    try:
        root: Path | None = workspace_root(workspace_dir)
    except WorkspaceNotFound:
        if app_token is None or workspace_dir is not None:
            raise
        root = None
    if app_token is not None:
        return app_token, root
    assert root is not None
    return workspace_app_token(root), root


def connect(profile: str | None, root: Path | None) -> Any:
    """A client for the profile (`--profile`, the workspace's, or the active one)."""
    from basedb.client.profiles import current_profile

    resolved, _ = current_profile(profile, root)
    return open_client(resolved)
