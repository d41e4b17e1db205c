"""Signing a test browser in to a site's pages the way a browser does: the page host's
/_basedb/session/start, the platform's sign-in form posted on the platform's origin,
then the page host's callback with the one-time code."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import httpx
from starlette.testclient import TestClient

from basedb.platform.web.sessions import COOKIE_NAME

# What the sign-in form's and the runtime's same-origin fetches carry.
PAGE = {"X-Basedb-Page": "1", "Sec-Fetch-Site": "same-origin"}


def sign_in_redirect(tab: TestClient, token: str, *, next_path: str = "") -> str:
    """Start signing `tab` (a client on a site's page host) in and post `token` on the
    platform's form; returns the callback URL (with its code) the form would open."""
    answer = post_sign_in(tab, token, next_path=next_path)
    assert answer.json()["code"] == 0, answer.text
    return str(answer.json()["data"]["redirect"])


def post_sign_in(tab: TestClient, token: str, *, next_path: str = "",
                 **overrides: str) -> httpx.Response:
    """The platform's sign-in POST as the form sends it (fields may be overridden)."""
    start = tab.get("/_basedb/session/start", params={"next": next_path},
                    follow_redirects=False)
    assert start.status_code == 303, start.text
    form = urlsplit(start.headers["location"])
    asked = dict(parse_qsl(form.query))
    platform = f"{form.scheme}://{form.netloc}"
    return tab.post(platform + "/_basedb/sign-in", json={"token": token, **asked, **overrides},
                    headers=PAGE)


def sign_in(tab: TestClient, token: str, *, next_path: str = "") -> str:
    """Sign `tab` in; returns the session cookie's value."""
    done = tab.get(sign_in_redirect(tab, token, next_path=next_path), follow_redirects=False)
    assert done.status_code == 200 and COOKIE_NAME in done.cookies, done.text
    return str(done.cookies[COOKIE_NAME])
