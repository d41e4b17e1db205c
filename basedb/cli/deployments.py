"""`basedb deployments status|list|rollback`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from basedb.cli.common import (
    check_app_token,
    emit_json,
    json_option,
    open_client,
    profile_option,
    workspace_option,
)

app_token_option = click.option(
    "--app-token", default=None, callback=check_app_token,
    help="The site (default: the appToken of the current workspace).")


@click.group("deployments")
def deployments_group() -> None:
    """List a site's deployments, show one, or roll production back."""


def site_of(workspace_dir: Path | None, app_token: str | None) -> tuple[str, Path | None]:
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


def connect_to(profile: str | None, root: Path | None) -> Any:
    from basedb.client.profiles import current_profile

    resolved, _ = current_profile(profile, root)
    return open_client(resolved)


def _flags(item: dict[str, Any], preview_id: str | None) -> str:
    flags = []
    if item.get("isProd"):
        flags.append("prod")
    if item["deploymentId"] == preview_id:
        flags.append("latest preview")
    return ", ".join(flags)


@deployments_group.command("list")
@app_token_option
@json_option
@workspace_option
@profile_option
def list_command(app_token: str | None, as_json: bool, workspace_dir: Path | None,
                 profile: str | None) -> None:
    """The site's deployments, newest first."""
    from basedb.client.sites import SiteApi, deployment_list

    token, root = site_of(workspace_dir, app_token)
    with connect_to(profile, root) as client:
        listing = SiteApi(client, token).deployments()
    if as_json:
        emit_json({"appToken": token, **listing})
        return
    found = deployment_list(listing)
    if not found:
        click.echo(f"Site {token} has no deployments yet (`basedb deploy` creates one).")
        return
    preview_id = listing.get("previewDeploymentId")
    for item in found:
        flags = _flags(item, preview_id)
        click.echo(f"{item['deploymentId']}  {item.get('createdAt', '')}  "
                   f"{str(item.get('fingerprint', ''))[:19]}…"
                   + (f"  [{flags}]" if flags else ""))


@deployments_group.command("status")
@click.argument("deployment_id", required=False)
@app_token_option
@json_option
@workspace_option
@profile_option
@click.pass_context
def status_command(ctx: click.Context, deployment_id: str | None, app_token: str | None,
                   as_json: bool, workspace_dir: Path | None, profile: str | None) -> None:
    """One deployment (default: the latest), production, and the last local deploy run.

    The last run's stages come from this workspace's stage log: after a failed deploy
    they say which stage failed and whether its outcome is known.
    """
    from basedb.client.sites import SiteApi
    from basedb.core.errors import BasedbError
    from basedb.deploy.state import LocalState

    token, root = site_of(workspace_dir, app_token)
    result: dict[str, Any] = {"appToken": token}
    if root is not None:
        entries = LocalState(root).stages.latest_attempt()
        result["lastRun"] = ({"attemptId": entries[0].attempt_id,
                              "stages": [e.to_dict() for e in entries]} if entries else None)
    failure: BasedbError | None = None
    try:
        with connect_to(profile, root) as client:
            api = SiteApi(client, token)
            listing = api.deployments()
            result["prodDeploymentId"] = listing.get("prodDeploymentId")
            result["previewDeploymentId"] = listing.get("previewDeploymentId")
            wanted = deployment_id or listing.get("previewDeploymentId")
            result["deployment"] = api.deployment(wanted) if wanted else None
    except BasedbError as error:
        if deployment_id is not None or root is None:
            raise
        failure = error  # still show the local record of the last run
        result["remoteError"] = {"code": error.code, "message": error.message}
    if as_json:
        emit_json(result)
    else:
        for line in _status_lines(result):
            click.echo(line)
    if failure is not None:
        from basedb.cli.common import report_error

        report_error(failure)
        ctx.exit(failure.exit_code)


def _status_lines(result: dict[str, Any]) -> list[str]:
    lines = [f"Site {result['appToken']}"]
    if "remoteError" not in result:
        lines.append(f"  Production: {result.get('prodDeploymentId') or 'none'}")
        lines.append(f"  Latest preview: {result.get('previewDeploymentId') or 'none'}")
        shown = result.get("deployment")
        if shown:
            lines.append(f"Deployment {shown['deploymentId']}"
                         + (" (production)" if shown.get("isProd") else ""))
            lines.append(f"  Created:     {shown.get('createdAt')} by {shown.get('createdBy')}")
            lines.append(f"  Fingerprint: {shown.get('fingerprint')}")
            if shown.get("baseAppUrl"):
                lines.append(f"  URL:         {shown['baseAppUrl']}")
            functions = shown.get("functions") or {}
            counts = ", ".join(f"{kind} {len(ids)}" for kind, ids in sorted(functions.items()))
            lines.append(f"  Functions:   {counts or 'none'}")
            exclude = (shown.get("agentTools") or {}).get("exclude") or []
            lines.append(f"  Hidden from external agents: {', '.join(exclude) or 'none'}")
    last = result.get("lastRun")
    if last:
        lines.append(f"Last deploy run from this workspace ({last['attemptId']}):")
        for entry in last["stages"]:
            if entry["status"] == "started":
                continue
            lines.append(f"  {entry['status']:<8} {entry['stage']}  {entry['ts']}")
    return lines


@deployments_group.command("rollback")
@click.argument("deployment_id")
@click.option("--yes", "-y", is_flag=True, help="Confirm without a prompt.")
@app_token_option
@json_option
@workspace_option
@profile_option
def rollback_command(deployment_id: str, yes: bool, app_token: str | None, as_json: bool,
                     workspace_dir: Path | None, profile: str | None) -> None:
    """Point production back at DEPLOYMENT_ID, a deployment that was production before."""
    from basedb.core.errors import UsageError
    from basedb.deploy.production import rollback

    token, root = site_of(workspace_dir, app_token)
    if not yes:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            raise UsageError("rollback needs --yes: it changes what every site member sees.",
                             code="CONFIRMATION_REQUIRED",
                             hint=f"Run `basedb deployments rollback {deployment_id} --yes`.")
        click.confirm(f"Point production of {token} back at {deployment_id}?", abort=True,
                      err=True)
    with connect_to(profile, root) as client:
        result = rollback(root, client, token, deployment_id)
    if as_json:
        emit_json(result)
        return
    click.echo(f"Production of {token} now serves {deployment_id}.")
    click.echo(f"  URL: {result.get('baseAppUrl')}")
    for notice in result.get("notices", []):
        click.echo(f"Notice: {notice}", err=True)
