"""Attacks on the Lark stand-in's sign-in endpoints (the platform's real app, in-process):
an outsider guessing app secrets and device codes, a curious member guessing user codes,
a thief replaying tokens after logout or a refresh token twice, a bot posing as a user,
huge bodies. The platform stays healthy throughout and never stores a secret in clear."""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform, open_platform
from basedb.platform.domain import lark_auth
from basedb.protocol import Code, RefreshCode

TENANT = "/open-apis/auth/v3/tenant_access_token/internal"
DEVICE = "/oauth/v1/device_authorization"
TOKEN = "/open-apis/authen/v2/oauth/token"
GRANT = "urn:ietf:params:oauth:grant-type:device_code"


@pytest.fixture
def platform(tmp_path: Path) -> Iterator[LocalPlatform]:
    found = open_platform(tmp_path / "data")
    yield found
    found.close()


@pytest.fixture
def http(platform: LocalPlatform) -> Iterator[TestClient]:
    with TestClient(platform.app, base_url="http://localhost") as client:
        yield client


def register(platform: LocalPlatform, name: str = "App") -> tuple[str, str]:
    with platform.store.write() as conn:
        app = lark_auth.register_app(conn, name)
    return app.app_id, app.app_secret


def member(http: TestClient, platform: LocalPlatform, name: str) -> str:
    answer = http.post("/open-apis/base/v3/users", json={"name": name},
                       headers={"Authorization": f"Bearer {platform.owner_token}"})
    token: str = answer.json()["data"]["token"]
    return token


def healthy(http: TestClient, platform: LocalPlatform) -> None:
    answer = http.get("/open-apis/base/v3/sites/list",
                      headers={"Authorization": f"Bearer {platform.owner_token}"})
    assert answer.status_code == 200 and answer.json()["code"] == 0


def start(http: TestClient, app_id: str, secret: str) -> dict[str, Any]:
    started: dict[str, Any] = http.post(DEVICE, auth=(app_id, secret), data={
        "client_id": app_id, "scope": "offline_access"}).json()
    return started


def poll(http: TestClient, app_id: str, secret: str, device_code: str) -> Any:
    return http.post(TOKEN, data={"grant_type": GRANT, "device_code": device_code,
                                  "client_id": app_id, "client_secret": secret})


def approve(http: TestClient, token: str, user_code: str) -> Any:
    return http.post("/_basedb/lark/device/approve", json={"user_code": user_code},
                     headers={"Authorization": f"Bearer {token}"})


def signed_in(http: TestClient, platform: LocalPlatform) -> tuple[str, str, dict[str, Any]]:
    app_id, secret = register(platform)
    started = start(http, app_id, secret)
    assert approve(http, member(http, platform, "Ada"), started["user_code"]).status_code == 200
    answer = poll(http, app_id, secret, started["device_code"]).json()
    assert answer["access_token"].startswith("u-") and answer["refresh_token"].startswith("ur-")
    return app_id, secret, answer


def test_brute_forcing_an_app_secret_is_throttled(http: TestClient,
                                                  platform: LocalPlatform) -> None:
    app_id, secret = register(platform)
    other_id, other_secret = register(platform, "Other")
    for _ in range(lark_auth.MAX_FAILURES):
        wrong = http.post(TENANT, json={"app_id": app_id,
                                        "app_secret": secrets.token_urlsafe(24)})
        assert wrong.json()["code"] == Code.APP_SECRET_INVALID
        healthy(http, platform)
    locked = http.post(TENANT, json={"app_id": app_id, "app_secret": secret})
    assert locked.status_code == 429 and locked.json()["code"] == 99991400
    assert 0 < int(locked.headers["x-ogw-ratelimit-reset"]) <= lark_auth.WINDOW_SECONDS
    assert "tenant_access_token" not in locked.json(), "not even the right secret, for now"
    # The device endpoint shares the lock; another app is not affected.
    assert http.post(DEVICE, auth=(app_id, secret)).status_code == 429
    assert http.post(TENANT, json={"app_id": other_id, "app_secret": other_secret}).json()[
        "code"] == 0
    healthy(http, platform)


def test_the_lock_lifts_when_the_window_ends(platform: LocalPlatform) -> None:
    app_id, secret = register(platform)
    with platform.store.write() as conn:
        for _ in range(lark_auth.MAX_FAILURES):
            lark_auth.tenant_token(conn, app_id, "wrong", "attacker", now=1000)
        with pytest.raises(lark_auth.LarkRefusal):
            lark_auth.tenant_token(conn, app_id, secret, "attacker", now=1001)
        later = lark_auth.tenant_token(conn, app_id, secret, "attacker",
                                       now=1000 + lark_auth.WINDOW_SECONDS)
    assert later.body["code"] == 0


def test_secrets_and_tokens_are_stored_only_as_hashes(http: TestClient,
                                                      platform: LocalPlatform) -> None:
    app_id, secret, answer = signed_in(http, platform)
    tenant = http.post(TENANT, json={"app_id": app_id, "app_secret": secret}).json()
    dump = "\n".join(sqlite3.connect(platform.store.path).iterdump())
    for value in (secret, answer["access_token"], answer["refresh_token"],
                  tenant["tenant_access_token"]):
        assert value not in dump


def test_guessing_device_codes_yields_nothing(http: TestClient,
                                              platform: LocalPlatform) -> None:
    app_id, secret = register(platform)
    real = start(http, app_id, secret)
    approve(http, member(http, platform, "Ada"), real["user_code"])
    answers = [poll(http, app_id, secret, secrets.token_urlsafe(32)) for _ in range(40)]
    assert not any("access_token" in a.json() for a in answers)
    assert {a.json()["error"] for a in answers[:lark_auth.MAX_FAILURES]} == {"invalid_grant"}
    assert all(a.status_code == 429 for a in answers[lark_auth.MAX_FAILURES:])
    healthy(http, platform)
    # A device code is long and random: 32 bytes, never a guessable sequence.
    assert len(real["device_code"]) >= 43


def test_guessing_user_codes_is_throttled_per_user(http: TestClient,
                                                   platform: LocalPlatform) -> None:
    app_id, secret = register(platform)
    victim = start(http, app_id, secret)
    curious = member(http, platform, "Curious")
    alphabet = lark_auth.USER_CODE_ALPHABET
    codes = [f"{''.join(secrets.choice(alphabet) for _ in range(4))}-XXXX" for _ in range(15)]
    answers = [approve(http, curious, code) for code in codes]
    assert all(a.json()["code"] == 9499 for a in answers)
    assert "frequency" in answers[-1].json()["msg"] or "Too many" in answers[-1].json()["msg"]
    # Even the right code is refused to this user for the rest of the window ...
    assert approve(http, curious, victim["user_code"]).json()["code"] == 9499
    # ... while the victim's own approval still works.
    assert approve(http, member(http, platform, "Victim"), victim["user_code"]).status_code == 200


def test_a_bot_cannot_approve_a_sign_in_or_read_user_info(http: TestClient,
                                                          platform: LocalPlatform) -> None:
    app_id, secret = register(platform)
    tenant = http.post(TENANT, json={"app_id": app_id, "app_secret": secret}).json()[
        "tenant_access_token"]
    started = start(http, app_id, secret)
    refused = approve(http, tenant, started["user_code"])
    assert refused.json()["code"] == 9499
    info = http.get("/open-apis/authen/v1/user_info",
                    headers={"Authorization": f"Bearer {tenant}"})
    assert info.json()["code"] == 99991663
    assert poll(http, app_id, secret, started["device_code"]).json()["error"] == \
        "authorization_pending"


def test_a_refresh_token_works_once_and_its_reuse_revokes_the_sign_in(
        http: TestClient, platform: LocalPlatform) -> None:
    app_id, secret, first = signed_in(http, platform)
    form = {"grant_type": "refresh_token", "client_id": app_id, "client_secret": secret}
    second = http.post(TOKEN, data={**form, "refresh_token": first["refresh_token"]}).json()
    assert second["access_token"] != first["access_token"]
    replay = http.post(TOKEN, data={**form, "refresh_token": first["refresh_token"]}).json()
    assert replay["code"] == RefreshCode.ALREADY_USED
    # The replay revoked everything the sign-in produced, the thief's and the user's.
    me = http.get("/open-apis/authen/v1/user_info",
                  headers={"Authorization": f"Bearer {second['access_token']}"})
    assert me.json()["code"] == 99991663
    revoked = http.post(TOKEN, data={**form, "refresh_token": second["refresh_token"]}).json()
    assert revoked["code"] == RefreshCode.REVOKED


def test_an_expired_token_replayed_is_refused(platform: LocalPlatform) -> None:
    app_id, secret = register(platform)
    with platform.store.write() as conn:
        answer = lark_auth.tenant_token(conn, app_id, secret, "c", now=1_000)
    from basedb.platform.domain.identity import authenticate
    from basedb.protocol import ApiFailure

    token = answer.body["tenant_access_token"]
    with platform.store.read() as conn:
        assert authenticate(conn, f"Bearer {token}", now=1_000 + 60).is_bot
        with pytest.raises(ApiFailure) as expired:
            authenticate(conn, f"Bearer {token}", now=1_000 + lark_auth.TENANT_SECONDS)
    assert expired.value.code == 99991663


def test_huge_and_hostile_sign_in_requests(http: TestClient, platform: LocalPlatform) -> None:
    app_id, secret = register(platform)
    huge = http.post(TOKEN, content=b"a=" + b"x" * (70 * 1024),
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert huge.status_code == 413
    many = http.post(DEVICE, auth=(app_id, secret),
                     data={"client_id": app_id, "scope": " ".join(["s"] * 500)})
    assert many.json()["error"] == "invalid_scope"
    mismatched = http.post(DEVICE, auth=(app_id, secret), data={"client_id": "cli_other"})
    assert mismatched.status_code == 401
    garbage = http.post(DEVICE, headers={"Authorization": "Basic !!!not-base64"})
    assert garbage.json()["error"] == "invalid_client"
    page = http.get("/oauth/v1/device/verify",
                    params={"user_code": "<script>alert(1)</script>"})
    assert "<script>" not in page.text and page.headers["content-type"].startswith("text/html")
    healthy(http, platform)
