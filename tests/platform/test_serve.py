"""`basedb serve`: a real HTTP server in a subprocess, and its refusal of remote hosts."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from basedb.cli import cli
from basedb.cli.serve import is_loopback
from basedb.core.paths import API_PREFIX
from basedb.platform import open_platform
from tests.processes import interrupt


def _read_line(stream: object, deadline: float) -> str:
    line = stream.readline()  # type: ignore[attr-defined]
    if not line and time.monotonic() > deadline:
        raise AssertionError("basedb serve printed nothing")
    return str(line)


def _site_in(data: Path) -> str:
    """Make a platform at `data` with one site; the site's app token."""
    existing = open_platform(data)
    try:
        with TestClient(existing.app, base_url="http://localhost") as client:
            return str(client.post(API_PREFIX + "/sites/create", json={"title": "Shop"},
                                   headers={"Authorization": f"Bearer {existing.owner_token}"}
                                   ).json()["data"]["appToken"])
    finally:
        existing.close()


def _serve(data: Path, *, stdout: int) -> subprocess.Popen[str]:
    """`basedb serve` on a free port over `data`, its stderr piped as text."""
    return subprocess.Popen(
        [sys.executable, "-m", "basedb", "serve", "--port", "0", "--data", str(data)],
        stderr=subprocess.PIPE, stdout=stdout, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_serve_over_http(tmp_path: Path) -> None:
    data = tmp_path / "data"
    app_token = _site_in(data)
    process = _serve(data, stdout=subprocess.PIPE)
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 120  # a guard against a hang, not a window
        first = _read_line(process.stderr, deadline)
        match = re.fullmatch(r"basedb platform listening on (http://127\.0\.0\.1:\d+)\n", first)
        assert match, first
        url = match.group(1)
        banner = ""
        while "Press Ctrl+C" not in banner:
            banner += _read_line(process.stderr, deadline)
        token = (data / "owner.token").read_text().strip()
        assert "owner.token" in banner and token not in banner
        assert "basedb faas: sandbox" in banner  # what FaaS handlers run inside
        # The URLs are data, on stdout: the platform's, then each site's, on its page
        # origin at the port actually served (here a free one, not 8787).
        assert process.stdout is not None
        assert _read_line(process.stdout, deadline) == f"platform: {url}\n"
        urls = "".join(_read_line(process.stdout, deadline) for _ in range(4))
        page = url.replace("127.0.0.1", f"{app_token.lower()}.localhost")
        assert f"prod:    {page}/sites/{app_token}/\n" in urls
        assert f"preview: {page}/sites/{app_token}/preview/\n" in urls
        assert "prod:" not in banner, "stderr carries the status, not the URLs"

        with httpx.Client(base_url=url + API_PREFIX, timeout=10) as http:
            assert http.get("/users/me").json()["code"] == 99991661
            headers = {"Authorization": f"Bearer {token}"}
            me = http.get("/users/me", headers=headers)
            assert me.status_code == 200 and me.json()["data"]["is_platform_owner"] is True
            base = http.post("/bases", json={"name": "Over HTTP"}, headers=headers).json()
            assert base["code"] == 0
            assert http.get(url + "/openapi.json").json()["servers"][0]["url"] == url
            index = http.get(url + "/", headers=headers)
            assert index.status_code == 200
            assert f'href="{page}/sites/{app_token}/"' in index.text
            assert http.get(url + "/").status_code == 401  # where to sign in instead

        access = [json.loads(_read_line(process.stderr, deadline)) for _ in range(4)]
        assert [a["status"] for a in access] == [401, 200, 200, 200]
        assert access[1]["log_id"] == me.headers["x-tt-logid"]
        assert all(token not in json.dumps(a) for a in access)
    finally:
        interrupt(process)
    assert process.returncode == 0, process.stderr.read() if process.stderr else ""
    assert process.stdout is not None and process.stdout.read() == "", "nothing but URLs"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::"])
def test_non_loopback_hosts_are_refused(host: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["serve", "--host", host, "--data", str(tmp_path)])
    assert result.exit_code == 2
    assert "--allow-remote" in result.output and "this machine only" in result.output
    assert not (tmp_path / "owner.token").exists()


def test_loopback_hosts() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert is_loopback("127.0.0.2")
    assert not is_loopback("10.0.0.1") and not is_loopback("my-host")


def test_the_listening_socket_is_tcp_so_responses_are_not_delayed() -> None:
    # Connections accepted from it inherit its protocol; asyncio turns Nagle's algorithm
    # off (TCP_NODELAY) only for sockets that say TCP, which keep-alive latency needs.
    import socket

    from basedb.cli.serve import bind_socket

    sock = bind_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
        client = socket.create_connection(sock.getsockname())
        accepted, _ = sock.accept()
        try:
            assert accepted.proto == socket.IPPROTO_TCP
        finally:
            accepted.close()
            client.close()
    finally:
        sock.close()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_the_platform_log_of_the_last_requests_is_saved_when_serve_stops(
        tmp_path: Path, stop: signal.Signals) -> None:
    """The platform log is saved in batches; stopping the server right after a call still
    saves the call's entry (what `basedb logs LOGID` reads later)."""
    data = tmp_path / "data"
    app_token = _site_in(data)
    process = _serve(data, stdout=subprocess.DEVNULL)
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 120  # a guard against a hang, not a window
        banner = ""
        while "Press Ctrl+C" not in banner:
            banner += _read_line(process.stderr, deadline)
        url = re.search(r"listening on (http://127\.0\.0\.1:\d+)", banner).group(1)  # type: ignore[union-attr]
        token = (data / "owner.token").read_text().strip()
        with httpx.Client(base_url=url + API_PREFIX, timeout=10) as http:
            answers = [http.post(f"/sites/{app_token}/functions/missing/invoke",
                                 headers={"Authorization": f"Bearer {token}"}, json={})
                       for _ in range(3)]
    finally:
        process.send_signal(stop)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert all(answer.status_code == 409 for answer in answers)
    reopened = open_platform(data)
    try:
        with reopened.store.read() as conn:
            saved = {row[0] for row in conn.execute(
                "SELECT log_id FROM platform_log WHERE kind = 'call' AND function_id = ?",
                ("missing",))}
    finally:
        reopened.close()
    assert saved == {answer.headers["x-tt-logid"] for answer in answers}
