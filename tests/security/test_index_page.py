"""The platform's index page (`GET /`) for a browser that signed in: it lists the sites
that browser's member may open, and the cookie that lets it do so opens nothing else.

The browser signs in on the platform's form (basedb.platform.web.sign_in); the page
origin's session cookie never reaches the platform's origin, so the form also leaves the
index cookie there (basedb.platform.web.index_session)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform
from basedb.platform.web.index_session import INDEX_COOKIE
from tests.platform.conftest import Api
from tests.platform.functions_support import TaskSite, add_member, released_site
from tests.platform.sign_in_support import PAGE, sign_in


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


@pytest.fixture
def tab(platform: LocalPlatform, site: TaskSite) -> Iterator[TestClient]:
    """A browser on the site's page origin (its cookie jar also holds the platform's)."""
    with TestClient(platform.app, base_url=f"http://{site.app_token.lower()}.localhost") as tab:
        yield tab


def test_a_browser_that_signed_in_sees_its_sites(site: TaskSite, tab: TestClient) -> None:
    member, _ = add_member(site, "Mo")
    sign_in(tab, str(member.token))
    index = tab.get("http://localhost/")
    assert index.status_code == 200, index.text
    assert "Signed in as Mo" in index.text and site.app_token in index.text
    assert index.headers["cache-control"] == "no-store"


def test_without_signing_in_the_index_says_where_to_go(tab: TestClient) -> None:
    index = tab.get("http://localhost/")
    assert index.status_code == 401 and "sign in there" in index.text


def test_the_index_cookie_opens_nothing_but_the_index(
        site: TaskSite, tab: TestClient, platform: LocalPlatform) -> None:
    member, _ = add_member(site, "Mo")
    sign_in(tab, str(member.token))
    cookie = next(c.value for c in tab.cookies.jar if c.name == INDEX_COOKIE)
    assert cookie
    with TestClient(platform.app, base_url=f"http://{site.app_token.lower()}.localhost",
                    cookies={"basedb_session": cookie, INDEX_COOKIE: cookie}) as other:
        # Not a page session: no page, no function call, no session answer.
        assert other.get(f"/sites/{site.app_token}/").status_code == 401
        call = other.post(f"/open-apis/base/v3/sites/{site.app_token}/functions/listTasks/"
                          "invoke", json={"params": {}}, headers=PAGE)
        assert call.status_code == 401, call.text
    with TestClient(platform.app, base_url="http://localhost",
                    cookies={INDEX_COOKIE: cookie}) as api_host:
        # Not a bearer token: the API refuses it.
        assert api_host.get("/open-apis/base/v3/users/me").status_code == 401
        # On the platform's origin it lists the sites, and only there.
        assert api_host.get("/").status_code == 200
