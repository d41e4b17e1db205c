"""Deployment uploads under attack: bodies from callers who may not deploy, oversized or
malformed multipart forms. The form streams through Starlette's parser; nothing is
buffered past its limits, and every refusal is an envelope naming the problem."""

from __future__ import annotations

import pytest

from basedb.core.paths import API_PREFIX
from basedb.platform import LocalPlatform
from basedb.platform.web.routes.deployments import MAX_UPLOAD_BYTES
from basedb.protocol import Code
from tests.platform.conftest import Api, assert_error_shape
from tests.platform.release_support import SITE_FILES, TaskSite, site_zip, task_site, upload
from tests.security.support import call

BOUNDARY = "basedbboundary"
FORM = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}


@pytest.fixture
def site(api: Api) -> TaskSite:
    return task_site(api)


def part(name: str, data: bytes, filename: str | None = None) -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
    return (f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + data
            + b"\r\n")


def form(*parts: bytes) -> bytes:
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


def test_members_and_outsiders_are_refused_before_the_upload_is_read(
        api: Api, site: TaskSite, platform: LocalPlatform) -> None:
    path = f"{API_PREFIX}/sites/{site.app_token}/deployments"
    member = api.ok("POST", "/users", json={"name": "Mo"})
    api.ok("POST", f"/sites/{site.app_token}/members", json={"userId": member["user_id"]})
    outsider = api.ok("POST", "/users", json={"name": "Eve"})["token"]
    body = form(part("artifact", b"x" * (8 * 1024 * 1024), "site.zip"))
    for token, status in ((member["token"], 403), (outsider, 404)):
        answer = call(platform.app, "POST", path, body=body,
                      headers={**FORM, "Authorization": f"Bearer {token}"})
        assert answer.status == status and answer.consumed == 0


def test_an_upload_past_the_limit_stops_as_it_streams(api: Api, site: TaskSite,
                                                      platform: LocalPlatform) -> None:
    path = f"{API_PREFIX}/sites/{site.app_token}/deployments"
    body = form(part("artifact", b"x" * (MAX_UPLOAD_BYTES + 1024 * 1024), "site.zip"))
    answer = call(platform.app, "POST", path, body=body, headers={
        **FORM, "Authorization": f"Bearer {api.token}", "Transfer-Encoding": "chunked"})
    assert answer.status == 413
    assert answer.consumed <= MAX_UPLOAD_BYTES + 64 * 1024


@pytest.mark.parametrize(("parts", "expected"), [
    ([part("fingerprint", b"f" * 10_000)], "maximum size"),
    ([part(f"field{i}", b"x") for i in range(500)], "Too many fields"),
    ([part(f"file{i}", b"x", f"{i}.zip") for i in range(50)], "Too many files"),
    ([part("artifact", b"zip"), part("fingerprint", b"sha256:" + b"0" * 64)],
     "must be a file"),
    ([part("artifact", b"a", "a.zip"), part("artifact", b"b", "b.zip")], "sent twice"),
    ([part("fingerprint", b"a"), part("fingerprint", b"b")], "sent twice"),
    ([part("note", b"hi")], "Unknown form field note"),
])
def test_malformed_forms_are_refused_by_name(parts: list[bytes], expected: str, api: Api,
                                             site: TaskSite, platform: LocalPlatform) -> None:
    answer = call(platform.app, "POST", f"{API_PREFIX}/sites/{site.app_token}/deployments",
                  body=form(*parts), headers={**FORM, "Authorization": f"Bearer {api.token}"})
    assert answer.status == 400, answer.body
    assert expected in answer.body.decode(), answer.body


def test_a_valid_upload_still_deploys(api: Api, site: TaskSite) -> None:
    archive, fingerprint = site_zip(SITE_FILES)
    response = upload(api, site.app_token, archive, fingerprint)
    assert response.status_code == 200 and response.json()["code"] == 0
    broken = upload(api, site.app_token, b"not a zip", fingerprint)
    assert_error_shape(broken)
    assert broken.json()["code"] == Code.BAD_REQUEST
