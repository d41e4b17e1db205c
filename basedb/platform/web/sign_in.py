"""Signing a browser in: the token is typed on the platform's origin only, and a site's
page origin receives a one-time code, never the token.

A site's page origin (`<app>.localhost`) serves files its author wrote, including
scripts and service workers, so nothing typed there is safe from the author. The flow:

    page origin     GET /sites/<app>/…            no session: a page (no form) that
                                                  moves on to /_basedb/session/start
                    GET /_basedb/session/start    sets a random `state` cookie, 303 to
    platform        GET /_basedb/sign-in          the sign-in form (the token is typed
                    POST /_basedb/sign-in         here), which answers a redirect URL
                                                  holding a code for (user, site, state)
    page origin     GET /_basedb/session/callback  redeems the code with the state
                                                  cookie: a session for this site only

A code lives `CODE_SECONDS`, is stored only as a hash, and is good once: redeeming
deletes it, whatever the outcome. It names one site (redeemed on another site's page
host it is refused) and one browser (the `state` cookie, HttpOnly, that the page origin
set before sending the browser to sign in: a code carried to another browser, or pushed
into this one by someone else, is refused). The page origin's sign-in paths live under
`/_basedb/`, outside `/sites/<app>/`: a service worker a site ships (`src/sw.js`,
served at `/sites/<app>/sw.js`) can claim a scope no wider than its own directory, since
the platform never sends `Service-Worker-Allowed`, so it neither sees these navigations
nor controls the pages they show.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from starlette.requests import HTTPConnection
from starlette.responses import Response

from basedb.platform.domain import sites
from basedb.platform.domain.identity import User
from basedb.platform.storage import ids
from basedb.protocol import ApiFailure, Code, permission_denied

CODE_SECONDS = 60
STATE_COOKIE = "basedb_sign_in_state"
STATE_SECONDS = 15 * 60  # time to type the token on the platform's sign-in page
START_PATH = "/_basedb/session/start"
CALLBACK_PATH = "/_basedb/session/callback"
SIGN_IN_PATH = "/_basedb/sign-in"


def issue_code(conn: sqlite3.Connection, user: User, app_token: str, state: str) -> str:
    """A new code that signs `user` in to the site `app_token` in the browser holding
    `state`; returns the code (only its hash is kept)."""
    code = ids.new_token()
    now = int(time.time())
    conn.execute("DELETE FROM sign_in_codes WHERE expires_at <= ?", (now,))
    conn.execute("INSERT INTO sign_in_codes (code_hash, user_id, app_token, state_hash, "
                 "expires_at) VALUES (?, ?, ?, ?, ?)",
                 (ids.hash_token(code), user.user_id, app_token, ids.hash_token(state),
                  now + CODE_SECONDS))
    return code


def redeem_code(conn: sqlite3.Connection, code: str, site_label: str,
                state: str | None) -> tuple[User, str]:
    """The user and site a code signs in, consuming it; refused unless it is live, was
    issued for the site of this page host, and for the browser holding `state`."""
    row = conn.execute(
        "DELETE FROM sign_in_codes WHERE code_hash = ? "
        "RETURNING user_id, app_token, state_hash, expires_at",
        (ids.hash_token(code),)).fetchone()
    if row is None or row[3] <= int(time.time()):
        raise ApiFailure(
            Code.TOKEN_INVALID,
            f"The sign-in code is unknown, used or expired (a code is good once, for "
            f"{CODE_SECONDS} seconds). Fix: open the page again and sign in. Executed: no. "
            "Retry: retry after fixing.", status=401)
    user_id, app_token, state_hash, _ = row
    if app_token.lower() != site_label or state is None or \
            ids.hash_token(state) != state_hash:
        raise permission_denied(
            "The sign-in code was issued for another site's pages or another browser",
            "open the page you want in this browser and sign in from there")
    found = conn.execute("SELECT user_id, name, is_platform_owner FROM users "
                         "WHERE user_id = ?", (user_id,)).fetchone()
    if found is None or sites.role_of(conn, app_token, user_id) is None:
        raise permission_denied("The signed-in user is no longer a member of this site",
                                "ask the site's owner to add you again")
    return User(found[0], found[1], bool(found[2])), app_token


def new_state() -> str:
    return ids.new_token()


def state_of(connection: HTTPConnection) -> str | None:
    return connection.cookies.get(STATE_COOKIE) or None


def set_state_cookie(response: Response, state: str, *, secure: bool) -> None:
    # Lax, not Strict: the browser comes back from the platform's origin, another site
    # as far as cookies go, and must bring the state along on that top-level GET.
    response.set_cookie(STATE_COOKIE, state, max_age=STATE_SECONDS, path=CALLBACK_PATH,
                        secure=secure, httponly=True, samesite="lax")


def clear_state_cookie(response: Response, *, secure: bool) -> None:
    response.delete_cookie(STATE_COOKIE, path=CALLBACK_PATH, secure=secure, httponly=True,
                           samesite="lax")


def page_path(app_token: str, requested: Any) -> str:
    """Where on the page origin to land after signing in: `requested` when it is a
    path of this site's pages, else the site's production root."""
    root = f"/sites/{app_token}/"
    if isinstance(requested, str) and requested.startswith(root) and len(requested) <= 2048 \
            and not any(ch in requested for ch in "\\\r\n\t"):
        return requested
    return root
