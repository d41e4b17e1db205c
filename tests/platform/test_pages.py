"""Pages: a deployment's site at its baseAppUrl, sign-in sessions and their CSRF guard,
path traversal, and /_basedb/runtime.js run by Node.js against a real server."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
from starlette.testclient import TestClient

from basedb.core.page_sdk import inject_import_map
from basedb.platform import LocalPlatform
from basedb.platform.web import pages
from basedb.platform.web.sessions import COOKIE_NAME
from basedb.platform.web.sign_in import STATE_COOKIE
from basedb.protocol import Code
from tests.platform.conftest import Api, assert_error_shape
from tests.platform.release_support import (
    SITE_FILES,
    TaskSite,
    deploy,
    functions_body,
    task_site,
)
from tests.platform.sign_in_support import post_sign_in, sign_in, sign_in_redirect

# What the runtime's same-origin fetch carries: the page header, and what a browser adds.
PAGE = {"X-Basedb-Page": "1", "Sec-Fetch-Site": "same-origin"}


@pytest.fixture
def site(api: Api) -> TaskSite:
    found = task_site(api)
    api.ok("PUT", f"/sites/{found.app_token}/draft/functions", json=functions_body())
    return found


def page_host(app_token: str) -> str:
    return f"{app_token.lower()}.localhost"


@pytest.fixture
def page(platform: LocalPlatform, site: TaskSite) -> Iterator[TestClient]:
    """A browser tab on the site's page host."""
    with TestClient(platform.app, base_url=f"http://{page_host(site.app_token)}") as tab:
        yield tab


def new_member(api: Api, site: TaskSite, role: str) -> str:
    created = api.ok("POST", "/users", json={"name": f"a {role}"})
    api.ok("POST", f"/sites/{site.app_token}/members",
           json={"userId": created["user_id"], "role": role})
    return str(created["token"])


# ------------------------------------------------------------------- sign in


def test_pages_need_a_session_and_send_the_browser_to_the_platform(
        page: TestClient, api: Api, site: TaskSite) -> None:
    deploy(api, site.app_token)
    response = page.get(f"/sites/{site.app_token}/preview/?x=1")
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-store"
    assert "<form" not in response.text and "<input" not in response.text
    assert "/_basedb/session/start?next=%2Fsites%2F" in response.text
    assert "Tasks" not in response.text  # nothing about the site before signing in
    start = page.get(f"/_basedb/session/start?next=/sites/{site.app_token}/preview/",
                     follow_redirects=False)
    assert start.status_code == 303
    location = start.headers["location"]
    assert location.startswith(f"http://localhost/_basedb/sign-in?site={site.app_token.lower()}"
                               "&state=")
    form = page.get(location)
    assert form.status_code == 200 and 'id="sign-in"' in form.text
    assert "basedb auth token" in form.text and "Tasks" not in form.text
    assert "frame-ancestors 'none'" in form.headers["content-security-policy"]


def test_page_urls_on_the_api_host_move_to_the_page_host(client: TestClient,
                                                         site: TaskSite) -> None:
    moved = client.get(f"/sites/{site.app_token}/preview/app.js?x=1", follow_redirects=False)
    assert moved.status_code == 308
    assert moved.headers["location"] == \
        f"http://{page_host(site.app_token)}/sites/{site.app_token}/preview/app.js?x=1"


def test_sign_in_sets_a_strict_http_only_cookie(page: TestClient, api: Api,
                                                platform: LocalPlatform,
                                                site: TaskSite) -> None:
    deploy(api, site.app_token)
    next_path = f"/sites/{site.app_token}/preview/"
    redirect = sign_in_redirect(page, platform.owner_token, next_path=next_path)
    assert redirect.startswith(f"http://{page_host(site.app_token)}/_basedb/session/callback?")
    response = page.get(redirect, follow_redirects=False)
    cookies = response.headers.get_list("set-cookie")
    cookie = next(c for c in cookies if c.startswith(f"{COOKIE_NAME}="))
    assert "HttpOnly" in cookie and "Path=/" in cookie
    assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
    assert "domain" not in cookie.lower()  # this page host only
    assert platform.owner_token not in response.text + "".join(cookies)
    assert f'href="{next_path}"' in response.text  # where the page's script goes next
    me = api.ok("GET", "/users/me")
    assert page.get("/_basedb/session", headers=PAGE).json()["data"] == {
        "userId": me["user_id"], "name": me["name"]}
    shown = page.get(next_path)
    assert shown.status_code == 200
    assert shown.content == inject_import_map(SITE_FILES["src/index.html"])


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
@pytest.mark.parametrize("name", ["SIGN_IN_SCRIPT", "SIGNED_OUT_SCRIPT", "SIGNED_IN_SCRIPT"])
def test_the_sign_in_scripts_parse(tmp_path: Path, name: str) -> None:
    script = tmp_path / "sign-in.mjs"
    script.write_text(getattr(pages, name))
    done = subprocess.run(["node", "--check", str(script)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_sign_in_refusals(page: TestClient, api: Api, site: TaskSite) -> None:
    without_header = page.post("http://localhost/_basedb/sign-in", json={"token": "bdb_x"})
    assert_error_shape(without_header)
    assert "X-Basedb-Page" in without_header.json()["msg"]
    wrong = post_sign_in(page, "bdb_wrongwrong")
    assert_error_shape(wrong)
    assert wrong.json()["code"] == Code.TOKEN_INVALID and "set-cookie" not in wrong.headers
    assert "wrongwrong" not in wrong.text
    empty = post_sign_in(page, " ")
    assert "/token" in empty.json()["msg"]
    no_state = post_sign_in(page, "bdb_x", state="")
    assert "/state" in no_state.json()["msg"]
    outsider = api.ok("POST", "/users", json={"name": "outsider"})["token"]
    refused = post_sign_in(page, outsider)
    assert_error_shape(refused)
    assert refused.json()["code"] == Code.PERMISSION_DENIED and "set-cookie" not in \
        refused.headers
    # The page host takes no token at all any more.
    gone = page.post("/_basedb/session", json={"token": api.token}, headers=PAGE)
    assert gone.status_code in (404, 405) and "set-cookie" not in gone.headers


def test_the_cookie_needs_the_page_header(page: TestClient, platform: LocalPlatform,
                                          api: Api, site: TaskSite) -> None:
    sign_in(page, platform.owner_token)
    refused = page.get("/_basedb/session")
    assert_error_shape(refused)
    assert refused.json()["code"] == Code.TOKEN_MISSING
    assert "X-Basedb-Page: 1" in refused.json()["msg"]
    assert page.get("/_basedb/session", headers=PAGE).json()["data"]["userId"] == \
        api.ok("GET", "/users/me")["user_id"]
    # Invoking functions: the same guard (the endpoint opts in to page sessions).
    invoke = f"/open-apis/base/v3/sites/{site.app_token}/functions/listTasks/invoke"
    refused = page.post(invoke, params={"env": "preview"}, json={"params": {}})
    assert refused.json()["code"] == Code.TOKEN_MISSING
    # API routes are not served on a page host at all.
    assert page.get("/open-apis/base/v3/users/me", headers=PAGE).json()["code"] == \
        Code.ROUTE_NOT_FOUND


def test_sign_out_and_expiry(page: TestClient, platform: LocalPlatform) -> None:
    secret = sign_in(page, platform.owner_token)
    signed_out = page.delete("/_basedb/session", headers=PAGE)
    assert signed_out.json()["data"] == {"signedOut": True}
    assert 'basedb_session=""' in signed_out.headers["set-cookie"] or \
        "Max-Age=0" in signed_out.headers["set-cookie"]
    page.cookies.set(COOKIE_NAME, secret)
    assert page.get("/_basedb/session", headers=PAGE).json()["code"] == Code.TOKEN_INVALID
    sign_in(page, platform.owner_token)
    with platform.store.write() as conn:
        conn.execute("UPDATE page_sessions SET expires_at = 0")
    expired = page.get("/_basedb/session", headers=PAGE).json()
    assert expired["code"] == Code.TOKEN_INVALID and "expired" in expired["msg"]


# ------------------------------------------------------------------- serving


def test_files_types_etags_and_directories(page: TestClient, api: Api,
                                           platform: LocalPlatform, site: TaskSite) -> None:
    deploy(api, site.app_token)
    sign_in(page, platform.owner_token)
    root = f"/sites/{site.app_token}/preview/"
    expected = {"app.js": "text/javascript", "style.css": "text/css",
                "data/logo.svg": "image/svg+xml", "docs/": "text/html", "": "text/html"}
    for path, content_type in expected.items():
        response = page.get(root + path)
        assert response.status_code == 200, path
        assert response.headers["content-type"].startswith(content_type), path
        assert response.headers["x-content-type-options"] == "nosniff"
    script = page.get(root + "app.js")
    assert script.content == SITE_FILES["src/app.js"]
    etag = script.headers["etag"]
    assert page.get(root + "app.js", headers={"If-None-Match": etag}).status_code == 304
    assert page.get(root + "app.js", headers={"If-None-Match": '"other"'}).status_code == 200

    directory = page.get(root + "docs?x=1", follow_redirects=False)
    assert directory.status_code == 307 and directory.headers["location"] == root + "docs/?x=1"
    missing = page.get(root + "nope.js")
    assert missing.status_code == 404 and "Page not found" in missing.text
    bare = page.get(f"/sites/{site.app_token}/preview", follow_redirects=False)
    assert bare.status_code == 307 and bare.headers["location"] == root


def test_prod_and_preview_serve_their_own_snapshots(page: TestClient, api: Api,
                                                    platform: LocalPlatform,
                                                    site: TaskSite) -> None:
    sign_in(page, platform.owner_token)
    prod, preview = f"/sites/{site.app_token}/", f"/sites/{site.app_token}/preview/"
    nothing = page.get(prod)
    assert nothing.status_code == 404 and "no production release" in nothing.text
    assert "no preview" in page.get(preview).text
    first = deploy(api, site.app_token)["deploymentId"]
    api.ok("POST", f"/sites/{site.app_token}/deployments/{first}/promote")
    deploy(api, site.app_token, {**SITE_FILES, "src/index.html": b"<p>second</p>"})
    # HTML pages carry the page SDK's import map (tests/platform/test_page_sdk.py).
    assert page.get(prod).content == inject_import_map(SITE_FILES["src/index.html"])
    assert page.get(preview).content == inject_import_map(b"<p>second</p>")


def test_who_may_see_which_pages(page: TestClient, api: Api, site: TaskSite) -> None:
    first = deploy(api, site.app_token)["deploymentId"]
    api.ok("POST", f"/sites/{site.app_token}/deployments/{first}/promote")
    prod, preview = f"/sites/{site.app_token}/", f"/sites/{site.app_token}/preview/"
    member = {"Authorization": f"Bearer {new_member(api, site, 'member')}"}
    assert page.get(prod, headers=member).status_code == 200
    denied = page.get(preview, headers=member)
    assert denied.status_code == 403 and "owners and admins" in denied.text
    admin = {"Authorization": f"Bearer {new_member(api, site, 'admin')}"}
    assert page.get(preview, headers=admin).status_code == 200
    outsider = {"Authorization": "Bearer " + api.ok("POST", "/users",
                                                    json={"name": "outsider"})["token"]}
    # To an outsider the site is not there: the same page as for no site at all.
    hidden = page.get(prod, headers=outsider)
    assert hidden.status_code == 404 and "Tasks" not in hidden.text
    nope = TestClient(page.app, base_url="http://prjnope.localhost")
    assert nope.get("/sites/PrjNope/", headers=member).text == hidden.text


def test_a_page_calls_functions_excluded_from_agents(page: TestClient, api: Api,
                                                     site: TaskSite) -> None:
    """agent-tools.json hides functions from agents; it does not restrict the page entry
    (upstream agent-tools.md), so a member's page still reaches a page-only function."""
    api.ok("PUT", f"/sites/{site.app_token}/draft/agent-tools",
           json={"exclude": ["listTasks"]})
    first = deploy(api, site.app_token)["deploymentId"]
    api.ok("POST", f"/sites/{site.app_token}/deployments/{first}/promote")
    member_token = new_member(api, site, "member")
    member = api.as_user(member_token)
    invoke = f"/sites/{site.app_token}/functions/listTasks/invoke"
    body = {"params": {"status": "Open"}}
    # An agent with a bearer token, even passing includeInternal, does not see it.
    member.fail("POST", invoke, json=body, params={"env": "prod"}, code=800004001)
    member.fail("POST", invoke, json=body, params={"env": "prod", "includeInternal": "true"},
                code=800004001)
    # The same member's page does.
    sign_in(page, member_token)
    answered = page.post("/open-apis/base/v3" + invoke, params={"env": "prod"}, json=body,
                           headers=PAGE).json()
    assert answered["code"] == 0 and answered["data"]["rows"] == []


async def _raw_get(app: Any, path: str, cookie: str, host: str) -> tuple[int, bytes]:
    """GET `path` exactly as given (an HTTP client would normalize the dots away)."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "GET", "scheme": "http", "path": path,
             "raw_path": path.encode("latin-1"), "query_string": b"", "root_path": "",
             "headers": [(b"host", host.encode()),
                         (b"cookie", f"{COOKIE_NAME}={cookie}".encode())],
             "client": ("127.0.0.1", 1), "server": (host, 80)}
    await app(scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], body


@pytest.mark.parametrize("suffix", [
    "../../etc/passwd", "../../../../../../etc/passwd", "docs/../../index.html", "./app.js",
    "..%2f..%2fetc%2fpasswd", "%2e%2e/%2e%2e/etc/passwd", "..\\..\\etc\\passwd",
    "docs//index.html", "app.js\x00.html", "/etc/passwd",
])
def test_traversal_attempts_find_nothing(page: TestClient, api: Api,
                                         platform: LocalPlatform, site: TaskSite,
                                         suffix: str) -> None:
    deploy(api, site.app_token, {**SITE_FILES, "README.md": b"secret readme"})
    secret = sign_in(page, platform.owner_token)
    path = f"/sites/{site.app_token}/preview/{suffix}"
    status, body = asyncio.run(_raw_get(platform.app, path, secret, page_host(site.app_token)))
    assert status == 404, (suffix, body[:200])
    assert b"root:" not in body and b"secret readme" not in body
    if suffix.isprintable():
        # Through an HTTP client too, which normalizes dot segments first (so ./app.js
        # is just app.js); nothing outside src/ comes back either way.
        response = page.get(path)
        assert response.status_code in (200, 404) and "secret readme" not in response.text


@pytest.mark.parametrize(("path", "safe"), [
    ("", ""), ("index.html", "index.html"), ("docs/", "docs/"), ("a/b.js", "a/b.js"),
    ("..", None), ("../x", None), ("a/../b", None), ("./a", None), ("a/.", None),
    ("a//b", None), ("a\\b", None), ("a\x00b", None), ("a\nb", None),
])
def test_safe_path(path: str, safe: str | None) -> None:
    assert pages.safe_path(path) == safe


def test_only_src_is_served(page: TestClient, api: Api, platform: LocalPlatform,
                            site: TaskSite) -> None:
    deploy(api, site.app_token, {**SITE_FILES, "README.md": b"secret readme"})
    sign_in(page, platform.owner_token)
    for path in ("README.md", "../README.md", "base-database.jsonc", ".basedb/manifest.json"):
        status, body = asyncio.run(_raw_get(
            platform.app, f"/sites/{site.app_token}/preview/{path}",
            page.cookies[COOKIE_NAME], page_host(site.app_token)))
        assert status == 404 and b"secret" not in body and b"appToken" not in body


# ------------------------------------------------------------------- runtime


def test_runtime_is_served_as_a_module(client: TestClient) -> None:
    response = client.get("/_basedb/runtime.js")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    for name in ("invokeDatabaseFunction", "invokeMutation", "invokeFaaS",
                 "callSiteAIFunction"):
        assert f"export function {name}(" in response.text
    cached = client.get("/_basedb/runtime.js", headers={"If-None-Match":
                                                        response.headers["etag"]})
    assert cached.status_code == 304


@pytest.fixture
def server(platform: LocalPlatform) -> Iterator[str]:
    """The platform served by uvicorn on a loopback port, in a thread."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(platform.app, log_level="warning", access_log=False,
                            lifespan="off")
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120  # a guard against a hang, not a window
    while not instance.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        instance.should_exit = True
        thread.join(timeout=10)
        sock.close()


def _sign_in_over_http(http: httpx.Client, origin: str, token: str) -> str:
    """The sign-in flow against a real server, each request's Host set as a browser
    would (this machine need not resolve `*.localhost`); returns the session cookie."""
    page_host = origin.split("//")[1]
    start = http.get("/_basedb/session/start", headers={"Host": page_host})
    form = urlsplit(start.headers["location"])
    asked = dict(parse_qsl(form.query))
    answer = http.post("/_basedb/sign-in", json={"token": token, **asked},
                       headers={**PAGE, "Host": form.netloc})
    callback = urlsplit(answer.json()["data"]["redirect"])
    assert callback.netloc == page_host
    done = http.get(f"{callback.path}?{callback.query}", headers={
        "Host": page_host, "Cookie": f"{STATE_COOKIE}={asked['state']}"})
    assert done.status_code == 200, done.text
    return str(done.cookies[COOKIE_NAME])


NODE_PAGE = """
import http from "node:http";
import { pathToFileURL } from "node:url";

const [runtimeFile, pageUrl, cookie] = process.argv.slice(2);
// What a browser provides: the page's location, *.localhost resolved to the loopback
// address, and on same-origin requests the cookie and the Origin / Sec-Fetch-Site
// headers.
globalThis.location = new URL(pageUrl);
globalThis.fetch = (url, init = {}) => new Promise((resolve, reject) => {
  const target = new URL(url);
  const sameOrigin = target.origin === location.origin;
  const headers = { ...init.headers, "Sec-Fetch-Site": sameOrigin ? "same-origin" : "cross-site" };
  if (sameOrigin) headers.Cookie = cookie;
  if ((init.method || "GET") !== "GET") headers.Origin = location.origin;
  const request = http.request(target, {
    method: init.method || "GET", headers,
    lookup: (host, options, callback) => options.all
      ? callback(null, [{ address: "127.0.0.1", family: 4 }])
      : callback(null, "127.0.0.1", 4),
  }, (response) => {
    const chunks = [];
    response.on("data", (chunk) => chunks.push(chunk));
    response.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      resolve({ status: response.statusCode,
                headers: { get: (name) => response.headers[name.toLowerCase()] ?? null },
                json: async () => JSON.parse(text) });
    });
  });
  request.on("error", reject);
  request.end(init.body);
});

const runtime = await import(pathToFileURL(runtimeFile).href);
const caught = async (promise) => {
  try {
    return { ok: await promise };
  } catch (error) {
    return { name: error.name, code: error.code, msg: error.msg, logId: error.logId,
             isError: error instanceof Error };
  }
};
console.log(JSON.stringify({
  context: runtime.pageContext(),
  user: await runtime.currentUser(),
  rows: await caught(runtime.invokeDatabaseFunction("listTasks", { status: "Open" })),
  invalid: await caught(runtime.invokeDatabaseFunction("listTasks", { status: "Lost" })),
  unknown: await caught(runtime.invokeMutation("noSuchFunction", {})),
}));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_runtime_calls_functions_from_node(server: str, api: Api, platform: LocalPlatform,
                                           site: TaskSite, tmp_path: Path) -> None:
    api.ok("POST", f"/bases/{site.base_token}/tables/{site.table_id}/records",
           json={"Title": "Write docs", "Status": "Open"})
    api.ok("POST", f"/bases/{site.base_token}/tables/{site.table_id}/records",
           json={"Title": "Ship it", "Status": "Done"})
    deploy(api, site.app_token)
    origin = server.replace("127.0.0.1", page_host(site.app_token))
    with httpx.Client(base_url=server, timeout=10) as http:
        runtime = http.get("/_basedb/runtime.js")
        cookie_value = _sign_in_over_http(http, origin, platform.owner_token)
    (tmp_path / "runtime.mjs").write_bytes(runtime.content)
    (tmp_path / "page.mjs").write_text(NODE_PAGE)
    cookie = f"{COOKIE_NAME}={cookie_value}"
    page_url = f"{origin}/sites/{site.app_token}/preview/index.html"
    done = subprocess.run(["node", str(tmp_path / "page.mjs"), str(tmp_path / "runtime.mjs"),
                           page_url, cookie], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["context"] == {"origin": origin, "appToken": site.app_token,
                                 "env": "preview"}
    assert result["user"]["userId"] == api.ok("GET", "/users/me")["user_id"]
    assert [row["Title"] for row in result["rows"]["ok"]["rows"]] == ["Write docs"]
    for failed, code in ((result["invalid"], 800004002), (result["unknown"], 800004001)):
        assert failed["isError"] and failed["name"] == "BasedbError"
        assert failed["code"] == code and failed["msg"] and failed["logId"]
