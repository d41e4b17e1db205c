"""Pages: a deployment's static site at its baseAppUrl, the page runtime, and the
browser sign-in session. These routes live outside the API prefix.

Each site's pages are served on the site's own page host (`<app>.localhost`, see
`basedb.platform.web.origins`) at `/sites/<appToken>/` (prod) and
`/sites/<appToken>/preview/`; the same paths on an API host redirect there. A page needs
a signed-in viewer (the site's session cookie, or a bearer token for tools such as
curl); without one a page that sends the browser to sign in on the platform's own
origin (basedb.platform.web.sign_in) is served in its place. Prod pages are open to
every site member, preview pages to owners and admins; to anyone else a site is not
there at all (the same page as for a site that does not exist).
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any
from urllib.parse import urlencode

from starlette.responses import HTMLResponse, RedirectResponse, Response

from basedb.core import page_sdk
from basedb.platform.domain import identity, sites
from basedb.platform.domain.snapshots import deployment_id_for
from basedb.platform.web import index_session, origins, pages, sessions, sign_in
from basedb.platform.web.gate import USER_ID_KEY
from basedb.platform.web.http import Call, Endpoint
from basedb.platform.web.responses import envelope
from basedb.platform.web.routes.schemas import STRING, obj

JAVASCRIPT = "text/javascript; charset=utf-8"
HTML = "text/html; charset=utf-8"
# A page route answers any file of the site, typed by its extension (pages.content_type).
SITE_FILE = "*/*"
NO_SUCH_SITE = ("This platform has no such site, or you are not one of its members. Ask "
                "the site's owner to add you, or check the address.")


# -------------------------------------------------------------------------- pages


def serve_preview_page(call: Call) -> Response:
    return _serve(call, "preview", call.path["path"])


def serve_prod_page(call: Call) -> Response:
    if call.path["path"] == "preview":
        return _redirect(call, "/")  # /sites/<app>/preview is the preview root
    return _serve(call, "prod", call.path["path"])


def _serve(call: Call, env: str, raw_path: str) -> Response:
    app_token = call.path["app_token"]
    host = origins.request_host(call.request)
    if not origins.has_page_host(app_token):
        return _page(404, "No such site", NO_SUCH_SITE)
    if host is None or host.kind == "api":
        return _to_page_host(call, app_token)
    if host.site != origins.site_label(app_token):
        return _page(404, "No such site", NO_SUCH_SITE)
    with call.store.read() as conn:
        viewer = _viewer(call, app_token)
        if viewer is None:
            return _signed_out(call)
        call.request.scope[USER_ID_KEY] = viewer.user_id  # for the access log
        site = sites.get_site(conn, app_token)
        role = sites.role_of(conn, app_token, viewer.user_id) if site else None
        if site is None or role is None:
            return _page(404, "No such site", NO_SUCH_SITE)
        if env == "preview" and role not in sites.MANAGER_ROLES:
            return _page(403, "No access", f"You are signed in as {viewer.name}, a member "
                         f"of {site.title}; its preview is open to owners and admins. Open "
                         "the production page instead, or ask the site's owner for the "
                         "admin role.")
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


def _signed_out(call: Call) -> Response:
    """No form here: the token is typed on the platform's origin only (a site's own
    scripts and service workers run on this one); this page moves on to it."""
    url = call.request.url
    here = url.path + ("?" + url.query if url.query else "")
    start = sign_in.START_PATH + "?" + urlencode({"next": here})
    return HTMLResponse(pages.signed_out_page(start), status_code=401,
                        headers=pages.platform_page_headers(script=pages.SIGNED_OUT_SCRIPT))


def _to_page_host(call: Call, app_token: str) -> Response:
    """A page URL on an API host (as printed before sites had origins of their own):
    the same path on the site's page host."""
    url = call.request.url
    target = origins.page_origin(app_token, base=origins.request_base(call.request)) + url.path
    if url.query:
        target += "?" + url.query
    return RedirectResponse(target, status_code=308)


def serve_index(call: Call) -> Response:
    """`/` on an API host: the sites the caller may open, each at its page URL. The
    caller is a bearer token, or the browser that signed in on this origin's form (its
    index cookie, basedb.platform.web.index_session); else the page says where to go."""
    authorization = call.request.headers.get("authorization")
    base = origins.request_base(call.request)
    with call.store.read() as conn:
        viewer = (identity.authenticate(conn, authorization) if authorization
                  else index_session.index_session_user(conn, call.request))
        if viewer is None:
            return _page(401, "Sign in on a site's page", "Open the page URL that basedb "
                         "serve or basedb deploy printed and sign in there; this page then "
                         "lists your sites. With a token, so does this page.")
        rows = [(site.app_token, site.title, role, role in sites.MANAGER_ROLES,
                 origins.page_url(site.app_token, "prod", base=base))
                for site, role in sites.sites_of_user(conn, viewer.user_id)]
    return HTMLResponse(pages.index_page(viewer.name, rows),
                        headers=pages.platform_page_headers())


def _viewer(call: Call, app_token: str) -> identity.User | None:
    """Who is looking: a bearer token if one is sent, else the site's session cookie (no
    page header needed: loading a page only reads the deployed files)."""
    conn = call.store.connection()
    authorization = call.request.headers.get("authorization")
    if authorization:
        return identity.authenticate(conn, authorization)
    secret = sessions.session_secret(call.request)
    found = sessions.session_of(conn, secret) if secret else None
    if found is None or found[1] != app_token:
        return None
    return found[0]


def _file_response(call: Call, file: pages.SiteFile) -> Response:
    """The file; an HTML page with the page SDK's import map (`basedb.core.page_sdk`),
    whose version is part of the page's ETag."""
    html = file.content_type.startswith("text/html")
    etag = f'"{file.sha256}-{page_sdk.IMPORT_MAP_DIGEST}"' if html else f'"{file.sha256}"'
    headers = {"ETag": etag, "Cache-Control": "no-cache", **pages.SITE_FILE_HEADERS}
    if etag in _etags(call.request.headers.get("if-none-match", "")):
        return Response(status_code=304, headers=headers)
    data = page_sdk.inject_import_map(file.data) if html else file.data
    return Response(data, media_type=file.content_type, headers=headers)


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
                        headers=pages.platform_page_headers())


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
    source = page_sdk.runtime_source()
    return source, f'"{hashlib.sha256(source).hexdigest()}"'


def get_runtime(call: Call) -> Response:
    source, etag = _runtime()
    headers = {"ETag": etag, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
    if etag in _etags(call.request.headers.get("if-none-match", "")):
        return Response(status_code=304, headers=headers)
    return Response(source, media_type=JAVASCRIPT, headers=headers)


# ------------------------------------------------------------------------ sessions


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
_PAGE_DESCRIPTION = ("On the site's page host (<app>.localhost, or <app>.<public host>): "
                     "serves src/<path> of the deployment's site.zip (index.html for a "
                     "directory). Needs the site's page session cookie or a bearer token; "
                     "without one, answers 401 with a page (no form) that sends the browser "
                     "to sign in on the platform's origin. On an API host, "
                     "redirects (308) to the same path on the site's page host.")
_MOVED = ("A redirect (Location): 308 on an API host to the same path on the site's page "
          "host; 307 from a directory's path to the path with a closing slash.")
_SESSION = ("On a site's page host only; needs the header X-Basedb-Page: 1 and a "
            "same-origin request (Sec-Fetch-Site / Origin).")

ENDPOINTS = [
    Endpoint("GET", "/", serve_index, "The sites the viewer may open (an HTML page).",
             "pages", description="Links to each site's production pages and, for owners "
             "and admins, its preview. Needs a bearer token, or the index cookie "
             "(`basedb_sites`) that signing in on the platform's form leaves on its origin; "
             "without either, answers 401 with a page that says where to sign in.",
             auth=False, absolute=True, response_media_type=HTML, error_page_media_type=HTML),
    # The preview route comes first: the prod route's {path} would match preview/… too.
    Endpoint("GET", "/sites/{app_token}/preview/{path:path}", serve_preview_page,
             "A page of the site's latest preview (owners and admins).", "pages",
             description=_PAGE_DESCRIPTION, auth=False, absolute=True, hosts="any",
             redirect=_MOVED, response_media_type=SITE_FILE, error_page_media_type=HTML,
             errors=(401, 403)),
    Endpoint("GET", "/sites/{app_token}/{path:path}", serve_prod_page,
             "A page of the site's production release (members).", "pages",
             description=_PAGE_DESCRIPTION, auth=False, absolute=True, hosts="any",
             redirect=_MOVED, response_media_type=SITE_FILE, error_page_media_type=HTML,
             errors=(401, 403)),
    Endpoint("GET", "/_basedb/runtime.js", get_runtime,
             "The page SDK (an ES module), which served HTML pages import as "
             "@lark-base-open/base-database-app-sdk/page or database-runtime through the "
             "import map in their <head>: startBaseApp, invokeDatabaseFunction, "
             "invokeMutation, invokeFaaS, callSiteAIFunction, invokeSiteAIFunctionStream, "
             "the media-task helpers and siteToken.", "pages", auth=False, absolute=True,
             hosts="any", response_media_type=JAVASCRIPT),
    Endpoint("GET", "/_basedb/session", get_session, "The signed-in user of the page.",
             "pages", description=_SESSION, absolute=True, hosts="page", page_session=True,
             response=_USER),
    Endpoint("DELETE", "/_basedb/session", sign_out, "Sign the browser out.", "pages",
             description=_SESSION, absolute=True, hosts="page", page_session=True,
             response=obj({"signedOut": {"type": "boolean"}}, ("signedOut",))),
]
