"""Sign-in: the platform's form on its own origin, and the page origin's two steps
around it (basedb.platform.web.sign_in has the flow and why it is built so).

    page host   GET  /_basedb/session/start?next=        state cookie; 303 to the form
    API host    GET  /_basedb/sign-in?site=&state=&next=  the form (asks for the token)
    API host    POST /_basedb/sign-in                     {token, site, state, next} ->
                                                          {redirect}: the callback URL
    page host   GET  /_basedb/session/callback?code=&next=  redeems the code: a session
"""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.responses import HTMLResponse, RedirectResponse, Response

from basedb.platform.domain import identity, sites
from basedb.platform.web import index_session, origins, pages, sessions, sign_in
from basedb.platform.web.http import KIB, Call, Endpoint, QueryParam
from basedb.platform.web.responses import envelope
from basedb.platform.web.routes.pages import HTML, NO_SUCH_SITE
from basedb.platform.web.routes.schemas import STRING, obj
from basedb.protocol import ApiFailure, Code, bad_request, permission_denied

NEXT_LIMIT = 2048


# ------------------------------------------------------------ on the platform's origin


def sign_in_form(call: Call) -> Response:
    label = (call.query.get("site") or "").lower()
    if not origins.has_page_host(label):
        return _message(404, "No such site", NO_SUCH_SITE)
    page_origin = origins.page_origin(label, base=origins.request_base(call.request))
    if not call.query.get("state"):
        # Entered here directly: the page origin starts the flow (and sets its state).
        return RedirectResponse(page_origin + sign_in.START_PATH + "?" + urlencode(
            {"next": _next(call)}), status_code=303)
    return HTMLResponse(pages.sign_in_page(page_origin),
                        headers=pages.platform_page_headers(script=pages.SIGN_IN_SCRIPT))


def submit_sign_in(call: Call) -> Response:
    # Only this origin's own script can send this request (the page header and the
    # browser's Origin / Sec-Fetch-Site): no site's page can post a token here.
    sessions.require_page_request(call.request)
    body = call.body_object({"token", "site", "state", "next"})
    token, label, state = (body.get(name) for name in ("token", "site", "state"))
    if not isinstance(token, str) or not token.strip():
        raise bad_request("token is missing", parameter="/token",
                          fix="paste the output of `basedb auth token`")
    if not isinstance(state, str) or not state:
        raise bad_request("state is missing", parameter="/state",
                          fix="open the site's page and sign in from there")
    with call.store.write() as conn:
        user = identity.user_for_token(conn, token.strip())
        if user is None:
            raise ApiFailure(Code.TOKEN_INVALID, "Invalid access token: it is unknown to this "
                             "platform. Fix: paste the output of `basedb auth token`. "
                             "Executed: no. Retry: retry after fixing.", status=401)
        site = sites.site_for_label(conn, label) if isinstance(label, str) and label else None
        if site is None or sites.role_of(conn, site.app_token, user.user_id) is None:
            raise permission_denied(f"User {user.user_id} cannot sign in here: "
                                    f"{NO_SUCH_SITE}", "sign in with the token of a member")
        code = sign_in.issue_code(conn, user, site.app_token, state)
        index = index_session.open_index_session(conn, user)
    page_origin = origins.page_origin(site.app_token, base=origins.request_base(call.request))
    query = urlencode({"code": code, "next": sign_in.page_path(site.app_token, body.get("next"))})
    answer = envelope({"redirect": f"{page_origin}{sign_in.CALLBACK_PATH}?{query}",
                       "userId": user.user_id, "name": user.name})
    # The platform's own `/` then lists this browser's sites (index_session).
    index_session.set_index_cookie(answer, index, secure=_secure(call))
    return answer


# ------------------------------------------------------------ on a site's page origin


def start_sign_in(call: Call) -> Response:
    host = origins.request_host(call.request)
    label = host.site if host is not None and host.site else ""
    state = sign_in.new_state()
    target = origins.platform_origin(call.request) + sign_in.SIGN_IN_PATH + "?" + urlencode(
        {"site": label, "state": state, "next": _next(call)})
    response = RedirectResponse(target, status_code=303,
                                headers={"Cache-Control": "no-store",
                                         "Referrer-Policy": "no-referrer"})
    sign_in.set_state_cookie(response, state, secure=_secure(call))
    return response


def finish_sign_in(call: Call) -> Response:
    host = origins.request_host(call.request)
    label = host.site if host is not None and host.site else ""
    refused: ApiFailure | None = None
    with call.store.write() as conn:
        # Caught inside the transaction: a refused code is spent all the same.
        try:
            user, app_token = sign_in.redeem_code(conn, call.query.get("code") or "", label,
                                                  sign_in.state_of(call.request))
        except ApiFailure as failure:
            refused = failure
        else:
            secret = sessions.open_session(conn, user, app_token)
    if refused is not None:
        response = _message(refused.status, "Sign-in failed", refused.msg)
    else:
        response = HTMLResponse(pages.signed_in_page(sign_in.page_path(app_token, _next(call))),
                                headers=pages.platform_page_headers(
                                    script=pages.SIGNED_IN_SCRIPT))
        sessions.set_session_cookie(response, secret, secure=_secure(call))
    sign_in.clear_state_cookie(response, secure=_secure(call))
    return response


def _message(status: int, title: str, text: str) -> Response:
    return HTMLResponse(pages.message_page(title, [text]), status_code=status,
                        headers=pages.platform_page_headers())


def _next(call: Call) -> str:
    asked = call.query.get("next") or ""
    return asked if len(asked) <= NEXT_LIMIT else ""


def _secure(call: Call) -> bool:
    return call.request.url.scheme == "https"


_NEXT = QueryParam("next", {"type": "string"},
                   "The page path to open after signing in (a path under /sites/<app>/; "
                   f"anything else, or a path over {NEXT_LIMIT} characters, opens the "
                   "site's production root).")
_SITE = QueryParam("site", {"type": "string"}, "The site's page host label (its app "
                   "token in lower case).", required=True)
_STATE = QueryParam("state", {"type": "string"}, "The page origin's sign-in state, passed "
                    "on by /_basedb/session/start; without it the request is sent there.")
_REDIRECT = obj({"redirect": STRING, "userId": STRING, "name": STRING},
                ("redirect", "userId", "name"))

ENDPOINTS = [
    Endpoint("GET", sign_in.SIGN_IN_PATH, sign_in_form,
             "The sign-in form (an HTML page), on the platform's origin only.", "pages",
             description="Asks for the platform token to open the pages of the site named "
             "by `site`. Without `state`, redirects (303) to the site's "
             "/_basedb/session/start.", auth=False, absolute=True, query=(_SITE, _STATE, _NEXT),
             redirect="303 to the site's page host, which starts the sign-in.",
             response_media_type=HTML, error_page_media_type=HTML),
    Endpoint("POST", sign_in.SIGN_IN_PATH, submit_sign_in,
             "Exchange a platform token for a one-time code for one site's pages.", "pages",
             description="From the sign-in form's script only (the header X-Basedb-Page: 1 "
             "and a same-origin request). The token's user must be a member of the site. "
             "Answers the page host's /_basedb/session/callback URL with a code good once, "
             f"for {sign_in.CODE_SECONDS} seconds, for this site and the browser holding "
             "the state.", auth=False, absolute=True,
             headers=(QueryParam(sessions.PAGE_HEADER, {"type": "string", "enum": ["1"]},
                                 "1: the call comes from a platform page's script.",
                                 required=True),),
             body=obj({"token": {"type": "string", "pattern": r"\S"}, "site": STRING,
                       "state": {"type": "string", "minLength": 1},
                       "next": {"type": "string", "maxLength": NEXT_LIMIT}},
                      ("token", "site", "state")),
             body_limit=16 * KIB, response=_REDIRECT, errors=(401, 403)),
    Endpoint("GET", sign_in.START_PATH, start_sign_in,
             "Start signing in to this page host's site: on to the platform's form.",
             "pages", description="Sets a short-lived HttpOnly state cookie for the callback "
             "and redirects (303) to the platform origin's /_basedb/sign-in.", auth=False,
             absolute=True, hosts="page", query=(_NEXT,),
             redirect="303 to the sign-in form on the platform's origin.",
             response_media_type=HTML),
    Endpoint("GET", sign_in.CALLBACK_PATH, finish_sign_in,
             "Redeem a sign-in code: a session for this page host's site.", "pages",
             description="The code must be live, unused, issued for this site and for the "
             "browser holding the state cookie; it is spent either way. Sets an HttpOnly, "
             "SameSite=Strict session cookie for this host, which endpoints marked for "
             "pages accept for this site only, and opens `next`.", auth=False,
             absolute=True, hosts="page",
             query=(QueryParam("code", {"type": "string"}, "The one-time sign-in code.",
                               required=True), _NEXT),
             response_media_type=HTML, error_page_media_type=HTML, errors=(401, 403)),
]
