"""The Lark stand-in's sign-in endpoints answer as lark-cli expects Lark to (its
`internal/auth/` and `internal/credential/` read these fields): tenant tokens, the device
flow's every answer, refresh, user_info, and app registration by the owner only."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from basedb.platform import LocalPlatform
from basedb.platform.domain import lark_auth
from basedb.protocol import Code
from tests.platform.conftest import Api

DEVICE = "/oauth/v1/device_authorization"
TOKEN = "/open-apis/authen/v2/oauth/token"
GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def register(api: Api) -> tuple[str, str]:
    data = api.client.post("/_basedb/lark/apps", json={"name": "Builder"},
                           headers={"Authorization": f"Bearer {api.token}"}).json()["data"]
    assert data["app_id"].startswith("cli_") and data["bot_user_id"].startswith("ou_")
    return data["app_id"], data["app_secret"]


def test_apps_are_registered_by_the_platform_owner_only(api: Api) -> None:
    register(api)
    other = api.ok("POST", "/users", json={"name": "Eve"})["token"]
    refused = api.client.post("/_basedb/lark/apps", json={"name": "Mine"},
                              headers={"Authorization": f"Bearer {other}"}).json()
    assert refused["code"] == 99991672


def test_tenant_tokens(api: Api, client: TestClient) -> None:
    app_id, secret = register(api)
    answer = client.post("/open-apis/auth/v3/tenant_access_token/internal",
                         json={"app_id": app_id, "app_secret": secret}).json()
    assert answer["code"] == 0 and answer["expire"] == lark_auth.TENANT_SECONDS
    token = answer["tenant_access_token"]
    assert token.startswith("t-")
    bot = api.as_user(token)
    site = bot.ok("POST", "/sites/create", json={"title": "Made by a bot"})
    assert [s["appToken"] for s in bot.ok("GET", "/sites/list")["sites"]] == [site["appToken"]]
    unknown = client.post("/open-apis/auth/v3/tenant_access_token/internal",
                          json={"app_id": "cli_nope", "app_secret": "x"}).json()
    assert unknown["code"] == Code.AUTH_PARAM_INVALID
    missing = client.post("/open-apis/auth/v3/tenant_access_token/internal", json={}).json()
    assert missing["code"] == Code.AUTH_PARAM_INVALID


def approve(client: TestClient, token: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = client.post("/_basedb/lark/device/approve", json=body,
                         headers={"Authorization": f"Bearer {token}"}).json()
    assert answer["code"] == 0, answer
    data: dict[str, Any] = answer["data"]
    return data


def poll(client: TestClient, app_id: str, secret: str, code: str) -> dict[str, Any]:
    answer: dict[str, Any] = client.post(TOKEN, data={
        "grant_type": GRANT, "device_code": code, "client_id": app_id,
        "client_secret": secret}).json()
    return answer


def test_the_device_flow_answers_every_state(api: Api, client: TestClient,
                                             platform: LocalPlatform) -> None:
    app_id, secret = register(api)
    started = client.post(DEVICE, auth=(app_id, secret),
                          data={"client_id": app_id, "scope": "base:app:read"}).json()
    assert set(started) == {"device_code", "user_code", "verification_uri",
                            "verification_uri_complete", "expires_in", "interval"}
    assert started["verification_uri"].endswith("/oauth/v1/device/verify")
    assert started["verification_uri_complete"].endswith(f"?user_code={started['user_code']}")
    assert poll(client, app_id, secret, started["device_code"])["error"] == \
        "authorization_pending"
    assert poll(client, app_id, secret, started["device_code"])["error"] == "slow_down"
    page = client.get("/oauth/v1/device/verify", params={"user_code": started["user_code"]})
    assert started["user_code"] in page.text
    user = api.ok("POST", "/users", json={"name": "Ada"})
    approved = approve(client, user["token"], {"user_code": started["user_code"]})
    assert approved == {"app_id": app_id, "approved": True}
    with platform.store.write() as conn:  # the interval has passed
        conn.execute("UPDATE lark_device_grants SET last_poll = 0")
    tokens = poll(client, app_id, secret, started["device_code"])
    assert tokens["access_token"].startswith("u-") and tokens["token_type"] == "Bearer"
    assert tokens["scope"] == "base:app:read" and "refresh_token" not in tokens, \
        "no offline_access asked, no refresh token"
    info = client.get("/open-apis/authen/v1/user_info",
                      headers={"Authorization": f"Bearer {tokens['access_token']}"}).json()
    assert info["data"]["open_id"] == user["user_id"] and info["data"]["name"] == "Ada"
    assert poll(client, app_id, secret, started["device_code"])["error"] == "invalid_grant"


def test_denied_and_expired_sign_ins(api: Api, client: TestClient,
                                     platform: LocalPlatform) -> None:
    app_id, secret = register(api)
    denied = client.post(DEVICE, auth=(app_id, secret), data={"scope": ""}).json()
    user = api.ok("POST", "/users", json={"name": "Bo"})["token"]
    approve(client, user, {"user_code": denied["user_code"], "approve": False})
    assert poll(client, app_id, secret, denied["device_code"])["error"] == "access_denied"
    late = client.post(DEVICE, auth=(app_id, secret), data={}).json()
    with platform.store.write() as conn:
        conn.execute("UPDATE lark_device_grants SET expires_at = 0")
    assert poll(client, app_id, secret, late["device_code"])["error"] == "expired_token"
    wrong = client.post(TOKEN, data={"grant_type": "password"}).json()
    assert wrong["error"] == "unsupported_grant_type"
