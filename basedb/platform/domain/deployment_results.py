"""What the deployments routes answer: a new preview, the site's deployments, one
deployment with what it snapshots, and prod pointed at a deployment.

    deployment_results.listing(conn, app_token)                     # GET deployments
    deployment_results.view(conn, app_token, deployment_id, page_url)
    deployment_results.promote(conn, user, app_token, deployment_id, page_url)

A release's pages are served on the site's page origin, which depends on the address the
request came to: the web layer passes `page_url`, the domain says which release (prod,
preview or none) a deployment's `baseAppUrl` names.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain import deployments
from basedb.platform.domain.artifacts import VerifiedArtifact
from basedb.platform.domain.caches import DomainCaches
from basedb.platform.domain.deployments import Deployment, DeploymentHeader
from basedb.platform.domain.draft_content import HeldArtifact
from basedb.platform.domain.identity import User
from basedb.platform.domain.snapshots import preview_deployment_id, prod_deployment_id
from basedb.platform.storage.store import Store

PageUrl = Callable[[str, str], str]
"""The URL of a site's release pages, by (app token, env: "prod" or "preview")."""

STATUS = "ready"  # a deployment exists only once its snapshot is complete


@frozen_dataclass
class DeploymentCreated:
    """The answer to POST deployments: the new preview."""

    deployment: Deployment
    base_app_url: str
    env: Literal["preview"] = "preview"

    def to_dict(self) -> dict[str, Any]:
        d = self.deployment
        return {"deploymentId": d.deployment_id, "env": self.env, "status": STATUS,
                "fingerprint": d.fingerprint, "draftRevision": d.draft_revision,
                "baseAppUrl": self.base_app_url, "functionHints": d.function_hints,
                "createdAt": d.created_at, "timezone": d.timezone}


@frozen_dataclass
class DeploymentSummary:
    """A deployment as the site's listing shows it: whether it is prod, and when it last
    became prod (None: never)."""

    deployment: Deployment | DeploymentHeader
    is_prod: bool
    promoted_at: str | None

    def to_dict(self) -> dict[str, Any]:
        d = self.deployment
        return {"deploymentId": d.deployment_id, "fingerprint": d.fingerprint,
                "createdAt": d.created_at, "createdBy": d.created_by, "status": STATUS,
                "isProd": self.is_prod, "promotedAt": self.promoted_at,
                "draftRevision": d.draft_revision, "timezone": d.timezone}


@frozen_dataclass
class DeploymentListing:
    """The site's deployments, newest first, and which are prod and the latest preview."""

    deployments: Sequence[DeploymentSummary]
    prod_deployment_id: str | None
    preview_deployment_id: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"deployments": [summary.to_dict() for summary in self.deployments],
                "prodDeploymentId": self.prod_deployment_id,
                "previewDeploymentId": self.preview_deployment_id}


@frozen_dataclass
class DeploymentView:
    """One deployment and what it snapshots; `base_app_url` is the prod URL when it is
    prod, the preview URL when it is the latest preview, else None."""

    deployment: Deployment
    summary: DeploymentSummary
    is_preview: bool
    functions: Mapping[str, Sequence[str]]  # functionIds by kind
    base_app_url: str | None

    def to_dict(self) -> dict[str, Any]:
        d = self.deployment
        return {**self.summary.to_dict(), "isPreview": self.is_preview,
                "functions": {kind: list(ids) for kind, ids in self.functions.items()},
                "agentTools": {"exclude": d.exclude}, "functionHints": d.function_hints,
                "artifact": {"sha256": d.artifact_sha256, "size": d.artifact_size},
                "baseAppUrl": self.base_app_url}


@frozen_dataclass
class ProdPointed:
    """The answer to promote and rollback: the deployment prod now serves."""

    deployment_id: str
    base_app_url: str
    env: Literal["prod"] = "prod"

    def to_dict(self) -> dict[str, Any]:
        return {"deploymentId": self.deployment_id, "env": self.env,
                "baseAppUrl": self.base_app_url}


def create(store: Store, caches: DomainCaches, user: User, app_token: str,
           artifact: VerifiedArtifact | HeldArtifact, page_url: PageUrl, *,
           draft_revision: int | None = None) -> DeploymentCreated:
    """A new preview deployment (`basedb.platform.domain.deployments.create`)."""
    deployment = deployments.create(store, caches, user, app_token, artifact,
                                    draft_revision=draft_revision)
    return DeploymentCreated(deployment, page_url(deployment.app_token, "preview"))


def listing(conn: sqlite3.Connection, app_token: str) -> DeploymentListing:
    found = deployments.list_headers(conn, app_token)
    prod_id = prod_deployment_id(conn, app_token)
    promoted = deployments.last_promotions(conn, app_token)
    return DeploymentListing(
        tuple(DeploymentSummary(d, d.deployment_id == prod_id, promoted.get(d.deployment_id))
              for d in found),
        prod_id, found[0].deployment_id if found else None)


def view(conn: sqlite3.Connection, app_token: str, deployment_id: str,
         page_url: PageUrl) -> DeploymentView:
    """The site's deployment `deployment_id` (800004020 when it is not one of them)."""
    deployment = deployments.get_deployment(conn, app_token, deployment_id)
    prod_id = prod_deployment_id(conn, app_token)
    is_preview = deployment.deployment_id == preview_deployment_id(conn, app_token)
    promoted = deployments.last_promotions(conn, app_token)
    functions = deployments.function_ids_by_kind(conn, deployment.deployment_id)
    is_prod = deployment.deployment_id == prod_id
    url = (page_url(app_token, "prod") if is_prod
           else page_url(app_token, "preview") if is_preview else None)
    summary = DeploymentSummary(deployment, is_prod, promoted.get(deployment.deployment_id))
    return DeploymentView(deployment, summary, is_preview, functions, url)


def promote(conn: sqlite3.Connection, user: User, app_token: str, deployment_id: str,
            page_url: PageUrl) -> ProdPointed:
    """Point prod at the site's latest preview (inside a write)."""
    deployment = deployments.promote(conn, user, app_token, deployment_id)
    return ProdPointed(deployment.deployment_id, page_url(app_token, "prod"))


def rollback(conn: sqlite3.Connection, user: User, app_token: str, deployment_id: str,
             page_url: PageUrl) -> ProdPointed:
    """Point prod back at a deployment that was prod before (inside a write)."""
    deployment = deployments.rollback(conn, user, app_token, deployment_id)
    return ProdPointed(deployment.deployment_id, page_url(app_token, "prod"))
