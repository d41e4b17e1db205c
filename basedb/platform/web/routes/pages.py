"""Pages: a deployment's static site at its baseAppUrl, the page runtime, and the
browser sign-in session. These routes live outside the API prefix.

A page needs a signed-in viewer (the session cookie, or a bearer token for tools such as
curl); without one the sign-in page is served in its place. Prod pages are open to every
site member, preview pages to owners and admins.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

from starlette.responses import HTMLResponse, RedirectResponse, Response

from basedb.core.protocol import ApiFailure, Code, bad_request
from basedb.platform.domain import identity, sites
from basedb.platform.domain.snapshots import deployment_id_for
from basedb.platform.web import pages, sessions
from basedb.platform.web.http import Call, Endpoint, envelope
from basedb.platform.web.routes.schemas import STRING, obj

RUNTIME_FILE = Path(__file__).resolve().parents[3] / "_data" / "runtime.js"
JAVASCRIPT = "text/javascript; charset=utf-8"
HTML = "text/html; charset=utf-8"
# A page route answers any file of the site, typed by its extension (pages.content_type).
SITE_FILE = "*/*"
_NO_STORE = {"Cache-Control": "no-store"}


# -------------------------------------------------------------------------- pages


def serve_preview_page(call: Call) -> Response:
    return _serve(call, "preview", call.path["path"])


def serve_prod_page(call: Call) -> Response:
    if call.path["path"] == "preview":
        return _redirect(call, "/")  # /sites/<app>/preview is the preview root
    return _serve(call, "prod", call.path["path"])


def _serve(call: Call, env: str, raw_path: str) -> Response:
    app_token = call.path["app_token"]
    with call.store.read() as conn:
        viewer = _viewer(call)
        if viewer is None:
            return HTMLResponse(pages.sign_in_page(), status_code=401, headers=_NO_STORE)
        site = sites.get_site(conn, app_token)
        if site is None:
            return _page(404, "No such site", f"There is no site {app_token} on this platform.")
        role = sites.role_of(conn, app_token, viewer.user_id)
        allowed = sites.MANAGER_ROLES if env == "preview" else sites.ROLES
        if role not in allowed:
            needed = "an owner or admin" if env == "preview" else "a member"
            return _page(403, "No access", f"You are signed in as {viewer.name}, who is not "
                         f"{needed} of {site.title}; this page needs that role. Ask the site's "
                         "owner to add you.")
        path = pages.safe_path(raw_path)
        if path is None:
            return _not_found()
        deployment_id = deployment_id_for(conn, app_token, env)
        if deployment_id is None:
            return _page(404, "Nothing deployed yet", _nothing_deployed(env))
        files = pages.site_files(conn, deployment_id, call.context.site_files)
    resolved = pages.resolve(files, path) if files is not None else None
    if resolved is None:
        return _not_found()
    if resolved.file is None:
        return _redirect(call, "/")
    return _file_response(call, resolved.file)


def serve_index(call: Call) -> Response:
    """`/`: the sites the viewer may open (the sign-in page for a browser that is not
    signed in)."""
    with call.store.read() as conn:
        viewer = _viewer(call)
        if viewer is None:
            return HTMLResponse(pages.sign_in_page(), status_code=401, headers=_NO_STORE)
        rows = [(site.app_token, site.title, role, role in sites.MANAGER_ROLES)
                for site, role in sites.sites_of_user(conn, viewer.user_id)]
    return HTMLResponse(pages.index_page(viewer.name, rows), headers=_NO_STORE)


def _viewer(call: Call) -> identity.User | None:
    """Who is looking: a bearer token if one is sent, else the session cookie (no page
    header needed: loading a page only reads the deployed files)."""
    conn = call.store.connection()
    authorization = call.request.headers.get("authorization")
    if authorization:
        return identity.authenticate(conn, authorization)
    secret = sessions.session_secret(call.request)
    return sessions.user_for_session(conn, secret) if secret else None


def _file_response(call: Call, file: pages.SiteFile) -> Response:
    etag = f'"{file.sha256}"'
    headers = {"ETag": etag, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
    if etag in _etags(call.request.headers.get("if-none-match", "")):
        return Response(status_code=304, headers=headers)
    return Response(file.data, media_type=file.content_type, headers=headers)


def _etags(header: str) -> set[str]:
    return {tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()}


def _redirect(call: Call, suffix: str) -> Response:
    url = call.request.url
    target = url.path + suffix.lstrip("/") if url.path.endswith("/") else url.path + suffix
    if url.query:
        target += "?" + url.query
    return RedirectResponse(target, status_code=307)


def _page(status: int, title: str, text: str) -> Response:
    return HTMLResponse(pages.message_page(title, [text]), status_code=status,
                        headers=_NO_STORE)


def _not_found() -> Response:
    return _page(404, "Page not found", "This deployment has no such page.")


def _nothing_deployed(env: str) -> str:
    if env == "prod":
        return ("The site has no production release yet. Deploy a preview with `basedb "
                "deploy`, then promote it with `basedb deploy --production --yes`.")
    return "The site has no preview yet. Deploy one with `basedb deploy`."


# ------------------------------------------------------------------------- runtime


@functools.lru_cache(maxsize=1)
def _runtime() -> tuple[bytes, str]:
    source = RUNTIME_FILE.read_bytes()
    return source, f'"{hashlib.sha256(source).hexdigest()}"'


def get_runtime(call: Call) -> Response:
    source, etag = _runtime()
    headers = {"ETag": etag, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
    if etag in _etags(call.request.headers.get("if-none-match", "")):
        return Response(status_code=304, headers=headers)
    return Response(source, media_type=JAVASCRIPT, headers=headers)


# ------------------------------------------------------------------------ sessions


def sign_in(call: Call) -> Response:
    # Only a script of a platform page can add this header (see basedb.platform.web.sessions),
    # so another site cannot sign a browser in under its own account.
    if call.request.headers.get(sessions.PAGE_HEADER) != "1":
        raise bad_request(f"Sign-in needs the header {sessions.PAGE_HEADER}: 1",
                          parameter=f"header {sessions.PAGE_HEADER}",
                          fix="sign in from the sign-in page a site page shows")
    token = call.body_object({"token"}).get("token")
    if not isinstance(token, str) or not token.strip():
        raise bad_request("token is missing", parameter="/token",
                          fix="paste the output of `basedb auth token`")
    with call.store.write() as conn:
        user = identity.user_for_token(conn, token.strip())
        if user is None:
            raise ApiFailure(Code.TOKEN_INVALID, "Invalid access token: it is unknown to this "
                             "platform. Fix: paste the output of `basedb auth token`. "
                             "Executed: no. Retry: retry after fixing.", status=401)
        secret = sessions.open_session(conn, user)
    response = envelope(_user(user))
    sessions.set_session_cookie(response, secret, secure=call.request.url.scheme == "https")
    return response


def get_session(call: Call) -> dict[str, Any]:
    return _user(call.caller)


def sign_out(call: Call) -> Response:
    secret = sessions.session_secret(call.request)
    if secret:
        with call.store.write() as conn:
            sessions.close_session(conn, secret)
    response = envelope({"signedOut": True})
    sessions.clear_session_cookie(response, secure=call.request.url.scheme == "https")
    return response


def _user(user: identity.User) -> dict[str, Any]:
    return {"userId": user.user_id, "name": user.name}


_USER = obj({"userId": STRING, "name": STRING}, ("userId", "name"))
_PAGE_DESCRIPTION = ("Serves src/<path> of the deployment's site.zip (index.html for a "
                     "directory). Needs the page session cookie or a bearer token; without "
                     "one, answers 401 with the sign-in page.")

ENDPOINTS = [
    Endpoint("GET", "/", serve_index, "The sites the viewer may open (an HTML page).",
             "pages", description="Links to each site's production pages and, for owners "
             "and admins, its preview. Needs the page session cookie or a bearer token; "
             "without one, answers 401 with the sign-in page.", auth=False, absolute=True,
             response_media_type=HTML, error_page_media_type=HTML),
    # The preview route comes first: the prod route's {path} would match preview/… too.
    Endpoint("GET", "/sites/{app_token}/preview/{path:path}", serve_preview_page,
             "A page of the site's latest preview (owners and admins).", "pages",
             description=_PAGE_DESCRIPTION, auth=False, absolute=True,
             response_media_type=SITE_FILE, error_page_media_type=HTML),
    Endpoint("GET", "/sites/{app_token}/{path:path}", serve_prod_page,
             "A page of the site's production release (members).", "pages",
             description=_PAGE_DESCRIPTION, auth=False, absolute=True,
             response_media_type=SITE_FILE, error_page_media_type=HTML),
    Endpoint("GET", "/_basedb/runtime.js", get_runtime,
             "The page runtime (an ES module): invokeDatabaseFunction, invokeMutation, "
             "invokeFaaS, callSiteAIFunction.", "pages", auth=False, absolute=True,
             response_media_type=JAVASCRIPT),
    Endpoint("POST", "/_basedb/session", sign_in, "Sign a browser in with a platform token.",
             "pages", description="Needs the header X-Basedb-Page: 1. Sets an HttpOnly, "
             "SameSite=Strict session cookie, which endpoints marked for pages accept "
             "together with that header.",
             auth=False, absolute=True, body=obj({"token": STRING}, ("token",)),
             response=_USER),
    Endpoint("GET", "/_basedb/session", get_session, "The signed-in user of the page.",
             "pages", absolute=True, page_session=True, response=_USER),
    Endpoint("DELETE", "/_basedb/session", sign_out, "Sign the browser out.", "pages",
             absolute=True, page_session=True,
             response=obj({"signedOut": {"type": "boolean"}}, ("signedOut",))),
]
