"""The request layer under attack: bodies from unknown callers, huge and slow bodies,
slow heads (slowloris), foreign Host names (DNS rebinding), and what a probe can learn
from the answers (issue findings 5 and 6)."""

from __future__ import annotations

import selectors
import socket
import threading
import time
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from basedb.core.paths import API_PREFIX
from basedb.platform import LocalPlatform
from basedb.platform.web.app import build_app
from basedb.platform.web.gate import BodyTimeouts
from basedb.platform.web.http import DEFAULT_BODY_LIMIT
from basedb.platform.web.routes import all_endpoints
from basedb.protocol import Code
from tests.platform.conftest import Api, assert_error_shape
from tests.security.support import call, served

BIG = 63 * 1024 * 1024
BODY_ENDPOINTS = [e for e in all_endpoints() if e.auth and e.body is not None]


# ------------------------------------------------------- bodies before the caller


@pytest.mark.parametrize("endpoint", BODY_ENDPOINTS,
                         ids=[f"{e.method} {e.full_path}" for e in BODY_ENDPOINTS])
def test_no_body_is_read_before_the_caller_is_known(endpoint: Any,
                                                    platform: LocalPlatform) -> None:
    path = endpoint.full_path.replace("{app_token}", "PrjNope")
    for headers in ({}, {"Authorization": "Bearer bdb_not_a_token_at_all"}):
        # text/plain: what any web page may send cross-origin without a preflight.
        answer = call(platform.app, endpoint.method, path, body=b"x" * (4 * 1024 * 1024),
                      headers={**headers, "Content-Type": "text/plain"})
        assert answer.status == 401, answer.body[:200]
        assert answer.consumed == 0
        assert answer.headers["connection"] == "close"


def test_a_63_mb_body_without_a_token_is_answered_before_it_is_sent(
        platform: LocalPlatform) -> None:
    with served(platform.app) as port, socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(10)
        sock.sendall(f"POST {API_PREFIX}/bases HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     f"Content-Type: text/plain\r\nContent-Length: {BIG}\r\n\r\n".encode()
                     + b"x" * 65536)
        answer = _read_until_closed(sock)
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    assert head.startswith(b"http/1.1 401") and b"connection: close" in head
    assert b"99991661" in answer


def test_a_body_over_the_limit_is_refused_as_it_streams(api: Api,
                                                        platform: LocalPlatform) -> None:
    owner = {"Authorization": f"Bearer {api.token}", "Content-Type": "application/json"}
    declared = call(platform.app, "POST", f"{API_PREFIX}/bases", headers=owner,
                    body=b" " * (DEFAULT_BODY_LIMIT * 8))
    assert declared.status == 413 and declared.consumed == 0
    streamed = call(platform.app, "POST", f"{API_PREFIX}/bases", headers={
        **owner, "Transfer-Encoding": "chunked"}, body=b" " * (DEFAULT_BODY_LIMIT * 8))
    assert streamed.status == 413
    assert streamed.consumed <= DEFAULT_BODY_LIMIT + 64 * 1024


def _read_until_closed(sock: socket.socket) -> bytes:
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


# --------------------------------------------------------------------- slowloris


def test_trickling_connections_do_not_stay_open(platform: LocalPlatform, api: Api) -> None:
    """300 connections: half send their head a byte at a time, half a body; each is
    closed once its deadline passes, and meanwhile the server answers others."""
    app = build_app(platform.store, data_dir=platform.data_dir,
                    body_timeouts=BodyTimeouts(idle_s=1.0, total_s=2.0))
    with served(app, head_timeout_s=1.0) as port:
        heads = [f"GET {API_PREFIX}/users/me HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode()
                 + b"X-Slow: " + b"a" * 10_000] * 150
        body_head = (f"POST {API_PREFIX}/bases HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     f"Authorization: Bearer {api.token}\r\nContent-Type: application/json\r\n"
                     "Content-Length: 100000\r\n\r\n").encode()
        bodies = [b'{"name": "' + b"a" * 99_000] * 150
        selector = selectors.DefaultSelector()
        pending: dict[socket.socket, bytes] = {}
        for script in heads:
            pending[socket.create_connection(("127.0.0.1", port))] = script
        for script in bodies:
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(body_head)
            pending[sock] = script
        for sock in pending:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        answered = threading.Event()

        def meanwhile() -> None:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}{API_PREFIX}",
                              timeout=30) as http:
                me = http.get("/users/me", headers={"Authorization": f"Bearer {api.token}"})
                if me.status_code == 200:
                    answered.set()

        other = threading.Thread(target=meanwhile)
        other.start()
        open_ = set(pending)
        deadline = time.monotonic() + 60
        while open_ and time.monotonic() < deadline:
            for sock in list(open_):  # one more byte each, every 0.2 s
                try:
                    sent = sock.send(pending[sock][:1])
                    pending[sock] = pending[sock][sent:]
                except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                    pass
            for key, _ in selector.select(timeout=0.2):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    if sock.recv(65536):
                        continue  # the 408 answer; the close follows
                except (BlockingIOError, ConnectionResetError):
                    pass
                selector.unregister(sock)
                open_.discard(sock)
        other.join(timeout=30)
        for sock in pending:
            sock.close()
    assert not open_, f"{len(open_)} trickling connections were still open"
    assert answered.is_set()


# --------------------------------------------------------------------- Host names


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8787", "127.0.0.1.nip.io",
                                  "localhost.evil.example", "a.b.localhost", ""])
def test_foreign_host_names_are_refused(host: str, platform: LocalPlatform,
                                        api: Api) -> None:
    """A DNS-rebinding page (its own name resolving to 127.0.0.1) sends its own Host."""
    for path in (f"{API_PREFIX}/users/me", "/openapi.json", "/_basedb/runtime.js",
                 "/sites/PrjX/"):
        answer = call(platform.app, "GET", path, host=host,
                      headers={"Authorization": f"Bearer {api.token}"})
        assert answer.status == 421, (host, path)
        assert b"421" in answer.body and b"is_platform_owner" not in answer.body


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1:8787", "[::1]:8787",
                                  "LOCALHOST:8787", "10.1.2.3"])
def test_its_own_names_are_served(host: str, platform: LocalPlatform, api: Api) -> None:
    answer = call(platform.app, "GET", f"{API_PREFIX}/users/me", host=host,
                  headers={"Authorization": f"Bearer {api.token}"})
    assert answer.status == 200


def test_the_public_url_host_is_served(platform: LocalPlatform, api: Api,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    headers = {"Authorization": f"Bearer {api.token}"}
    path = f"{API_PREFIX}/users/me"
    assert call(platform.app, "GET", path, host="basedb.example.com",
                headers=headers).status == 421
    monkeypatch.setenv("BASEDB_PUBLIC_URL", "https://basedb.example.com")
    assert call(platform.app, "GET", path, host="basedb.example.com",
                headers=headers).status == 200


# ------------------------------------------------------------------ one answer


def test_no_such_site_and_not_yours_answer_alike(api: Api, client: TestClient) -> None:
    base = api.ok("POST", "/bases", json={"name": "Secret"})["base_token"]
    site = api.ok("POST", "/sites/create", json={"title": "Secret"})["appToken"]
    probe = api.as_user(api.ok("POST", "/users", json={"name": "Probe"})["token"])
    pairs = [(f"/sites/{site}", "/sites/PrjNope0000000000"),
             (f"/sites/{site}/functions", "/sites/PrjNope0000000000/functions"),
             (f"/sites/{site}/deployments", "/sites/PrjNope0000000000/deployments"),
             (f"/sites/{site}/draft/functions", "/sites/PrjNope0000000000/draft/functions"),
             (f"/bases/{base}/tables", "/bases/basNope00000000000000000/tables")]
    for real, bogus in pairs:
        mine, nothing = probe.call("GET", real), probe.call("GET", bogus)
        assert_error_shape(mine)
        assert (mine.status_code, mine.json()["code"]) == (nothing.status_code,
                                                          nothing.json()["code"]) == (404, 9499)
        strip = [site, base, "PrjNope0000000000", "basNope00000000000000000"]
        assert _without(mine.json()["msg"], strip) == _without(nothing.json()["msg"], strip)
    invoke = probe.call("POST", f"/sites/{site}/functions/f/invoke", json={"params": {}})
    assert invoke.status_code == 404 and invoke.json()["code"] == Code.BAD_REQUEST


def _without(msg: str, tokens: list[str]) -> str:
    msg = msg.rsplit(" LogID: ", 1)[0]
    for token in tokens:
        msg = msg.replace(token, "<id>")
    return msg
