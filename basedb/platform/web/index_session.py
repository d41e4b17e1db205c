"""The platform origin's own cookie: the sites a signed-in browser may open (`GET /`).

A browser signs in on the platform's origin (basedb.platform.web.sign_in) and carries a
session to one site's page origin; the platform's origin kept nothing, so its index
page, which lists the member's sites, answered 401 to that very browser. The sign-in
form now also leaves this cookie on the platform's origin. It is good for one thing,
reading the index:

- no API route accepts it (they take bearer tokens, and page sessions on page origins);
- it is HttpOnly, SameSite=Strict, and has no Domain, so page origins
  (`<app>.localhost`) never receive it;
- it is stored as a hash in page_sessions without a site, which every page-session
  lookup requires, so it opens no page and calls no function.
"""

from __future__ import annotations

import sqlite3
import time

from starlette.requests import HTTPConnection
from starlette.responses import Response

from basedb.platform.domain.identity import User
from basedb.platform.storage import ids
from basedb.platform.web.origins import request_host
from basedb.platform.web.sessions import SESSION_SECONDS

INDEX_COOKIE = "basedb_sites"


def open_index_session(conn: sqlite3.Connection, user: User) -> str:
    """A new index session of `user`; returns the secret for the cookie (never stored)."""
    secret = ids.new_token()
    conn.execute("INSERT INTO page_sessions (session_hash, user_id, app_token, created_at, "
                 "expires_at) VALUES (?, ?, NULL, ?, ?)",
                 (ids.hash_token(secret), user.user_id, ids.now_text(),
                  int(time.time()) + SESSION_SECONDS))
    return secret


def index_session_user(conn: sqlite3.Connection, connection: HTTPConnection) -> User | None:
    """The user of the request's index cookie, on the platform's own host; else None."""
    host = request_host(connection)
    secret = connection.cookies.get(INDEX_COOKIE)
    if not secret or host is None or host.site:
        return None
    row = conn.execute(
        "SELECT u.user_id, u.name, u.is_platform_owner FROM page_sessions s JOIN users u "
        "ON u.user_id = s.user_id WHERE s.session_hash = ? AND s.app_token IS NULL "
        "AND s.expires_at > ?", (ids.hash_token(secret), int(time.time()))).fetchone()
    return User(row[0], row[1], bool(row[2])) if row else None


def set_index_cookie(response: Response, secret: str, *, secure: bool) -> None:
    # No Domain attribute: the platform's host only, never a page host below it.
    response.set_cookie(INDEX_COOKIE, secret, max_age=SESSION_SECONDS, path="/",
                        secure=secure, httponly=True, samesite="strict")
