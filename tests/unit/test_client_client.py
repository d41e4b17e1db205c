"""Client: envelopes, error mapping and exit codes, token hygiene (respx for faults)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from basedb.client.client import Client, api_path, connect
from basedb.client.profiles import Profile
from basedb.core.errors import (
    ApiError,
    AuthError,
    BadResponse,
    BasedbError,
    ConnectionLost,
    ConnectionRefused,
    NetworkError,
    ServerError,
    UsageError,
)
from basedb.protocol.envelope import error_envelope

ENDPOINT = "http://127.0.0.1:8787"
PREFIX = "/open-apis/base/v3"
TOKEN = "bdb_secret_token_value_123456"


@pytest.fixture
def mock() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=ENDPOINT + PREFIX, assert_all_called=False) as router:
        yield router


@pytest.fixture
def client() -> Iterator[Client]:
    with Client(base_url=ENDPOINT, token=TOKEN, timeout=2.0) as c:
        c.profile_name = "prod"
        yield c


def envelope(code: int, msg: str = "", data: Any = None, log_id: str | None = None) -> dict:
    body: dict[str, Any] = {"code": code, "msg": msg}
    if data is not None:
        body["data"] = data
    if log_id:
        body["error"] = {"log_id": log_id}
    return body


def assert_no_token(error: BasedbError) -> None:
    text = " ".join([str(error), error.message, error.hint or "", repr(error),
                     json.dumps(error_envelope(error), default=str)])
    assert TOKEN not in text


@pytest.mark.parametrize(("given", "expected"), [
    ("/sites/a", "/open-apis/base/v3/sites/a"),
    ("sites/a", "/open-apis/base/v3/sites/a"),
    ("/open-apis/base/v3/sites/a", "/open-apis/base/v3/sites/a"),
    ("/open-apis/im/v1/chats", "/open-apis/im/v1/chats"),
    ("https://open.example.com/open-apis/base/v3/sites/a?env=prod",
     "/open-apis/base/v3/sites/a?env=prod"),
    ("  /users/me ", "/open-apis/base/v3/users/me"),
])
def test_api_path(given: str, expected: str) -> None:
    assert api_path(given) == expected


def test_success_returns_the_envelope_and_sends_the_token(mock: respx.MockRouter,
                                                          client: Client) -> None:
    route = mock.get("/users/me").respond(json=envelope(0, "success", {"user": {"id": "u1"}}))
    assert client.request("GET", "users/me") == envelope(0, "success", {"user": {"id": "u1"}})
    sent = route.calls.last.request
    assert sent.headers["Authorization"] == f"Bearer {TOKEN}"
    assert sent.headers["User-Agent"].startswith("basedb/")


def test_query_values_and_json_body(mock: respx.MockRouter, client: Client) -> None:
    route = mock.post("/sites/app/functions/f/invoke").respond(json=envelope(0))
    client.request("post", "/sites/app/functions/f/invoke",
                   params={"env": "prod", "includeInternal": True, "skip": None, "ids": [1, 2]},
                   json={"params": {"name": "ü"}})
    sent = route.calls.last.request
    assert sent.url.params.multi_items() == [("env", "prod"), ("includeInternal", "true"),
                                             ("ids", "1"), ("ids", "2")]
    assert json.loads(sent.content) == {"params": {"name": "ü"}}
    assert sent.headers["Content-Type"].startswith("application/json")


@pytest.mark.parametrize("code", [99991661, 99991663, 99991668, 99991677, 99991671])
def test_auth_codes_raise_auth_error(mock: respx.MockRouter, client: Client, code: int) -> None:
    mock.get("/sites/a").respond(401, json=envelope(code, "token invalid", log_id="L1"))
    with pytest.raises(AuthError) as info:
        client.request("GET", "/sites/a")
    error = info.value
    assert error.exit_code == 3
    assert error.code == code
    assert error.log_id == "L1"
    assert error.hint
    assert_no_token(error)


def test_business_error_is_api_error_with_message_and_log_id(mock: respx.MockRouter,
                                                             client: Client) -> None:
    msg = ("Parameter invalid. Parameter: /params/status (received \"x\"). Fix: use one of "
           "the options. Executed: no. Retry: retry after fixing.")
    mock.post("/sites/a/functions/f/invoke").respond(
        400, json=envelope(800004002, msg, {"error": {}}, log_id="LOG123"))
    with pytest.raises(ApiError) as info:
        client.request("POST", "/sites/a/functions/f/invoke", json={"params": {}})
    error = info.value
    assert not isinstance(error, AuthError)
    assert error.exit_code == 1
    assert error.message == msg
    assert error.code == 800004002
    assert error.detail == {"log_id": "LOG123", "http_status": 400}
    assert error_envelope(error)["error"]["detail"]["log_id"] == "LOG123"


def test_log_id_falls_back_to_the_header(mock: respx.MockRouter, client: Client) -> None:
    mock.get("/sites/a").respond(400, json=envelope(9499, "bad request"),
                                 headers={"X-Tt-Logid": "HDR9"})
    with pytest.raises(ApiError) as info:
        client.request("GET", "/sites/a")
    assert info.value.log_id == "HDR9"
    assert "valid JSON" in (info.value.hint or "")


def test_server_error_with_envelope_is_api_error_exit_4(mock: respx.MockRouter,
                                                        client: Client) -> None:
    mock.post("/sites/a/deployments").respond(500, json=envelope(800004005, "execution failed"))
    with pytest.raises(ServerError) as info:
        client.request("POST", "/sites/a/deployments", json={})
    assert isinstance(info.value, ApiError) and info.value.outcome_unknown
    assert info.value.exit_code == 4
    assert info.value.message == "execution failed"
    assert "read the resource back" in (info.value.hint or "")


def test_server_error_that_states_its_outcome_gets_no_contradicting_hint(
        mock: respx.MockRouter, client: Client) -> None:
    msg = ('FaaS function "f" threw an uncaught error. Fix: look up the LogID. Executed: no '
           "record was written. Retry: retry after publishing. LogID: L1")
    mock.post("/sites/a/functions/f/invoke").respond(500, json=envelope(800004005, msg))
    with pytest.raises(ApiError) as info:
        client.request("POST", "/sites/a/functions/f/invoke", json={"params": {}})
    assert info.value.exit_code == 4 and info.value.message == msg
    assert info.value.hint is None


@pytest.mark.parametrize(("status", "body", "ctype", "words"), [
    (502, b"<html>Bad gateway</html>", "text/html", ["HTTP 502", "non-JSON", "text/html"]),
    (404, b"Not Found", "text/plain", ["HTTP 404", "non-JSON"]),
    (200, b'{"items": []}', "application/json", ["HTTP 200", "not a Lark envelope"]),
    (503, b"", "text/plain", ["HTTP 503", "empty body"]),
])
def test_bodies_that_are_not_envelopes_are_network_errors(
        mock: respx.MockRouter, client: Client, status: int, body: bytes, ctype: str,
        words: list[str]) -> None:
    mock.get("/sites/a").respond(status, content=body, headers={"Content-Type": ctype})
    with pytest.raises(BadResponse) as info:
        client.request("GET", "/sites/a")
    assert info.value.exit_code == 4
    assert info.value.outcome_unknown == (status >= 500)
    for word in words:
        assert word in info.value.message
    assert info.value.detail["http_status"] == status


def test_connection_refused_is_a_network_error(mock: respx.MockRouter, client: Client) -> None:
    mock.get("/sites/a").mock(side_effect=httpx.ConnectError("Connection refused"))
    with pytest.raises(NetworkError) as info:
        client.request("GET", "/sites/a")
    assert info.value.exit_code == 4
    assert ENDPOINT in info.value.message and "Connection refused" in info.value.message
    assert_no_token(info.value)


def test_timeout_is_a_network_error_that_flags_unknown_writes(mock: respx.MockRouter,
                                                              client: Client) -> None:
    mock.put("/sites/a/draft/functions").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(ConnectionLost) as info:
        client.request("PUT", "/sites/a/draft/functions", json={})
    assert info.value.code == "TIMEOUT" and info.value.outcome_unknown
    assert "outcome of this write is unknown" in (info.value.hint or "")


def test_a_refused_connection_sent_nothing(mock: respx.MockRouter, client: Client) -> None:
    mock.put("/sites/a/draft/functions").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(ConnectionRefused) as info:
        client.request("PUT", "/sites/a/draft/functions", json={})
    assert info.value.code == "CONNECTION_FAILED" and info.value.exit_code == 4
    assert not info.value.outcome_unknown
    hint = info.value.hint or ""
    assert "unknown" not in hint and "Nothing was sent" in hint


def test_a_connection_dropped_after_sending_leaves_the_outcome_unknown(
        mock: respx.MockRouter, client: Client) -> None:
    mock.post("/sites/a/deployments").mock(
        side_effect=httpx.RemoteProtocolError("peer closed connection"))
    with pytest.raises(ConnectionLost) as info:
        client.request("POST", "/sites/a/deployments", json={})
    assert info.value.outcome_unknown and info.value.exit_code == 4
    assert "outcome of this write is unknown" in (info.value.hint or "")


def test_unsupported_method_is_a_usage_error(client: Client) -> None:
    with pytest.raises(UsageError):
        client.request("TRACE", "/x")


def test_client_repr_hides_the_token(client: Client) -> None:
    assert TOKEN not in repr(client)
    assert "prod" in repr(client)


def test_download_returns_bytes_and_raises_on_envelopes(mock: respx.MockRouter,
                                                        client: Client) -> None:
    mock.get("/sites/a/deployments/d1/artifact").respond(
        content=b"PK\x03\x04zip", headers={"Content-Type": "application/zip"})
    assert client.download("/sites/a/deployments/d1/artifact") == b"PK\x03\x04zip"
    mock.get("/sites/a/deployments/d2/artifact").respond(
        404, json=envelope(800004020, "deployment not found"))
    with pytest.raises(ApiError, match="deployment not found"):
        client.download("/sites/a/deployments/d2/artifact")


def test_connect_uses_the_profile_endpoint_and_token(mock: respx.MockRouter) -> None:
    route = mock.get("/users/me").respond(json=envelope(0, data={"user": {"id": "u"}}))
    with connect(Profile("prod", ENDPOINT, TOKEN)) as c:
        assert c.profile_name == "prod"
        c.request("GET", "/users/me")
    assert route.calls.last.request.headers["Authorization"] == f"Bearer {TOKEN}"


def test_request_without_token_sends_no_authorization(mock: respx.MockRouter) -> None:
    route = mock.get("/users/me").respond(401, json=envelope(99991661, "token missing"))
    with Client(base_url=ENDPOINT, token=None) as c, pytest.raises(AuthError) as info:
        c.request("GET", "/users/me")
    assert "authorization" not in route.calls.last.request.headers
    assert "auth login" in (info.value.hint or "")


def test_multipart_upload_in_process() -> None:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from basedb.client.client import EMBEDDED_BASE_URL
    from basedb.client.transport import InProcessTransport

    async def deploy(request: Request) -> JSONResponse:
        form = await request.form()
        upload = form["site"]
        assert not isinstance(upload, str)
        content = await upload.read()
        return JSONResponse({"code": 0, "data": {"size": len(content),
                                                 "fingerprint": form["fingerprint"],
                                                 "name": upload.filename}})

    app = Starlette(routes=[Route(PREFIX + "/sites/a/deployments", deploy, methods=["POST"])])
    payload = bytes(range(256)) * 4096  # 1 MiB, every byte value
    with Client(base_url=EMBEDDED_BASE_URL, token=TOKEN,
                transport=InProcessTransport(app)) as c:
        result = c.request("POST", "/sites/a/deployments",
                           files={"site": ("site.zip", payload, "application/zip")},
                           data={"fingerprint": "sha256:abc"})
    assert result["data"] == {"size": len(payload), "fingerprint": "sha256:abc",
                              "name": "site.zip"}
