"""The Lark stand-in's auth endpoints (`basedb.platform.domain.lark_auth`), at the paths
lark-cli calls on Lark's open and accounts hosts, answering in Lark's own formats (flat
JSON, not the `{code, msg, data}` envelope):

    POST /open-apis/auth/v3/tenant_access_token/internal   {app_id, app_secret}
    POST /oauth/v1/device_authorization                    form; Basic app_id:app_secret
    POST /open-apis/authen/v2/oauth/token                  form; device_code or refresh_token
    GET  /oauth/v1/device/verify?user_code=                the page a user is sent to

and the platform's own, for the people and tests around it:

    POST /_basedb/lark/apps             {name} -> {app_id, app_secret} (platform owner)
    POST /_basedb/lark/device/approve   {user_code, approve?} as the signed-in user

Point a brand at this platform with BASEDB_LARK_OPEN_URL and BASEDB_LARK_ACCOUNTS_URL.
"""

from __future__ import annotations

import base64
import binascii
import html
import sqlite3
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, Response

from basedb.platform.domain import lark_auth
from basedb.platform.domain.bases import parse_name
from basedb.platform.domain.lark_auth import LarkAnswer, LarkRefusal
from basedb.platform.web.bodies import parse_json_body, read_body
from basedb.platform.web.http import Call, Endpoint
from basedb.platform.web.responses import json_response
from basedb.platform.web.routes.schemas import BOOLEAN, ID, INTEGER, NAME, STRING, obj
from basedb.protocol import Code, api_envelope, bad_request, permission_denied

FORM = "application/x-www-form-urlencoded"
BODY_LIMIT = 64 * 1024
TENANT_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
DEVICE_PATH = "/oauth/v1/device_authorization"
TOKEN_PATH = "/open-apis/authen/v2/oauth/token"
VERIFY_PATH = "/oauth/v1/device/verify"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def _client(call: Call) -> str:
    return call.request.client.host if call.request.client else "unknown"


def _respond(answer: LarkAnswer) -> Response:
    return json_response(answer.body, answer.status, answer.headers)


async def _in_transaction(call: Call,
                          work: Callable[[sqlite3.Connection], LarkAnswer]) -> Response:
    def run() -> LarkAnswer:
        try:
            with call.store.write() as conn:
                return work(conn)
        except LarkRefusal as refusal:
            return refusal.answer

    return _respond(await run_in_threadpool(run))


async def _form(call: Call) -> dict[str, str]:
    """A form body (JSON is accepted too, as Lark's v2 token endpoint does)."""
    raw = await read_body(call.request, BODY_LIMIT)
    if call.request.headers.get("content-type", "").startswith("application/json"):
        body = parse_json_body(raw)
        if not isinstance(body, dict):
            raise bad_request("The body must be an object", parameter="/", received=body,
                              fix="send the form fields as a JSON object or a form")
        return {k: v for k, v in body.items() if isinstance(v, str)}
    try:
        return dict(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
    except UnicodeDecodeError:
        raise bad_request("The form is not UTF-8 text", parameter="/",
                          fix="send a UTF-8 form body") from None


def _basic(call: Call) -> tuple[str, str]:
    scheme, _, value = call.request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return "", ""
    try:
        user, _, password = base64.b64decode(value.strip(), validate=True).decode(
            "utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return "", ""
    return user, password


async def tenant_token(call: Call) -> Response:
    body = call.body
    if not isinstance(body, dict):
        return _respond(LarkAnswer(400, api_envelope(Code.AUTH_PARAM_INVALID,
                                                     "the body must be {app_id, app_secret}")))
    client = _client(call)
    return await _in_transaction(call, lambda conn: lark_auth.tenant_token(
        conn, body.get("app_id"), body.get("app_secret"), client))


async def device_authorization(call: Call) -> Response:
    form = await _form(call)
    app_id, secret = _basic(call)
    if form.get("client_id") not in (None, app_id):
        return _respond(LarkAnswer(401, {"error": "invalid_client",
                                         "error_description": "client_id is not the app "
                                         "of the Basic credentials"}))
    verify = f"{call.request.url.scheme}://{call.request.url.netloc}{VERIFY_PATH}"
    client = _client(call)
    return await _in_transaction(call, lambda conn: lark_auth.start_device_grant(
        conn, app_id, secret, form.get("scope", ""), client, verify))


async def oauth_token(call: Call) -> Response:
    form = await _form(call)
    client = _client(call)
    grant = form.get("grant_type")
    if grant == DEVICE_GRANT:
        return await _in_transaction(call, lambda conn: lark_auth.poll_device_grant(
            conn, form, client))
    if grant == "refresh_token":
        return await _in_transaction(call, lambda conn: lark_auth.refresh_user_token(
            conn, form, client))
    return _respond(LarkAnswer(400, {"error": "unsupported_grant_type",
                                     "error_description": "grant_type must be "
                                     f"{DEVICE_GRANT} or refresh_token"}))


def verify_page(call: Call) -> Response:
    code = html.escape(str(call.query.get("user_code", ""))[:16])
    approve = f"{call.request.url.scheme}://{call.request.url.netloc}/_basedb/lark/device/approve"
    page = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Sign in to basedb's Lark stand-in</title></head><body>
<h1>Approve a sign-in</h1>
<p>A command is waiting for the sign-in with code <strong>{code or "(none)"}</strong>.</p>
<p>This is basedb's local stand-in for Lark. Approve the sign-in as a user of this platform:</p>
<pre>curl -X POST {html.escape(approve)} \\
  -H "Authorization: Bearer $(basedb auth token)" \\
  -H "Content-Type: application/json" -d '{{"user_code": "{code}"}}'</pre>
</body></html>"""
    return HTMLResponse(page, headers={"Cache-Control": "no-store"})


def approve_device(call: Call) -> dict[str, Any]:
    body = call.body_object({"user_code", "approve"})
    approve = body.get("approve", True)
    if not isinstance(approve, bool):
        raise bad_request("approve must be true or false", parameter="/approve",
                          received=approve, fix="send true to approve, false to deny")
    try:
        with call.store.write() as conn:
            decided = lark_auth.decide_device_grant(conn, call.caller, body.get("user_code"),
                                                    approve)
    except LarkRefusal as refusal:
        decided = refusal.answer
    if isinstance(decided, LarkAnswer):
        # Lark's OAuth refusal in the envelope: no pending grant has the code (404), a bot
        # cannot sign in (403), too many wrong codes (429).
        raise bad_request(str(decided.body.get("error_description")),
                          parameter="/user_code", received=body.get("user_code"),
                          fix="use the code the waiting command printed, before it "
                          "expires, as the user signing in",
                          status=404 if decided.status == 400 else decided.status) from None
    return decided.to_dict()


def create_app(call: Call) -> dict[str, Any]:
    if not call.caller.is_platform_owner:
        raise permission_denied("Only the platform owner registers apps",
                                "ask the platform owner (who holds owner.token)")
    name = parse_name(call.body_object({"name"}).get("name"), "/name", "app")
    with call.store.write() as conn:
        app = lark_auth.register_app(conn, name)
    return app.to_dict()


_RAW = "Lark's own JSON (not the envelope)."
_AUTH_V3_ERROR = obj({"code": INTEGER, "msg": STRING, "error": STRING, "error_description": STRING},
                     ("code", "msg"))
_OAUTH_ERROR = obj({"error": STRING, "error_description": STRING, "code": INTEGER, "msg": STRING},
                   ("error",))

ENDPOINTS = [
    Endpoint("POST", TENANT_PATH, tenant_token, "A tenant access token for app credentials.",
             "lark", auth=False, absolute=True,
             body=obj({"app_id": ID, "app_secret": ID}, ("app_id", "app_secret")),
             response_media_type="application/json", error_schema=_AUTH_V3_ERROR,
             description="Answers `{code, msg, tenant_access_token, expire}`. " + _RAW +
             " Failed secrets are throttled per app and client.",
             errors=(429,)),
    Endpoint("POST", DEVICE_PATH, device_authorization, "Start an OAuth device sign-in.",
             "lark", auth=False, absolute=True, body_media_type=FORM, body={},
             response_media_type="application/json", error_schema=_OAUTH_ERROR,
             description="Basic auth with app id and secret; form `client_id`, `scope`. "
             "Answers `{device_code, user_code, verification_uri, "
             "verification_uri_complete, expires_in, interval}`. " + _RAW,
             errors=(401, 429)),
    Endpoint("POST", TOKEN_PATH, oauth_token, "Poll a device sign-in, or refresh a user token.",
             "lark", auth=False, absolute=True, body_media_type=FORM,
             body=obj({"grant_type": {"type": "string", "enum": [DEVICE_GRANT, "refresh_token"]},
                       "client_id": STRING, "client_secret": STRING, "device_code": STRING,
                       "refresh_token": STRING}, ("grant_type",), additional=True),
             response_media_type="application/json", error_schema=_OAUTH_ERROR,
             description="Form `grant_type` (device_code or refresh_token), `client_id`, "
             "`client_secret`, and `device_code` or `refresh_token`. Answers `{access_token, "
             "expires_in, refresh_token, refresh_token_expires_in, scope}` or an OAuth "
             "`{error, error_description}`. A refresh token works once. " + _RAW,
             errors=(401, 429)),
    Endpoint("GET", VERIFY_PATH, verify_page, "The page a signing-in user is sent to.", "lark",
             auth=False, absolute=True, response_media_type="text/html"),
    Endpoint("POST", "/_basedb/lark/device/approve", approve_device,
             "Approve (or deny) a pending device sign-in as the calling user.", "lark",
             absolute=True, body=obj({"user_code": ID, "approve": BOOLEAN},
                                     ("user_code",)),
             response=obj({"app_id": STRING, "approved": BOOLEAN}, ("app_id", "approved")),
             errors=(403, 404, 429)),
    Endpoint("POST", "/_basedb/lark/apps", create_app,
             "Register an app: its id, secret and bot (platform owner only).", "lark",
             absolute=True, body=obj({"name": NAME}, ("name",)),
             description="The secret is shown once; only its hash is kept.",
             response=obj({"app_id": STRING, "app_secret": STRING, "name": STRING,
                           "bot_user_id": STRING}, ("app_id", "app_secret")),
             errors=(403,)),
]
