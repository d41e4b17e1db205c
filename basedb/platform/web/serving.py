"""Serving the app over a socket (`basedb serve`): uvicorn, with what it lacks for a
server strangers can reach.

uvicorn closes an idle keep-alive connection, but puts no limit on how long a client may
take to send a request's head (the request line and headers): a client trickling one
header byte at a time holds its connection, and a few hundred such clients hold the
server (slowloris). `GuardedH11Protocol` gives every request head a deadline; the body
has its own (`basedb.platform.web.gate.RequestGate`), so every connection either
makes progress or is closed.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
from typing import Any

import anyio.to_thread
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5
# Threads for synchronous handlers (SQLite work): more than the Database Function calls
# the SQL runtime lets wait for a worker (basedb.platform.domain.runtimes.sql_pool), so
# that calls waiting for a turn never hold up anyone else's request.
WORKER_THREADS = 160


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request head does not arrive
    within `head_timeout_s` of the connection opening or the previous response ending."""

    head_timeout_s = HEAD_TIMEOUT_S

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._cycle_seen: object = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._head_arrived():
            self._disarm_head_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # A pipelined request's head may have been parsed already.
        if not self._head_arrived() and not self.transport.is_closing():
            self._arm_head_timer()

    def _head_arrived(self) -> bool:
        """Whether uvicorn started a request cycle since the last look."""
        if self.cycle is not None and self.cycle is not self._cycle_seen:
            self._cycle_seen = self.cycle
            return True
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def _arm_head_timer(self) -> None:
        self._disarm_head_timer()
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        # Armed only while no request is under way: the head is late, or never came.
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(head_timeout_s: float = HEAD_TIMEOUT_S) -> type[GuardedH11Protocol]:
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"head_timeout_s": head_timeout_s})


def server(app: Any, *, head_timeout_s: float = HEAD_TIMEOUT_S,
           forwarded_allow_ips: str | None = None) -> uvicorn.Server:
    """A uvicorn server for the platform app (run it with `serve(server, sock)`).

    `X-Forwarded-For` and `X-Forwarded-Proto` count only from the proxies listed in
    `forwarded_allow_ips` (comma-separated addresses or networks, `*` for any); without
    it they are ignored. uvicorn's own default trusts them from 127.0.0.1, so any local
    process, or a page reaching the server through the loopback, could name itself
    another client, and the per-client sign-in throttles would count each name apart."""
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            http=guarded_protocol(head_timeout_s),
                            timeout_keep_alive=KEEP_ALIVE_S,
                            proxy_headers=forwarded_allow_ips is not None,
                            forwarded_allow_ips=forwarded_allow_ips or "")
    return uvicorn.Server(config)


def preload(instance: uvicorn.Server) -> None:
    """What the first request would otherwise load: uvicorn's protocol and app wrapping,
    and anyio's asyncio backend with its worker threads (one round trip through them)."""
    instance.config.load()
    anyio.run(anyio.to_thread.run_sync, lambda: None)


class Terminated(Exception):
    """SIGTERM arrived: the server has shut down gracefully (uvicorn passes the signal on
    once it has), and the caller's clean-up still runs."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def run(instance: uvicorn.Server, sock: socket.socket) -> None:
    """Serve on `sock` until stopped (Ctrl+C raises KeyboardInterrupt, SIGTERM returns),
    with the worker thread pool sized for the platform. uvicorn shuts down gracefully on
    either, then raises the signal again with the handler it found: SIGTERM's default
    would end the process there, before the caller has saved what it holds."""
    if threading.current_thread() is not threading.main_thread():
        asyncio.run(_serve(instance, sock))  # signals reach the main thread only
        return
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        asyncio.run(_serve(instance, sock))
    except Terminated:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


async def _serve(instance: uvicorn.Server, sock: socket.socket) -> None:
    anyio.to_thread.current_default_thread_limiter().total_tokens = WORKER_THREADS
    await instance.serve(sockets=[sock])
