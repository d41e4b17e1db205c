"""Helpers for the attack tests: the platform served on a loopback port in a thread,
and raw ASGI calls that count how much of a request body the app consumed."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from basedb.platform.web import serving


@contextmanager
def served(app: Any, *, head_timeout_s: float = serving.HEAD_TIMEOUT_S,
           forwarded_allow_ips: str | None = None) -> Iterator[int]:
    """Serve `app` as `basedb serve` does (uvicorn with the guarded protocol) on a free
    loopback port; yields the port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    instance = serving.server(app, head_timeout_s=head_timeout_s,
                              forwarded_allow_ips=forwarded_allow_ips)
    thread = threading.Thread(target=serving.run, args=(instance, sock), daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not instance.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield int(sock.getsockname()[1])
    finally:
        instance.should_exit = True
        thread.join(timeout=20)
        sock.close()


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    consumed: int  # request body bytes the app pulled through receive()


def call(app: Any, method: str, path: str, *, host: str = "localhost",
         headers: dict[str, str] | None = None, body: bytes = b"",
         chunk: int = 64 * 1024) -> Answer:
    """One request straight into the ASGI app, its body offered in `chunk`-byte pieces."""
    return asyncio.run(_call(app, method, path, host, headers or {}, body, chunk))


async def _call(app: Any, method: str, path: str, host: str, headers: dict[str, str],
                body: bytes, chunk: int) -> Answer:
    pieces = [body[i:i + chunk] for i in range(0, len(body), chunk)]
    consumed = 0
    sent: list[dict[str, Any]] = []
    finished = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal consumed
        if not pieces:
            await finished.wait()
            return {"type": "http.disconnect"}
        piece = pieces.pop(0)
        consumed += len(piece)
        return {"type": "http.request", "body": piece, "more_body": bool(pieces)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            finished.set()

    raw = [(b"host", host.encode()), *((k.lower().encode(), v.encode())
                                       for k, v in headers.items())]
    if body:
        raw.append((b"content-length", str(len(body)).encode()))
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "headers": raw,
             "client": ("127.0.0.1", 1), "server": (host, 80)}
    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    return Answer(start["status"],
                  {k.decode().lower(): v.decode() for k, v in start.get("headers", [])},
                  b"".join(m.get("body", b"") for m in sent
                           if m["type"] == "http.response.body"), consumed)
