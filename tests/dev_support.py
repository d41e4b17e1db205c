"""A `basedb dev` session on the example site, served in a background thread, and a
reader of its live-reload channel (Server-Sent Events over a raw loopback socket)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from basedb.cli.serve import bind_socket
from basedb.client.sites import SiteApi
from basedb.dev.run import DevRunner
from basedb.dev.session import DevSession, platform_log_details
from basedb.workspace.config import workspace_app_token
from tests.cli.deploy_support import local_client

WAIT_S = 30.0  # a ceiling for slow machines, not a timing window: events end the waits


@dataclass
class Dev:
    runner: DevRunner
    session: DevSession
    lines: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.runner.port}"

    @property
    def page_url(self) -> str:
        return self.runner.url

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, timeout=WAIT_S)

    def invoke(self, function_id: str, params: dict[str, Any]) -> httpx.Response:
        with self.http() as http:
            return http.post(f"/open-apis/base/v3/sites/{self.session.site.app_token}/"
                             f"functions/{function_id}/invoke", json={"params": params},
                             headers={"X-Basedb-Page": "1"})

    def wait_for_line(self, text: str) -> str:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if text in line:
                    return line
            time.sleep(0.02)
        raise AssertionError(f"no line with {text!r} in:\n" + "\n".join(self.lines))


@contextmanager
def dev_session(root: Path) -> Iterator[Dev]:
    """`basedb dev` on `root` (on the embedded platform), stopped and cleaned up after."""
    with local_client() as client:
        lines: list[str] = []
        site = SiteApi(client, workspace_app_token(root))
        session = DevSession(root=root, site=site, out=lines.append,
                             log_details=platform_log_details(site))
        sock = bind_socket("127.0.0.1", 0)
        runner = DevRunner(session, sock=sock, host="127.0.0.1")
        session.start()
        thread = threading.Thread(target=asyncio.run, args=(runner.serve(),), daemon=True)
        thread.start()
        _wait_until_listening(runner.port)
        try:
            yield Dev(runner=runner, session=session, lines=lines)
        finally:
            runner.stop()
            thread.join(WAIT_S)
            sock.close()
            session.close()
            assert not thread.is_alive(), "the dev server did not stop"


def _wait_until_listening(port: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/_basedb/dev/client.js", timeout=WAIT_S)
            return
        except httpx.TransportError:
            time.sleep(0.02)
    raise AssertionError("the dev server did not start")


class EventStream:
    """The page's side of the live-reload channel: events as (name, data)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
        self.sock.sendall(b"GET /_basedb/dev/events HTTP/1.1\r\nHost: 127.0.0.1:"
                          + str(port).encode() + b"\r\nAccept: text/event-stream\r\n\r\n")
        self.buffer = b""
        head = self._until(b"\r\n\r\n")
        assert b" 200 " in head.split(b"\r\n", 1)[0], head

    def _until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise AssertionError("the event stream ended")
            self.buffer += chunk
        found, self.buffer = self.buffer.split(marker, 1)
        return found

    def next(self) -> tuple[str, Any]:
        """The next event (comments and chunk-size lines of the chunked body skipped)."""
        while True:
            block = self._until(b"\n\n").decode()
            name, data = None, None
            for line in block.splitlines():
                if line.startswith("event: "):
                    name = line[len("event: "):]
                elif line.startswith("data: "):
                    data = json.loads(line[len("data: "):])
            if name is not None:
                return name, data

    def close(self) -> None:
        self.sock.close()
