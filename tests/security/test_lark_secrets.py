"""Lark secrets on the client: stored 0600 in 0700 directories (or in the OS keyring),
gone after logout so nothing is replayed, and never printed — not in --verbose traces,
errors or JSON — whatever path a command takes."""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import keyring.backend
import keyring.backends.fail
import pytest
import respx

from basedb.client.lark.accounts import secret_key
from basedb.client.lark.oauth import StoredToken, save_token
from basedb.client.profiles import LarkAccount, Profile, save_profile
from basedb.client.secrets import FileStore, KeyringStore, secret_store
from basedb.core.errors import InputError
from tests.cli.deploy_support import run

OPEN = "http://lark.test"
SECRET = "app-secret-value-0123456789"
ACCESS = "u-" + "A" * 40
REFRESH = "ur-" + "R" * 40
FRESH = "u-" + "F" * 40
NEW_REFRESH = "ur-" + "N" * 40
TENANT = "t-" + "T" * 40
EVERY_SECRET = (SECRET, ACCESS, REFRESH, FRESH, NEW_REFRESH, TENANT)


@pytest.fixture
def lark(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.setenv("BASEDB_LARK_OPEN_URL", OPEN)
    monkeypatch.setenv("BASEDB_LARK_ACCOUNTS_URL", OPEN)
    with respx.mock(base_url=OPEN, assert_all_called=False) as router:
        yield router


def signed_in_user(name: str = "me", *, expires_in: float = 60) -> None:
    save_profile(Profile(name, OPEN, lark=LarkAccount(brand="feishu", identity="user",
                                                      app_id="cli_app")))
    store = secret_store()
    store.set(secret_key(name), SECRET)
    now = int(time.time() * 1000)
    save_token(store, name, StoredToken(
        userOpenId="ou_ada", appId="cli_app", accessToken=ACCESS, refreshToken=REFRESH,
        expiresAt=now + int(expires_in * 1000), refreshExpiresAt=now + 86_400_000,
        scope="offline_access", grantedAt=now, userName="Ada"))


def no_secret_in(*texts: str) -> None:
    for text in texts:
        for value in EVERY_SECRET:
            assert value not in text


def test_stored_secrets_are_0600_in_0700_directories(isolated_dirs: dict[str, Path]) -> None:
    signed_in_user()
    files = list((isolated_dirs["config"] / "secrets").iterdir())
    assert len(files) == 2
    assert stat.S_IMODE((isolated_dirs["config"] / "secrets").stat().st_mode) == 0o700
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    config = (isolated_dirs["config"] / "config.json").read_text()
    no_secret_in(config)  # config.json names the app, never its secret


def test_verbose_refresh_and_json_output_never_show_a_secret(lark: respx.MockRouter) -> None:
    signed_in_user()
    lark.post("/open-apis/authen/v2/oauth/token").respond(json={
        "code": 0, "access_token": FRESH, "expires_in": 7200, "refresh_token": NEW_REFRESH,
        "refresh_token_expires_in": 604800, "scope": "offline_access"})
    lark.get("/open-apis/authen/v1/user_info").respond(json={
        "code": 0, "data": {"open_id": "ou_ada", "name": "Ada", "access_token": FRESH}})
    lark.get("/open-apis/base/v3/sites/list").respond(json={
        "code": 0, "data": {"sites": [], "hasMore": False}})
    result = run("auth", "status", "--verify", "--profile", "me", "--json", "--verbose")
    assert result.exit_code == 0, result.stderr
    assert "> POST http://lark.test/open-apis/authen/v2/oauth/token" in result.stderr
    assert "refresh_token=***" in result.stderr and "Bearer ***" in result.stderr
    no_secret_in(result.stdout, result.stderr)
    doctor = run("doctor", "--profile", "me", "--json", "--verbose")
    no_secret_in(doctor.stdout, doctor.stderr)
    api = run("api", "GET", "/sites/list", "--profile", "me", "--verbose")
    no_secret_in(api.stdout, api.stderr)


def test_errors_never_show_a_secret(lark: respx.MockRouter) -> None:
    signed_in_user(expires_in=-1)
    lark.post("/open-apis/authen/v2/oauth/token").respond(400, json={
        "code": 20026, "error": "invalid_grant",
        "error_description": f"refresh token {REFRESH} is invalid"})
    for args in (["api", "GET", "/sites/list"], ["doctor", "--json"],
                 ["auth", "status", "--verify"], ["deploy", "--json"]):
        result = run(*args, "--profile", "me")
        assert result.exit_code != 0
        no_secret_in(result.stdout, result.stderr)


def test_logout_forgets_every_secret_so_nothing_is_replayed(
        lark: respx.MockRouter, isolated_dirs: dict[str, Path]) -> None:
    signed_in_user()
    assert run("auth", "logout", "--profile", "me").exit_code == 0
    assert list((isolated_dirs["config"] / "secrets").iterdir()) == []
    route = lark.route()
    replay = run("api", "GET", "/sites/list", "--profile", "me")
    assert replay.exit_code == 2 and "Unknown profile 'me'" in replay.stderr
    assert route.call_count == 0, "no request carried the old token"


def test_a_tenant_token_cache_is_not_a_way_around_a_wrong_secret(
        lark: respx.MockRouter, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached tenant token is keyed by host and app: changing the secret to a wrong one
    is noticed at login, which always asks Lark."""
    calls: list[dict[str, Any]] = []

    def tenant(request: Any) -> Any:
        import httpx

        body = json.loads(request.content)
        calls.append(body)
        if body["app_secret"] != SECRET:
            return httpx.Response(400, json={"code": 10014, "msg": "app secret invalid"})
        return httpx.Response(200, json={"code": 0, "tenant_access_token": TENANT,
                                         "expire": 7200})

    lark.post("/open-apis/auth/v3/tenant_access_token/internal").mock(side_effect=tenant)
    ok = run("auth", "login", "--brand", "feishu", "--as", "bot", "--app-id", "cli_app",
             "--app-secret", SECRET, "--profile", "bot")
    assert ok.exit_code == 0, ok.stderr
    wrong = run("auth", "login", "--brand", "feishu", "--as", "bot", "--app-id", "cli_app",
                "--app-secret", "wrong-secret", "--profile", "bot")
    assert wrong.exit_code == 3 and len(calls) == 2
    no_secret_in(ok.stdout, ok.stderr, wrong.stdout, wrong.stderr)


def test_a_cached_tenant_token_is_not_used_with_another_secret(
        lark: respx.MockRouter, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache is keyed by a hash of the secret too: a CI job whose secret was rotated
    away (or mistyped) is refused by Lark at once, not served the token cached under the
    old one until it expires."""
    import httpx

    asked: list[str] = []

    def tenant(request: Any) -> Any:
        secret = json.loads(request.content)["app_secret"]
        asked.append(secret)
        if secret != SECRET:
            return httpx.Response(400, json={"code": 10014, "msg": "app secret invalid"})
        return httpx.Response(200, json={"code": 0, "tenant_access_token": TENANT,
                                         "expire": 7200})

    lark.post("/open-apis/auth/v3/tenant_access_token/internal").mock(side_effect=tenant)
    lark.get("/open-apis/base/v3/sites/list").respond(json={
        "code": 0, "data": {"sites": [], "hasMore": False}})
    monkeypatch.setenv("LARK_APP_ID", "cli_app")
    monkeypatch.setenv("LARK_APP_SECRET", SECRET)
    assert run("sites", "list", "--profile", "ci").exit_code == 0
    assert run("sites", "list", "--profile", "ci").exit_code == 0
    assert asked == [SECRET], "the second command reused the cached token"
    monkeypatch.setenv("LARK_APP_SECRET", "rotated-away")
    refused = run("sites", "list", "--profile", "ci")
    assert refused.exit_code == 3 and asked[-1] == "rotated-away"
    first = refused.stderr.splitlines()[0]
    assert first.count("10014") == 1 and first.endswith("app secret invalid [10014]")
    no_secret_in(refused.stdout, refused.stderr)


def test_auth_status_shows_what_is_stored_offline_and_verify_asks(
        lark: respx.MockRouter, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot from environment variables: `auth status` shows the stored state without a
    request (it failed offline with a network error before); `--verify` asks Lark."""
    import httpx

    monkeypatch.setenv("LARK_APP_ID", "cli_app")
    monkeypatch.setenv("LARK_APP_SECRET", SECRET)
    route = lark.post("/open-apis/auth/v3/tenant_access_token/internal").mock(
        side_effect=httpx.ConnectError("offline"))
    offline = run("auth", "status", "--profile", "ci", "--json")
    assert offline.exit_code == 0, offline.stderr
    status = json.loads(offline.stdout)
    assert status["identity"] == "bot" and status["appSecret"] == "set"
    assert status["verified"] is False and route.call_count == 0
    verify = run("auth", "status", "--profile", "ci", "--verify", "--json")
    assert verify.exit_code == 4 and route.call_count >= 1
    route.mock(side_effect=None, return_value=httpx.Response(200, json={
        "code": 0, "tenant_access_token": TENANT, "expire": 7200}))
    verified = run("auth", "status", "--profile", "ci", "--verify", "--json")
    assert verified.exit_code == 0 and json.loads(verified.stdout)["verified"] is True
    no_secret_in(offline.stdout, verify.stderr, verified.stdout)


def every_file_under(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()]


def test_no_token_or_secret_is_on_disk_in_plaintext(
        lark: respx.MockRouter, isolated_dirs: dict[str, Path]) -> None:
    """Without a keyring, the app secret, the user's tokens and the cached tenant token are
    encrypted at rest (as lark-cli encrypts them on Linux), under a key kept apart from
    them: a copy of the config directory alone gives nothing away."""
    import base64

    import httpx

    signed_in_user()  # a user: app secret, access and refresh token
    lark.post("/open-apis/auth/v3/tenant_access_token/internal").respond(json={
        "code": 0, "tenant_access_token": TENANT, "expire": 7200})
    lark.get("/open-apis/base/v3/sites/list").respond(json={
        "code": 0, "data": {"sites": [], "hasMore": False}})
    lark.post("/open-apis/authen/v2/oauth/token").mock(return_value=httpx.Response(
        200, json={"code": 0, "access_token": FRESH, "expires_in": 7200,
                   "refresh_token": NEW_REFRESH, "refresh_token_expires_in": 604800,
                   "scope": "offline_access"}))
    assert run("sites", "list", "--profile", "me").exit_code == 0  # refreshed and stored
    ok = run("auth", "login", "--brand", "feishu", "--as", "bot", "--app-id", "cli_app",
             "--app-secret", SECRET, "--profile", "bot")
    assert ok.exit_code == 0 and run("sites", "list", "--profile", "bot").exit_code == 0
    files = every_file_under(*isolated_dirs.values())
    assert len(list((isolated_dirs["config"] / "secrets").iterdir())) >= 4
    for path in files:
        raw = path.read_bytes()
        for value in EVERY_SECRET:
            for form in (value.encode(), base64.b64encode(value.encode()),
                         base64.urlsafe_b64encode(value.encode())):
                assert form not in raw, f"{value[:4]}… in plaintext in {path}"
    key = isolated_dirs["state"] / "secrets.key"
    assert key.is_file() and stat.S_IMODE(key.stat().st_mode) == 0o600
    assert not (isolated_dirs["config"] / "secrets.key").exists(), "the key is kept apart"


def test_an_encrypted_secret_is_bound_to_its_key_and_its_store_key(
        isolated_dirs: dict[str, Path]) -> None:
    store = FileStore()
    store.set("lark:a:app_secret", SECRET)
    store.set("lark:b:app_secret", "another")
    assert store.get("lark:a:app_secret") == SECRET
    # A file moved under another name does not decrypt as that secret.
    store.path("lark:b:app_secret").write_bytes(store.path("lark:a:app_secret").read_bytes())
    with pytest.raises(InputError) as swapped:
        store.get("lark:b:app_secret")
    assert swapped.value.code == "SECRET_UNREADABLE"
    # Without the key nothing is readable, and the error says what to do.
    (isolated_dirs["state"] / "secrets.key").unlink()
    with pytest.raises(InputError) as lost:
        store.get("lark:a:app_secret")
    assert lost.value.code == "SECRET_KEY_MISSING" and "sign in again" in (lost.value.hint or "")


def test_a_plaintext_secret_of_an_earlier_basedb_is_encrypted_when_read(
        isolated_dirs: dict[str, Path]) -> None:
    store = FileStore()
    path = store.path("lark:old:app_secret")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SECRET, encoding="utf-8")
    assert store.get("lark:old:app_secret") == SECRET
    assert SECRET.encode() not in path.read_bytes()
    assert store.get("lark:old:app_secret") == SECRET


def test_a_failed_sign_in_stores_no_profile_and_no_secret(
        lark: respx.MockRouter, isolated_dirs: dict[str, Path]) -> None:
    """The next command used to find the profile and its secret and say 'Profile "me" has
    no user token … [0]'; now the profile exists only once its sign-in succeeded."""
    lark.post("/oauth/v1/device_authorization").respond(400, json={
        "error": "invalid_client", "error_description": "app secret invalid"})
    failed = run("auth", "login", "--brand", "feishu", "--app-id", "cli_app",
                 "--app-secret", "wrong-secret", "--profile", "me")
    assert failed.exit_code != 0
    listed = json.loads(run("auth", "list", "--json").stdout)["profiles"]
    assert "me" not in [p["name"] for p in listed]
    assert every_file_under(isolated_dirs["config"] / "secrets") == []
    after = run("api", "GET", "/sites/list", "--profile", "me")
    assert "[0]" not in after.stderr and "Unknown profile 'me'" in after.stderr


def memory_keyring() -> Any:
    """An in-memory keyring backend; made inside the test and unregistered afterwards, as
    every KeyringBackend subclass registers itself as a candidate default."""

    class MemoryKeyring(keyring.backend.KeyringBackend):
        priority = 10  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.values: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.values.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.values[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            del self.values[(service, username)]

    keyring.backend.KeyringBackend._classes.discard(MemoryKeyring)  # type: ignore[attr-defined]
    return MemoryKeyring()


def test_the_os_keyring_is_used_when_there_is_one(monkeypatch: pytest.MonkeyPatch,
                                                  isolated_dirs: dict[str, Path]) -> None:
    previous = keyring.get_keyring()
    backend = memory_keyring()
    keyring.set_keyring(backend)
    try:
        monkeypatch.setenv("BASEDB_SECRET_STORE", "auto")
        assert isinstance(secret_store(), KeyringStore)
        signed_in_user()
        assert backend.values[("basedb", "lark:me:app_secret")] == SECRET
        assert not (isolated_dirs["config"] / "secrets").exists(), "no file when a keyring is"
        assert run("auth", "logout", "--profile", "me").exit_code == 0
        assert backend.values == {}
        keyring.set_keyring(keyring.backends.fail.Keyring())
        monkeypatch.setenv("BASEDB_SECRET_STORE", "auto")
        assert isinstance(secret_store(), FileStore), "a failing backend falls back to files"
        monkeypatch.setenv("BASEDB_SECRET_STORE", "keyring")
        refused = run("auth", "login", "--brand", "feishu", "--as", "bot", "--app-id", "x",
                      "--app-secret", "y")
        assert refused.exit_code == 2 and "keyring" in refused.stderr
    finally:
        keyring.set_keyring(previous)
