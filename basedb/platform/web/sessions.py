"""Page sign-in sessions: how a browser calls the platform as a signed-in user.

A page cannot hold a bearer token safely, so the sign-in page exchanges one (pasted from
`basedb auth token`) for a session: a random secret in an HttpOnly, SameSite=Strict
cookie scoped to the whole platform, stored here only as a SHA-256 hash, expiring after
`SESSION_SECONDS`. Endpoints that opt in (`Endpoint(page_session=True)`: the function
invoke endpoint and the session endpoints) accept the cookie instead of a bearer token,
but only together with the header `X-Basedb-Page: 1`: a cross-site form cannot add a
custom header, and a cross-site script that adds one must pass a CORS preflight the
platform never grants, so the cookie alone can never make a call (CSRF guard).
"""

from __future__ import annotations

import sqlite3
import time

from starlette.requests import HTTPConnection
from starlette.responses import Response

from basedb.core.protocol import ApiFailure, Code
from basedb.platform.domain.identity import User
from basedb.platform.storage import ids

COOKIE_NAME = "basedb_session"
PAGE_HEADER = "X-Basedb-Page"
SESSION_SECONDS = 7 * 24 * 3600


def open_session(conn: sqlite3.Connection, user: User) -> str:
    """A new session of `user`; returns the secret for the cookie (never stored)."""
    secret = ids.new_token()
    now = int(time.time())
    conn.execute("DELETE FROM page_sessions WHERE expires_at <= ?", (now,))
    conn.execute("INSERT INTO page_sessions (session_hash, user_id, created_at, expires_at) "
                 "VALUES (?, ?, ?, ?)", (ids.hash_token(secret), user.user_id,
                                         ids.now_text(), now + SESSION_SECONDS))
    return secret


def close_session(conn: sqlite3.Connection, secret: str) -> None:
    conn.execute("DELETE FROM page_sessions WHERE session_hash = ?", (ids.hash_token(secret),))


def user_for_session(conn: sqlite3.Connection, secret: str) -> User | None:
    row = conn.execute(
        "SELECT u.user_id, u.name, u.is_platform_owner FROM page_sessions s "
        "JOIN users u ON u.user_id = s.user_id WHERE s.session_hash = ? AND s.expires_at > ?",
        (ids.hash_token(secret), int(time.time()))).fetchone()
    return User(row[0], row[1], bool(row[2])) if row else None


def session_secret(connection: HTTPConnection) -> str | None:
    return connection.cookies.get(COOKIE_NAME) or None


def page_session_user(conn: sqlite3.Connection, connection: HTTPConnection) -> User | None:
    """The user of the request's sign-in cookie; None when it carries no cookie. A cookie
    without the page header, or of an expired session, is refused."""
    secret = session_secret(connection)
    if secret is None:
        return None
    if connection.headers.get(PAGE_HEADER) != "1":
        raise ApiFailure(
            Code.TOKEN_MISSING,
            f"The page sign-in cookie is accepted only with the header `{PAGE_HEADER}: 1`, "
            "which /_basedb/runtime.js sends. Fix: call functions through the runtime, or "
            "send `Authorization: Bearer <token>`. Executed: no. Retry: retry after fixing.",
            status=401)
    user = user_for_session(conn, secret)
    if user is None:
        raise ApiFailure(
            Code.TOKEN_INVALID,
            "The page session has expired or was signed out. Fix: reload the page and sign "
            "in again. Executed: no. Retry: retry after fixing.", status=401)
    return user


def set_session_cookie(response: Response, secret: str, *, secure: bool) -> None:
    response.set_cookie(COOKIE_NAME, secret, max_age=SESSION_SECONDS, path="/",
                        secure=secure, httponly=True, samesite="strict")


def clear_session_cookie(response: Response, *, secure: bool) -> None:
    response.delete_cookie(COOKIE_NAME, path="/", secure=secure, httponly=True,
                           samesite="strict")
