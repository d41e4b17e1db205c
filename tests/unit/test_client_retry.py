"""The client's retries (rate limits, reads on 5xx and lost connections, never a write
blindly), token renewal, Lark's error classes and the --verbose trace. respx stands in
for what a real server here cannot produce on demand (bursts of 429, a dropped answer)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import respx

from basedb.client import responses
from basedb.client.client import Client
from basedb.client.responses import ErrorContext
from basedb.client.retry import RetryPolicy, parse_reset
from basedb.client.trace import RequestTrace
from basedb.core.errors import (
    AuthError,
    ConnectionLost,
    PermissionDenied,
    RateLimited,
    ServerError,
)
from basedb.platform import open_platform
from basedb.protocol.envelope import error_envelope
from tests.cli.deploy_support import local_client

BASE = "http://lark.test"
PREFIX = "/open-apis/base/v3"
TOKEN = "u-" + "A" * 30
OK = {"code": 0, "msg": "success", "data": {}}
LIMITED = {"code": 99991400, "msg": "request trigger frequency limit"}


@pytest.fixture
def mock() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE + PREFIX, assert_all_called=False) as router:
        yield router


def client(**kwargs: object) -> Client:
    return Client(base_url=BASE, token=TOKEN, retry=RetryPolicy(jitter=lambda: 0.5),
                  **kwargs)  # type: ignore[arg-type]


def test_rate_limits_wait_for_the_reset_then_succeed(mock: respx.MockRouter,
                                                     pauses: list[float]) -> None:
    route = mock.post("/sites/create").mock(side_effect=[
        httpx.Response(429, json=LIMITED, headers={"x-ogw-ratelimit-reset": "3"}),
        httpx.Response(200, json=LIMITED, headers={"x-ogw-ratelimit-reset": "1"}),
        httpx.Response(200, json=OK)])
    assert client().request("POST", "/sites/create", json={"title": "t"})["code"] == 0
    assert route.call_count == 3  # a refused write ran nowhere: safe to send again
    assert pauses == [3.25, 1.25]  # the reset, plus up to one base delay of jitter


def test_rate_limits_are_bounded_and_a_far_reset_is_not_waited_for(
        mock: respx.MockRouter, pauses: list[float]) -> None:
    route = mock.get("/sites/list").respond(429, json=LIMITED)
    with pytest.raises(RateLimited) as info:
        client().request("GET", "/sites/list")
    assert route.call_count == 4 and len(pauses) == 3
    assert info.value.exit_code == 1 and info.value.type == "rate_limit"
    far = mock.get("/sites/far").respond(429, json=LIMITED,
                                         headers={"x-ogw-ratelimit-reset": "3600"})
    with pytest.raises(RateLimited, match="frequency"):
        client().request("GET", "/sites/far")
    assert far.call_count == 1


def test_backoff_grows_with_full_jitter_and_a_cap() -> None:
    policy = RetryPolicy(jitter=lambda: 1.0)
    assert [policy.backoff(n) for n in (1, 2, 3, 4, 5, 6)] == [0.5, 1, 2, 4, 8, 8]
    assert RetryPolicy(jitter=lambda: 0.0).backoff(3) == 0
    assert parse_reset("2.5") == 2.5 and parse_reset("soon") is None and parse_reset("-1") is None


def test_reads_are_retried_on_5xx_and_lost_connections(mock: respx.MockRouter,
                                                       pauses: list[float]) -> None:
    route = mock.get("/sites/a").mock(side_effect=[
        httpx.Response(502, text="bad gateway", headers={"Content-Type": "text/html"}),
        httpx.ReadTimeout("timed out"),
        httpx.Response(500, json={"code": 500, "msg": "boom"}),
        httpx.Response(200, json=OK)])
    assert client().request("GET", "/sites/a")["code"] == 0
    assert route.call_count == 4 and len(pauses) == 3


def test_writes_are_never_sent_blindly_again(mock: respx.MockRouter) -> None:
    five = mock.put("/sites/a/draft/functions").respond(500, json={"code": 500, "msg": "x"})
    with pytest.raises(ServerError) as info:
        client().request("PUT", "/sites/a/draft/functions", json={})
    assert five.call_count == 1 and info.value.outcome_unknown
    lost = mock.post("/sites/a/deployments").mock(side_effect=httpx.ReadTimeout("t"))
    with pytest.raises(ConnectionLost):
        client().request("POST", "/sites/a/deployments", json={})
    assert lost.call_count == 1
    refused = mock.post("/sites/b/deployments").mock(side_effect=[
        httpx.ConnectError("refused"), httpx.Response(200, json=OK)])
    assert client().request("POST", "/sites/b/deployments", json={})["code"] == 0
    assert refused.call_count == 2  # nothing was sent the first time


class Renewing:
    identity = "bot"

    def __init__(self) -> None:
        self.tokens = ["t-" + "B" * 30, "t-" + "C" * 30]
        self.renewed: list[str] = []

    def token(self) -> str:
        return self.tokens[0]

    def renew(self, rejected: str) -> bool:
        self.renewed.append(rejected)
        self.tokens.pop(0)
        return bool(self.tokens)


def test_a_rejected_token_is_renewed_once(mock: respx.MockRouter) -> None:
    credentials = Renewing()
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["Authorization"])
        if len(seen) == 1:
            return httpx.Response(401, json={"code": 99991663, "msg": "invalid"})
        return httpx.Response(200, json=OK)

    mock.post("/sites/create").mock(side_effect=answer)
    with Client(base_url=BASE, credentials=credentials) as renewing:
        assert renewing.request("POST", "/sites/create", json={})["code"] == 0
    assert seen == ["Bearer t-" + "B" * 30, "Bearer t-" + "C" * 30]
    mock.get("/sites/x").respond(401, json={"code": 99991663, "msg": "invalid"})
    with Client(base_url=BASE, credentials=Renewing()) as again, \
            pytest.raises(AuthError) as info:
        again.request("GET", "/sites/x")
    assert info.value.exit_code == 3 and info.value.type == "auth"


def test_scope_errors_name_the_scopes_and_the_console(mock: respx.MockRouter) -> None:
    mock.get("/sites/list").respond(400, json={
        "code": 99991672, "msg": "Access denied. One of the following scopes is required",
        "error": {"log_id": "L1", "permission_violations": [
            {"type": "action_privilege_required", "subject": "base:app:read"}]}})
    lark = client()
    lark.error_context = ErrorContext(profile_name="p", brand="feishu", app_id="cli_x",
                                      login_command="basedb auth login --profile p")
    with pytest.raises(PermissionDenied) as info:
        lark.request("GET", "/sites/list")
    error = info.value
    assert error.exit_code == 1 and error.type == "permission"
    assert error.scopes == ["base:app:read"] and "base:app:read" in (error.hint or "")
    assert error.console_url == ("https://open.feishu.cn/page/scope-apply?clientID=cli_x"
                                 "&scopes=base%3Aapp%3Aread")
    envelope = error_envelope(error, "bot")
    assert envelope["identity"] == "bot" and envelope["error"]["console_url"]
    mock.get("/sites/u").respond(400, json={"code": 99991679, "msg": "user scope", "error": {
        "permission_violations": [{"subject": "base:app:create"}]}})
    with pytest.raises(PermissionDenied) as user:
        lark.request("GET", "/sites/u")
    assert '--scope "base:app:create"' in (user.value.hint or "")


@pytest.mark.parametrize(("code", "kind"), [(99991543, "config"), (99991662, "app_status"),
                                            (99991673, "app_status")])
def test_app_credential_errors_are_auth_exit_3(mock: respx.MockRouter, code: int,
                                               kind: str) -> None:
    mock.get("/sites/a").respond(400, json={"code": code, "msg": "app problem"})
    with pytest.raises(AuthError) as info:
        client().request("GET", "/sites/a")
    assert info.value.type == kind and info.value.exit_code == 3


def test_verbose_trace_shows_every_line_with_credentials_redacted(
        mock: respx.MockRouter) -> None:
    mock.post("/sites/create").respond(json={"code": 0, "msg": "success", "data": {
        "appToken": "PrjX", "refresh_token": "ur-" + "D" * 30}},
        headers={"X-Tt-Logid": "LOG9"})
    stream = io.StringIO()
    traced = client(trace=RequestTrace(stream))
    traced.request("POST", "/sites/create", json={"title": "T", "app_secret": "s3cr3t"})
    text = stream.getvalue()
    assert "> POST http://lark.test/open-apis/base/v3/sites/create" in text
    assert "> Authorization: Bearer ***" in text
    assert "< 200 OK" in text and "X-Tt-Logid: LOG9" in text and "PrjX" in text
    assert TOKEN not in text and "s3cr3t" not in text and "D" * 30 not in text


def test_timeout_is_the_clients(mock: respx.MockRouter) -> None:
    mock.post("/x").mock(side_effect=httpx.ReadTimeout("t"))
    with pytest.raises(ConnectionLost, match=r"timed out after 2.5s") as info:
        client(timeout=2.5).request("POST", "/x", json={})
    assert "--timeout" in (info.value.hint or "")


def test_an_answer_is_decoded_once(monkeypatch: pytest.MonkeyPatch,
                                   isolated_dirs: dict[str, Path]) -> None:
    """The retry check and the caller share one parse: a deploy's answers carry every
    function hint, and decoding them twice was a measurable part of a redeploy."""
    decoded: list[int] = []

    def counting(text: Any, *args: Any, **kwargs: Any) -> Any:
        decoded.append(len(text))
        return json.loads(text, *args, **kwargs)

    try:
        with local_client() as client:
            # The client's json module only: the platform's decoding is not counted.
            monkeypatch.setattr(responses, "jsonlib", SimpleNamespace(loads=counting))
            assert client.request("GET", "/users/me")["data"]["user_id"]
    finally:
        open_platform().close()
    assert len(decoded) == 1
