"""`basedb deployments status|list|rollback`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from basedb.cli import common
from basedb.cli.common import (
    app_token_option,
    connect_to,
    connection_options,
    emit_json,
    json_option,
    site_of,
    workspace_option,
)
from basedb.cli.groups import HelpfulGroup

if TYPE_CHECKING:
    from basedb.protocol.deployments import DeploymentListing, DeploymentSummary


@click.group("deployments", cls=HelpfulGroup)
def deployments_group() -> None:
    """List a site's deployments, show one, or roll production back."""


def _flags(item: DeploymentSummary, preview_id: str | None) -> str:
    """What a deployment is to production: serving it, the latest preview, or promoted
    before (a rollback target)."""
    flags = []
    if item.is_prod:
        flags.append("prod")
    elif item.promoted_at:
        flags.append(f"was prod, promoted {item.promoted_at}")
    if item.deployment_id == preview_id:
        flags.append("latest preview")
    return ", ".join(flags)


@deployments_group.command("list")
@app_token_option
@json_option
@workspace_option
@connection_options
def list_command(app_token: str | None, as_json: bool, workspace_dir: Path | None,
                 profile: str | None) -> None:
    """The site's deployments, newest first."""
    from basedb.client.sites import SiteApi
    from basedb.protocol.wire import encode

    token, root = site_of(workspace_dir, app_token)
    with connect_to(profile, root) as client:
        listing = SiteApi(client, token).deployments()
    if as_json:
        emit_json({"appToken": token, **encode(listing)})
        return
    if not listing.deployments:
        click.echo(f"Site {token} has no deployments yet (`basedb deploy` creates one).")
        return
    for line in list_lines(token, listing):
        click.echo(line)


def list_lines(token: str, listing: DeploymentListing) -> list[str]:
    """The deployments as a table: which one production serves, and which were promoted
    before (the ones `rollback` accepts)."""
    found = listing.deployments
    preview_id = listing.preview_deployment_id
    prod_id = listing.prod_deployment_id
    rows = [("DEPLOYMENT", "CREATED", "FINGERPRINT", "PRODUCTION")]
    rows += [(item.deployment_id, item.created_at, item.fingerprint[:16],
              _flags(item, preview_id))
             for item in found]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [f"Site {token}: production serves {prod_id or 'nothing yet'}"]
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(3)]
        lines.append("  ".join([*cells, row[3]]).rstrip())
    targets = [item.deployment_id for item in found if item.promoted_at and not item.is_prod]
    if targets:
        lines.append(f"Roll back to a deployment that was prod: `basedb deployments rollback "
                     f"{targets[0]}`")
    return lines


@deployments_group.command("status")
@click.argument("deployment_id", required=False)
@app_token_option
@json_option
@workspace_option
@connection_options
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
    from basedb.protocol.wire import encode

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
            result["prodDeploymentId"] = listing.prod_deployment_id
            result["previewDeploymentId"] = listing.preview_deployment_id
            wanted = deployment_id or listing.preview_deployment_id
            result["deployment"] = encode(api.deployment(wanted)) if wanted else None
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
@connection_options
def rollback_command(deployment_id: str, yes: bool, app_token: str | None, as_json: bool,
                     workspace_dir: Path | None, profile: str | None) -> None:
    """Point production back at DEPLOYMENT_ID, a deployment that was production before.

    `deployments list` shows which ones were. Without --yes on a terminal it names the
    deployment and asks; answering no changes nothing and exits 1.
    """
    from basedb.core.errors import UsageError
    from basedb.deploy.production import rollback

    token, root = site_of(workspace_dir, app_token)
    if not yes:
        if not (common.stdin_is_tty() and common.stderr_is_tty()):
            raise UsageError("rollback needs --yes: it changes what every site member sees.",
                             code="CONFIRMATION_REQUIRED",
                             hint=f"Run `basedb deployments rollback {deployment_id} --yes`.")
        common.confirm_or_stop(f"Point production of {token} back at {deployment_id}? Every "
                               "site member will see it.",
                               f"Not rolled back: production of {token} is unchanged.")
    with connect_to(profile, root) as client:
        result = rollback(root, client, token, deployment_id)
    if as_json:
        emit_json(result.to_dict())
        return
    click.echo(f"Production of {token} now serves {deployment_id}.")
    click.echo(f"  URL: {result.base_app_url}")
    for notice in result.notices:
        click.echo(f"Notice: {notice}", err=True)
