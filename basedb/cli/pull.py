"""`basedb pull`: restore a workspace from the site's latest deployment."""

from __future__ import annotations

from pathlib import Path

import click

from basedb.cli.common import (
    check_app_token,
    connection_options,
    emit_json,
    json_option,
    open_client,
)


@click.command("pull")
@click.argument("directory", required=False,
                type=click.Path(file_okay=False, path_type=Path))
@click.option("--app-token", default=None, callback=check_app_token,
              help="The site to pull (default: the appToken of the current workspace).")
@click.option("--env", type=click.Choice(["preview", "prod"]), default="preview",
              show_default=True,
              help="Restore the latest preview, or the deployment production serves.")
@click.option("--force", is_flag=True,
              help="Overwrite local files that differ from the restored ones.")
@json_option
@connection_options
def pull_command(directory: Path | None, app_token: str | None, env: str, force: bool,
                 as_json: bool, profile: str | None) -> None:
    """Restore source, catalog.json and AI drafts from the site's latest deployment.

    Into DIRECTORY (a new workspace, or an existing one of the same site), else into the
    current workspace. catalog.json comes from the live catalog and ai/ from the remote
    AI drafts. Local files that differ are never overwritten without --force; archive
    entries that would escape the workspace are refused.
    """
    from basedb.client.profiles import current_profile
    from basedb.deploy.pull import pull_site

    target, token, workspace = resolve_target(directory, app_token)
    resolved, _ = current_profile(profile, workspace)
    with open_client(resolved) as client:
        result = pull_site(client, app_token=token, target=target, env=env, force=force)
    if as_json:
        emit_json(result.to_dict())
        return
    click.echo(f"Restored {result.target} from deployment {result.deployment_id} "
               f"({env}): {len(result.created)} created, "
               f"{len(result.overwritten)} overwritten, "
               f"{len(result.unchanged)} unchanged.")
    if result.same_as_deployment:
        click.echo(f"  Fingerprint: {result.fingerprint} (the deployed one)")
    else:
        click.echo(f"  Fingerprint: {result.fingerprint} (deployed: "
                   f"{result.deployed_fingerprint}; the live catalog or AI drafts "
                   "changed since)")
    if result.ai_keys is None:
        click.echo("  AI Functions are not enabled for this account: ai/ was not restored.")
    elif result.ai_keys:
        click.echo(f"  AI Functions restored: {', '.join(sorted(result.ai_keys))}")


def resolve_target(directory: Path | None, app_token: str | None,
                   ) -> tuple[Path, str, Path | None]:
    """(where to restore, which site, the workspace whose profile applies)."""
    from basedb.core.errors import UsageError, WorkspaceNotFound
    from basedb.workspace.config import CONFIG_FILE, workspace_app_token
    from basedb.workspace.loader import find_root

    if directory is not None and (directory / CONFIG_FILE).is_file():
        own = workspace_app_token(directory)
        if app_token is not None and app_token != own:
            raise UsageError(
                f"{directory} is the workspace of site {own}, not {app_token}.",
                code="PULL_SITE_MISMATCH",
                hint="Pull another site into a new directory: "
                     f"`basedb pull --app-token {app_token} NEW_DIR`.")
        return directory, own, directory
    try:
        current: Path | None = find_root(None)
    except WorkspaceNotFound:
        current = None
    if directory is not None:
        token = app_token or (workspace_app_token(current) if current else None)
        if token is None:
            raise UsageError("Which site? Pass --app-token (no workspace here names one).",
                             code="APP_TOKEN_MISSING",
                             hint=f"Run `basedb pull --app-token APP {directory}`.")
        return directory, token, current
    if current is None:
        if app_token is None:
            raise WorkspaceNotFound(str(Path.cwd())).with_context(
                hint="Run inside the site's workspace, or name the site and where to restore "
                     "it: `basedb pull --app-token APP NEW_DIR`.")
        return Path.cwd(), app_token, None
    own = workspace_app_token(current)
    if app_token is not None and app_token != own:
        raise UsageError(f"This workspace ({current}) belongs to site {own}, not {app_token}.",
                         code="PULL_SITE_MISMATCH",
                         hint=f"Pull into a new directory: `basedb pull --app-token "
                              f"{app_token} NEW_DIR`.")
    return current, own, current
