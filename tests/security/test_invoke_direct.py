"""The invoke route's direct path (`basedb.platform.web.app.DirectRoutes`) under attack:
it answers ahead of the router, so each guard of the request layer is tried on it
again: unknown callers, huge and stalled bodies, foreign hosts, other sites' functions,
and tokens made up to probe what the platform keeps in memory."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from basedb.core.paths import API_PREFIX
from basedb.platform import LocalPlatform
from basedb.platform.web.app import build_app
from basedb.platform.web.gate import BodyTimeouts
from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.functions_support import (
    TaskSite,
    add_member,
    fresh_loop_budget,
    released_site,
)
from tests.security.support import call

__all__ = ["fresh_loop_budget"]
pytestmark = pytest.mark.usefixtures("fresh_loop_budget")

LIMIT = 4 * 1024 * 1024  # the invoke endpoint's body limit
DOING = json.dumps({"params": {"status": "Doing"}}).encode()


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


def _path(site: TaskSite, function_id: str = "listTasks") -> str:
    return f"{API_PREFIX}/sites/{site.app_token}/functions/{function_id}/invoke"


def _owner(api: Api) -> dict[str, str]:
    return {"Authorization": f"Bearer {api.token}", "Content-Type": "application/json"}


def test_no_body_is_read_from_an_unknown_caller(site: TaskSite,
                                                platform: LocalPlatform) -> None:
    for headers in ({}, {"Authorization": "Bearer bdb_made_up"},
                    {"Authorization": "Basic b3duZXI6b3duZXI="}):
        answer = call(platform.app, "POST", _path(site), body=b"x" * LIMIT,
                      headers={**headers, "Content-Type": "application/json"})
        assert answer.status == 401 and answer.consumed == 0
        assert answer.headers["connection"] == "close"


def test_huge_bodies_are_refused_as_they_stream(site: TaskSite, api: Api,
                                                platform: LocalPlatform) -> None:
    declared = call(platform.app, "POST", _path(site), headers=_owner(api),
                    body=b" " * (LIMIT * 4))
    assert declared.status == 413 and declared.consumed == 0
    streamed = call(platform.app, "POST", _path(site), body=b" " * (LIMIT * 4),
                    headers={**_owner(api), "Transfer-Encoding": "chunked"})
    assert streamed.status == 413 and streamed.consumed <= LIMIT + 64 * 1024
    assert json.loads(streamed.body)["code"] == Code.BODY_TOO_LARGE
    # The server goes on answering.
    ok = call(platform.app, "POST", _path(site), headers=_owner(api), body=DOING)
    assert ok.status == 200


def test_a_stalled_body_is_answered_408(site: TaskSite, api: Api,
                                        platform: LocalPlatform) -> None:
    app = build_app(platform.store, data_dir=platform.data_dir,
                    body_timeouts=BodyTimeouts(idle_s=0.2, total_s=1.0))

    async def run() -> tuple[int, dict[bytes, bytes], bytes]:
        sent: list[dict[str, Any]] = []
        given = False

        async def receive() -> dict[str, Any]:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": DOING[:5], "more_body": True}
            await asyncio.Event().wait()  # the rest never comes
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        headers = [(b"host", b"localhost"), (b"content-type", b"application/json"),
                   (b"authorization", f"Bearer {api.token}".encode()),
                   (b"content-length", str(len(DOING)).encode())]
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "POST", "scheme": "http", "path": _path(site),
                 "raw_path": _path(site).encode(), "query_string": b"", "root_path": "",
                 "headers": headers, "client": ("127.0.0.1", 1), "server": ("localhost", 80)}
        await app(scope, receive, send)
        start = next(m for m in sent if m["type"] == "http.response.start")
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        return start["status"], dict(start["headers"]), body

    try:
        status, headers, body = asyncio.run(run())
    finally:
        app.state.context.log_writer.flush()  # saved before the platform closes the store
    assert status == 408 and headers[b"connection"] == b"close"
    assert json.loads(body)["code"] == Code.REQUEST_TIMEOUT


def test_foreign_hosts_and_other_sites_page_hosts(site: TaskSite, api: Api,
                                                  platform: LocalPlatform) -> None:
    other = api.ok("POST", "/sites/create", json={"title": "Other"})["appToken"]
    rebinding = call(platform.app, "POST", _path(site), host="attacker.example",
                     headers=_owner(api), body=DOING)
    assert rebinding.status == 421 and rebinding.consumed == 0
    foreign_page = call(platform.app, "POST", _path(site), host=f"{other.lower()}.localhost",
                        headers=_owner(api), body=DOING)
    assert foreign_page.status == 404 and foreign_page.consumed == 0
    assert json.loads(foreign_page.body)["code"] == Code.ROUTE_NOT_FOUND


def test_another_sites_functions_stay_out_of_reach(site: TaskSite, api: Api,
                                                   platform: LocalPlatform) -> None:
    member, _ = add_member(site, "Mia")
    other = api.ok("POST", "/sites/create", json={"title": "Other"})["appToken"]
    headers = {"Authorization": f"Bearer {member.token}", "Content-Type": "application/json"}
    assert call(platform.app, "POST", _path(site), headers=headers, body=DOING).status == 200
    for app_token in (other, other.lower(), "PrjNope", site.app_token + "x"):
        path = _path(site).replace(site.app_token, app_token)
        answer = call(platform.app, "POST", path, headers=headers, body=DOING)
        assert answer.status == 404, (app_token, answer.body[:200])
        assert b"Write API" not in answer.body and b"Fix bug" not in answer.body


def test_made_up_tokens_learn_nothing_and_evict_nothing(site: TaskSite, api: Api,
                                                        platform: LocalPlatform) -> None:
    token = str(api.token)
    assert call(platform.app, "POST", _path(site), headers=_owner(api), body=DOING).status == 200
    near = [token[:-1] + ("A" if token[-1] != "A" else "B"), token + "x", token.upper(),
            token[:-8], f"{token} {token}"]
    made_up = [f"bdb_{number:040d}" for number in range(1500)]
    for guess in near + made_up:
        answer = call(platform.app, "POST", _path(site), body=DOING,
                      headers={"Authorization": f"Bearer {guess}",
                               "Content-Type": "application/json"})
        assert answer.status == 401 and answer.consumed == 0, guess
        assert json.loads(answer.body)["code"] == Code.TOKEN_INVALID
    assert call(platform.app, "POST", _path(site), headers=_owner(api), body=DOING).status == 200
