"""What the deployments routes answer: a new preview, the site's deployments, one
deployment with what it snapshots, and prod pointed at a deployment.

    deployment_results.listing(conn, app_token)                     # GET deployments
    deployment_results.view(conn, app_token, deployment_id, page_url)
    deployment_results.promote(conn, user, app_token, deployment_id, page_url)

A release's pages are served on the site's page origin, which depends on the address the
request came to: the web layer passes `page_url`, the domain says which release (prod,
preview or none) a deployment's `baseAppUrl` names. The answers are the wire's own models
(`basedb.protocol.deployments`), which the web layer sends as they are.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Literal

from basedb.platform.domain import deployments
from basedb.platform.domain.artifacts import VerifiedArtifact
from basedb.platform.domain.caches import DomainCaches
from basedb.platform.domain.deployments import Deployment, DeploymentHeader
from basedb.platform.domain.draft_content import HeldArtifact
from basedb.platform.domain.identity import User
from basedb.platform.domain.snapshots import preview_deployment_id, prod_deployment_id
from basedb.platform.storage.store import Store
from basedb.protocol.deployments import (
    AgentTools,
    ArtifactInfo,
    DeploymentCreated,
    DeploymentDetail,
    DeploymentListing,
    DeploymentSummary,
    ProdPointed,
)

PageUrl = Callable[[str, str], str]
"""The URL of a site's release pages, by (app token, env: "prod" or "preview")."""

STATUS: Literal["ready"] = "ready"  # a deployment exists only once its snapshot is complete


def summary(deployment: Deployment | DeploymentHeader, *, is_prod: bool,
            promoted_at: str | None) -> DeploymentSummary:
    """A deployment as the site's listing shows it."""
    d = deployment
    return DeploymentSummary(
        deployment_id=d.deployment_id, fingerprint=d.fingerprint, created_at=d.created_at,
        created_by=d.created_by, status=STATUS, is_prod=is_prod, promoted_at=promoted_at,
        draft_revision=d.draft_revision, timezone=d.timezone)


def create(store: Store, caches: DomainCaches, user: User, app_token: str,
           artifact: VerifiedArtifact | HeldArtifact, page_url: PageUrl, *,
           draft_revision: int | None = None) -> DeploymentCreated:
    """A new preview deployment (`basedb.platform.domain.deployments.create`)."""
    deployment = deployments.create(store, caches, user, app_token, artifact,
                                    draft_revision=draft_revision)
    return DeploymentCreated(
        deployment_id=deployment.deployment_id, env="preview", status=STATUS,
        fingerprint=deployment.fingerprint, draft_revision=deployment.draft_revision,
        base_app_url=page_url(deployment.app_token, "preview"),
        function_hints=deployment.function_hints, created_at=deployment.created_at,
        timezone=deployment.timezone)


def listing(conn: sqlite3.Connection, app_token: str) -> DeploymentListing:
    found = deployments.list_headers(conn, app_token)
    prod_id = prod_deployment_id(conn, app_token)
    promoted = deployments.last_promotions(conn, app_token)
    return DeploymentListing(
        deployments=[summary(d, is_prod=d.deployment_id == prod_id,
                             promoted_at=promoted.get(d.deployment_id)) for d in found],
        prod_deployment_id=prod_id,
        preview_deployment_id=found[0].deployment_id if found else None)


def view(conn: sqlite3.Connection, app_token: str, deployment_id: str,
         page_url: PageUrl) -> DeploymentDetail:
    """The site's deployment `deployment_id` (800004020 when it is not one of them)."""
    deployment = deployments.get_deployment(conn, app_token, deployment_id)
    prod_id = prod_deployment_id(conn, app_token)
    is_preview = deployment.deployment_id == preview_deployment_id(conn, app_token)
    promoted = deployments.last_promotions(conn, app_token)
    functions = deployments.function_ids_by_kind(conn, deployment.deployment_id)
    is_prod = deployment.deployment_id == prod_id
    url = (page_url(app_token, "prod") if is_prod
           else page_url(app_token, "preview") if is_preview else None)
    d = deployment
    return DeploymentDetail(
        deployment_id=d.deployment_id, fingerprint=d.fingerprint, created_at=d.created_at,
        created_by=d.created_by, status=STATUS, is_prod=is_prod,
        promoted_at=promoted.get(d.deployment_id), draft_revision=d.draft_revision,
        timezone=d.timezone, is_preview=is_preview,
        functions={kind: list(ids) for kind, ids in functions.items()},
        agent_tools=AgentTools(exclude=list(d.exclude)), function_hints=d.function_hints,
        artifact=ArtifactInfo(sha256=d.artifact_sha256, size=d.artifact_size),
        base_app_url=url)


def promote(conn: sqlite3.Connection, user: User, app_token: str, deployment_id: str,
            page_url: PageUrl) -> ProdPointed:
    """Point prod at the site's latest preview (inside a write)."""
    deployment = deployments.promote(conn, user, app_token, deployment_id)
    return ProdPointed(deployment_id=deployment.deployment_id, env="prod",
                       base_app_url=page_url(app_token, "prod"))


def rollback(conn: sqlite3.Connection, user: User, app_token: str, deployment_id: str,
             page_url: PageUrl) -> ProdPointed:
    """Point prod back at a deployment that was prod before (inside a write)."""
    deployment = deployments.rollback(conn, user, app_token, deployment_id)
    return ProdPointed(deployment_id=deployment.deployment_id, env="prod",
                       base_app_url=page_url(app_token, "prod"))
