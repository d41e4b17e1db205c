"""Page sign-in sessions: how a browser calls the platform as a signed-in user.

A page cannot hold a bearer token safely, so a browser signs in on the platform's own
origin and brings a one-time code to the page origin (basedb.platform.web.sign_in), which
exchanges it for a session: a random secret in an HttpOnly, SameSite=Strict cookie,
stored here only as a SHA-256 hash, expiring after `SESSION_SECONDS`.

A session belongs to one site. It is opened on that site's page host
(`<app>.localhost`, see `basedb.platform.web.origins`), whose cookie no other site's
pages ever see, and only for a member of the site; removing the member ends it.
Endpoints that opt in (`Endpoint(page_session=True)`: the function invoke endpoint and
the session endpoints) accept the cookie instead of a bearer token only when all of
these hold:

- the request is on the session's own page host, and names that site in its path;
- it carries the header `X-Basedb-Page: 1`, which a cross-site form cannot add and a
  cross-site script can add only after a CORS preflight the platform never grants;
- the browser says it comes from the page's own origin: `Sec-Fetch-Site: same-origin`
  and/or `Origin: <the page origin>` (at least one of the two, each that is sent
  must match), so neither another site's page nor a page of another origin on this
  machine can make the call.
"""

from __future__ import annotations

import sqlite3
import time

from starlette.requests import HTTPConnection
from starlette.responses import Response

from basedb.platform.domain.identity import User
from basedb.platform.storage import ids
from basedb.platform.web.origins import request_host
from basedb.protocol import ApiFailure, Code, permission_denied

COOKIE_NAME = "basedb_session"
PAGE_HEADER = "X-Basedb-Page"
SESSION_SECONDS = 7 * 24 * 3600


def open_session(conn: sqlite3.Connection, user: User, app_token: str) -> str:
    """A new session of `user` on the site `app_token`; returns the secret for the
    cookie (never stored)."""
    secret = ids.new_token()
    now = int(time.time())
    conn.execute("DELETE FROM page_sessions WHERE expires_at <= ?", (now,))
    conn.execute("INSERT INTO page_sessions (session_hash, user_id, app_token, created_at, "
                 "expires_at) VALUES (?, ?, ?, ?, ?)",
                 (ids.hash_token(secret), user.user_id, app_token, ids.now_text(),
                  now + SESSION_SECONDS))
    return secret


def close_session(conn: sqlite3.Connection, secret: str) -> None:
    conn.execute("DELETE FROM page_sessions WHERE session_hash = ?", (ids.hash_token(secret),))


def close_member_sessions(conn: sqlite3.Connection, app_token: str, user_id: str) -> int:
    """End every page session of `user_id` on the site (when they leave it)."""
    return conn.execute("DELETE FROM page_sessions WHERE app_token = ? AND user_id = ?",
                        (app_token, user_id)).rowcount


def session_of(conn: sqlite3.Connection, secret: str) -> tuple[User, str] | None:
    """The user and site of a live session."""
    row = conn.execute(
        "SELECT u.user_id, u.name, u.is_platform_owner, s.app_token FROM page_sessions s "
        "JOIN users u ON u.user_id = s.user_id WHERE s.session_hash = ? AND s.expires_at > ? "
        "AND s.app_token IS NOT NULL",  # (the platform origin's index sessions have none)
        (ids.hash_token(secret), int(time.time()))).fetchone()
    return (User(row[0], row[1], bool(row[2])), row[3]) if row else None


def session_secret(connection: HTTPConnection) -> str | None:
    return connection.cookies.get(COOKIE_NAME) or None


def page_session_user(conn: sqlite3.Connection, connection: HTTPConnection,
                      app_token: str | None) -> User | None:
    """The user of the request's sign-in cookie, for a call about the site `app_token`
    (None: the call names no site, e.g. GET /_basedb/session, which answers for the
    host's own site). None when the request carries no cookie; every other mismatch is
    refused."""
    secret = session_secret(connection)
    if secret is None:
        return None
    require_page_request(connection)
    found = session_of(conn, secret)
    if found is None:
        raise ApiFailure(
            Code.TOKEN_INVALID,
            "The page session has expired or was signed out. Fix: reload the page and sign "
            "in again. Executed: no. Retry: retry after fixing.", status=401)
    user, session_site = found
    host = request_host(connection)
    if host is None or host.site != session_site.lower() or (
            app_token is not None and app_token != session_site):
        raise permission_denied(
            "A page session calls only the site whose page signed it in, from that site's "
            "page origin", "call the functions of this page's own site, or use a bearer "
            "token")
    return user


def require_page_request(connection: HTTPConnection) -> None:
    """Refuse a cookie-carrying request that is not a same-origin call of a page: the
    page header, and the browser's Sec-Fetch-Site / Origin saying same-origin."""
    if connection.headers.get(PAGE_HEADER) != "1":
        raise ApiFailure(
            Code.TOKEN_MISSING,
            f"The page sign-in cookie is accepted only with the header `{PAGE_HEADER}: 1`, "
            "which /_basedb/runtime.js sends. Fix: call functions through the runtime, or "
            "send `Authorization: Bearer <token>`. Executed: no. Retry: retry after fixing.",
            status=401)
    if not is_same_origin(connection):
        raise permission_denied(
            "The page session is accepted only from the page's own origin (the browser's "
            "Origin and Sec-Fetch-Site headers say this call came from elsewhere)",
            "call through /_basedb/runtime.js from a page of this site")


def is_same_origin(connection: HTTPConnection) -> bool:
    """Whether the browser says the request comes from the origin it is sent to: at
    least one of Sec-Fetch-Site and Origin is present, and each present one agrees."""
    fetch_site = connection.headers.get("sec-fetch-site")
    origin = connection.headers.get("origin")
    if fetch_site is None and origin is None:
        return False
    if fetch_site is not None and fetch_site.strip().lower() != "same-origin":
        return False
    if origin is not None:
        host = request_host(connection)
        if host is None or origin.strip().lower() != host.origin(connection.url.scheme):
            return False
    return True


def set_session_cookie(response: Response, secret: str, *, secure: bool) -> None:
    # No Domain attribute: the cookie goes back to this page host only.
    response.set_cookie(COOKIE_NAME, secret, max_age=SESSION_SECONDS, path="/",
                        secure=secure, httponly=True, samesite="strict")


def clear_session_cookie(response: Response, *, secure: bool) -> None:
    response.delete_cookie(COOKIE_NAME, path="/", secure=secure, httponly=True,
                           samesite="strict")
