"""`basedb doctor` on Feishu/Lark profiles reports upstream's states (SKILL.md,
"认证与重新授权"): not_configured, token_missing, need_user_authorization,
app_scope_not_applied, missing_scopes. Lark's scope errors come from respx (the stand-in
has no scopes to withhold); lark-cli's states from the fake lark-cli."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from basedb.client.lark.accounts import secret_key
from basedb.client.lark.oauth import StoredToken, save_token
from basedb.client.lark.scopes import SITE_BUILDER
from basedb.client.profiles import LarkAccount, Profile, save_profile
from basedb.client.secrets import secret_store
from tests.cli.deploy_support import run
from tests.lark_support import install_fake_lark_cli

OPEN = "http://lark.test"
SECRET = "app-secret-value-123"
USER_TOKEN = "u-" + "U" * 40
REFRESH = "ur-" + "R" * 40


@pytest.fixture
def lark(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.setenv("BASEDB_LARK_OPEN_URL", OPEN)
    monkeypatch.setenv("BASEDB_LARK_ACCOUNTS_URL", OPEN)
    with respx.mock(base_url=OPEN, assert_all_called=False) as router:
        yield router


def doctor(profile: str) -> dict[str, Any]:
    result = run("doctor", "--json", "--profile", profile)
    assert result.exit_code in (0, 1), result.stderr
    for secret in (SECRET, USER_TOKEN, REFRESH, "t-" + "T" * 40):
        assert secret not in result.stdout + result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def lark_profile(name: str, identity: str, *, secret: bool = True) -> None:
    save_profile(Profile(name, OPEN, lark=LarkAccount(brand="feishu", identity=identity,
                                                      app_id="cli_app")))
    if secret:
        secret_store().set(secret_key(name), SECRET)


def stored_user(name: str, *, expires_in: float = 7200, refresh_in: float = 86400) -> None:
    now = int(time.time() * 1000)
    save_token(secret_store(), name, StoredToken(
        userOpenId="ou_ada", appId="cli_app", accessToken=USER_TOKEN, refreshToken=REFRESH,
        expiresAt=now + int(expires_in * 1000), refreshExpiresAt=now + int(refresh_in * 1000),
        scope="offline_access", grantedAt=now, userName="Ada"))


def token_check(doc: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in doc["checks"] if c["name"] == "token")


def test_not_configured_without_an_app_secret(lark: respx.MockRouter) -> None:
    lark_profile("bare", "bot", secret=False)
    doc = doctor("bare")
    assert doc["ok"] is False and doc["state"] == "not_configured"
    assert token_check(doc)["state"] == "not_configured"
    assert "LARK_APP_SECRET" in token_check(doc)["fix"]


def test_token_missing_before_anyone_signed_in(lark: respx.MockRouter) -> None:
    lark_profile("nobody", "user")
    doc = doctor("nobody")
    assert doc["state"] == "token_missing"
    assert "basedb auth login --brand feishu --as user --profile nobody" in \
        token_check(doc)["fix"]


def test_need_user_authorization_when_the_refresh_token_has_expired(
        lark: respx.MockRouter) -> None:
    lark_profile("stale", "user")
    stored_user("stale", expires_in=-10, refresh_in=3600)
    refresh = lark.post("/open-apis/authen/v2/oauth/token").respond(400, json={
        "code": 20037, "error": "invalid_grant", "error_description": "expired"})
    doc = doctor("stale")
    assert doc["state"] == "need_user_authorization" and refresh.call_count == 1
    form = dict(x.split("=", 1) for x in refresh.calls.last.request.content.decode().split("&"))
    assert form["grant_type"] == "refresh_token" and form["client_id"] == "cli_app"
    stored_user("gone", expires_in=-10, refresh_in=-10)
    lark_profile("gone", "user")
    assert doctor("gone")["state"] == "need_user_authorization"


def test_app_scope_not_applied_names_the_scope_and_the_console(
        lark: respx.MockRouter) -> None:
    lark_profile("ci", "bot")
    lark.post("/open-apis/auth/v3/tenant_access_token/internal").respond(json={
        "code": 0, "msg": "ok", "tenant_access_token": "t-" + "T" * 40, "expire": 7200})
    lark.get("/open-apis/base/v3/sites/list").respond(400, json={
        "code": 99991672, "msg": "Access denied", "error": {
            "log_id": "L1", "permission_violations": [{"subject": "base:app:read"}]}})
    doc = doctor("ci")
    sites = next(c for c in doc["checks"] if c["name"] == "sites")
    assert doc["state"] == "app_scope_not_applied" and sites["state"] == doc["state"]
    assert "base:app:read" in sites["detail"]
    assert "/page/scope-apply?clientID=cli_app&scopes=base%3Aapp%3Aread" in sites["fix"]


def test_doctor_names_every_inferred_path_that_answered_404(
        lark: respx.MockRouter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lark's gateway answers an unknown path with a plain-text 404: doctor names each
    inferred path that did, and the fix is the endpoints file, which then makes it work."""
    lark_profile("ci", "bot")
    lark.post("/open-apis/auth/v3/tenant_access_token/internal").respond(json={
        "code": 0, "msg": "ok", "tenant_access_token": "t-" + "T" * 40, "expire": 7200})
    lark.get("/open-apis/base/v3/sites/list").respond(json={
        "code": 0, "data": {"sites": [], "hasMore": False}})
    lark.get("/open-apis/base/v3/sites/app1/catalog").respond(json={
        "code": 0, "data": {"tables": []}})
    lark.get("/open-apis/base/v3/sites/app1/releases").respond(json={
        "code": 0, "data": {"deployments": []}})
    lark.route(method="GET", path__regex=r"/open-apis/base/v3/sites/app1/.*").respond(
        404, text="404 page not found", headers={"Content-Type": "text/plain"})
    site = tmp_path / "site"
    site.mkdir()
    (site / "base-database.jsonc").write_text('{"appToken": "app1", "profile": "ci"}')
    result = run("doctor", "--json", "-C", str(site))
    check = next(c for c in json.loads(result.stdout)["checks"] if c["name"] == "endpoints")
    assert check["status"] == "fail" and "$BASEDB_LARK_ENDPOINTS" in check["fix"]
    for name in ("draft_functions", "draft_hashes", "deployments", "secrets"):
        assert f"{name} (GET /sites/app1/" in check["detail"]
    table = tmp_path / "endpoints.json"
    table.write_text(json.dumps({"deployments": "/sites/{app}/releases"}))
    monkeypatch.setenv("BASEDB_LARK_ENDPOINTS", str(table))
    again = run("doctor", "--json", "-C", str(site))
    check = next(c for c in json.loads(again.stdout)["checks"] if c["name"] == "endpoints")
    assert "deployments" not in check["detail"] and "draft_hashes" in check["detail"]


def test_missing_scopes_of_a_signed_in_user(lark: respx.MockRouter) -> None:
    lark_profile("me", "user")
    stored_user("me")
    lark.get("/open-apis/authen/v1/user_info").respond(json={
        "code": 0, "data": {"open_id": "ou_ada", "name": "Ada"}})
    lark.get("/open-apis/base/v3/sites/list").respond(400, json={
        "code": 99991679, "msg": "user has not granted", "error": {
            "permission_violations": [{"subject": "base:app:create"}]}})
    doc = doctor("me")
    assert doc["state"] == "missing_scopes"
    assert token_check(doc)["status"] == "ok" and "Ada" in token_check(doc)["detail"]
    sites = next(c for c in doc["checks"] if c["name"] == "sites")
    # Every scope the sign-in lacks, at once: the refused one first, then the rest of the
    # site-builder set the stored sign-in (offline_access only) was not granted.
    wanted = sites["fix"].split('--scope "')[1].rstrip('"').split()
    assert wanted[0] == "base:app:create" and len(wanted) == len(set(wanted))
    assert set(wanted) == set(SITE_BUILDER)


@pytest.mark.parametrize(("state", "env"), [
    ("not_configured", {"FAKE_LARK_STATE": "not_configured"}),
    ("token_missing", {"FAKE_LARK_STATE": "no_user"}),
])
def test_lark_cli_states(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state: str,
                         env: dict[str, str]) -> None:
    install_fake_lark_cli(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LARK_PROFILES", "work")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    save_profile(Profile("via", OPEN, lark=LarkAccount(
        brand="feishu", identity="user", via="lark-cli", lark_profile="work")))
    doc = doctor("via")
    assert doc["state"] == state and token_check(doc)["state"] == state
    assert "lark-cli auth login --profile work" in token_check(doc)["fix"]


def test_a_lark_cli_profile_lark_cli_does_not_know(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """lark-cli's `profile "X" not found` is a setup to fix with `config init --name X`,
    naming the profiles it has, not a sign-in that `auth login` (which fails the same
    way) would fix."""
    install_fake_lark_cli(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LARK_PROFILES", "home,team")
    save_profile(Profile("via", OPEN, lark=LarkAccount(
        brand="feishu", identity="user", via="lark-cli", lark_profile="work")))
    doc = doctor("via")
    check = token_check(doc)
    assert doc["state"] == "not_configured"
    assert "no profile 'work'" in check["detail"] and "home, team" in check["detail"]
    assert check["fix"].startswith("Create it with `lark-cli config init --name work`")


def test_an_expired_refresh_token_mid_command_asks_for_a_new_sign_in(
        lark: respx.MockRouter) -> None:
    """The user token expires while a command runs: the platform rejects it, the refresh
    is refused (the refresh token expired), and the command says to sign in again."""
    lark_profile("me", "user")
    stored_user("me")
    lark.get("/open-apis/base/v3/sites/list").respond(401, json={
        "code": 99991677, "msg": "user access token expired"})
    lark.post("/open-apis/authen/v2/oauth/token").respond(400, json={
        "code": 20037, "error": "invalid_grant"})
    result = run("api", "GET", "/sites/list", "--profile", "me")
    assert result.exit_code == 3
    error = json.loads(result.stderr)["error"]
    assert error["type"] == "auth" and error["code"] == 99991677
    assert "basedb auth login --brand feishu --as user --profile me" in error["hint"]
    assert USER_TOKEN not in result.stderr
    assert secret_store().get("lark:me:user_token") is None, "a dead sign-in is forgotten"


def test_a_security_policy_refusal_keeps_the_token_and_shows_the_challenge(
        lark: respx.MockRouter) -> None:
    """21000 in the refresh answer: lark-cli keeps the token and shows the challenge URL
    (the refresh used to delete the sign-in as if it were dead)."""
    lark_profile("me", "user")
    stored_user("me", expires_in=60)  # due for a refresh
    before = secret_store().get("lark:me:user_token")
    lark.post("/open-apis/authen/v2/oauth/token").respond(400, json={
        "code": 21000, "error": "access_denied", "error_description": "challenge required",
        "challenge_url": "https://challenge.feishu.cn/c/abc", "cli_hint": ""})
    sites = lark.get("/open-apis/base/v3/sites/list")
    result = run("api", "GET", "/sites/list", "--profile", "me", "--json")
    assert result.exit_code == 3 and sites.call_count == 0
    error = json.loads(result.stderr)["error"]
    assert error["code"] == 21000 and "https://challenge.feishu.cn/c/abc" in error["hint"]
    assert secret_store().get("lark:me:user_token") == before, "the sign-in is kept"


def test_a_policy_refusal_of_a_call_is_shown_with_its_challenge(
        lark: respx.MockRouter) -> None:
    lark_profile("me", "user")
    stored_user("me")
    lark.get("/open-apis/base/v3/sites/list").respond(400, json={
        "code": 21001, "msg": "denied by policy", "data": {
            "challenge_url": "http://not-https.example/c", "cli_hint": "ask IT"}})
    result = run("sites", "list", "--profile", "me", "--json")
    error = json.loads(result.stderr)["error"]
    assert result.exit_code == 3 and error["code"] == 21001
    assert "denied by policy" in error["message"] and "ask IT" in error["hint"]
    assert "not-https" not in result.stderr, "only an https challenge URL is shown"
    assert secret_store().get("lark:me:user_token") is not None


def test_a_refreshed_token_is_used_and_stored(lark: respx.MockRouter) -> None:
    lark_profile("me", "user")
    stored_user("me", expires_in=60)  # inside the five minutes before expiry
    fresh = "u-" + "F" * 40
    lark.post("/open-apis/authen/v2/oauth/token").respond(json={
        "code": 0, "access_token": fresh, "expires_in": 7200,
        "refresh_token": "ur-" + "N" * 40, "refresh_token_expires_in": 604800,
        "scope": "offline_access"})
    sites = lark.get("/open-apis/base/v3/sites/list").mock(
        side_effect=lambda request: httpx.Response(200, json={
            "code": 0, "data": {"sites": [], "hasMore": False,
                                "auth": request.headers["Authorization"][-4:]}}))
    result = run("api", "GET", "/sites/list", "--profile", "me")
    assert result.exit_code == 0, result.stderr
    assert sites.calls.last.request.headers["Authorization"] == f"Bearer {fresh}"
    stored = json.loads(secret_store().get("lark:me:user_token") or "{}")
    assert stored["accessToken"] == fresh and stored["refreshToken"] == "ur-" + "N" * 40
