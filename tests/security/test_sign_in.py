"""Signing in under attack: a site author's service worker and the platform token (issue
finding 7), and the one-time code that carries a sign-in to a page origin.

The scenario: Mo is a member of Olivia's site A and of Eve's site B. Eve ships
`src/sw.js`, a service worker that records every request the pages it controls make.
Pages used to show the sign-in form themselves, inside that worker's scope, so the
token Mo typed went through Eve's worker. Now the form lives on the platform's origin
only, the page origin gets a code good once, for a minute, for its own site and for
the browser that asked, and exchanges it for a session that calls that site only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform
from basedb.platform.web import sign_in
from basedb.platform.web.sessions import COOKIE_NAME
from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.functions_support import TaskSite, add_member, released_site
from tests.platform.release_support import deploy
from tests.platform.sign_in_support import PAGE, post_sign_in, sign_in_redirect
from tests.platform.sign_in_support import sign_in as sign_in_tab
from tests.processes import CHROMIUM, NO_CHROMIUM
from tests.security.support import served

# Eve's worker: every request of a page it controls, body included, into Cache Storage.
RECORDING_WORKER = b"""
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("fetch", (event) => {
  const request = event.request;
  event.waitUntil((async () => {
    const body = request.method === "GET" ? "" : await request.clone().text();
    const cache = await caches.open("captured");
    const key = "/captured/" + Date.now() + "-" + Math.random();
    await cache.put(key, new Response(JSON.stringify(
      {url: request.url, method: request.method, body})));
  })());
});
"""
REGISTERING_PAGE = b"""
window.workers = Promise.all([
  navigator.serviceWorker.register("./sw.js", {scope: "./"}).then(() => "registered",
                                                                   (e) => e.name),
  navigator.serviceWorker.register("./sw.js", {scope: "/"}).then(() => "registered",
                                                                 (e) => e.name),
]);
"""
EVES_FILES = {
    "base-database.jsonc": b'{"appToken": "x", "title": "B"}',
    "src/index.html": b"<!doctype html><title>B</title><script type=module "
                      b"src=./app.js></script><p id=ready>B</p>",
    "src/app.js": REGISTERING_PAGE,
    "src/sw.js": RECORDING_WORKER,
}
READ_CAPTURED = """async () => {
  const cache = await caches.open("captured");
  const found = [];
  for (const key of await cache.keys()) found.push(await (await cache.match(key)).json());
  return found;
}"""


@dataclass
class Scene:
    platform: LocalPlatform
    a: TaskSite  # Olivia's
    b: str  # Eve's
    mo_token: str

    def tab(self, app_token: str) -> TestClient:
        return TestClient(self.platform.app, base_url=f"http://{app_token.lower()}.localhost")


@pytest.fixture
def scene(api: Api, platform: LocalPlatform) -> Scene:
    a = released_site(api)
    mo, mo_id = add_member(a, "Mo")
    eve = api.as_user(api.ok("POST", "/users", json={"name": "Eve"})["token"])
    b = eve.ok("POST", "/sites/create", json={"title": "B"})["appToken"]
    eve.ok("POST", f"/sites/{b}/members", json={"userId": mo_id})
    eve.ok("POST", f"/sites/{b}/deployments/{deploy(eve, b, EVES_FILES)['deploymentId']}/"
           "promote")
    return Scene(platform, a, b, str(mo.token))


# ------------------------------------------------------- the token stays on the platform


def test_a_page_origin_shows_no_form_and_takes_no_token(scene: Scene) -> None:
    with scene.tab(scene.b) as tab:
        page = tab.get(f"/sites/{scene.b}/")
        assert page.status_code == 401
        assert "<form" not in page.text and "<input" not in page.text
        assert "token" not in page.text.lower()
        # Neither the old sign-in endpoint nor the platform's is served on a page host.
        for path in ("/_basedb/session", sign_in.SIGN_IN_PATH):
            posted = tab.post(path, json={"token": scene.mo_token, "site": scene.b.lower(),
                                          "state": "s"}, headers=PAGE)
            assert posted.status_code in (404, 405) and COOKIE_NAME not in posted.cookies
        assert tab.get(sign_in.SIGN_IN_PATH, params={"site": scene.b.lower(),
                                                    "state": "s"}).status_code == 404


def test_a_page_cannot_post_a_token_to_the_platform(scene: Scene) -> None:
    """Eve's page script (cross-origin to the platform) cannot use the form's endpoint
    to trade a token it phished, or Mo's browser, for codes."""
    origin = f"http://{scene.b.lower()}.localhost"
    with TestClient(scene.platform.app, base_url="http://localhost") as platform:
        for headers in ({"X-Basedb-Page": "1", "Origin": origin},
                        {"X-Basedb-Page": "1", "Sec-Fetch-Site": "same-site"},
                        {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}):
            refused = platform.post(sign_in.SIGN_IN_PATH, headers=headers, json={
                "token": scene.mo_token, "site": scene.b.lower(), "state": "s"})
            assert refused.json()["code"] in (Code.PERMISSION_DENIED, Code.TOKEN_MISSING)


def test_site_workers_cannot_reach_the_page_origins_sign_in_paths(scene: Scene) -> None:
    """A worker's scope is at most its script's directory unless the answer carries
    Service-Worker-Allowed, which the platform never sends; the page origin's sign-in
    steps live outside every site directory."""
    with scene.tab(scene.b) as tab:
        sign_in_tab(tab, scene.mo_token)  # signed in, to be served the worker
        worker = tab.get(f"/sites/{scene.b}/sw.js", headers={"Service-Worker": "script"})
        assert worker.status_code == 200 and worker.content == RECORDING_WORKER
        assert "service-worker-allowed" not in worker.headers
    for path in (sign_in.START_PATH, sign_in.CALLBACK_PATH):
        assert not path.startswith("/sites/")


# ------------------------------------------------------------------ the one-time code


def _redeem(tab: TestClient, redirect: str) -> Any:
    return tab.get(redirect, follow_redirects=False)


def test_a_code_is_good_once(scene: Scene) -> None:
    with scene.tab(scene.b) as tab:
        redirect = sign_in_redirect(tab, scene.mo_token)
        state = tab.cookies.get(sign_in.STATE_COOKIE)
        first = _redeem(tab, redirect)
        assert first.status_code == 200 and COOKIE_NAME in first.cookies
        tab.cookies.clear()
        tab.cookies.set(sign_in.STATE_COOKIE, str(state))
        again = _redeem(tab, redirect)
        assert again.status_code == 401 and COOKIE_NAME not in again.cookies
        assert "used or expired" in again.text
    with scene.platform.store.read() as conn:
        assert conn.execute("SELECT count(*) FROM sign_in_codes").fetchone()[0] == 0


def test_a_code_expires(scene: Scene) -> None:
    with scene.tab(scene.b) as tab:
        redirect = sign_in_redirect(tab, scene.mo_token)
        with scene.platform.store.write() as conn:
            conn.execute("UPDATE sign_in_codes SET expires_at = expires_at - ?",
                         (sign_in.CODE_SECONDS,))
        late = _redeem(tab, redirect)
        assert late.status_code == 401 and COOKIE_NAME not in late.cookies


def test_a_code_is_good_for_its_own_site_only(scene: Scene) -> None:
    """A code for B, carried to A's page host (B's page script could read it from its
    own URL): refused there, and spent."""
    with scene.tab(scene.b) as tab:
        redirect = sign_in_redirect(tab, scene.mo_token)
        state = str(tab.cookies.get(sign_in.STATE_COOKIE))
    query = urlsplit(redirect).query
    with scene.tab(scene.a.app_token) as on_a:
        on_a.cookies.set(sign_in.STATE_COOKIE, state)
        moved = on_a.get(f"{sign_in.CALLBACK_PATH}?{query}", follow_redirects=False)
        assert moved.status_code == 403 and COOKIE_NAME not in moved.cookies
    with scene.tab(scene.b) as tab:
        tab.cookies.set(sign_in.STATE_COOKIE, state)
        assert _redeem(tab, redirect).status_code == 401  # spent by the refusal


def test_a_code_is_good_in_the_browser_that_asked_only(scene: Scene) -> None:
    """A code pushed into another browser (sign-in CSRF) or replayed without the state
    cookie is refused: the state was set on the page origin, HttpOnly."""
    for state in (None, "another browser's state"):
        with scene.tab(scene.b) as tab:
            redirect = sign_in_redirect(tab, scene.mo_token)
        with scene.tab(scene.b) as other:
            if state is not None:
                other.cookies.set(sign_in.STATE_COOKIE, state)
            refused = _redeem(other, redirect)
            assert refused.status_code == 403 and COOKIE_NAME not in refused.cookies


def test_a_code_lands_on_the_sites_own_pages_only(scene: Scene) -> None:
    with scene.tab(scene.b) as tab:
        for asked in ("https://evil.example/", "//evil.example/x", "/sites/Other/",
                      f"/sites/{scene.b}/\\evil"):
            done = _redeem(tab, sign_in_redirect(tab, scene.mo_token, next_path=asked))
            assert done.status_code == 200 and f'href="/sites/{scene.b}/"' in done.text
        done = _redeem(tab, sign_in_redirect(tab, scene.mo_token,
                                             next_path=f"/sites/{scene.b}/a.html?x=1"))
        assert f'href="/sites/{scene.b}/a.html?x=1"' in done.text


def test_the_state_cookie_is_http_only_and_scoped_to_the_callback(scene: Scene) -> None:
    with scene.tab(scene.b) as tab:
        start = tab.get(sign_in.START_PATH, follow_redirects=False)
        cookie = start.headers["set-cookie"]
        assert "HttpOnly" in cookie and f"Path={sign_in.CALLBACK_PATH}" in cookie
        location = urlsplit(start.headers["location"])
        assert (location.netloc, location.path) == ("localhost", sign_in.SIGN_IN_PATH)
        assert dict(parse_qsl(location.query))["site"] == scene.b.lower()
        wrong = post_sign_in(tab, scene.mo_token, site=scene.a.app_token.lower())
        assert wrong.json()["code"] == 0  # Mo is a member of A too: a code for A's host
        assert urlsplit(wrong.json()["data"]["redirect"]).netloc == \
            f"{scene.a.app_token.lower()}.localhost"


# ------------------------------------------------------------- in a real browser

WAIT_MS = 30_000


@pytest.fixture
def browser() -> Iterator[Any]:
    playwright_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright's Python package is not installed "
        "(pip install -e '.[test]')")
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    with playwright_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield launched
        finally:
            launched.close()


def _sign_in_where_asked(tab: Any, token: str) -> str:
    """Type the token into the sign-in form wherever the browser was sent to find it,
    as a member would; returns the form's address."""
    tab.wait_for_selector("#token")
    form_url = str(tab.url)
    tab.fill("#token", token)
    tab.click("button[type=submit]")
    tab.wait_for_selector("#ready")
    return form_url


def test_a_sites_service_worker_never_sees_the_token(scene: Scene, browser: Any) -> None:
    with served(scene.platform.app) as port:
        page_url = f"http://{scene.b.lower()}.localhost:{port}/sites/{scene.b}/"
        context = browser.new_context()
        seen: list[tuple[str, str]] = []
        context.on("request", lambda request: seen.append(
            (request.url, (request.post_data or "") + json.dumps(request.headers))))
        tab = context.new_page()
        tab.set_default_timeout(WAIT_MS)
        tab.goto(page_url)
        form_urls = [_sign_in_where_asked(tab, scene.mo_token)]
        workers = tab.evaluate("window.workers")
        tab.evaluate("navigator.serviceWorker.ready.then(() => true)")
        tab.reload()
        tab.wait_for_function("navigator.serviceWorker.controller !== null")

        # Mo signs out, comes back and signs in again, all under Eve's worker.
        tab.evaluate("""fetch("/_basedb/session", {method: "DELETE",
                        headers: {"X-Basedb-Page": "1"}})""")
        tab.goto(page_url)
        form_urls.append(_sign_in_where_asked(tab, scene.mo_token))
        signed_in = tab.evaluate("""fetch("/_basedb/session", {headers: {"X-Basedb-Page":
                                    "1"}}).then((r) => r.json())""")
        assert signed_in["code"] == 0 and signed_in["data"]["name"] == "Mo"

        captured = tab.evaluate(READ_CAPTURED)
        # The worker was there: it saw the requests of the pages it controls...
        assert any(entry["url"].endswith("/_basedb/session") for entry in captured)
        # ...and never the token.
        assert scene.mo_token not in json.dumps(captured)
        page_origin = f"http://{scene.b.lower()}.localhost:{port}"
        to_page_origin = [what for url, what in seen if url.startswith(page_origin)]
        assert to_page_origin and not any(scene.mo_token in what for what in to_page_origin)
        # The token was typed on the platform's origin only, and went there only.
        platform_form = f"http://localhost:{port}{sign_in.SIGN_IN_PATH}?"
        assert all(url.startswith(platform_form) for url in form_urls), form_urls
        assert any(scene.mo_token in what for url, what in seen
                   if url.startswith(f"http://localhost:{port}{sign_in.SIGN_IN_PATH}"))
        # Eve's worker takes the site's directory; a scope over the whole origin (and
        # with it the page origin's sign-in steps) is refused.
        assert workers == ["registered", "SecurityError"]
        context.close()


def test_behind_a_public_url_the_flow_stays_on_its_names(
        scene: Scene, monkeypatch: pytest.MonkeyPatch) -> None:
    """With $BASEDB_PUBLIC_URL (a proxy in front), the form is on the public host and
    the code goes to the site's page host under it."""
    monkeypatch.setenv("BASEDB_PUBLIC_URL", "https://basedb.example.com")
    label = scene.b.lower()
    with TestClient(scene.platform.app, base_url=f"https://{label}.basedb.example.com") as tab:
        start = tab.get(sign_in.START_PATH, follow_redirects=False)
        form = urlsplit(start.headers["location"])
        assert (form.scheme, form.netloc, form.path) == ("https", "basedb.example.com",
                                                         sign_in.SIGN_IN_PATH)
        answer = tab.post(f"https://basedb.example.com{sign_in.SIGN_IN_PATH}",
                          json={"token": scene.mo_token, **dict(parse_qsl(form.query))},
                          headers=PAGE)
        callback = urlsplit(answer.json()["data"]["redirect"])
        assert (callback.scheme, callback.netloc) == ("https", f"{label}.basedb.example.com")
        done = tab.get(answer.json()["data"]["redirect"], follow_redirects=False)
        assert done.status_code == 200 and "Secure" in done.headers["set-cookie"]
