"""The wire's models (basedb.protocol.wire): camelCase on the wire in the order the
platform always wrote, read back into the same model, and an answer that is not one
refused by name as a bad response (respx stands in for a platform that answers so)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import respx

from basedb.client.client import Client
from basedb.client.sites import SiteApi
from basedb.core.errors import EXIT_NETWORK, BadResponse
from basedb.protocol.deployments import (
    DeploymentFields,
    DeploymentListing,
    DeploymentSummary,
    ProdPointed,
)
from basedb.protocol.wire import UNSET, decode, encode

ENDPOINT = "http://127.0.0.1:8787"
PREFIX = "/open-apis/base/v3"
FP = "sha256:" + "a" * 64


def _summary() -> DeploymentSummary:
    return DeploymentSummary(
        deployment_id="dpl1", fingerprint=FP, created_at="2026-01-01T00:00:00Z",
        created_by="usr1", status="ready", is_prod=True, promoted_at=None,
        draft_revision=3, timezone="UTC")


def test_a_model_is_written_in_camel_case_in_declaration_order() -> None:
    listing = DeploymentListing(deployments=[_summary()], prod_deployment_id="dpl1",
                                preview_deployment_id="dpl1")
    data = encode(listing)
    assert list(data) == ["deployments", "prodDeploymentId", "previewDeploymentId"]
    assert list(data["deployments"][0]) == [
        "deploymentId", "fingerprint", "createdAt", "createdBy", "status", "isProd",
        "promotedAt", "draftRevision", "timezone"]
    assert decode(data, DeploymentListing, what="GET deployments") == listing


def test_a_member_an_older_platform_leaves_out_is_not_written() -> None:
    assert encode(DeploymentFields(fingerprint=FP)) == {"fingerprint": FP}
    assert encode(DeploymentFields(fingerprint=FP, draft_revision="7")) == {
        "fingerprint": FP, "draftRevision": "7"}
    assert DeploymentFields(fingerprint=FP).draft_revision is UNSET


def test_members_the_client_does_not_know_are_ignored() -> None:
    data = {"deploymentId": "dpl1", "env": "prod", "baseAppUrl": "http://x/", "newer": 1}
    assert decode(data, ProdPointed, what="POST promote") == ProdPointed(
        deployment_id="dpl1", env="prod", base_app_url="http://x/")


@pytest.mark.parametrize(("data", "where"), [
    ({"env": "prod", "baseAppUrl": "http://x/"}, "deploymentId"),
    ({"deploymentId": 7, "env": "prod", "baseAppUrl": "http://x/"}, "$.deploymentId"),
    ({"deploymentId": "dpl1", "env": "preview", "baseAppUrl": "http://x/"}, "$.env"),
])
def test_an_answer_of_another_shape_is_a_bad_response_naming_the_member(
        data: dict[str, object], where: str) -> None:
    with pytest.raises(BadResponse) as caught:
        decode(data, ProdPointed, what="POST promote")
    assert where in caught.value.message
    assert caught.value.message.startswith("POST promote answered a body")
    assert caught.value.code == "RESPONSE_INVALID" and caught.value.hint


@pytest.fixture
def mock() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=ENDPOINT + PREFIX, assert_all_called=True) as router:
        yield router


def test_the_client_refuses_a_listing_it_cannot_read(mock: respx.MockRouter) -> None:
    mock.get("/sites/Prj1/deployments").respond(json={
        "code": 0, "msg": "success", "data": {"deployments": [{"deploymentId": "dpl1"}],
                                             "prodDeploymentId": None,
                                             "previewDeploymentId": "dpl1"}})
    with Client(base_url=ENDPOINT, token="bdb_t", timeout=2.0) as client, \
            pytest.raises(BadResponse) as caught:
        SiteApi(client, "Prj1").deployments()
    assert caught.value.exit_code == EXIT_NETWORK
    assert "GET deployments of site Prj1" in caught.value.message
    assert "$.deployments[0]" in caught.value.message
