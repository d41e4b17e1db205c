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


def test_success_prints_the_body_as_lark_cli_does(mock: respx.MockRouter) -> None:
    """Go's MarshalIndent: keys sorted, two spaces, <>& escaped, numbers as they came."""
    raw = ('{"msg":"success","code":0,"data":{"z":1.50,"a":"<b>&</b>","big":12345678901234567,'
           '"list":[],"obj":{},"uni":"休假\u2028"}}')
    mock.get("/sites/app").respond(content=raw.encode(),
                                   headers={"Content-Type": "application/json"})
    result = api("GET", "/sites/app")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        '{\n  "code": 0,\n  "data": {\n    "a": "\\u003cb\\u003e\\u0026\\u003c/b\\u003e",\n'
        '    "big": 12345678901234567,\n    "list": [],\n    "obj": {},\n'
        '    "uni": "休假\\u2028",\n    "z": 1.50\n  },\n  "msg": "success"\n}\n')


def test_business_error_envelope_on_stderr_exit_1(mock: respx.MockRouter) -> None:
    mock.post("/sites/app/functions/f/invoke").respond(400, json={
        "code": 800004002, "msg": "Parameter invalid. Executed: no. LogID: LOG1",
        "error": {"log_id": "LOG1"}})
    result = api("POST", "/sites/app/functions/f/invoke", "--data", '{"params":{}}')
    assert result.exit_code == 1
    assert result.stderr == (
        '{\n  "ok": false,\n  "identity": "user",\n  "error": {\n    "type": "api_error",\n'
        '    "code": 800004002,\n'
        '    "message": "API error: [800004002] Parameter invalid. Executed: no. LogID: LOG1",\n'
        '    "detail": {\n      "log_id": "LOG1"\n    }\n  }\n}\n')


@pytest.mark.parametrize(("status", "payload", "exit_code", "kind", "message"), [
    (401, {"code": 99991663, "msg": "token invalid"}, 3, "auth",
     "API error: [99991663] token invalid"),
    (401, {"code": 99991677, "msg": "token expired"}, 3, "auth",
     "API error: [99991677] token expired"),
    (403, {"code": 99991672, "msg": "scope missing", "error": {"permission_violations": [
        {"subject": "base:app:read"}]}}, 1, "permission", "Permission denied [99991672]"),
    (400, {"code": 99991543, "msg": "bad secret"}, 3, "config",
     "API error: [99991543] bad secret"),
    (500, {"code": 800004005, "msg": "execution failed"}, 1, "api_error",
     "API error: [800004005] execution failed"),
])
def test_error_classes_and_exit_codes_follow_lark_cli(mock: respx.MockRouter, status: int,
                                                      payload: dict[str, Any], exit_code: int,
                                                      kind: str, message: str) -> None:
    mock.get("/sites/app").respond(status, json=payload)
    result = api("GET", "/sites/app")
    assert result.exit_code == exit_code
    doc = json.loads(result.stderr)
    assert doc["identity"] == "user"
    error = doc["error"]
    assert error["type"] == kind and error["code"] == payload["code"]
    assert error["message"] == message
    assert error.get("detail") == payload.get("error")
    if kind != "api_error":
        assert error.get("hint")


def test_rate_limits_are_retried_then_reported(mock: respx.MockRouter,
                                               pauses: list[float]) -> None:
    route = mock.get("/sites/app").respond(
        429, json={"code": 99991400, "msg": "request trigger frequency limit"},
        headers={"x-ogw-ratelimit-reset": "2"})
    result = api("GET", "/sites/app")
    assert result.exit_code == 1
    error = error_of(result)
    assert error["type"] == "rate_limit" and error["code"] == 99991400
    assert route.call_count == 4 and len(pauses) == 3
    assert all(2 <= wait <= 2.5 for wait in pauses)


def test_network_errors_exit_4(mock: respx.MockRouter) -> None:
    mock.get("/sites/a").mock(side_effect=httpx.ConnectError("Connection refused"))
    mock.get("/sites/b").respond(502, text="<html>bad gateway</html>",
                                 headers={"Content-Type": "text/html"})
    mock.get("/sites/c").respond(404, text="404 page not found",
                                 headers={"Content-Type": "text/plain"})
    refused = api("GET", "/sites/a")
    assert refused.exit_code == 4
    assert error_of(refused)["type"] == "network"
    assert error_of(refused)["message"].startswith("API call failed: ")
    bad_gateway = api("GET", "/sites/b")
    assert bad_gateway.exit_code == 4
    assert error_of(bad_gateway) == {"type": "http_error",
                                     "message": "HTTP 502: <html>bad gateway</html>"}
    missing = api("GET", "/sites/c")
    assert missing.exit_code == 1
    assert error_of(missing)["message"] == "HTTP 404: 404 page not found"


def test_validation_errors_have_lark_cli_type_and_no_code() -> None:
    result = run("api", "FETCH", "/x")
    assert result.exit_code == 2
    doc = json.loads(result.stderr)
    assert "identity" not in doc
    assert doc["error"]["type"] == "validation" and "code" not in doc["error"]


def test_binary_answers_are_saved_and_described(mock: respx.MockRouter, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    mock.get("/sites/a/deployments/d/artifact").respond(
        content=b"PK\x03\x04zip", headers={"Content-Type": "application/zip",
                                             "Content-Disposition": 'attachment; '
                                             'filename="../site.zip"'})
    result = api("GET", "/sites/a/deployments/d/artifact")
    assert result.exit_code == 0, result.stderr
    meta = json.loads(result.stdout)
    assert meta == {"content_type": "application/zip", "saved_path": str(tmp_path / "site.zip"),
                    "size_bytes": 7}
    assert (tmp_path / "site.zip").read_bytes() == b"PK\x03\x04zip"
    assert "saved to file" in result.stderr
    chosen = api("GET", "/sites/a/deployments/d/artifact", "-o", str(tmp_path / "x.zip"))
    assert json.loads(chosen.stdout)["saved_path"] == str(tmp_path / "x.zip")


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


def test_a_missing_data_file_hint_says_which_path_was_looked_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("api", "POST", "/x", "--data", "@missing.json")
    hint = error_of(result)["hint"]
    assert "Create --data" not in hint
    assert str(tmp_path / "missing.json") in hint and "relative to the current" in hint


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


def test_lark_cli_api_with_an_endpoint_profile_runs_basedb_api_and_says_so(
        mock: respx.MockRouter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = tmp_path / "record.txt"
    fake_lark_cli(tmp_path / "bin", record, exit_code=0)
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ["PATH"])
    route = mock.get("/sites/app/catalog").respond(json={"code": 0, "data": {"tables": []}})
    result = run("lark-cli", "--profile", "mock", "--", "api", "GET",
                 "/open-apis/base/v3/sites/app/catalog", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["data"] == {"tables": []}
    assert route.call_count == 1 and not record.exists(), "never lark-cli for this profile"
    assert result.stderr.splitlines() == [
        "basedb lark-cli: profile 'mock' is a basedb platform; running `basedb api` instead "
        "of lark-cli."]


def test_lark_cli_fallback_keeps_api_exit_codes(mock: respx.MockRouter,
                                                no_lark_cli: None) -> None:
    mock.get("/sites/app").respond(401, json={"code": 99991663, "msg": "token invalid"})
    result = run("lark-cli", "--profile", "mock", "--", "api", "GET", "/sites/app")
    assert result.exit_code == 3
    notice, envelope = result.stderr.split("\n", 1)
    assert "running `basedb api`" in notice
    assert json.loads(envelope)["error"]["type"] == "auth"


def test_other_lark_cli_commands_are_refused_for_profiles_lark_cli_cannot_use(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = tmp_path / "record.txt"
    fake_lark_cli(tmp_path / "bin", record, exit_code=0)
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ["PATH"])
    result = run("lark-cli", "--", "base", "+table-list")
    assert result.exit_code == 2
    assert "embedded local platform" in result.stderr and "--lark-cli" in result.stderr
    assert not record.exists()
    assert run("lark-cli").exit_code == 2


def fake_lark_cli(bin_dir: Path, record: Path, exit_code: int) -> None:
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "lark-cli"
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "profile=$LARKSUITE_CLI_PROFILE" "$@" > "{record}"\n'
        f"exit {exit_code}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_a_lark_cli_profile_runs_lark_cli_with_its_profile_passed_explicitly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from basedb.client.profiles import LarkAccount

    save_profile(Profile("team", "https://open.feishu.cn", lark=LarkAccount(
        brand="feishu", identity="bot", via="lark-cli", lark_profile="work")))
    record = tmp_path / "record.txt"
    fake_lark_cli(tmp_path / "bin", record, exit_code=7)
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ["PATH"])
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "base-database.jsonc").write_text('{"appToken": "a", "profile": "team"}')
    result = run("lark-cli", "-C", str(tmp_path / "site"), "--", "base", "+table-list",
                 "--as", "user")
    assert result.exit_code == 7
    # --profile on the command line: lark-cli reads no LARKSUITE_CLI_PROFILE variable.
    assert record.read_text().splitlines() == ["profile=", "--profile", "work", "base",
                                               "+table-list", "--as", "user"]
    api_call = run("lark-cli", "-C", str(tmp_path / "site"), "--", "api", "GET", "/x")
    assert api_call.exit_code == 7
    assert record.read_text().splitlines()[1:] == ["--profile", "work", "api", "GET", "/x",
                                                   "--as", "bot"]


def test_embedded_profile_api_calls_never_go_to_lark_cli(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = tmp_path / "record.txt"
    fake_lark_cli(tmp_path / "bin", record, exit_code=0)
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ["PATH"])
    result = run("lark-cli", "--", "api", "GET", "/users/me", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["endpoint"] == "embedded"
    assert "embedded local platform" in result.stderr
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
    assert result.exit_code == 1  # lark-cli: a JSON answer with a code is an API error
    error = error_of(result)  # the whole of stderr is one envelope
    assert error["code"] == 800004005 and "secret detail" not in result.stderr
    log = (isolated_dirs["data"] / "platform.log").read_text()
    assert f"log_id {error['detail']['log_id']}" in log and "secret detail 42" in log
    assert stat.S_IMODE((isolated_dirs["data"] / "platform.log").stat().st_mode) == 0o600


def test_verbose_logs_requests_with_the_token_redacted(mock: respx.MockRouter,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    mock.get("/sites/app").respond(json={"code": 0, "data": {"appToken": "app"}},
                                   headers={"X-Tt-Logid": "LOGV"})
    result = api("GET", "/sites/app", "--verbose")
    assert result.exit_code == 0, result.stderr
    assert "> GET http://127.0.0.1:8787/open-apis/base/v3/sites/app" in result.stderr
    assert "> Authorization: Bearer ***" in result.stderr
    assert "< 200 OK" in result.stderr and "LOGV" in result.stderr
    assert json.loads(result.stdout)["data"] == {"appToken": "app"}  # stdout stays data
    monkeypatch.setenv("BASEDB_DEBUG", "1")
    assert "> GET" in api("GET", "/sites/app").stderr


def test_timeout_option_and_environment(mock: respx.MockRouter,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    mock.post("/sites/app/bind_base").mock(side_effect=httpx.ReadTimeout("slow"))
    result = api("POST", "/sites/app/bind_base", "--data", "{}", "--timeout", "1.5")
    assert result.exit_code == 4
    assert "timed out after 1.5s" in error_of(result)["message"]
    monkeypatch.setenv("BASEDB_TIMEOUT", "7")
    assert "after 7s" in error_of(api("POST", "/sites/app/bind_base", "--data", "{}"))[
        "message"]
    bad = api("GET", "/sites/app", "--timeout", "0")
    # A flag value the command cannot take is a command-line error, as lark-cli (cobra)
    # reports it: one `Error:` line, exit 1.
    assert bad.exit_code == 1 and bad.stderr.startswith("Error: ")
    assert "--timeout" in bad.stderr


# --- lark-cli's flags --------------------------------------------------------------------


LISTING = {"code": 0, "data": {"items": [{"id": "a", "n": 1}, {"id": "b", "n": 2}],
                               "hasMore": False}}


def test_unknown_flags_are_answered_as_lark_cli_answers_them(mock: respx.MockRouter) -> None:
    result = api("GET", "/sites/app", "--body", "{}")
    assert (result.exit_code, result.stderr) == (1, "Error: unknown flag: --body\n")
    missing = api("GET")
    assert missing.exit_code == 1 and missing.stderr.startswith("Error: ")


def test_format_and_jq(mock: respx.MockRouter) -> None:
    mock.get("/sites/app/items").respond(json=LISTING)
    ndjson = api("GET", "/sites/app/items", "--format", "ndjson")
    assert ndjson.stdout.splitlines() == ['{"id":"a","n":1}', '{"id":"b","n":2}']
    table = api("GET", "/sites/app/items", "--format", "table").stdout.splitlines()
    assert table[0].split() == ["id", "n"] and table[2].split() == ["a", "1"]
    assert api("GET", "/sites/app/items", "--format", "csv").stdout == "id,n\na,1\nb,2\n"
    assert api("GET", "/sites/app/items", "--jq", ".data.items[].id").stdout == "a\nb\n"
    assert api("GET", "/sites/app/items", "-q", ".data.items | length").stdout == "2\n"
    unknown = api("GET", "/sites/app/items", "--format", "xml")
    assert unknown.exit_code == 0 and 'unknown format "xml"' in unknown.stderr
    bad = api("GET", "/sites/app/items", "--jq", ".data[")
    assert bad.exit_code == 2 and "invalid jq expression" in error_of(bad)["message"]
    both = api("GET", "/sites/app/items", "--jq", ".", "--format", "csv")
    assert both.exit_code == 2 and "mutually exclusive" in error_of(both)["message"]


def test_page_size_and_page_delay(mock: respx.MockRouter, pauses: list[float]) -> None:
    pages = iter([{"code": 0, "data": {"items": [1], "hasMore": True, "pageToken": "p2"}},
                  {"code": 0, "data": {"items": [2], "hasMore": False}}])
    route = mock.get("/sites/app/items").mock(
        side_effect=lambda request: httpx.Response(200, json=next(pages)))
    result = api("GET", "/sites/app/items", "--page-all", "--page-size", "50",
                 "--page-delay", "250")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["data"]["items"] == [1, 2]
    assert all(call.request.url.params["page_size"] == "50" for call in route.calls)
    assert pauses == [0.25], "one wait, between the two pages"


def test_params_from_stdin_and_a_file_upload(mock: respx.MockRouter, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    route = mock.get("/sites/app/items").respond(json=LISTING)
    result = run("api", "GET", "/sites/app/items", "--params", "-", "--profile", "mock",
                 input='{"env": "prod"}')
    assert result.exit_code == 0 and route.calls[-1].request.url.params["env"] == "prod"
    upload = mock.post("/sites/app/deployments").respond(json={"code": 0, "data": {}})
    (tmp_path / "site.zip").write_bytes(b"zip-bytes")
    monkeypatch.chdir(tmp_path)
    done = api("POST", "/sites/app/deployments", "--file", "artifact=site.zip",
               "--data", '{"fingerprint": "sha256:ab"}')
    assert done.exit_code == 0, done.stderr
    sent = upload.calls[-1].request
    assert sent.headers["content-type"].startswith("multipart/form-data")
    assert b'name="artifact"; filename="site.zip"' in sent.content
    assert b"zip-bytes" in sent.content and b"sha256:ab" in sent.content
    wrong = api("GET", "/sites/app/items", "--file", "site.zip")
    assert wrong.exit_code == 2 and "requires POST" in error_of(wrong)["message"]
    twice = api("POST", "/sites/app/items", "--params", "-", "--data", "-")
    assert twice.exit_code == 2 and "cannot both read from stdin" in error_of(twice)["message"]
