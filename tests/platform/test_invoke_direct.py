"""The invoke route's direct path (`basedb.platform.web.app.DirectRoutes`) answers every
request byte for byte as the router does: success and every kind of refusal, errors the
gate answers, and requests the direct path must leave to the router. And what an invoke
keeps between calls (`basedb.platform.domain.resolved`) never outlives a change."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from starlette.routing import Route

from basedb.core.paths import API_PREFIX
from basedb.platform import LocalPlatform
from basedb.platform.web.app import DirectRoute, DirectRoutes, IndexedRouter, build_app
from basedb.platform.web.http import MIB
from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.functions_support import (
    TaskSite,
    add_member,
    deploy,
    fresh_loop_budget,
    released_site,
    save_drafts,
    sql_function,
)

__all__ = ["fresh_loop_budget"]
pytestmark = pytest.mark.usefixtures("fresh_loop_budget")


@dataclass
class Exchange:
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    routed: bool  # went through the router (it sets scope["route"])
    own_handler: bool  # answered by the endpoint's direct handler (no path_params set)


def exchange(app: Any, method: str, path: str, *, query: str = "", host: str = "localhost",
             headers: dict[str, str] | None = None, body: bytes = b"") -> Exchange:
    async def run() -> Exchange:
        pending = [body]
        sent: list[dict[str, Any]] = []
        done = asyncio.Event()

        async def receive() -> dict[str, Any]:
            if pending:
                return {"type": "http.request", "body": pending.pop(), "more_body": False}
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                done.set()

        raw = [(b"host", host.encode()),
               *((k.lower().encode(), v.encode()) for k, v in (headers or {}).items())]
        if body:
            raw.append((b"content-length", str(len(body)).encode()))
        scope: dict[str, Any] = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": query.encode(), "root_path": "", "headers": raw,
            "client": ("127.0.0.1", 1), "server": (host, 80)}
        await app(scope, receive, send)
        start = next(m for m in sent if m["type"] == "http.response.start")
        return Exchange(start["status"], list(start.get("headers", [])),
                        b"".join(m.get("body", b"") for m in sent
                                 if m["type"] == "http.response.body"),
                        "route" in scope, "path_params" not in scope)

    return asyncio.run(run())


def normalized(answer: Exchange) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The answer with its log id (random per request) replaced by a marker."""
    log_id = dict(answer.headers)[b"x-tt-logid"]
    return (answer.status, [(k, b"LOGID" if k == b"x-tt-logid" else v)
                            for k, v in answer.headers],
            answer.body.replace(log_id, b"LOGID"))


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


@pytest.fixture
def routed(platform: LocalPlatform) -> Iterator[Any]:
    """The same platform with every request going through the router."""
    app = build_app(platform.store, data_dir=platform.data_dir, direct_routes=False)
    yield app
    # Its log entries are saved before the platform closes the store (as close() does
    # for the platform's own app): a write cut off by the close would crash SQLite.
    app.state.context.log_writer.flush()


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def _cases(site: TaskSite, api: Api, member: Api, outsider: Api,
           other_site: str) -> list[tuple[str, dict[str, Any]]]:
    invoke = f"{API_PREFIX}/sites/{site.app_token}/functions/listTasks/invoke"
    owner = {"Authorization": f"Bearer {api.token}", "Content-Type": "application/json"}
    as_member = {**owner, "Authorization": f"Bearer {member.token}"}
    as_outsider = {**owner, "Authorization": f"Bearer {outsider.token}"}
    doing = _json({"params": {"status": "Doing"}})
    return [
        ("success", dict(path=invoke, headers=owner, body=doing)),
        ("success, preview", dict(path=invoke, query="env=preview", headers=owner,
                                  body=doing)),
        ("success, member", dict(path=invoke, headers=as_member, body=doing)),
        ("no body", dict(path=invoke, headers=owner)),
        ("empty params", dict(path=invoke, headers=owner, body=_json({"params": {}}))),
        ("bad param value", dict(path=invoke, headers=owner,
                                 body=_json({"params": {"status": 3}}))),
        ("unknown param", dict(path=invoke, headers=owner,
                               body=_json({"params": {"status": "Doing", "x": 1}}))),
        ("params not an object", dict(path=invoke, headers=owner,
                                      body=_json({"params": ["Doing"]}))),
        ("params null", dict(path=invoke, headers=owner, body=_json({"params": None}))),
        ("body not an object", dict(path=invoke, headers=owner, body=b"[1]")),
        ("unknown body key", dict(path=invoke, headers=owner, body=_json({"param": {}}))),
        ("not JSON", dict(path=invoke, headers=owner, body=b"{nope")),
        ("not UTF-8", dict(path=invoke, headers=owner, body=b'{"params": "\xff"}')),
        ("bad env", dict(path=invoke, query="env=staging", headers=owner, body=doing)),
        ("bad flag", dict(path=invoke, query="includeInternal=yes", headers=owner,
                          body=doing)),
        ("excluded, owner", dict(path=invoke.replace("listTasks", "taskCount"),
                                 headers=owner, body=b"{}")),
        ("excluded, owner asks", dict(path=invoke.replace("listTasks", "taskCount"),
                                      query="includeInternal=true", headers=owner,
                                      body=b"{}")),
        ("excluded, member asks", dict(path=invoke.replace("listTasks", "taskCount"),
                                       query="includeInternal=true", headers=as_member,
                                       body=b"{}")),
        ("preview, member", dict(path=invoke, query="env=preview", headers=as_member,
                                 body=doing)),
        ("dev draft missing", dict(path=invoke, query="env=dev", headers=owner, body=doing)),
        ("unknown function", dict(path=invoke.replace("listTasks", "listTask"),
                                  headers=owner, body=doing)),
        ("not a member", dict(path=invoke, headers=as_outsider, body=doing)),
        ("unknown site", dict(path=invoke.replace(site.app_token, "PrjNope"),
                              headers=owner, body=doing)),
        ("another site's function", dict(
            path=invoke.replace(site.app_token, other_site), headers=owner, body=doing)),
        ("no token", dict(path=invoke, headers={"Content-Type": "application/json"},
                          body=doing)),
        ("unknown token", dict(path=invoke, headers={**owner,
                                                     "Authorization": "Bearer bdb_nope"},
                               body=doing)),
        ("not bearer", dict(path=invoke, headers={**owner, "Authorization": "Basic abc"},
                            body=doing)),
        ("declared too large", dict(path=invoke, headers={**owner,
                                                          "Content-Length": str(5 * MIB)})),
        ("body too large", dict(path=invoke, headers=owner,
                                body=b" " * (4 * MIB + 1))),
        ("foreign host", dict(path=invoke, host="evil.example", headers=owner, body=doing)),
        ("another site's page host", dict(path=invoke, host=f"{other_site.lower()}.localhost",
                                          headers=owner, body=doing)),
        ("its own page host", dict(path=invoke, host=f"{site.app_token.lower()}.localhost",
                                   headers=owner, body=doing)),
        ("page host, no token", dict(path=invoke, host=f"{site.app_token.lower()}.localhost",
                                     headers={"Content-Type": "application/json",
                                              "X-Basedb-Page": "1"}, body=doing)),
        ("GET", dict(method="GET", path=invoke, headers=owner)),
        ("trailing slash", dict(path=invoke + "/", headers=owner, body=doing)),
        ("extra segment", dict(path=invoke + "/x", headers=owner, body=doing)),
        ("empty function id", dict(path=invoke.replace("/listTasks/", "//"), headers=owner,
                                   body=doing)),
    ]


def test_the_direct_path_answers_as_the_router_does(site: TaskSite, api: Api,
                                                    platform: LocalPlatform,
                                                    routed: Any) -> None:
    member, _ = add_member(site, "Mia")
    outsider = api.as_user(api.ok("POST", "/users", json={"name": "Otto"})["token"])
    other_site = api.ok("POST", "/sites/create", json={"title": "Other"})["appToken"]
    cases = _cases(site, api, member, outsider, other_site)
    statuses: dict[str, int] = {}
    own: set[str] = set()
    for name, request in cases:
        request = {"method": "POST", **request}
        method, path = request.pop("method"), request.pop("path")
        for _ in range(2):  # the second time from what the first one left in memory
            direct = exchange(platform.app, method, path, **request)
            through_router = exchange(routed, method, path, **request)
            assert through_router.routed or through_router.status in (307, 404, 421)
            assert normalized(direct) == normalized(through_router), name
        statuses[name] = direct.status
        if direct.own_handler and not direct.routed:
            own.add(name)
    # The cases cover success and each kind of refusal.
    assert statuses["success"] == statuses["success, member"] == 200
    assert {statuses[name] for name in ("bad env", "not JSON", "bad param value")} == {400}
    assert statuses["no token"] == statuses["unknown token"] == 401
    assert statuses["preview, member"] == 403
    assert statuses["unknown function"] == statuses["not a member"] == 404
    assert statuses["declared too large"] == statuses["body too large"] == 413
    assert statuses["foreign host"] == 421 and statuses["GET"] == 405
    assert statuses["dev draft missing"] == 409
    # Requests with a bearer token were answered by the invoke endpoint's own handler;
    # those without one, or for another site's page host, were left to the generic one.
    generic = {"no token", "page host, no token", "another site's page host"}
    assert not own & generic
    assert own >= {name for name, request in cases
                   if request.get("headers", {}).get("Authorization") and name not in (
                       generic | {"GET", "trailing slash", "extra segment",
                                  "empty function id", "foreign host"})}


def test_the_direct_path_is_taken_only_for_its_route(site: TaskSite, api: Api,
                                                     platform: LocalPlatform) -> None:
    owner = {"Authorization": f"Bearer {api.token}", "Content-Type": "application/json"}
    invoke = f"{API_PREFIX}/sites/{site.app_token}/functions/listTasks/invoke"
    body = _json({"params": {"status": "Doing"}})
    assert not exchange(platform.app, "POST", invoke, headers=owner, body=body).routed
    assert exchange(platform.app, "GET", invoke, headers=owner).routed
    describe = exchange(platform.app, "GET", invoke.removesuffix("/invoke"), headers=owner)
    assert describe.routed and describe.status == 200


def test_a_direct_route_that_another_route_shadows_is_refused() -> None:
    async def nothing(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("never called")

    router = IndexedRouter(routes=[Route("/a/{x}/b", nothing, methods=["POST"]),
                                   Route("/a/{x}/{y}", nothing, methods=["POST"])])
    with pytest.raises(ValueError, match="other routes match"):
        DirectRoutes(router, [DirectRoute("POST", "/a/{x}/b", nothing)])
    with pytest.raises(ValueError, match="string parameters"):
        DirectRoutes(router, [DirectRoute("POST", "/a/{x:path}", nothing)])
    DirectRoutes(IndexedRouter(routes=[Route("/a/{x}/b", nothing, methods=["POST"])]),
                 [DirectRoute("POST", "/a/{x}/b", nothing)])


# ------------------------------------------------ what is kept between calls


def _invoke(api: Api, site: TaskSite, function_id: str = "listTasks") -> Any:
    return api.call("POST", site.url(f"/{function_id}/invoke"),
                    json={"params": {"status": "Doing"}} if function_id == "listTasks"
                    else {})


def test_a_deleted_or_expired_token_is_refused_at_once(site: TaskSite, api: Api,
                                                       platform: LocalPlatform) -> None:
    member, user_id = add_member(site, "Mia")
    assert _invoke(member, site).json()["code"] == 0
    with platform.store.write() as conn:
        conn.execute("UPDATE tokens SET expires_at = 1, kind = 'tenant' WHERE user_id = ?",
                     (user_id,))
    assert _invoke(member, site).json()["code"] == Code.TOKEN_INVALID
    with platform.store.write() as conn:
        conn.execute("UPDATE tokens SET kind = 'user' WHERE user_id = ?", (user_id,))
    assert _invoke(member, site).json()["code"] == Code.USER_TOKEN_EXPIRED
    with platform.store.write() as conn:
        conn.execute("DELETE FROM tokens WHERE user_id = ?", (user_id,))
    assert _invoke(member, site).json()["code"] == Code.TOKEN_INVALID


def test_a_removed_member_is_refused_at_once(site: TaskSite, api: Api) -> None:
    member, user_id = add_member(site, "Mia")
    assert _invoke(member, site).json()["code"] == 0
    api.ok("DELETE", f"/sites/{site.app_token}/members", json={"userId": user_id})
    assert _invoke(member, site).status_code == 404


def test_a_new_promotion_is_called_at_once(site: TaskSite, api: Api) -> None:
    assert _invoke(api, site).json()["code"] == 0
    assert _invoke(api, site, "newOne").status_code == 404
    save_drafts(site, database_functions=[sql_function(
        "newOne", 'SELECT count(*) AS n FROM "Tasks"')], mutations=[], faas=[],
        ai_functions=[], exclude=[])
    deploy(site)
    assert _invoke(api, site, "newOne").json()["data"]["rows"] == [{"n": 4}]
    assert _invoke(api, site).status_code == 404


def test_a_catalog_change_is_seen_at_once(site: TaskSite, api: Api) -> None:
    before = _invoke(api, site).json()["data"]["rows"]
    assert before and all("Title" in row for row in before)
    fields = api.ok("GET", f"/bases/{site.base_token}/tables/{site.tasks_table}/fields")
    title = next(f for f in fields["fields"] if f["name"] == "Title")
    api.ok("PUT", f"/bases/{site.base_token}/tables/{site.tasks_table}/fields/"
           f"{title['id']}", json={"name": "Heading"})
    after = _invoke(api, site).json()
    assert after["code"] != 0 or "Title" not in after["data"]["rows"][0], after
