"""`basedb auth`: login, token, status, logout, list; tokens stay out of output."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import respx
from click.testing import CliRunner, Result

from basedb.cli import cli
from basedb.client.profiles import Profile, load_profiles, save_profile

ENDPOINT = "http://127.0.0.1:8787"
PREFIX = "/open-apis/base/v3"
TOKEN = "bdb_secret_token_value_123456"
ME = {"code": 0, "msg": "success", "data": {"user": {"user_id": "ou_1", "name": "Ada"}}}


@pytest.fixture
def mock() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=ENDPOINT + PREFIX, assert_all_called=False) as router:
        yield router


def run(*args: str, input: str | None = None, token_allowed: bool = False) -> Result:
    result = CliRunner().invoke(cli, list(args), input=input)
    if not token_allowed:
        assert TOKEN not in result.stdout and TOKEN not in result.stderr
    return result


def test_login_verifies_and_stores(mock: respx.MockRouter,
                                   isolated_dirs: dict[str, Path]) -> None:
    route = mock.get("/users/me").respond(json=ME)
    result = run("auth", "login", "--endpoint", ENDPOINT + "/", "--token", TOKEN,
                 "--profile", "prod")
    assert result.exit_code == 0, result.stderr
    assert "Ada (ou_1)" in result.stdout and "'prod'" in result.stdout
    assert route.calls.last.request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert load_profiles() == {"prod": Profile("prod", ENDPOINT, TOKEN)}
    config = isolated_dirs["config"]
    assert stat.S_IMODE(config.stat().st_mode) == 0o700
    assert stat.S_IMODE((config / "config.json").stat().st_mode) == 0o600


def test_login_json_output(mock: respx.MockRouter) -> None:
    mock.get("/users/me").respond(json=ME)
    result = run("auth", "login", "--endpoint", ENDPOINT, "--token", TOKEN, "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["profile"] == "default" and doc["verified"] is True
    assert doc["user"] == {"user_id": "ou_1", "name": "Ada"}


def test_login_with_a_rejected_token_stores_nothing(mock: respx.MockRouter) -> None:
    mock.get("/users/me").respond(401, json={"code": 99991663, "msg": "token invalid"})
    result = run("auth", "login", "--endpoint", ENDPOINT, "--token", TOKEN, "--profile", "p")
    assert result.exit_code == 3
    assert "token invalid" in result.stderr
    assert load_profiles() == {}


def test_login_unreachable_endpoint_exits_4(mock: respx.MockRouter) -> None:
    import httpx

    mock.get("/users/me").mock(side_effect=httpx.ConnectError("Connection refused"))
    result = run("auth", "login", "--endpoint", ENDPOINT, "--token", TOKEN)
    assert result.exit_code == 4
    assert load_profiles() == {}


def test_login_no_verify_and_token_from_stdin(mock: respx.MockRouter) -> None:
    route = mock.get("/users/me").respond(json=ME)
    result = run("auth", "login", "--endpoint", ENDPOINT, "--token", "-", "--no-verify",
                 "--profile", "ci", input=TOKEN + "\n")
    assert result.exit_code == 0, result.stderr
    assert route.call_count == 0
    assert load_profiles()["ci"].token == TOKEN


@pytest.mark.parametrize(("args", "word"), [
    (["--endpoint", "127.0.0.1:8787", "--token", "x"], "--endpoint"),
    (["--endpoint", ENDPOINT, "--token", "two words"], "--token"),
    (["--endpoint", ENDPOINT, "--token", "  "], "--token"),
    (["--endpoint", ENDPOINT, "--token", "x", "--profile", "local"], "reserved"),
])
def test_login_rejects_bad_input(args: list[str], word: str) -> None:
    result = run("auth", "login", *args, "--no-verify")
    assert result.exit_code == 2
    assert word in result.stderr


def test_token_prints_only_the_token() -> None:
    save_profile(Profile("prod", ENDPOINT, TOKEN))
    result = run("auth", "token", "--profile", "prod", token_allowed=True)
    assert result.exit_code == 0
    assert result.stdout == TOKEN + "\n"
    assert result.stderr == ""


def test_token_of_the_workspace_profile(tmp_path: Path) -> None:
    save_profile(Profile("team", ENDPOINT, TOKEN))
    (tmp_path / "base-database.jsonc").write_text('{"appToken": "a", "profile": "team"}')
    result = run("auth", "token", "-C", str(tmp_path), token_allowed=True)
    assert result.stdout == TOKEN + "\n"


def test_status_shows_profile_endpoint_user(mock: respx.MockRouter) -> None:
    save_profile(Profile("prod", ENDPOINT, TOKEN))
    mock.get("/users/me").respond(json=ME)
    result = run("auth", "status", "--profile", "prod")
    assert result.exit_code == 0, result.stderr
    assert "prod (from --profile)" in result.stdout
    assert ENDPOINT in result.stdout and "Ada (ou_1)" in result.stdout
    as_json = run("auth", "status", "--profile", "prod", "--json")
    assert json.loads(as_json.stdout) == {"ok": True, "profile": "prod", "source": "--profile",
                                          "endpoint": ENDPOINT,
                                          "user": {"user_id": "ou_1", "name": "Ada"}}


def test_status_with_an_expired_token_exits_3(mock: respx.MockRouter) -> None:
    save_profile(Profile("prod", ENDPOINT, TOKEN))
    mock.get("/users/me").respond(401, json={"code": 99991663, "msg": "token expired"})
    result = run("auth", "status", "--profile", "prod")
    assert result.exit_code == 3
    assert "auth login" in result.stderr and "--profile prod" in result.stderr


def test_logout_removes_the_profile() -> None:
    save_profile(Profile("prod", ENDPOINT, TOKEN))
    result = run("auth", "logout", "--profile", "prod")
    assert result.exit_code == 0
    assert load_profiles() == {}
    again = run("auth", "logout", "--profile", "prod")
    assert again.exit_code == 2
    assert "Unknown profile 'prod'" in again.stderr


def test_logout_of_local_is_refused() -> None:
    result = run("auth", "logout")
    assert result.exit_code == 2
    assert "local" in result.stderr


def test_list_marks_the_current_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    save_profile(Profile("prod", ENDPOINT, TOKEN))
    save_profile(Profile("b-side", "http://127.0.0.1:9", TOKEN))
    monkeypatch.chdir(tmp_path)
    result = run("auth", "list")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "* local   embedded",
        "  b-side  http://127.0.0.1:9",
        "  prod    http://127.0.0.1:8787",
    ]
    doc = json.loads(run("auth", "list", "--profile", "prod", "--json").stdout)
    assert doc["current"] == "prod"
    assert [p["name"] for p in doc["profiles"] if p["current"]] == ["prod"]
    assert all(set(p) == {"name", "kind", "endpoint", "identity", "current"}
               for p in doc["profiles"])
    assert [p["kind"] for p in doc["profiles"]] == ["local", "endpoint", "endpoint"]


# --- the built-in local profile ------------------------------------------------------


def test_token_of_local_is_the_owner_token(platform: Any) -> None:
    result = run("auth", "token", token_allowed=True)
    assert result.exit_code == 0
    assert result.stdout == platform.owner_token + "\n"


def test_status_of_local_never_prints_the_owner_token(platform: Any,
                                                      isolated_dirs: dict[str, Path]) -> None:
    result = run("auth", "status")
    assert result.exit_code == 0, result.stderr
    assert "local (from default)" in result.stdout
    assert "embedded" in result.stdout
    assert platform.owner_token not in result.stdout + result.stderr
