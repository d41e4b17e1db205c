"""Every route answers errors with the same envelope and a log id header."""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform
from basedb.platform.web.app import build_app
from basedb.platform.web.gate import RequestGate
from basedb.platform.web.http import Call, Endpoint
from basedb.platform.web.routes import all_endpoints
from basedb.protocol import Code
from tests.platform.conftest import assert_error_shape

BOGUS = {"base_token": "basNope", "table_id": "tblNope", "field_id": "fldNope",
         "record_id": "recNope", "app_token": "PrjNope", "deployment_id": "dplNope",
         "function_id": "fnNope", "path": "nope.html", "secret_name": "NOPE_SECRET",
         "task_id": "tskNope"}
# Routes that succeed without any input of the caller's.
NO_INPUT_NEEDED = {("GET", "/users/me"), ("GET", "/sites/list"), ("GET", "/openapi.json"),
                   ("GET", "/logs"), ("GET", "/"),
                   ("GET", "/open-apis/authen/v1/user_info"),
                   ("GET", "/_basedb/runtime.js"), ("GET", "/_basedb/session"),
                   ("DELETE", "/_basedb/session")}
# The Lark stand-in's OAuth endpoints answer in OAuth's format (tests/platform/test_lark_auth.py).
OAUTH_FORMAT = {("POST", "/oauth/v1/device_authorization"),
                ("POST", "/open-apis/authen/v2/oauth/token"),
                ("GET", "/oauth/v1/device/verify")}
# Pages answer browsers with HTML pages (not found, sign in) instead of envelopes.
HTML_PAGES = {("GET", "/sites/{app_token}/{path:path}"),
              ("GET", "/sites/{app_token}/preview/{path:path}")}
# The browser's sign-in steps answer HTML pages (not found, code refused) or redirects.
SIGN_IN_STEPS = {("GET", "/_basedb/sign-in"), ("GET", "/_basedb/session/start"),
                 ("GET", "/_basedb/session/callback")}
_PARAMETER_RE = re.compile(r"\{(\w+)(?::\w+)?\}")
ALL_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def concrete(path: str) -> str:
    return _PARAMETER_RE.sub(lambda m: BOGUS[m.group(1)], path)


def matches(template: str, url: str) -> bool:
    """Whether a route template also serves `url` (…/records/{record_id} serves
    …/records/batch_create for GET, for instance)."""
    pattern = _PARAMETER_RE.sub(lambda m: ".*" if ":path" in m.group(0) else "[^/]+",
                                template)
    return re.fullmatch(pattern, url) is not None


ENDPOINTS = all_endpoints()
IDS = [f"{e.method} {e.full_path}" for e in ENDPOINTS]


def on_its_host(endpoint: Endpoint, client: TestClient) -> TestClient:
    """The client, sending to a host the endpoint is served on: pages and page sessions
    on the (bogus) site's page host, the rest on localhost."""
    if endpoint.hosts == "page" or (endpoint.method, endpoint.path) in HTML_PAGES:
        client.base_url = client.base_url.copy_with(host=f"{BOGUS['app_token'].lower()}"
                                                    ".localhost")
    return client


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=IDS)
def test_error_envelope_on_every_route(endpoint: Endpoint, client: TestClient,
                                       platform: LocalPlatform) -> None:
    client = on_its_host(endpoint, client)
    url = concrete(endpoint.full_path)
    if endpoint.auth:
        missing = client.request(endpoint.method, url)
        assert_error_shape(missing)
        assert missing.status_code == 401 and missing.json()["code"] == Code.TOKEN_MISSING
        invalid = client.request(endpoint.method, url,
                                 headers={"Authorization": "Bearer bdb_wrongwrongwrong"})
        assert_error_shape(invalid)
        assert invalid.json()["code"] == Code.TOKEN_INVALID
        # The token never travels into messages.
        assert "wrongwrong" not in invalid.text
    if (endpoint.method, endpoint.path) in HTML_PAGES:
        page = client.request(endpoint.method, url,
                              headers={"Authorization": f"Bearer {platform.owner_token}"})
        assert page.status_code == 404 and page.headers["x-tt-logid"]
        assert page.headers["content-type"].startswith("text/html")
    elif (endpoint.method, endpoint.path) in SIGN_IN_STEPS:
        answer = client.request(endpoint.method, url, follow_redirects=False)
        assert answer.status_code in (303, 401, 404) and answer.headers["x-tt-logid"]
        assert answer.status_code == 303 or \
            answer.headers["content-type"].startswith("text/html")
    elif (endpoint.method, endpoint.path) in OAUTH_FORMAT:
        pass
    elif (endpoint.method, endpoint.path) not in NO_INPUT_NEEDED:
        refused = client.request(endpoint.method, url, content=b"{not json",
                                 headers={"Authorization": f"Bearer {platform.owner_token}"})
        assert_error_shape(refused)
        assert refused.status_code in (400, 404)
    used = {e.method for e in ENDPOINTS if matches(e.full_path, url)}
    other = next(m for m in ALL_METHODS if m not in used)
    wrong = client.request(other, url)
    assert_error_shape(wrong)
    assert wrong.status_code == 405 and wrong.json()["code"] == Code.METHOD_NOT_ALLOWED
    allowed = set(wrong.headers["allow"].replace(" ", "").split(","))
    assert allowed and allowed <= used | {"HEAD"}


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=IDS)
def test_a_route_exists_only_on_its_hosts(endpoint: Endpoint, client: TestClient,
                                          platform: LocalPlatform) -> None:
    """API routes are not served on page hosts, page sessions not on API hosts, and a
    page host serves no other site's routes."""
    owner = {"Authorization": f"Bearer {platform.owner_token}"}
    url = concrete(endpoint.full_path)
    elsewhere = []
    if endpoint.hosts == "api":
        elsewhere.append("prjnope.localhost")
    if endpoint.hosts == "page":
        elsewhere.append("localhost")
    if endpoint.hosts != "api" and "{app_token}" in endpoint.path:
        elsewhere.append("prjother.localhost")
    for host in elsewhere:
        client.base_url = client.base_url.copy_with(host=host)
        response = client.request(endpoint.method, url, headers=owner)
        assert_error_shape(response)
        assert response.status_code == 404 and response.json()["code"] == \
            Code.ROUTE_NOT_FOUND, (host, response.text)


def test_method_not_allowed_lists_every_method_of_the_path(api: Any) -> None:
    response = api.call("PUT", "/bases/basX/tables")
    assert set(response.headers["allow"].replace(" ", "").split(",")) == {"GET", "HEAD", "POST"}
    assert "Fix: use GET, HEAD, POST." in response.json()["msg"]


def test_unknown_route(client: TestClient) -> None:
    response = client.get("/open-apis/base/v3/no/such/thing")
    assert_error_shape(response)
    assert response.status_code == 404 and response.json()["code"] == Code.ROUTE_NOT_FOUND
    assert "/openapi.json" in response.json()["msg"]


def test_successes_carry_the_log_id_header(api: Any) -> None:
    response = api.call("GET", "/users/me")
    assert re.fullmatch(r"\d{14}[0-9A-F]{16}", response.headers["x-tt-logid"])
    assert response.json()["msg"] == "success"


def _app_with(platform: LocalPlatform, handler: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    extra = Endpoint("GET", "/boom", handler, "Fails on purpose.", "test")
    monkeypatch.setattr("basedb.platform.web.app.all_endpoints", lambda: [*ENDPOINTS, extra])
    return build_app(platform.store, data_dir=platform.data_dir)


def test_unexpected_errors_become_a_safe_500(platform: LocalPlatform,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    def explode(call: Call) -> Any:
        raise KeyError("SELECT secret FROM t_tblX")

    with TestClient(_app_with(platform, explode, monkeypatch),
                    base_url="http://localhost") as client:
        response = client.get("/open-apis/base/v3/boom",
                              headers={"Authorization": f"Bearer {platform.owner_token}"})
    assert_error_shape(response)
    body = response.json()
    assert response.status_code == 500 and body["code"] == Code.INTERNAL_ERROR
    assert "secret" not in body["msg"] and "KeyError" not in body["msg"]
    err = capsys.readouterr().err
    assert body["error"]["log_id"] in err and "Traceback" in err and "KeyError" in err
    assert platform.owner_token not in err


def test_a_busy_database_is_a_503(platform: LocalPlatform,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def locked(call: Call) -> Any:
        raise sqlite3.OperationalError("database is locked")

    with TestClient(_app_with(platform, locked, monkeypatch),
                    base_url="http://localhost") as client:
        response = client.get("/open-apis/base/v3/boom",
                              headers={"Authorization": f"Bearer {platform.owner_token}"})
    assert_error_shape(response)
    assert response.status_code == 503 and response.json()["code"] == Code.PLATFORM_BUSY


def test_the_middleware_catches_what_escapes_routing(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    async def broken_app(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("escaped")

    # No lifespan: HTTP only.
    client = TestClient(RequestGate(broken_app, private_names=frozenset({"testserver"})))
    response = client.get("/anything")
    assert_error_shape(response)
    assert response.status_code == 500
    assert "escaped" in capsys.readouterr().err


def test_body_size_limit_is_an_envelope(api: Any, monkeypatch: pytest.MonkeyPatch,
                                        platform: LocalPlatform) -> None:
    small = [dataclasses.replace(e, body_limit=1000) for e in ENDPOINTS]
    monkeypatch.setattr("basedb.platform.web.app.all_endpoints", lambda: small)
    app = build_app(platform.store, data_dir=platform.data_dir)
    with TestClient(app, base_url="http://localhost") as client:
        response = client.post("/open-apis/base/v3/bases", content=b"x" * 5000,
                               headers={"Authorization": f"Bearer {platform.owner_token}"})
    assert_error_shape(response)
    assert response.status_code == 413
