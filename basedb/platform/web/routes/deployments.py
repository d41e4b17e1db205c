"""Deployments: upload a preview snapshot, list and read them, promote, roll back and
download the artifact (owners and admins only)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from basedb.core.site_zip.read import MAX_ZIP_SIZE
from basedb.platform.domain import deployment_results, deployments, sites
from basedb.platform.domain.access import require_site
from basedb.platform.domain.artifacts import check_fingerprint_field, verify_artifact
from basedb.platform.domain.draft_content import HeldArtifact
from basedb.platform.domain.identity import User
from basedb.platform.web import origins
from basedb.platform.web.http import MIB, Call, Endpoint, parse_json_body, read_body
from basedb.platform.web.uploads import read_form
from basedb.protocol import bad_request
from basedb.protocol.deployments import (
    DeploymentCreated,
    DeploymentDetail,
    DeploymentForm,
    DeploymentListing,
    NoBody,
    ProdPointed,
)

ZIP = "application/zip"
# The largest upload: site.zip (its own limits are in basedb.core.site_zip) and fields.
# Every site.zip the format allows (what `basedb check` and a deploy let through), and
# the multipart form around it.
MAX_UPLOAD_BYTES = MAX_ZIP_SIZE + MIB


def base_app_url(call: Call, app_token: str, env: str) -> str:
    """Where the release's pages are: the site's page origin (basedb.platform.web.origins)
    on the address this request came to, or $BASEDB_PUBLIC_URL."""
    return origins.page_url(app_token, env, base=origins.request_base(call.request))


def _manage(call: Call) -> sites.SiteRow:
    with call.store.read() as conn:
        site, _ = require_site(conn, call.caller, call.path["app_token"],
                               roles=sites.MANAGER_ROLES)
    return site


async def create_deployment(call: Call) -> DeploymentCreated:
    # Refuse non-managers before reading a body of up to 64 MB.
    await run_in_threadpool(_manage, call)
    if _media_type(call) == "application/json":
        # Without site.zip the fields may come as a JSON object: a client that can send a
        # form only with a file in it (lark-cli's `api --file`) redeploys this way.
        fields = _json_fields(parse_json_body(await read_body(call.request, MIB)))
        return await run_in_threadpool(
            _create, call, None, check_fingerprint_field(fields.get("fingerprint")),
            _revision_field(fields.get("draftRevision")))
    form = await read_form(call.request, limit=MAX_UPLOAD_BYTES,
                           texts=("fingerprint", "draftRevision"), files=("artifact",))
    try:
        fingerprint = check_fingerprint_field(form.texts.get("fingerprint"))
        revision = _revision_field(form.texts.get("draftRevision"))
        # Left out: the site.zip of the site's deployment with this fingerprint.
        content = (await form.files["artifact"].read() if "artifact" in form.files
                   else None)
    finally:
        await form.close()
    return await run_in_threadpool(_create, call, content, fingerprint, revision)


def _media_type(call: Call) -> str:
    return call.request.headers.get("content-type", "").partition(";")[0].strip().lower()


def _json_fields(body: Any) -> dict[str, str | None]:
    """fingerprint and draftRevision of a JSON deploy request, as the form would carry
    them (text), refusing anything else by name."""
    if not isinstance(body, dict):
        raise bad_request("The request body must be a JSON object", parameter="/",
                          fix='send {"fingerprint": "sha256:…"}, or a multipart form with '
                          "site.zip")
    allowed = ("fingerprint", "draftRevision")
    for name in body:
        if name not in allowed:
            raise bad_request(f"Unknown field {name}", parameter=f"/{name}",
                              fix="send only fingerprint and draftRevision; site.zip goes in "
                              "a multipart form", candidates=list(allowed))
    found: dict[str, str | None] = {}
    for name in allowed:
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and name == "draftRevision":
            value = str(value)
        if value is not None and not isinstance(value, str):
            raise bad_request(f"{name} must be a string", parameter=f"/{name}",
                              received=value, fix=f"send {name} as a JSON string")
        found[name] = value
    return found


def _revision_field(value: str | None) -> int | None:
    if value is None:
        return None
    text = value
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise bad_request("draftRevision must be a whole number", parameter="/draftRevision",
                          received=value, fix="send the draftRevision your last draft write "
                          "answered, or leave the field out")
    return int(text)


def _page_url(call: Call) -> deployment_results.PageUrl:
    return lambda app_token, env: base_app_url(call, app_token, env)


def _create(call: Call, content: bytes | None, fingerprint: str,
            revision: int | None) -> DeploymentCreated:
    artifact = (HeldArtifact(fingerprint) if content is None
                else verify_artifact(content, fingerprint))
    return deployment_results.create(call.store, call.caches, call.caller,
                                     call.path["app_token"], artifact, _page_url(call),
                                     draft_revision=revision)


def list_deployments(call: Call) -> DeploymentListing:
    site = _manage(call)
    with call.store.read() as conn:
        return deployment_results.listing(conn, site.app_token)


def get_deployment(call: Call) -> DeploymentDetail:
    site = _manage(call)
    with call.store.read() as conn:
        return deployment_results.view(conn, site.app_token, call.path["deployment_id"],
                                       _page_url(call))


def promote_deployment(call: Call) -> ProdPointed:
    return _point_prod(call, deployment_results.promote)


def rollback_deployment(call: Call) -> ProdPointed:
    return _point_prod(call, deployment_results.rollback)


ProdAction = Callable[[sqlite3.Connection, User, str, str, deployment_results.PageUrl],
                      ProdPointed]


def _point_prod(call: Call, action: ProdAction) -> ProdPointed:
    call.optional_body_object(())
    with call.store.write() as conn:
        site, _ = require_site(conn, call.caller, call.path["app_token"],
                               roles=sites.MANAGER_ROLES)
        return action(conn, call.caller, site.app_token, call.path["deployment_id"],
                      _page_url(call))


def download_artifact(call: Call) -> Response:
    site = _manage(call)
    with call.store.read() as conn:
        deployment = deployments.get_deployment(conn, site.app_token,
                                                call.path["deployment_id"])
        content = deployments.artifact_content(conn, deployment.deployment_id)
    assert content is not None, "every deployment row has its artifact row"
    return Response(content, media_type=ZIP, headers={
        "Content-Disposition": f'attachment; filename="site-{deployment.deployment_id}.zip"',
        "ETag": f'"{deployment.artifact_sha256}"'})


# ------------------------------------------------------------------- schemas
# The bodies are the wire's models (basedb.protocol.deployments); the OpenAPI document
# takes their schemas from them.

_DEPLOYMENTS = "/sites/{app_token}/deployments"
_ONE = _DEPLOYMENTS + "/{deployment_id}"

ENDPOINTS = [
    Endpoint("POST", _DEPLOYMENTS, create_deployment,
             "Deploy a preview: snapshot the drafts, the catalog and site.zip.", "deployments",
             description="The drafts are judged again against the live catalog (9499 with "
             "data.errors), the agent-tools policy against the draft ids (800004030), and "
             "site.zip must be a zip archive carrying .basedb/manifest.json whose fingerprint "
             "equals the form field (9499). site.zip may be left out when one of the site's "
             "deployments has this fingerprint (GET draft/hashes lists the newest): its "
             "site.zip is reused; otherwise 9499 with data.resend [\"/artifact\"]. Without "
             "site.zip the fields may also come as a JSON object (application/json). With "
             "draftRevision, refused (800004020) unless "
             "the drafts are still at that revision: another deploy of the site wrote them "
             "meanwhile.",
             body=DeploymentForm,
             body_media_type="multipart/form-data", body_limit=MAX_UPLOAD_BYTES,
             response=DeploymentCreated,
             errors=(409,)),
    Endpoint("GET", _DEPLOYMENTS, list_deployments, "The site's deployments, newest first.",
             "deployments",
             response=DeploymentListing),
    Endpoint("GET", _ONE, get_deployment, "One deployment and what it snapshots.",
             "deployments", description="baseAppUrl is the prod URL when it is prod, the "
             "preview URL when it is the latest preview, else null.",
             response=DeploymentDetail, errors=(409,)),
    Endpoint("POST", _ONE + "/promote", promote_deployment,
             "Point prod at this exact preview snapshot.", "deployments",
             description="Only the site's latest preview; anything else answers 800004020.",
             body=NoBody, body_required=False, response=ProdPointed,
             errors=(409,)),
    Endpoint("POST", _ONE + "/rollback", rollback_deployment,
             "Point prod back at a deployment that was prod before.", "deployments",
             description="A deployment that was never prod answers 800004020.",
             body=NoBody, body_required=False, response=ProdPointed,
             errors=(409,)),
    Endpoint("GET", _ONE + "/artifact", download_artifact, "The deployment's site.zip.",
             "deployments", response_media_type=ZIP,
             errors=(409,)),
]
