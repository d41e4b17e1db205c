"""The `basedb dev` server: what a hostile web page, another local user's browser tab or
a curious script can make of it. It serves the workspace's page and calls functions as
the developer, so it must answer only its own pages, only on loopback, and never serve
a file outside src/."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from basedb.cli import cli
from basedb.dev.files import lookup, safe_segments
from tests.cli.deploy_support import init_site
from tests.dev_support import Dev, dev_session


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dev]:
    tmp = tmp_path_factory.mktemp("dev")
    with pytest.MonkeyPatch.context() as patch:
        for name in ("config", "data", "state"):
            patch.setenv(f"BASEDB_{name.upper()}_DIR", str(tmp / name))
        patch.setenv("BASEDB_SECRET_STORE", "file")
        root = init_site(tmp / "site")
        (tmp / "secret.txt").write_text("top secret", encoding="utf-8")
        (root / "src" / "leak").symlink_to(tmp / "secret.txt")
        (root / "src" / "leakdir").symlink_to(tmp)
        (root / "src" / ".env").write_text("TOKEN=hidden", encoding="utf-8")
        with dev_session(root) as running:
            yield running


def _raw(dev: Dev, request: bytes) -> bytes:
    """Send a request exactly as written (no client normalising the path)."""
    with socket.create_connection(("127.0.0.1", dev.runner.port), timeout=30) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _get(dev: Dev, path: str, host: str | None = None) -> bytes:
    host = host if host is not None else f"127.0.0.1:{dev.runner.port}"
    return _raw(dev, f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
                .encode())


def _status(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


@pytest.mark.parametrize("path", [
    "/sites/{app}/../../base-database.jsonc",
    "/sites/{app}/%2e%2e/base-database.jsonc",
    "/sites/{app}/..%2f..%2fbase-database.jsonc",
    "/sites/{app}/leak",
    "/sites/{app}/leakdir/secret.txt",
    "/sites/{app}/.env",
    "/sites/{app}/%2eenv",
    "/sites/{app}/a%5c..%5c..%5cbase-database.jsonc",
    "/sites/{app}/index.html%00.js",
    "/sites/{app}//etc/passwd",
])
def test_no_file_outside_src_is_served(dev: Dev, path: str) -> None:
    response = _get(dev, path.format(app=dev.session.site.app_token))
    assert _status(response) in (400, 404), response[:200]
    assert b"top secret" not in response and b"TOKEN=hidden" not in response
    assert b"appToken" not in response


def test_the_lookup_refuses_unsafe_segments_before_touching_the_disk(tmp_path: Path) -> None:
    for path in ("..", "a/../b", ".git/config", "a//b", "a\\b", "x\x00y"):
        assert safe_segments(path) is None, path
    (tmp_path / "src").mkdir()
    os.symlink("/etc/passwd", tmp_path / "src" / "passwd")
    os.mkfifo(tmp_path / "src" / "fifo")  # a FIFO would block a naive reader forever
    assert lookup(tmp_path / "src", "passwd").file is None
    assert lookup(tmp_path / "src", "fifo").file is None


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.nip.io:{port}",
                                  "localhost.evil:{port}", ""])
def test_another_host_name_is_refused(dev: Dev, host: str) -> None:
    """DNS rebinding: a hostile name resolved to 127.0.0.1 sends its own Host."""
    response = _get(dev, f"/sites/{dev.session.site.app_token}/",
                    host=host.format(port=dev.runner.port))
    assert _status(response) in (400, 421)


@pytest.mark.parametrize("site", ["same-site", "cross-site"])
def test_a_page_on_another_port_cannot_include_the_scripts(dev: Dev, site: str) -> None:
    """A `<script src>` from a page on another localhost port: no Origin, and
    Sec-Fetch-Site says same-site."""
    with dev.http() as http:
        for path in (f"/sites/{dev.session.site.app_token}/app.js",
                     f"/sites/{dev.session.site.app_token}/", "/_basedb/dev/client.js"):
            answer = http.get(path, headers={"Sec-Fetch-Site": site, "Sec-Fetch-Dest":
                                             "script", "Sec-Fetch-Mode": "no-cors"})
            assert answer.status_code == 403, (path, answer.text[:200])
        for own in ("same-origin", "none"):
            page = http.get(f"/sites/{dev.session.site.app_token}/",
                            headers={"Sec-Fetch-Site": own})
            assert page.status_code == 200, own


def test_a_call_from_another_origin_is_refused(dev: Dev) -> None:
    with dev.http() as http:
        path = f"/open-apis/base/v3/sites/{dev.session.site.app_token}/functions/" \
               "listMembers/invoke"
        for headers in ({"Origin": "http://evil.example", "X-Basedb-Page": "1"},
                        {"Origin": "null", "X-Basedb-Page": "1"},
                        {"Sec-Fetch-Site": "cross-site", "X-Basedb-Page": "1"}):
            answer = http.post(path, json={"params": {}}, headers=headers)
            assert answer.status_code == 403, headers
            assert "rows" not in answer.text
        # A form post or a plain fetch cannot add the runtime's header.
        plain = http.post(path, json={"params": {}})
        assert plain.status_code == 400 and plain.json()["code"] == 9499
        # Another site is never called through this server.
        other = http.post(path.replace(dev.session.site.app_token, "PrjOther"),
                          json={"params": {}}, headers={"X-Basedb-Page": "1"})
        assert other.status_code == 404
        events = http.get("/_basedb/dev/client.js", headers={"Origin": "http://evil.example"})
        assert events.status_code == 403


@pytest.mark.parametrize(("method", "suffix"), [
    ("POST", "functions/summarizeLeave/stream"), ("GET", "ai-tasks/tskSomeTask")])
def test_the_sdks_other_calls_hold_to_the_same_rules(dev: Dev, method: str,
                                                     suffix: str) -> None:
    app = dev.session.site.app_token
    path = f"/open-apis/base/v3/sites/{app}/{suffix}"
    body = {"params": {}} if method == "POST" else None
    with dev.http() as http:
        for headers in ({"Origin": "http://evil.example", "X-Basedb-Page": "1"},
                        {"Sec-Fetch-Site": "cross-site", "X-Basedb-Page": "1"}):
            assert http.request(method, path, json=body, headers=headers).status_code == 403
        plain = http.request(method, path, json=body)
        assert plain.status_code == 400 and plain.json()["code"] == 9499
        other = http.request(method, path.replace(app, "PrjOther"), json=body,
                             headers={"X-Basedb-Page": "1"})
        assert other.status_code == 404
        if method == "POST":
            huge = http.post(path, content=b"{" + b" " * (3 * 1024 * 1024) + b"}",
                             headers={"X-Basedb-Page": "1"})
            assert huge.status_code == 413
        # With the header, from its own page: the platform's answer (the AI Function's
        # missing input, or no such task), never a refusal of the dev server's.
        answer = http.request(method, path, json=body, headers={"X-Basedb-Page": "1"})
        assert answer.json()["code"] in (800004002, 800004001), answer.text
        assert "LogID" in answer.json()["msg"] or answer.headers["x-tt-logid"]


def test_a_huge_call_body_is_refused_and_the_server_stays_healthy(dev: Dev) -> None:
    with dev.http() as http:
        path = f"/open-apis/base/v3/sites/{dev.session.site.app_token}/functions/" \
               "listMembers/invoke"
        answer = http.post(path, content=b"{" + b" " * (3 * 1024 * 1024) + b"}",
                           headers={"X-Basedb-Page": "1", "Content-Type": "application/json"})
        assert answer.status_code == 413
        bad = http.post(path, content=b"{not json", headers={"X-Basedb-Page": "1"})
        assert bad.status_code == 400
        assert dev.invoke("listMembers", {}).json()["code"] == 0


def test_the_server_listens_on_loopback_only_unless_asked(tmp_path: Path) -> None:
    root = init_site(tmp_path / "site")
    result = CliRunner().invoke(cli, ["dev", "-C", str(root), "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "DEV_REMOTE_HOST" in result.output or "loopback" in result.output.lower() \
        or "this machine only" in result.output
