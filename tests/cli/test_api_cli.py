"""`basedb api` and `basedb lark-cli`: output streams, exit codes, input handling."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from click.testing import CliRunner, Result
from starlette.testclient import TestClient

from basedb.cli import cli
from basedb.client.profiles import Profile, save_profile
from basedb.core.node import node_version
from tests.platform.conftest import Api
from tests.platform.release_support import deploy, functions_body, task_site

ENDPOINT = "http://127.0.0.1:8787"
PREFIX = "/open-apis/base/v3"
TOKEN = "bdb_secret_token_value_123456"


@pytest.fixture
def mock() -> Iterator[respx.MockRouter]:
    save_profile(Profile("mock", ENDPOINT, TOKEN))
    with respx.mock(base_url=ENDPOINT + PREFIX, assert_all_called=False) as router:
        yield router


def run(*args: str, input: str | bytes | None = None) -> Result:
    result = CliRunner().invoke(cli, list(args), input=input)
    # Whatever happened, the token never reaches the terminal.
    assert TOKEN not in result.stdout and TOKEN not in result.stderr
    return result


def api(*args: str, input: str | bytes | None = None) -> Result:
    return run("api", *args, "--profile", "mock", input=input)


def error_of(result: Result) -> dict[str, Any]:
    assert result.stdout == ""
    doc = json.loads(result.stderr)
    assert doc["ok"] is False
    return dict(doc["error"])


def test_success_prints_the_raw_envelope(mock: respx.MockRouter) -> None:
    body = {"code": 0, "msg": "success", "data": {"functions": [], "hasMore": False}}
    route = mock.get("/sites/app/functions").respond(json=body)
    result = api("get", "/sites/app/functions", "--params", '{"env":"prod"}', "--as", "user")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == body
    assert result.stderr == ""
    assert route.calls.last.request.url.params["env"] == "prod"


def test_full_open_apis_path_is_accepted(mock: respx.MockRouter) -> None:
    route = mock.post("/sites/app/bind_base").respond(json={"code": 0, "data": {}})
    result = api("POST", "/open-apis/base/v3/sites/app/bind_base",
                 "--data", '{"baseToken":"b","tableIds":["t"]}', "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(route.calls.last.request.content) == {"baseToken": "b", "tableIds": ["t"]}


def test_business_error_envelope_on_stderr_exit_1(mock: respx.MockRouter) -> None:
    mock.post("/sites/app/functions/f/invoke").respond(400, json={
        "code": 800004002, "msg": "Parameter invalid. Executed: no.",
        "error": {"log_id": "LOG1"}})
    result = api("POST", "/sites/app/functions/f/invoke", "--data", '{"params":{}}')
    assert result.exit_code == 1
    error = error_of(result)
    assert error["type"] == "api"
    assert error["code"] == 800004002
    assert error["message"] == "Parameter invalid. Executed: no."
    assert error["detail"]["log_id"] == "LOG1"


@pytest.mark.parametrize(("status", "payload", "exit_code", "kind"), [
    (401, {"code": 99991663, "msg": "token invalid"}, 3, "auth"),
    (403, {"code": 99991672, "msg": "permission denied"}, 3, "auth"),
    (500, {"code": 800004005, "msg": "execution failed"}, 4, "api"),
])
def test_error_classes_and_exit_codes(mock: respx.MockRouter, status: int,
                                      payload: dict[str, Any], exit_code: int,
                                      kind: str) -> None:
    mock.get("/sites/app").respond(status, json=payload)
    result = api("GET", "/sites/app")
    assert result.exit_code == exit_code
    error = error_of(result)
    assert error["type"] == kind
    assert error["message"] == payload["msg"]
    assert error.get("hint")


def test_network_errors_exit_4(mock: respx.MockRouter) -> None:
    mock.get("/sites/a").mock(side_effect=httpx.ConnectError("Connection refused"))
    mock.get("/sites/b").respond(502, text="<html>bad gateway</html>",
                                 headers={"Content-Type": "text/html"})
    refused = api("GET", "/sites/a")
    assert refused.exit_code == 4
    assert error_of(refused)["type"] == "network"
    bad_gateway = api("GET", "/sites/b")
    assert bad_gateway.exit_code == 4
    assert "HTTP 502" in error_of(bad_gateway)["message"]


def test_dry_run_sends_nothing_and_redacts(mock: respx.MockRouter) -> None:
    route = mock.post("/sites/app/functions/f/invoke").respond(json={"code": 0})
    result = api("POST", "sites/app/functions/f/invoke", "--params", '{"env":"preview"}',
                 "--data", '{"params":{"n":1}}', "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert route.call_count == 0
    plan = json.loads(result.stdout)
    request = plan["request"]
    assert plan["dryRun"] is True and plan["profile"] == "mock"
    assert request["method"] == "POST"
    assert request["url"] == ENDPOINT + PREFIX + "/sites/app/functions/f/invoke?env=preview"
    assert request["query"] == {"env": "preview"}
    assert request["body"] == {"params": {"n": 1}}
    assert request["headers"]["Authorization"] == "Bearer ***"


def test_dry_run_on_the_local_profile_touches_no_data_dir(
        isolated_dirs: dict[str, Path]) -> None:
    result = run("api", "GET", "/users/me", "--dry-run")
    assert result.exit_code == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["profile"] == "local" and plan["endpoint"] == "embedded"
    assert plan["request"]["headers"]["Authorization"] == "Bearer ***"
    assert not isolated_dirs["data"].exists()


@pytest.mark.parametrize(("option", "value", "words"), [
    ("--params", '{"env": }', ["--params", "line 1 column 9"]),
    ("--params", '["env"]', ["--params", "object", "array"]),
    ("--params", '{"f": {"a": 1}}', ["--params /f", "nest"]),
    ("--data", '{"params": {"a": 1,}}', ["--data", "line 1 column 20"]),
    ("--data", "NaN", ["--data", "NaN"]),
])
def test_bad_json_exits_2_naming_the_option(option: str, value: str, words: list[str]) -> None:
    result = run("api", "POST", "/x", option, value)
    assert result.exit_code == 2
    error = error_of(result)
    for word in words:
        assert word in error["message"]
    assert error.get("hint")


def test_data_from_a_file(mock: respx.MockRouter, tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("body.json").write_text('{\n  "params": {"name": "ü"}\n}\n', encoding="utf-8")
    route = mock.post("/sites/a/functions/f/invoke").respond(json={"code": 0})
    result = api("POST", "/sites/a/functions/f/invoke", "--data", "@body.json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(route.calls.last.request.content) == {"params": {"name": "ü"}}

    Path("broken.json").write_text('{\n  "params": \n}\n', encoding="utf-8")
    broken = api("POST", "/sites/a/functions/f/invoke", "--data", "@broken.json")
    assert broken.exit_code == 2
    assert "--data @broken.json" in error_of(broken)["message"]
    assert "line 3 column 1" in error_of(broken)["message"]


@pytest.mark.parametrize(("name", "content", "words"), [
    ("missing.json", None, ["missing.json", "does not exist"]),
    ("latin1.json", b'{"a": "\xe9"}', ["latin1.json", "UTF-8"]),
    ("binary.json", b"\x00\x01", ["binary.json", "binary"]),
    ("huge.json", b" " * (10 * 1024 * 1024 + 1), ["huge.json", "at most"]),
])
def test_unusable_data_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                             content: bytes | None, words: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    if content is not None:
        Path(name).write_bytes(content)
    result = run("api", "POST", "/x", "--data", f"@{name}")
    assert result.exit_code == 2
    message = error_of(result)["message"]
    for word in words:
        assert word in message


def test_data_from_stdin(mock: respx.MockRouter) -> None:
    route = mock.post("/sites/a/functions/f/invoke").respond(json={"code": 0})
    result = api("POST", "/sites/a/functions/f/invoke", "--data", "-",
                 input='{"params": {"id": "rec1"}}')
    assert result.exit_code == 0, result.stderr
    assert json.loads(route.calls.last.request.content) == {"params": {"id": "rec1"}}
    empty = api("POST", "/sites/a/functions/f/invoke", "--data", "-", input="")
    assert empty.exit_code == 2
    assert "stdin" in error_of(empty)["message"]
    bad = api("POST", "/sites/a/functions/f/invoke", "--data", "-", input="{oops")
    assert bad.exit_code == 2
    assert "--data - (stdin)" in error_of(bad)["message"]


@pytest.mark.parametrize(("args", "words"), [
    (["FETCH", "/x"], ["METHOD", "FETCH"]),
    (["GET", "/x", "--data", "{}"], ["GET", "--data"]),
    (["GET", "  "], ["PATH"]),
])
def test_usage_errors_exit_2(args: list[str], words: list[str]) -> None:
    result = run("api", *args)
    assert result.exit_code == 2
    message = error_of(result)["message"]
    for word in words:
        assert word in message


def test_page_all_merges_and_reports_truncation(mock: respx.MockRouter) -> None:
    def pages(request: httpx.Request) -> httpx.Response:
        n = int(request.url.params.get("pageToken", "1"))
        return httpx.Response(200, json={"code": 0, "data": {
            "functions": [f"f{n}"], "hasMore": n < 5, "pageToken": str(n + 1)}})

    mock.get("/sites/a/functions").mock(side_effect=pages)
    full = api("GET", "/sites/a/functions", "--page-all")
    assert full.exit_code == 0, full.stderr
    assert json.loads(full.stdout)["data"]["functions"] == ["f1", "f2", "f3", "f4", "f5"]
    assert full.stderr == ""
    partial = api("GET", "/sites/a/functions", "--page-all", "--page-limit", "2")
    assert partial.exit_code == 0
    assert json.loads(partial.stdout)["data"]["functions"] == ["f1", "f2"]
    assert "more pages remain" in partial.stderr


def test_unknown_profile_is_a_usage_error() -> None:
    result = run("api", "GET", "/x", "--profile", "nope")
    assert result.exit_code == 2
    error = error_of(result)
    assert "nope" in error["message"] and "local" in error["message"]
    assert "basedb auth login" in error["hint"]


def test_workspace_profile_is_used(mock: respx.MockRouter, tmp_path: Path) -> None:
    (tmp_path / "base-database.jsonc").write_text(
        '{"appToken": "app", "profile": "mock" /* shared */}', encoding="utf-8")
    route = mock.get("/sites/app").respond(json={"code": 0, "data": {"appToken": "app"}})
    result = run("api", "GET", "/sites/app", "-C", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert route.call_count == 1


# --- lark-cli ----------------------------------------------------------------------


@pytest.fixture
def no_lark_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_lark_cli_falls_back_to_basedb_api(mock: respx.MockRouter, no_lark_cli: None) -> None:
    route = mock.get("/sites/app/catalog").respond(json={"code": 0, "data": {"tables": []}})
    result = run("lark-cli", "--profile", "mock", "--", "api", "GET",
                 "/open-apis/base/v3/sites/app/catalog", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["data"] == {"tables": []}
    assert route.call_count == 1


def test_lark_cli_fallback_keeps_api_exit_codes(mock: respx.MockRouter,
                                                no_lark_cli: None) -> None:
    mock.get("/sites/app").respond(401, json={"code": 99991663, "msg": "token invalid"})
    result = run("lark-cli", "--profile", "mock", "--", "api", "GET", "/sites/app")
    assert result.exit_code == 3
    assert error_of(result)["type"] == "auth"


def test_lark_cli_other_commands_need_lark_cli(no_lark_cli: None) -> None:
    result = run("lark-cli", "--", "base", "+table-list")
    assert result.exit_code == 2
    message = result.stderr
    assert "lark-cli is not installed" in message and "lark-cli api" in message
    nothing = run("lark-cli")
    assert nothing.exit_code == 2


def fake_lark_cli(bin_dir: Path, record: Path, exit_code: int) -> None:
    bin_dir.mkdir()
    script = bin_dir / "lark-cli"
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "profile=$LARKSUITE_CLI_PROFILE" "$@" > "{record}"\n'
        f"exit {exit_code}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_real_lark_cli_runs_with_the_workspace_profile(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    save_profile(Profile("team", ENDPOINT, TOKEN))
    record = tmp_path / "record.txt"
    fake_lark_cli(tmp_path / "bin", record, exit_code=7)
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ["PATH"])
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "base-database.jsonc").write_text('{"appToken": "a", "profile": "team"}')
    result = run("lark-cli", "-C", str(tmp_path / "site"), "--", "base", "+table-list",
                 "--as", "user")
    assert result.exit_code == 7
    assert record.read_text().splitlines() == ["profile=team", "base", "+table-list",
                                               "--as", "user"]


def test_embedded_profile_api_calls_never_go_to_lark_cli(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = tmp_path / "record.txt"
    fake_lark_cli(tmp_path / "bin", record, exit_code=0)
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ["PATH"])
    result = run("lark-cli", "--", "api", "GET", "/users/me", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["endpoint"] == "embedded"
    assert not record.exists()


# --- through the real local platform, in-process ---------------------------------------


def test_api_users_me_on_the_embedded_platform(platform: Any) -> None:
    result = run("api", "GET", "/users/me")
    assert result.exit_code == 0, result.stderr
    envelope = json.loads(result.stdout)
    assert envelope["code"] == 0 and envelope["data"]["is_platform_owner"] is True
    assert platform.owner_token not in result.stdout + result.stderr


def test_api_error_from_the_embedded_platform(platform: Any) -> None:
    result = run("api", "GET", "/sites/nope")
    assert result.exit_code == 1
    error = error_of(result)
    assert error["code"] == 9499 and "Executed: no" in error["message"]
    assert error["detail"]["log_id"]
    assert platform.owner_token not in result.stderr


def test_lark_cli_api_on_the_embedded_platform(platform: Any, no_lark_cli: None) -> None:
    result = run("lark-cli", "--", "api", "GET", "/open-apis/base/v3/users/me", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["data"]["name"]


@pytest.mark.skipif(int((node_version() or "0").split(".")[0]) < 20,
                    reason="Node.js 20+ is not installed")
def test_embedded_platform_log_goes_to_the_data_dir_not_the_commands_stderr(
        platform: Any, isolated_dirs: dict[str, Path]) -> None:
    """stderr of `basedb api` is its error envelope, one JSON document an agent parses;
    a FaaS stack (the platform log) goes to platform.log in the data dir, where the
    developer can look the log id up after the command has ended."""
    with TestClient(platform.app, base_url="http://localhost") as http:
        owner = Api(http, platform.owner_token)
        site = task_site(owner)
        explode = {"functionId": "explode", "handler": "export default async () => { "
                   "throw new Error('secret detail 42'); }\n",
                   "declaration": {"name": "explode", "description": "Always fails",
                                   "inputSchema": {"type": "object", "properties": {}}}}
        owner.ok("PUT", f"/sites/{site.app_token}/draft/functions",
                 json=functions_body(database_functions=[], mutations=[], faas=[explode]))
        deployment = deploy(owner, site.app_token)["deploymentId"]
        owner.ok("POST", f"/sites/{site.app_token}/deployments/{deployment}/promote")
    result = run("api", "POST", f"/sites/{site.app_token}/functions/explode/invoke",
                 "--data", '{"params": {}}')
    assert result.exit_code == 4
    error = error_of(result)  # the whole of stderr is one envelope
    assert error["code"] == 800004005 and "secret detail" not in result.stderr
    log = (isolated_dirs["data"] / "platform.log").read_text()
    assert f"log_id {error['detail']['log_id']}" in log and "secret detail 42" in log
    assert stat.S_IMODE((isolated_dirs["data"] / "platform.log").stat().st_mode) == 0o600
