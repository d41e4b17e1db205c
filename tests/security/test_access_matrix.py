"""Who may call what: every route of the platform, called by a site's owner, an admin, a
member, a removed admin and an outsider, each answer checked against the route's rule.

The routes come from the app's own endpoint list, and the rules must name every one of
them: a new route fails this test until someone decides who may call it. Each call gets
fresh objects to act on where it would change or consume them (a table to rename, a
record to delete, a preview to promote), so every call sees the same world.

The removed user was an admin who, while an admin, bound a table of the site's Base to a
site of their own: after removal they must hold nothing (the bound table goes too).
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform, open_platform
from basedb.platform.domain import identity
from basedb.platform.web import sign_in
from basedb.platform.web.http import Endpoint
from basedb.platform.web.routes import all_endpoints
from basedb.platform.web.sessions import PAGE_HEADER
from basedb.protocol import Code
from tests.platform.conftest import Api, make_table
from tests.platform.functions_support import TaskSite, build_site, deploy, save_drafts, site_zip

ROLES = ("owner", "admin", "member", "removed", "outsider")
OK, HIDDEN, FORBIDDEN, REDIRECT = "ok", "hidden", "forbidden", "redirect"
PAST_ACCESS = "past access"

# What each rule answers each role: allowed, refused as if the object did not exist
# (404, the same answer as for an unknown id), or refused for the role (403).
RULES: dict[str, dict[str, str]] = {
    "public": dict.fromkeys(ROLES, OK),
    "any user": dict.fromkeys(ROLES, OK),
    "platform owner": dict.fromkeys(ROLES, FORBIDDEN),
    "base": {"owner": OK, "admin": OK, "member": HIDDEN, "removed": HIDDEN,
             "outsider": HIDDEN},
    "base owner": {"owner": OK, "admin": FORBIDDEN, "member": HIDDEN, "removed": HIDDEN,
                   "outsider": HIDDEN},
    "site member": {"owner": OK, "admin": OK, "member": OK, "removed": HIDDEN,
                    "outsider": HIDDEN},
    "site manager": {"owner": OK, "admin": OK, "member": FORBIDDEN, "removed": HIDDEN,
                     "outsider": HIDDEN},
    "site owner": {"owner": OK, "admin": FORBIDDEN, "member": FORBIDDEN, "removed": HIDDEN,
                   "outsider": HIDDEN},
    # Past the access check to the call's own refusal: the stream of a function that is
    # not an AI Function, or a media task that does not exist (see `outcome`).
    "site member, then refused": {"owner": PAST_ACCESS, "admin": PAST_ACCESS,
                                  "member": PAST_ACCESS, "removed": HIDDEN,
                                  "outsider": HIDDEN},
    "sign in": {"owner": OK, "admin": OK, "member": OK, "removed": FORBIDDEN,
                "outsider": FORBIDDEN},
    # A browser's step to the platform's sign-in form: the same for everyone.
    "public redirect": dict.fromkeys(ROLES, REDIRECT),
    # The Lark stand-in's sign-in endpoints: the caller shows an app's credentials (or a
    # device code), not a user token, so every role gets the same answer.
    "app credentials": dict.fromkeys(ROLES, OK),
}

_TABLE = "/bases/{base_token}/tables/{table_id}"
_SITE = "/sites/{app_token}"
_DEPLOYMENT = _SITE + "/deployments/{deployment_id}"
RULE_OF: dict[tuple[str, str], str] = {
    ("POST", "/users"): "platform owner",
    ("GET", "/users/me"): "any user",
    ("GET", "/open-apis/authen/v1/user_info"): "any user",
    ("POST", "/_basedb/lark/apps"): "platform owner",
    ("POST", "/_basedb/lark/device/approve"): "any user",
    ("POST", "/open-apis/auth/v3/tenant_access_token/internal"): "app credentials",
    ("POST", "/oauth/v1/device_authorization"): "app credentials",
    ("POST", "/open-apis/authen/v2/oauth/token"): "app credentials",
    ("GET", "/oauth/v1/device/verify"): "app credentials",
    ("POST", "/bases"): "any user",
    ("GET", "/bases/{base_token}/grants"): "base",
    ("POST", "/bases/{base_token}/grants"): "base owner",
    ("DELETE", "/bases/{base_token}/grants"): "base owner",
    ("GET", "/bases/{base_token}/tables"): "base",
    ("POST", "/bases/{base_token}/tables"): "base",
    ("GET", _TABLE): "base",
    ("PATCH", _TABLE): "base",
    ("DELETE", _TABLE): "base",
    ("GET", _TABLE + "/fields"): "base",
    ("POST", _TABLE + "/fields"): "base",
    ("GET", _TABLE + "/fields/{field_id}"): "base",
    ("PUT", _TABLE + "/fields/{field_id}"): "base",
    ("DELETE", _TABLE + "/fields/{field_id}"): "base",
    ("GET", _TABLE + "/records"): "base",
    ("POST", _TABLE + "/records"): "base",
    ("GET", _TABLE + "/records/{record_id}"): "base",
    ("PATCH", _TABLE + "/records/{record_id}"): "base",
    ("DELETE", _TABLE + "/records/{record_id}"): "base",
    ("POST", _TABLE + "/records/batch_create"): "base",
    ("POST", _TABLE + "/records/batch_update"): "base",
    ("POST", "/sites/create"): "any user",
    ("GET", "/sites/list"): "any user",
    ("GET", _SITE): "site member",
    ("DELETE", _SITE): "site owner",
    ("GET", _SITE + "/logs"): "site member",
    ("GET", "/logs"): "platform owner",
    ("GET", "/"): "any user",
    ("POST", _SITE + "/bind_base"): "site manager",
    ("POST", _SITE + "/unbind_base"): "site manager",
    ("GET", _SITE + "/catalog"): "site member",
    ("GET", _SITE + "/members"): "site member",
    ("POST", _SITE + "/members"): "site manager",
    ("DELETE", _SITE + "/members"): "site manager",
    ("PUT", _SITE + "/draft/functions"): "site manager",
    ("GET", _SITE + "/draft/functions"): "site manager",
    ("GET", _SITE + "/draft/hashes"): "site manager",
    ("PUT", _SITE + "/draft/ai-functions"): "site manager",
    ("GET", _SITE + "/draft/ai-functions"): "site manager",
    ("PUT", _SITE + "/draft/agent-tools"): "site manager",
    ("GET", _SITE + "/draft/agent-tools"): "site manager",
    ("PUT", _SITE + "/dev/functions"): "site manager",
    ("GET", _SITE + "/dev/functions"): "site manager",
    ("DELETE", _SITE + "/dev/functions"): "site manager",
    ("POST", _SITE + "/deployments"): "site manager",
    ("GET", _SITE + "/deployments"): "site manager",
    ("GET", _DEPLOYMENT): "site manager",
    ("POST", _DEPLOYMENT + "/promote"): "site manager",
    ("POST", _DEPLOYMENT + "/rollback"): "site manager",
    ("GET", _DEPLOYMENT + "/artifact"): "site manager",
    ("GET", _SITE + "/functions"): "site member",
    ("GET", _SITE + "/functions/{function_id}"): "site member",
    ("POST", _SITE + "/functions/{function_id}/invoke"): "site member",
    ("POST", _SITE + "/functions/{function_id}/stream"): "site member, then refused",
    ("GET", _SITE + "/ai-tasks/{task_id}"): "site member, then refused",
    ("GET", _SITE + "/skill"): "site member",
    ("GET", _SITE + "/secrets"): "site manager",
    ("PUT", _SITE + "/secrets/{secret_name}"): "site manager",
    ("DELETE", _SITE + "/secrets/{secret_name}"): "site manager",
    ("GET", "/openapi.json"): "public",
    ("GET", "/sites/{app_token}/preview/{path:path}"): "site manager",
    ("GET", "/sites/{app_token}/{path:path}"): "site member",
    ("GET", "/_basedb/runtime.js"): "public",
    ("GET", "/_basedb/sign-in"): "public",
    ("POST", "/_basedb/sign-in"): "sign in",
    ("GET", "/_basedb/session/start"): "public redirect",
    ("GET", "/_basedb/session/callback"): "sign in",
    ("GET", "/_basedb/session"): "any user",
    ("DELETE", "/_basedb/session"): "any user",
}

ENDPOINTS = all_endpoints()
CASES = [(endpoint, role) for endpoint in ENDPOINTS for role in ROLES]


@dataclass
class World:
    """A released site of Olivia's and who is who around it."""

    platform: LocalPlatform
    api_client: TestClient
    page_client: TestClient
    site: TaskSite
    tokens: dict[str, str]
    users: dict[str, str]  # role -> user id
    first_deployment: str
    lark_app: tuple[str, str]  # app id, secret
    names: Iterator[int] = field(default_factory=itertools.count)

    @property
    def owner(self) -> Api:
        return self.site.api

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self.names)}"

    def new_user(self) -> str:
        platform_owner = Api(self.api_client, self.platform.owner_token)
        return str(platform_owner.ok("POST", "/users", json={"name": self.fresh("u")})[
            "user_id"])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    platform = open_platform(Path(tmp_path_factory.mktemp("matrix")) / "data")
    try:
        with TestClient(platform.app, base_url="http://localhost") as api_client:
            root = Api(api_client, platform.owner_token)
            tokens, users = {}, {}
            for role in ROLES:
                created = root.ok("POST", "/users", json={"name": role.title()})
                tokens[role], users[role] = created["token"], created["user_id"]
            olivia = Api(api_client, tokens["owner"])
            site = build_site(olivia)
            save_drafts(site)
            first = deploy(site)
            for role in ("admin", "member", "removed"):
                olivia.ok("POST", f"/sites/{site.app_token}/members",
                          json={"userId": users[role],
                                "role": "member" if role == "member" else "admin"})
            # While an admin, the removed user binds a table of Olivia's Base to a site
            # of their own; then they are removed.
            rex = Api(api_client, tokens["removed"])
            own = rex.ok("POST", "/sites/create", json={"title": "Rex's"})["appToken"]
            rex.ok("POST", f"/sites/{own}/bind_base",
                   json={"baseToken": site.base_token, "tableIds": [site.tasks_table]})
            olivia.ok("DELETE", f"/sites/{site.app_token}/members",
                      json={"userId": users["removed"]})
            assert rex.ok("GET", f"/sites/{own}")["binding"] == {"baseToken": None,
                                                                   "tableIds": []}
            app = api_client.post("/_basedb/lark/apps", json={"name": "Builder"}, headers={
                "Authorization": f"Bearer {platform.owner_token}"}).json()["data"]
            page_host = f"http://{site.app_token.lower()}.localhost"
            with TestClient(platform.app, base_url=page_host) as page_client:
                yield World(platform, api_client, page_client, site, tokens, users, first,
                            (app["app_id"], app["app_secret"]))
    finally:
        platform.close()


@dataclass
class Request:
    on_page_host: bool = False
    path: dict[str, str] = field(default_factory=dict)
    json: Any = None
    params: dict[str, str] | None = None
    data: dict[str, str] | None = None
    files: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    bearer: bool = True


def _table(world: World) -> str:
    return str(make_table(world.owner, world.site.base_token, world.fresh("T"),
                          [{"name": "Title", "type": "text"}])["id"])


def _field(world: World) -> str:
    return str(world.owner.ok("POST", f"/bases/{world.site.base_token}/tables/"
                              f"{world.site.tasks_table}/fields",
                              json={"name": world.fresh("F"), "type": "text"})["id"])


def _record(world: World) -> str:
    return str(world.owner.ok("POST", f"/bases/{world.site.base_token}/tables/"
                              f"{world.site.tasks_table}/records",
                              json={"Title": world.fresh("R")})["record_id"])


def _member(world: World) -> str:
    user_id = world.new_user()
    world.owner.ok("POST", f"/sites/{world.site.app_token}/members", json={"userId": user_id})
    return user_id


def _granted(world: World) -> str:
    user_id = world.new_user()
    world.owner.ok("POST", f"/bases/{world.site.base_token}/grants", json={"user_id": user_id})
    return user_id


def _bound_table(world: World) -> str:
    table = _table(world)
    world.owner.ok("POST", f"/sites/{world.site.app_token}/bind_base",
                   json={"baseToken": world.site.base_token, "tableIds": [table]})
    return table


def _upload() -> dict[str, Any]:
    archive, fingerprint = site_zip({"src/index.html": b"<p>matrix</p>"})
    return {"data": {"fingerprint": fingerprint},
            "files": {"artifact": ("site.zip", archive, "application/zip")}}


def _preview(world: World) -> str:
    return deploy(world.site, promote=False)


def _fresh_site(world: World) -> str:
    """A site of Olivia's with the same admin, member and removed member as the world's
    (deleting it leaves the world's site whole)."""
    app = world.owner.ok("POST", "/sites/create", json={"title": world.fresh("S")})["appToken"]
    for role in ("admin", "member", "removed"):
        world.owner.ok("POST", f"/sites/{app}/members",
                       json={"userId": world.users[role],
                             "role": "member" if role == "member" else "admin"})
    world.owner.ok("DELETE", f"/sites/{app}/members", json={"userId": world.users["removed"]})
    return str(app)


def _secret(world: World) -> str:
    name = world.fresh("KEY_")
    world.owner.ok("PUT", f"/sites/{world.site.app_token}/secrets/{name}",
                   json={"value": "s3cret"})
    return name


def _app_auth(world: World) -> dict[str, str]:
    app_id, secret = world.lark_app
    basic = base64.b64encode(f"{app_id}:{secret}".encode()).decode()
    return {"Authorization": f"Basic {basic}"}


def _device_sign_in(world: World) -> dict[str, Any]:
    """A device sign-in started with the app's credentials, not yet approved."""
    app_id, _ = world.lark_app
    answer = world.api_client.post(LARK_DEVICE, headers=_app_auth(world),
                                   data={"client_id": app_id, "scope": "base:app:read"})
    assert answer.status_code == 200, answer.text
    started: dict[str, Any] = answer.json()
    return started


def _approved_device_code(world: World) -> str:
    started = _device_sign_in(world)
    approved = world.api_client.post(
        "/_basedb/lark/device/approve", json={"user_code": started["user_code"]},
        headers={"Authorization": f"Bearer {world.tokens['owner']}"}).json()
    assert approved["code"] == 0, approved
    return str(started["device_code"])


def _drafts(world: World, what: str) -> Any:
    drafts = world.owner.ok("GET", f"/sites/{world.site.app_token}/draft/{what}")
    del drafts["draftRevision"]  # an answer's field, not part of the document
    return drafts


def _dev_drafts(world: World) -> Any:
    """The site's drafts as a development draft (the body `basedb dev` sends)."""
    functions = _drafts(world, "functions")
    ai = _drafts(world, "ai-functions")
    return {**functions, **ai}


LARK_DEVICE = "/oauth/v1/device_authorization"
PAGE = {PAGE_HEADER: "1", "Sec-Fetch-Site": "same-origin"}
Prepare = Callable[[World, str], Request]
PREPARE: dict[tuple[str, str], Prepare] = {
    ("POST", "/users"): lambda w, r: Request(json={"name": w.fresh("n")}),
    ("POST", "/bases"): lambda w, r: Request(json={"name": w.fresh("B")}),
    ("POST", "/bases/{base_token}/grants"): lambda w, r: Request(
        json={"user_id": w.new_user()}),
    ("DELETE", "/bases/{base_token}/grants"): lambda w, r: Request(
        params={"user_id": _granted(w)}),
    ("POST", "/bases/{base_token}/tables"): lambda w, r: Request(json={"name": w.fresh("T")}),
    ("PATCH", _TABLE): lambda w, r: Request(path={"table_id": _table(w)},
                                            json={"name": w.fresh("T")}),
    ("DELETE", _TABLE): lambda w, r: Request(path={"table_id": _table(w)}),
    ("POST", _TABLE + "/fields"): lambda w, r: Request(json={"name": w.fresh("F"),
                                                             "type": "text"}),
    ("PUT", _TABLE + "/fields/{field_id}"): lambda w, r: Request(
        path={"field_id": _field(w)}, json={"description": "changed"}),
    ("DELETE", _TABLE + "/fields/{field_id}"): lambda w, r: Request(
        path={"field_id": _field(w)}),
    ("POST", _TABLE + "/records"): lambda w, r: Request(json={"Title": w.fresh("R")}),
    ("PATCH", _TABLE + "/records/{record_id}"): lambda w, r: Request(
        path={"record_id": _record(w)}, json={"Title": "changed"}),
    ("DELETE", _TABLE + "/records/{record_id}"): lambda w, r: Request(
        path={"record_id": _record(w)}),
    ("POST", _TABLE + "/records/batch_create"): lambda w, r: Request(
        json={"fields": ["Title"], "rows": [[w.fresh("R")]]}),
    ("POST", _TABLE + "/records/batch_update"): lambda w, r: Request(
        json={"record_id_list": [_record(w)], "patch": {"Title": "changed"}}),
    ("POST", "/sites/create"): lambda w, r: Request(json={"title": w.fresh("S")}),
    ("DELETE", _SITE): lambda w, r: Request(path={"app_token": _fresh_site(w)}),
    ("POST", _SITE + "/bind_base"): lambda w, r: Request(
        json={"baseToken": w.site.base_token, "tableIds": [_table(w)]}),
    ("POST", _SITE + "/unbind_base"): lambda w, r: Request(json={"tableIds": [_bound_table(w)]}),
    ("POST", _SITE + "/members"): lambda w, r: Request(json={"userId": w.new_user()}),
    ("DELETE", _SITE + "/members"): lambda w, r: Request(json={"userId": _member(w)}),
    ("PUT", _SITE + "/draft/functions"): lambda w, r: Request(json=_drafts(w, "functions")),
    ("PUT", _SITE + "/draft/ai-functions"): lambda w, r: Request(
        json=_drafts(w, "ai-functions")),
    ("PUT", _SITE + "/draft/agent-tools"): lambda w, r: Request(
        json=_drafts(w, "agent-tools")),
    ("PUT", _SITE + "/dev/functions"): lambda w, r: Request(json=_dev_drafts(w)),
    ("POST", _SITE + "/deployments"): lambda w, r: Request(**_upload()),
    ("POST", _DEPLOYMENT + "/promote"): lambda w, r: Request(
        path={"deployment_id": _preview(w)}),
    ("POST", _DEPLOYMENT + "/rollback"): lambda w, r: Request(
        path={"deployment_id": w.first_deployment}),
    ("POST", _SITE + "/functions/{function_id}/invoke"): lambda w, r: Request(
        json={"params": {"status": "Open"}}, params={"env": "prod"}),
    ("POST", _SITE + "/functions/{function_id}/stream"): lambda w, r: Request(
        json={"params": {"status": "Open"}}, params={"env": "prod"}),
    ("GET", "/sites/{app_token}/preview/{path:path}"): lambda w, r: Request(
        on_page_host=True),
    ("GET", "/sites/{app_token}/{path:path}"): lambda w, r: Request(on_page_host=True),
    ("GET", "/_basedb/sign-in"): lambda w, r: Request(
        params={"site": w.site.app_token.lower(), "state": "s"}, bearer=False),
    ("POST", "/_basedb/sign-in"): lambda w, r: Request(
        json={"token": w.tokens[r], "site": w.site.app_token.lower(), "state": "s"},
        headers=PAGE, bearer=False),
    ("GET", "/_basedb/session/start"): lambda w, r: Request(on_page_host=True, bearer=False),
    ("GET", "/_basedb/session/callback"): lambda w, r: _sign_in_callback(w, r),
    ("GET", "/_basedb/session"): lambda w, r: Request(on_page_host=True),
    ("DELETE", "/_basedb/session"): lambda w, r: Request(on_page_host=True),
    ("PUT", _SITE + "/secrets/{secret_name}"): lambda w, r: Request(
        path={"secret_name": w.fresh("KEY_")}, json={"value": "s3cret"}),
    ("DELETE", _SITE + "/secrets/{secret_name}"): lambda w, r: Request(
        path={"secret_name": _secret(w)}),
    ("POST", "/_basedb/lark/apps"): lambda w, r: Request(json={"name": w.fresh("App")}),
    ("POST", "/_basedb/lark/device/approve"): lambda w, r: Request(
        json={"user_code": _device_sign_in(w)["user_code"]}),
    ("POST", "/open-apis/auth/v3/tenant_access_token/internal"): lambda w, r: Request(
        json={"app_id": w.lark_app[0], "app_secret": w.lark_app[1]}, bearer=False),
    ("POST", LARK_DEVICE): lambda w, r: Request(
        data={"client_id": w.lark_app[0], "scope": "base:app:read"}, headers=_app_auth(w),
        bearer=False),
    ("POST", "/open-apis/authen/v2/oauth/token"): lambda w, r: Request(
        data={"grant_type": "urn:ietf:params:oauth:grant-type:device_code",
              "device_code": _approved_device_code(w), "client_id": w.lark_app[0],
              "client_secret": w.lark_app[1]}, bearer=False),
    ("GET", "/oauth/v1/device/verify"): lambda w, r: Request(
        params={"user_code": _device_sign_in(w)["user_code"]}, bearer=False),
}


def _send(world: World, endpoint: Endpoint, role: str) -> Any:
    request = PREPARE.get((endpoint.method, endpoint.path), lambda w, r: Request())(world, role)
    site = world.site
    values = {"base_token": site.base_token, "table_id": site.tasks_table,
              "field_id": _first_field(world), "record_id": site.tasks["Write API"],
              "app_token": site.app_token, "deployment_id": world.first_deployment,
              "function_id": "listTasks", "task_id": "tskNoSuchTask", "path": "index.html",
              "secret_name": "API_KEY",
              **request.path}
    url = endpoint.full_path
    for name, value in values.items():
        url = url.replace("{" + name + "}", value).replace("{" + name + ":path}", value)
    headers = dict(request.headers)
    if request.bearer:
        headers["Authorization"] = f"Bearer {world.tokens[role]}"
    client = world.page_client if request.on_page_host else world.api_client
    client.cookies.clear()
    return client.request(endpoint.method, url, json=request.json, params=request.params,
                          data=request.data, files=request.files, headers=headers,
                          follow_redirects=False)


def _sign_in_callback(world: World, role: str) -> Request:
    """A code issued to `role` for the site (as the platform's form issues one, here
    also to roles the form refuses): the callback checks membership again."""
    with world.platform.store.write() as conn:
        user = identity.user_for_token(conn, world.tokens[role])
        assert user is not None
        code = sign_in.issue_code(conn, user, world.site.app_token, "state")
    return Request(on_page_host=True, params={"code": code}, bearer=False,
                   headers={"Cookie": f"{sign_in.STATE_COOKIE}=state"})


def _first_field(world: World) -> str:
    fields = world.owner.ok("GET", f"/bases/{world.site.base_token}/tables/"
                            f"{world.site.tasks_table}/fields")["fields"]
    return str(fields[0]["id"])


def outcome(response: Any) -> str:
    """What a response amounts to: ok, hidden (the not-found answer), forbidden, or the
    status and code for anything else."""
    is_json = response.headers.get("content-type", "").startswith("application/json")
    body = response.json() if is_json else None
    code = body.get("code") if isinstance(body, dict) else None
    if response.status_code == 200 and code in (None, 0):
        return OK
    if response.status_code == 303 and response.headers.get("location"):
        return REDIRECT
    if response.status_code == 404 and ((code == Code.BAD_REQUEST and "was not found" in
                                        body["msg"]) or "No such site" in response.text):
        return HIDDEN
    if response.status_code == 403 and (code == Code.PERMISSION_DENIED or not is_json):
        return FORBIDDEN
    if (code == Code.BAD_REQUEST and "only AI Functions stream" in body["msg"]) or (
            code == Code.FUNCTION_NOT_FOUND and "No media AI task" in body["msg"]):
        return PAST_ACCESS
    return f"{response.status_code} {code} {response.text[:300]}"


def test_every_route_has_a_rule() -> None:
    routes = {(e.method, e.path) for e in ENDPOINTS}
    assert routes == set(RULE_OF), ("routes without a rule: "
                                    f"{sorted(routes - set(RULE_OF))}; rules of no route: "
                                    f"{sorted(set(RULE_OF) - routes)}")


@pytest.mark.parametrize(("endpoint", "role"), CASES,
                         ids=[f"{e.method} {e.path} as {r}" for e, r in CASES])
def test_who_may_call_what(endpoint: Endpoint, role: str, world: World) -> None:
    rule = RULE_OF[(endpoint.method, endpoint.path)]
    response = _send(world, endpoint, role)
    assert outcome(response) == RULES[rule][role], (rule, role)
