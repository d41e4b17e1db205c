"""The deployments routes' bodies: a new preview, the site's deployments, one deployment
with what it snapshots, and prod pointed at a deployment.

    POST /sites/{app}/deployments                    DeploymentForm  -> DeploymentCreated
    GET  /sites/{app}/deployments                                    -> DeploymentListing
    GET  /sites/{app}/deployments/{id}                               -> DeploymentDetail
    POST /sites/{app}/deployments/{id}/promote       NoBody          -> ProdPointed
    POST /sites/{app}/deployments/{id}/rollback      NoBody          -> ProdPointed
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from basedb.protocol.wire import WireModel

FINGERPRINT_PATTERN = "^sha256:[0-9a-f]{64}$"
REVISION_PATTERN = "^[0-9]{1,18}$"

Ready = Literal["ready"]  # a deployment exists only once its snapshot is complete
Hints = Annotated[list[dict[str, Any]],
                  Meta(description="functionHints, as `basedb check --json` reports them.")]
Timezone = Annotated[str, Meta(description="The time zone its functions run in (sent with "
                                           "the draft; a release keeps it).")]


class DeploymentFields(WireModel, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The text fields of a deploy request: a form's text parts, or a JSON object when
    site.zip is left out. Nothing else is accepted (the documented schema says so)."""

    fingerprint: Annotated[str, Meta(pattern=FINGERPRINT_PATTERN)]
    draft_revision: Annotated[str, Meta(
        pattern=REVISION_PATTERN,
        description="The draftRevision the deploy's last draft write answered.",
    )] | UnsetType = UNSET


class DeploymentForm(DeploymentFields, frozen=True, kw_only=True,
                     forbid_unknown_fields=True):
    """POST deployments as a multipart form: site.zip (left out to reuse the site.zip of
    the site's deployment with this fingerprint) and the text fields."""

    artifact: Annotated[str, Meta(extra_json_schema={"format": "binary",
                                                     "description": "site.zip"})
                        ] | UnsetType = UNSET


class NoBody(WireModel, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """No properties; the body may be left out."""


class DeploymentCreated(WireModel, frozen=True, kw_only=True):
    """The answer to POST deployments: the new preview."""

    deployment_id: str
    env: Literal["preview"]
    status: Ready
    fingerprint: str
    draft_revision: int | UnsetType | None = UNSET
    base_app_url: str
    function_hints: Hints
    created_at: str
    timezone: Timezone | UnsetType = UNSET


class DeploymentSummary(WireModel, frozen=True, kw_only=True):
    """A deployment as the site's listing shows it: whether it is prod, and when it last
    became prod."""

    deployment_id: str
    fingerprint: str
    created_at: str
    created_by: str
    status: Ready
    is_prod: bool
    promoted_at: Annotated[str | None, Meta(description="When it last became prod "
                                                        "(null: never).")]
    draft_revision: Annotated[int | None, Meta(
        description="The draft revision it was built from (null for deployments made "
                    "before it was recorded).")]
    timezone: Timezone


class DeploymentListing(WireModel, frozen=True, kw_only=True):
    """The site's deployments, newest first, and which are prod and the latest preview."""

    deployments: list[DeploymentSummary]
    prod_deployment_id: str | None
    preview_deployment_id: str | None


class AgentTools(WireModel, frozen=True, kw_only=True):
    """The agent-tools policy a deployment snapshots: functionIds hidden from external
    agents."""

    exclude: list[str]


class ArtifactInfo(WireModel, frozen=True, kw_only=True):
    """A deployment's site.zip: its sha256 and size in bytes."""

    sha256: str
    size: int


class DeploymentDetail(DeploymentSummary, frozen=True, kw_only=True):
    """One deployment and what it snapshots. baseAppUrl is the prod URL when it is prod,
    the preview URL when it is the latest preview, else null."""

    is_preview: bool
    functions: Annotated[dict[str, list[str]], Meta(description="functionIds by kind")]
    agent_tools: AgentTools
    function_hints: Hints
    artifact: ArtifactInfo
    base_app_url: str | None


class ProdPointed(WireModel, frozen=True, kw_only=True):
    """The answer to promote and rollback: the deployment prod now serves."""

    deployment_id: str
    env: Literal["prod"]
    base_app_url: str


MODELS: tuple[type[msgspec.Struct], ...] = (
    DeploymentFields, DeploymentForm, NoBody, DeploymentCreated, DeploymentSummary,
    DeploymentListing, AgentTools, ArtifactInfo, DeploymentDetail, ProdPointed)
