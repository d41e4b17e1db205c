"""Production: promote the preview whose fingerprint is the local one; roll back.

Prod is never a rebuild and never re-reads the local policy: `deploy_production`
computes the fingerprint of the workspace's files, finds the site's latest preview with
that fingerprint (GET deployments; the local deployment records when the platform
cannot list them) and promotes that exact snapshot. When the latest preview was built
from other files, the preview is stale and nothing is promoted: deploy a preview first.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from basedb.client.sites import SiteApi
from basedb.core import site_zip
from basedb.core.errors import ApiError, AuthError, BasedbError, ConflictError
from basedb.deploy.pipeline import record_locally
from basedb.deploy.results import (
    MemberHandoff,
    PreviewCandidate,
    ProductionPlan,
    ProductionResult,
    RollbackResult,
    SkillInstallation,
)
from basedb.deploy.stages import DeployStageError, StageCallback, StageRunner
from basedb.deploy.state import DeploymentRecord, LocalState, new_attempt_id, utc_now
from basedb.protocol import Code
from basedb.protocol.deployments import ProdPointed
from basedb.workspace.config import workspace_app_token
from basedb.workspace.inputs import collect_inputs

if TYPE_CHECKING:
    from basedb.client.client import Client

STALE_HINT = "Deploy a preview first (`basedb deploy`), check it, then run `basedb deploy " \
             "--production --yes` again."


def _stale(message: str, **detail: Any) -> ConflictError:
    return ConflictError(f"The preview is stale: {message} Deploy preview first.",
                         code="PREVIEW_STALE", hint=STALE_HINT, detail=detail)


def find_preview(api: SiteApi, state: LocalState, fingerprint: str) -> PreviewCandidate:
    """The deployment to promote; ConflictError when the preview is stale."""
    try:
        listing = api.deployments()
    except AuthError:
        raise
    except ApiError as error:
        if (error.http_status or 0) >= 500:
            raise
        # The platform cannot list deployments: fall back to what this workspace recorded.
        record = state.deployments.latest_preview(api.app_token)
        if record is None or record.fingerprint != fingerprint:
            raise _stale(f"the platform could not list deployments ({error.message.rstrip('.')}"
                         f"), and no preview recorded in this workspace has the local "
                         f"fingerprint {fingerprint}.", fingerprint=fingerprint) from error
        return PreviewCandidate(record.deployment_id, is_prod=False, source="local state")
    found = listing.deployments
    if not found:
        raise _stale(f"site {api.app_token} has no preview yet, so there is nothing to "
                     "promote.", fingerprint=fingerprint)
    match = next((d for d in found if d.fingerprint == fingerprint), None)
    if match is None:
        raise _stale(f"no deployment of this site has the local fingerprint {fingerprint}; "
                     "the files changed since the last preview.", fingerprint=fingerprint)
    newest = found[0]
    if newest is not match:
        raise _stale(f"a newer preview ({newest.deployment_id}, created "
                     f"{newest.created_at}) was built from other files than the local "
                     f"ones (fingerprint {fingerprint}); only the latest preview can be "
                     "promoted.", fingerprint=fingerprint,
                     latestPreview=newest.deployment_id)
    return PreviewCandidate(match.deployment_id, is_prod=match.is_prod, source="platform")


def plan_production(root: Path, client: Client) -> ProductionPlan:
    """What `deploy --production` would promote (reads only; sends no write)."""
    app_token = workspace_app_token(root)
    inputs = collect_inputs(root)
    fingerprint = site_zip.fingerprint(inputs)
    api = SiteApi(client, app_token)
    candidate = find_preview(api, LocalState(root), fingerprint)
    return ProductionPlan(app_token=app_token, fingerprint=fingerprint, files=len(inputs),
                          candidate=candidate)


def deploy_production(root: Path, client: Client, *,
                      on_stage: StageCallback | None = None) -> ProductionResult:
    """Promote the latest preview built from exactly the local files."""
    state = LocalState(root)
    runner = StageRunner(state, new_attempt_id(), on_stage=on_stage)
    app_token = workspace_app_token(root)
    runner.start("build")
    inputs = runner.run("build", lambda: collect_inputs(root))
    fingerprint = site_zip.fingerprint(inputs)
    runner.ok("build", {"files": len(inputs), "fingerprint": fingerprint})

    api = SiteApi(client, app_token)
    runner.start("find_preview", {"fingerprint": fingerprint})
    try:
        candidate = find_preview(api, state, fingerprint)
    except ConflictError as stale:
        runner.finish("find_preview", "failed", {"outcome": "known", "error": {
            "code": stale.code, "message": stale.message}})
        raise stale.with_context(
            detail={"stages": [r.to_dict() for r in runner.results]}) from stale
    except BasedbError as error:
        raise runner.fail("find_preview", error) from error
    deployment_id = candidate.deployment_id
    runner.ok("find_preview", candidate.to_dict())

    if candidate.is_prod:
        runner.skipped("promote", "already_prod", deploymentId=deployment_id)
        url = runner.run("promote", lambda: api.deployment(deployment_id).base_app_url)
    else:
        url = _point_prod(api, runner, "promote", deployment_id,
                          lambda: api.promote(deployment_id))
    notice = record_locally(state, DeploymentRecord(
        deployment_id=deployment_id, env="prod", fingerprint=fingerprint,
        base_app_url=str(url), created_at=utc_now(), app_token=app_token))
    members: MemberHandoff | None = None
    try:  # whether members can install the site Skill now (upstream: false if unreadable)
        skill = api.skill()
        skill_error: str | None = None
        members = MemberHandoff.for_site(app_token, str(skill.get("title") or ""), url,
                                         skill.get("functions") or [])
    except BasedbError as error:
        skill_error = error.message
    return ProductionResult(
        app_token=app_token, deployment_id=deployment_id, fingerprint=fingerprint,
        base_app_url=url, stages=tuple(runner.results),
        installation=SkillInstallation.after(app_token, "prod", skill_error=skill_error),
        notices=(notice,) if notice else (), members=members)


def _point_prod(api: SiteApi, runner: StageRunner, stage: str, deployment_id: str,
                send: Callable[[], ProdPointed]) -> str | None:
    """Run a promote or rollback write with read-back; returns the prod baseAppUrl."""
    runner.start(stage, {"deploymentId": deployment_id})

    def confirm() -> ProdPointed | None:
        if api.deployments().prod_deployment_id != deployment_id:
            return None
        # What the write would have answered: prod's URL, which a deployment that is prod
        # names.
        return ProdPointed(deployment_id=deployment_id, env="prod",
                           base_app_url=api.deployment(deployment_id).base_app_url or "")

    try:
        data, confirmed = runner.write(stage, send, confirm)
    except DeployStageError as error:
        cause = error.cause
        if stage == "promote" and isinstance(cause, ApiError) \
                and cause.code == Code.DEPLOYMENT_CONFLICT:
            raise _stale(f"the platform refused to promote {deployment_id} "
                         f"({cause.message.rstrip('.')}).",
                         deploymentId=deployment_id) from error
        raise
    detail: dict[str, Any] = {"deploymentId": deployment_id}
    if confirmed:
        detail["confirmedByReadBack"] = True
    runner.ok(stage, detail)
    return data.base_app_url or None


def rollback(root: Path | None, client: Client, app_token: str, deployment_id: str, *,
             on_stage: StageCallback | None = None) -> RollbackResult:
    """Point prod back at `deployment_id`, which must have been prod before."""
    state = LocalState(root) if root is not None else None
    runner = StageRunner(state, new_attempt_id(), on_stage=on_stage)
    notice: str | None = None
    api = SiteApi(client, app_token)
    url = _point_prod(api, runner, "rollback", deployment_id,
                      lambda: api.rollback(deployment_id))
    if state is not None:
        try:  # the local record is a convenience; prod has already moved
            fingerprint: str | None = api.deployment(deployment_id).fingerprint
        except BasedbError:
            fingerprint = None
        if fingerprint is not None:
            notice = record_locally(state, DeploymentRecord(
                deployment_id=deployment_id, env="prod", fingerprint=fingerprint,
                base_app_url=str(url), created_at=utc_now(), app_token=app_token))
    return RollbackResult(app_token=app_token, deployment_id=deployment_id, base_app_url=url,
                          stages=tuple(runner.results), notices=(notice,) if notice else ())
