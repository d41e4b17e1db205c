"""The whole journey on "Feishu" for each identity kind, over loopback HTTP: a real
`basedb serve` stands in for Lark (its Open API and its sign-in endpoints) and the
client reaches it through BASEDB_LARK_OPEN_URL / BASEDB_LARK_ACCOUNTS_URL:

    sign in → init → deploy → deploy --production --yes → invoke → skill install --site

- a bot in CI: a subprocess with nothing but LARK_APP_ID, LARK_APP_SECRET, the two URL
  variables and --profile / BASEDB_PROFILE (plus PATH and HOME) in its environment;
- a user: `auth login --brand feishu` and its device flow (blocking, and split in two
  with --no-wait / --device-code);
- lark-cli: `auth login --lark-cli` and every request carried by a lark-cli executable
  (tests/fake_lark_cli.py, as the real one cannot be installed here).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from basedb.client.lark import oauth, signin
from basedb.client.lark.scopes import SITE_BUILDER
from tests.cli.deploy_support import run
from tests.cli.test_json_shapes import assert_shape
from tests.lark_support import (
    StandIn,
    device_sign_in,
    install_fake_lark_cli,
    serve_stand_in,
)

Basedb = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    with serve_stand_in(tmp_path_factory.mktemp("feishu")) as found:
        yield found


@pytest.fixture
def feishu(stand_in: StandIn, monkeypatch: pytest.MonkeyPatch) -> StandIn:
    for name, value in stand_in.env().items():
        monkeypatch.setenv(name, value)
    return stand_in


def in_process(*args: str) -> tuple[int, str, str]:
    result = run(*args)
    return result.exit_code, result.stdout, result.stderr


def journey(basedb: Basedb, root: Path, profile: str) -> dict[str, Any]:
    """init → deploy → deploy --production --yes → invoke → skill install --site."""
    def ok(*args: str) -> Any:
        code, out, err = basedb(*args, "--profile", profile)
        assert code == 0, f"basedb {' '.join(args)}: {err}"
        return json.loads(out) if out.strip() else None

    created = ok("init", str(root / "site"), "--json")
    site, app = str(root / "site"), created["appToken"]
    preview = ok("deploy", "-C", site, "--json")
    prod = ok("deploy", "-C", site, "--production", "--yes", "--json")
    assert prod["deploymentId"] == preview["deploymentId"]
    assert prod["nextAction"]["externalAgent"]["installation"]["available"] is True
    invoked = ok("api", "POST", f"/open-apis/base/v3/sites/{app}/functions/listPeriods/invoke",
                 "--params", '{"env":"prod"}', "--data", '{"params":{}}')
    assert invoked["code"] == 0 and len(invoked["data"]["rows"]) >= 2
    installed = ok("agent-tools", "skill", "install", "--site", app,
                   "--dir", str(root / "skills"), "--json")
    skill = Path(installed["installed"][0]["path"]) / "SKILL.md"
    assert "listPeriods" in skill.read_text(encoding="utf-8")
    return {"app": app, "site": site, "created": created}


# ----------------------------------------------------------------------------- bot


@pytest.mark.slow  # a whole deploy journey as a bot, in subprocesses
def test_ci_deploys_to_production_with_only_app_credentials(stand_in: StandIn,
                                                             tmp_path: Path) -> None:
    app_id, secret = stand_in.register_app("CI")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home"),
           "LARK_APP_ID": app_id, "LARK_APP_SECRET": secret, **stand_in.env()}

    def basedb(*args: str) -> tuple[int, str, str]:
        done = subprocess.run([sys.executable, "-m", "basedb", *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=300, check=False)
        assert secret not in done.stdout + done.stderr
        return done.returncode, done.stdout, done.stderr

    journey(basedb, tmp_path, "ci")
    # BASEDB_PROFILE works as well as --profile, and the cached tenant token is 0600.
    env["BASEDB_PROFILE"] = "ci"
    code, out, err = basedb("auth", "status", "--json")
    assert code == 0, err
    status = json.loads(out)
    assert status["identity"] == "bot" and status["appId"] == app_id
    assert status["source"] == "--profile" and status["kind"] == "lark"
    secrets = list((tmp_path / "home").rglob("*.secret"))
    assert secrets and all(p.stat().st_mode & 0o777 == 0o600 for p in secrets)
    assert all(p.parent.stat().st_mode & 0o777 == 0o700 for p in secrets)


def test_a_bot_signs_in_and_is_stored(feishu: StandIn, tmp_path: Path) -> None:
    app_id, secret = feishu.register_app("Bot")
    code, out, err = in_process("auth", "login", "--brand", "feishu", "--as", "bot",
                                "--app-id", app_id, "--app-secret", secret, "--profile", "b",
                                "--json")
    assert code == 0, err
    assert json.loads(out)["identity"] == "bot" and secret not in out + err
    assert_shape("auth login --json", json.loads(out))
    status = in_process("auth", "status", "--profile", "b", "--json")
    assert_shape("auth status --json", json.loads(status[1]))
    journey(in_process, tmp_path, "b")
    wrong = in_process("auth", "login", "--brand", "feishu", "--as", "bot", "--app-id",
                       app_id, "--app-secret", "not-the-secret", "--profile", "w")
    assert wrong[0] == 3 and "app credentials" in wrong[2]


# ---------------------------------------------------------------------------- user


def test_a_user_signs_in_with_the_device_flow(feishu: StandIn, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    app_id, secret = feishu.register_app("Builder")
    user_id, user_token = feishu.create_user("Ada")
    started: list[Any] = []
    begin = signin.begin_user

    def remember(*args: Any, **kwargs: Any) -> Any:
        started.append(begin(*args, **kwargs))
        return started[-1]

    waits: list[float] = []

    def approve_while_waiting(seconds: float) -> None:
        # The user approves in the browser while the command waits.
        if not waits:
            feishu.approve(started[0].user_code, user_token)
        waits.append(seconds)

    monkeypatch.setattr(signin, "begin_user", remember)
    monkeypatch.setattr(oauth, "pause", approve_while_waiting)
    code, out, err = in_process("auth", "login", "--brand", "feishu", "--app-id", app_id,
                                "--app-secret", secret, "--profile", "me", "--scope",
                                "contact:user.base:readonly")
    assert code == 0, err
    assert f"{feishu.url}/oauth/v1/device/verify?user_code={started[0].user_code}" in err
    assert "Ada" in out and user_id in out and "'me'" in out
    assert waits == [1]  # the stand-in's interval, waited before the first poll

    result = journey(in_process, tmp_path, "me")
    catalog = json.loads((Path(result["site"]) / "catalog.json").read_text())
    assert catalog["tables"]
    for verify in ((), ("--verify",)):
        status = json.loads(in_process("auth", "status", *verify, "--profile", "me",
                                       "--json")[1])
        assert_shape("auth status --json", status)
        assert status["user"] == {"open_id": user_id, "name": "Ada"}
        assert status["tokenStatus"] == "valid" and "offline_access" in status["scope"]
        # The site-builder set is asked for at login, and --scope adds to it.
        granted = status["scope"].split()
        assert set(SITE_BUILDER) <= set(granted) and "contact:user.base:readonly" in granted
        assert status["verified"] is bool(verify)


def test_a_user_sign_in_split_in_two_for_agents(feishu: StandIn) -> None:
    app_id, secret = feishu.register_app("Agent")
    _, user_token = feishu.create_user("Bea")
    code, out, err = in_process("auth", "login", "--brand", "feishu", "--app-id", app_id,
                                "--app-secret", secret, "--no-wait", "--profile", "agent",
                                "--json")
    assert code == 0, err
    started = json.loads(out)
    assert started["verification_url"].endswith(started["user_code"])
    feishu.approve(started["user_code"], user_token)
    code, out, err = in_process("auth", "login", "--brand", "feishu", "--device-code",
                                started["device_code"], "--profile", "agent", "--json")
    assert code == 0, err
    assert json.loads(out)["user"]["name"] == "Bea"
    again = in_process("auth", "login", "--brand", "feishu", "--device-code",
                       started["device_code"], "--profile", "agent")
    assert again[0] == 3, "a device code signs in once"


# ------------------------------------------------------------------------ lark-cli


@pytest.mark.slow  # a whole journey through the fake lark-cli, in subprocesses
def test_requests_through_lark_cli(feishu: StandIn, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    app_id, secret = feishu.register_app("Through lark-cli")
    _, platform_token = feishu.create_user("Cy")
    answer = device_sign_in(feishu, app_id, secret, platform_token)
    log = tmp_path / "lark-cli.log"
    bin_dir = tmp_path / "bin"
    install_fake_lark_cli(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for name, value in {"FAKE_LARK_URL": feishu.url, "FAKE_LARK_APP_ID": app_id,
                        "FAKE_LARK_APP_SECRET": secret, "FAKE_LARK_LOG": str(log),
                        "FAKE_LARK_PROFILES": "work",
                        "FAKE_LARK_USER_TOKEN": answer["access_token"]}.items():
        monkeypatch.setenv(name, value)
    code, out, err = in_process("auth", "login", "--lark-cli", "--lark-profile", "work",
                                "--profile", "via", "--json")
    assert code == 0, err
    assert json.loads(out)["via"] == "lark-cli"
    result = journey(in_process, tmp_path, "via")
    # check → a no-change redeploy (site.zip left out) → pull, all through lark-cli.
    site = result["site"]
    assert in_process("check", "-C", site, "--json")[0] == 0
    code, out, err = in_process("deploy", "-C", site, "--json", "--profile", "via")
    assert code == 0, err
    pulled = tmp_path / "pulled"
    code, out, err = in_process("pull", str(pulled), "--app-token", result["app"],
                                "--json", "--profile", "via")
    assert code == 0, err
    assert (pulled / "base-database.jsonc").is_file()
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    # Every call ran in a private directory, gone afterwards, and named only relative
    # paths inside it (lark-cli refuses any other).
    assert all(e["cwd"] != os.getcwd() and not Path(e["cwd"]).exists() for e in entries
               if "api" in e["argv"])
    redeploys = [e["argv"] for e in entries if "--data" in e["argv"] and "deployments" in
                 e["argv"][e["argv"].index("api") + 2] and "--file" not in e["argv"]]
    assert redeploys, "the no-change redeploy left site.zip out"
    assert not (Path.cwd() / "download.bin").exists()
    calls = [e["argv"] for e in entries]
    api_calls = [c for c in calls if "api" in c]
    assert api_calls and all(c[:2] == ["--profile", "work"] for c in calls)
    assert all(c[c.index("--as") + 1] == "user" for c in api_calls)
    uploads = [c for c in api_calls if "--file" in c]
    assert uploads and uploads[0][uploads[0].index("--file") + 1] == "artifact=site.zip"
