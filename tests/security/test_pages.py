"""Pages under attack: one site's page script acting on another site (issue finding 1),
framing, and what the session cookie is good for.

The scenario: Mo is a member of Olivia's site A and of Eve's site B. Eve writes B's page
script. When Mo opens B's page, that script runs in Mo's browser with whatever Mo's
browser holds: it must not be able to call A's functions as Mo (not the published ones,
not the excluded ones, not A's preview, not A's delete Mutation), whichever way it
addresses them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from starlette.testclient import TestClient

from basedb.core.page_sdk import inject_import_map
from basedb.core.paths import API_PREFIX
from basedb.platform import LocalPlatform
from basedb.platform.web.sessions import COOKIE_NAME
from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.functions_support import TaskSite, add_member, released_site
from tests.platform.release_support import SITE_FILES, deploy
from tests.platform.sign_in_support import sign_in

SAME_ORIGIN = {"X-Basedb-Page": "1", "Sec-Fetch-Site": "same-origin"}


@dataclass
class Scene:
    platform: LocalPlatform
    a: TaskSite  # Olivia's (the platform owner's, here)
    b: str  # Eve's site
    mo_token: str

    def host(self, app_token: str) -> str:
        return f"http://{app_token.lower()}.localhost"

    def invoke_path(self, function_id: str, env: str = "prod") -> str:
        return f"{API_PREFIX}/sites/{self.a.app_token}/functions/{function_id}/invoke?env={env}"


@pytest.fixture
def scene(api: Api, platform: LocalPlatform) -> Scene:
    a = released_site(api)
    a.api.ok("PUT", f"/sites/{a.app_token}/draft/agent-tools", json={"exclude": ["listTasks"]})
    mo, mo_id = add_member(a, "Mo")
    eve = api.as_user(api.ok("POST", "/users", json={"name": "Eve"})["token"])
    b = eve.ok("POST", "/sites/create", json={"title": "B"})["appToken"]
    eve.ok("POST", f"/sites/{b}/members", json={"userId": mo_id})
    eve.ok("POST", f"/sites/{b}/deployments/{deploy(eve, b)['deploymentId']}/promote")
    return Scene(platform, a, b, str(mo.token))


@pytest.fixture
def tab_on_b(scene: Scene) -> Iterator[TestClient]:
    """Mo's browser on B's page, signed in there."""
    with TestClient(scene.platform.app, base_url=scene.host(scene.b)) as tab:
        sign_in(tab, scene.mo_token)
        yield tab


def tasks_left(scene: Scene) -> int:
    return len(scene.a.records(scene.a.tasks_table))


ATTACKS = [("deleteTasks", {"taskIds": []}, "prod"), ("listTasks", {"status": "Open"}, "prod"),
           ("taskCount", {}, "prod"), ("listProjects", {}, "preview")]


@pytest.mark.parametrize(("function_id", "params", "env"), ATTACKS)
def test_another_sites_page_cannot_call_a_site_as_its_viewer(
        scene: Scene, tab_on_b: TestClient, function_id: str, params: dict[str, object],
        env: str) -> None:
    before = tasks_left(scene)
    if function_id == "deleteTasks":
        params = {"taskIds": list(scene.a.tasks.values())}
    body = {"params": params}
    path = scene.invoke_path(function_id, env)
    b_cookie = tab_on_b.cookies[COOKIE_NAME]
    b_origin = scene.host(scene.b)
    attempts = [
        # Same-origin to B: its own host, A's path.
        tab_on_b.post(path, json=body, headers=SAME_ORIGIN),
        # Cross-origin to A's page host, with the browser's true Origin and fetch site.
        tab_on_b.post(scene.host(scene.a.app_token) + path, json=body,
                      headers={"X-Basedb-Page": "1", "Origin": b_origin,
                               "Sec-Fetch-Site": "cross-site"}),
        # B's cookie presented on A's host, with forged same-origin headers.
        tab_on_b.post(scene.host(scene.a.app_token) + path, json=body,
                      headers={**SAME_ORIGIN, "Cookie": f"{COOKIE_NAME}={b_cookie}"}),
        # The API host (where pages used to live), with the cookie.
        tab_on_b.post("http://localhost" + path, json=body,
                      headers={**SAME_ORIGIN, "Cookie": f"{COOKIE_NAME}={b_cookie}"}),
    ]
    for response in attempts:
        answer = response.json()
        assert answer["code"] != 0, answer
        assert answer["code"] in (Code.ROUTE_NOT_FOUND, Code.PERMISSION_DENIED,
                                  Code.TOKEN_MISSING), answer
    assert tasks_left(scene) == before


def test_a_sites_own_page_still_calls_it(scene: Scene) -> None:
    with TestClient(scene.platform.app, base_url=scene.host(scene.a.app_token)) as tab:
        sign_in(tab, scene.mo_token)
        origin = scene.host(scene.a.app_token)
        ok = tab.post(scene.invoke_path("listTasks"), json={"params": {"status": "Open"}},
                      headers={"X-Basedb-Page": "1", "Origin": origin})
        assert ok.json()["code"] == 0  # excluded from agents, open to the site's page
        # The browser must say where the call comes from.
        for headers in ({"X-Basedb-Page": "1"},
                        {"X-Basedb-Page": "1", "Sec-Fetch-Site": "same-site"},
                        {"X-Basedb-Page": "1", "Origin": "http://evil.localhost"},
                        {**SAME_ORIGIN, "Origin": scene.host(scene.b)}):
            refused = tab.post(scene.invoke_path("listTasks"),
                               json={"params": {"status": "Open"}}, headers=headers)
            assert refused.json()["code"] == Code.PERMISSION_DENIED, headers


def test_a_session_is_good_for_its_own_site_only(scene: Scene, tab_on_b: TestClient) -> None:
    cookie = tab_on_b.cookies[COOKIE_NAME]
    with TestClient(scene.platform.app, base_url=scene.host(scene.a.app_token)) as tab:
        tab.cookies.set(COOKIE_NAME, cookie)
        assert tab.get("/_basedb/session", headers=SAME_ORIGIN).json()["code"] == \
            Code.PERMISSION_DENIED
        page = tab.get(f"/sites/{scene.a.app_token}/")
        assert page.status_code == 401 and "/_basedb/session/start" in page.text


def test_pages_and_sign_in_refuse_to_be_framed(scene: Scene, tab_on_b: TestClient) -> None:
    site_page = tab_on_b.get(f"/sites/{scene.b}/")
    assert site_page.status_code == 200 and site_page.content == \
        inject_import_map(SITE_FILES["src/index.html"])
    assert "frame-ancestors 'self'" in site_page.headers["content-security-policy"]
    assert site_page.headers["x-frame-options"] == "SAMEORIGIN"
    tab_on_b.cookies.clear()
    sign_in = tab_on_b.get(f"/sites/{scene.b}/")
    assert sign_in.status_code == 401 and 'id="sign-in"' in sign_in.text
    policy = sign_in.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
    assert "'unsafe-inline'" not in policy
    assert sign_in.headers["x-frame-options"] == "DENY"
    missing = tab_on_b.get(f"/sites/{scene.b}/nope.html",
                           headers={"Authorization": f"Bearer {scene.mo_token}"})
    assert missing.status_code == 404
    assert "frame-ancestors 'none'" in missing.headers["content-security-policy"]
