"""Requests carried by lark-cli keep lark-cli's command-line contract, and what lark-cli
says about its own setup is told apart from a lost connection.

The lark-cli here is tests/fake_lark_cli.py, which refuses what the real one refuses
(absolute or escaping `--file`/`--output` paths, unknown flags, unknown profiles) and
types a failure to get a token as `network`, as lark-cli's `api` command does. Behind it
a small HTTP server on 127.0.0.1 records each request exactly as it arrived.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from basedb.client.client import connect
from basedb.client.profiles import LarkAccount, Profile, save_profile
from basedb.client.responses import envelope_or_raise
from basedb.core.errors import AuthError, BadResponse, UsageError
from tests.cli.deploy_support import run
from tests.lark_support import install_fake_lark_cli

FAKE = Path(__file__).resolve().parents[1] / "fake_lark_cli.py"
APP_ID, SECRET = "cli_fake", "the-app-secret-0123456789"


class Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path.startswith("/open-apis/auth/v3/tenant_access_token"):
            sent = json.loads(body)
            answer: dict[str, Any] = (
                {"code": 0, "tenant_access_token": "t-ok", "expire": 7200}
                if sent["app_secret"] == SECRET else {"code": 10014, "msg": "app secret invalid"})
            return self._json(answer)
        Recorder.seen.append({"method": self.command, "path": self.path,
                              "type": self.headers.get("content-type", ""), "body": body})
        if self.path.endswith("/nowhere"):
            self.send_response(404)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "9")
            self.end_headers()
            self.wfile.write(b"not found")
            return None
        if self.path.endswith("/artifact"):
            content = b"PK\x03\x04 binary"
            self.send_response(200)
            self.send_header("Content-Type", "application/zip")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)
            return None
        return self._json({"code": 0, "data": {"ok": True}})

    def _json(self, answer: dict[str, Any]) -> None:
        raw = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = do_PUT = _answer


@pytest.fixture
def lark_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fake lark-cli on PATH, signed in as a user of profile `work`, talking to a
    recording server; the log of its calls."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    Recorder.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    install_fake_lark_cli(tmp_path / "bin")
    log = tmp_path / "lark-cli.log"
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    for name, value in {"FAKE_LARK_URL": f"http://127.0.0.1:{server.server_port}",
                        "FAKE_LARK_PROFILES": "work,home", "FAKE_LARK_LOG": str(log),
                        "FAKE_LARK_APP_ID": APP_ID, "FAKE_LARK_APP_SECRET": SECRET,
                        "FAKE_LARK_USER_TOKEN": "u-token"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    try:
        yield log
    finally:
        server.shutdown()
        server.server_close()


def via(identity: str = "user", lark_profile: str = "work") -> Profile:
    profile = Profile("via", "https://open.feishu.cn", lark=LarkAccount(
        brand="feishu", identity=identity, via="lark-cli", lark_profile=lark_profile))
    save_profile(profile)
    return profile


def calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


# --- the fake keeps lark-cli's contract ---------------------------------------------


def fake(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(FAKE), *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=60, check=False)


def test_the_fake_refuses_what_lark_cli_refuses(lark_cli: Path, tmp_path: Path) -> None:
    (tmp_path / "site.zip").write_bytes(b"zip")
    absolute = fake("api", "POST", "/open-apis/x", "--file", f"a={tmp_path / 'site.zip'}",
                    cwd=tmp_path)
    assert absolute.returncode == 2 and "cannot open file" in absolute.stderr
    escaping = fake("api", "POST", "/open-apis/x", "--file", "a=../site.zip",
                    cwd=tmp_path / "bin")
    assert escaping.returncode == 2 and "cannot open file" in escaping.stderr
    output = fake("api", "GET", "/open-apis/x/artifact", "--output", str(tmp_path / "o"),
                  cwd=tmp_path)
    assert output.returncode == 5 and "unsafe output path" in output.stderr
    flag = fake("api", "GET", "/open-apis/x", "--body", "{}", cwd=tmp_path)
    assert (flag.returncode, flag.stderr) == (1, "Error: unknown flag: --body\n")
    profile = fake("--profile", "nope", "api", "GET", "/open-apis/x", cwd=tmp_path)
    envelope = json.loads(profile.stderr)["error"]
    assert profile.returncode == 2 and envelope["message"] == 'profile "nope" not found'
    assert envelope["hint"] == "available profiles: work, home"
    both = fake("api", "POST", "/open-apis/x", "--params", "-", "--data", "-", cwd=tmp_path,
                stdin="{}")
    assert both.returncode == 2 and "cannot both read from stdin" in both.stderr
    # A repeated --file keeps the last one: only one file is ever sent.
    (tmp_path / "b.txt").write_bytes(b"second")
    fake("api", "POST", "/open-apis/x", "--file", "a=site.zip", "--file", "b=b.txt",
         cwd=tmp_path)
    sent = Recorder.seen[-1]["body"]
    assert b'name="b"' in sent and b'name="a"' not in sent


def test_the_fake_types_a_missing_token_as_network(lark_cli: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_LARK_USER_TOKEN")
    done = fake("api", "GET", "/open-apis/x", "--as", "user", cwd=tmp_path)
    error = json.loads(done.stderr)["error"]
    assert done.returncode == 4 and error == {
        "type": "network", "message": "API call failed: no access token available for user"}


# --- basedb carries requests as lark-cli allows -------------------------------------


def test_paths_keep_their_percent_encoding(lark_cli: Path) -> None:
    path = "/open-apis/base/v3/sites/a%2Fb/functions/x%20y/%E6%95%B0%E6%8D%AE"
    with connect(via()) as client:
        client.request("GET", path)
    assert Recorder.seen[-1]["path"] == path


def test_an_upload_names_one_file_relative_to_a_private_directory(lark_cli: Path) -> None:
    with connect(via()) as client:
        client.request("POST", "/open-apis/base/v3/sites/app/deployments",
                       files={"artifact": ("site.zip", b"zip bytes", "application/zip")},
                       data={"fingerprint": "sha256:abc"})
    argv, cwd = calls(lark_cli)[-1]["argv"], calls(lark_cli)[-1]["cwd"]
    assert argv[argv.index("--file") + 1] == "artifact=site.zip"
    assert json.loads(argv[argv.index("--data") + 1]) == {"fingerprint": "sha256:abc"}
    assert not Path(cwd).exists(), "the private directory is removed afterwards"
    body = Recorder.seen[-1]["body"]
    assert b"zip bytes" in body and b"sha256:abc" in body


def test_a_form_without_a_file_goes_as_json(lark_cli: Path) -> None:
    """A no-change redeploy leaves site.zip out; lark-cli sends no form without a file,
    so its text fields go as a JSON object (this crashed with AttributeError before)."""
    with connect(via()) as client:
        client.request("POST", "/open-apis/base/v3/sites/app/deployments",
                       files={"fingerprint": (None, "sha256:abc"), "draftRevision": (None, "3")})
    assert Recorder.seen[-1]["type"] == "application/json"
    assert json.loads(Recorder.seen[-1]["body"]) == {"fingerprint": "sha256:abc",
                                                     "draftRevision": "3"}


def test_two_files_are_refused_before_lark_cli_runs(lark_cli: Path) -> None:
    with connect(via()) as client, pytest.raises(UsageError) as caught:
        client.request("POST", "/open-apis/x", files={
            "a": ("a.bin", b"a", "application/octet-stream"),
            "b": ("b.bin", b"b", "application/octet-stream")})
    assert caught.value.code == "LARK_CLI_ONE_FILE" and not lark_cli.exists()


def test_a_download_is_saved_at_a_relative_path(lark_cli: Path, tmp_path: Path) -> None:
    with connect(via()) as client:
        content = client.download("/open-apis/base/v3/sites/app/deployments/d1/artifact")
    assert content == b"PK\x03\x04 binary"
    argv = calls(lark_cli)[-1]["argv"]
    assert argv[argv.index("--output") + 1] == "body"
    assert not (tmp_path / "body").exists() and not (tmp_path / "download.bin").exists()


# --- setup failures are not lost connections -----------------------------------------


def test_no_user_token_asks_for_a_lark_cli_login_once(lark_cli: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_LARK_USER_TOKEN")
    via()
    result = run("sites", "list", "--profile", "via")
    assert result.exit_code == 3, result.stderr
    assert "lark-cli auth login --profile work" in result.stderr
    assert "Could not reach" not in result.stderr and "[0]" not in result.stderr
    assert "[LARK_CLI_NOT_SIGNED_IN]" in result.stderr
    assert len(calls(lark_cli)) == 1, "a sign-in failure is not retried"
    envelope = json.loads(run("sites", "list", "--profile", "via", "--json").stderr)
    assert envelope["error"]["code"] == "LARK_CLI_NOT_SIGNED_IN"


def test_a_refused_app_secret_names_config_init(lark_cli: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LARK_APP_SECRET", "rotated")
    via("bot")
    result = run("sites", "list", "--profile", "via")
    assert result.exit_code == 3, result.stderr
    first = result.stderr.splitlines()[0]
    assert first.endswith("app secret invalid. [10014]") and first.count("10014") == 1
    assert "lark-cli config init --name work" in result.stderr
    assert len(calls(lark_cli)) == 1


def test_an_unknown_lark_cli_profile_names_config_init(lark_cli: Path) -> None:
    via(lark_profile="work2")
    result = run("sites", "list", "--profile", "via", "--json")
    assert result.exit_code == 3
    error = json.loads(result.stderr)["error"]
    assert error["code"] == "LARK_CLI_PROFILE_NOT_FOUND" and error["type"] == "config"
    assert "work, home" in error["message"]
    assert "lark-cli config init --name work2" in error["hint"]


def test_a_404_on_a_lark_profile_does_not_suggest_basedb_serve(lark_cli: Path) -> None:
    with connect(via()) as client, pytest.raises(BadResponse) as caught:
        client.request("GET", "/open-apis/base/v3/sites/app/nowhere")
    hint = caught.value.hint or ""
    assert "basedb serve" not in hint and "Feishu has no such API" in hint


def test_no_error_carries_code_0(lark_cli: Path, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A sign-in failure in a --json command's error (init's, deploy's) used to carry
    "code": 0; it now carries the named code of what lark-cli said."""
    monkeypatch.delenv("FAKE_LARK_USER_TOKEN")
    via()
    result = run("init", str(tmp_path / "site"), "--json", "--profile", "via")
    assert result.exit_code == 3, result.stderr
    text = result.stderr
    assert '"code": 0' not in text and '"code":0' not in text
    assert json.loads(text)["error"]["code"] == "LARK_CLI_NOT_SIGNED_IN"


def test_lark_cli_policy_envelope_becomes_the_policy_error(lark_cli: Path) -> None:
    """lark-cli prints its own envelope for 21000 (string code, challenge_url): read as
    the security-policy refusal it is, not as a lost connection."""
    import httpx

    from basedb.client.lark.larkcli import LarkCliTransport

    stderr = json.dumps({"ok": False, "error": {
        "type": "auth_error", "code": "challenge_required", "message": "verify first",
        "retryable": False, "challenge_url": "https://challenge.feishu.cn/c/1"}}).encode()
    done = subprocess.CompletedProcess(["lark-cli"], 1, b"", stderr)
    request = httpx.Request("GET", "https://open.feishu.cn/open-apis/base/v3/sites/list")
    response = LarkCliTransport(profile="work", identity="user")._response(
        request, done, None)
    response.read()
    assert response.json()["code"] == 21000
    with connect(via()) as client, pytest.raises(AuthError) as caught:
        envelope_or_raise(request, response, client.error_context)
    assert caught.value.code == 21000 and caught.value.exit_code == 3
    assert "https://challenge.feishu.cn/c/1" in (caught.value.hint or "")
