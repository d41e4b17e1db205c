"""Helpers for the attack tests: the platform served on a loopback port in a thread,
raw ASGI calls that count how much of a request body the app consumed, and the event
loop's watchdog (`LoopWatchdog`), which fails an attack that holds the loop."""

from __future__ import annotations

import asyncio
import gc
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
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
    """One request straight into the ASGI app, its body offered in `chunk`-byte pieces
    (cut before the loop runs: the client's work is not the server's)."""
    pieces = [body[i:i + chunk] for i in range(0, len(body), chunk)]
    return asyncio.run(_call(app, method, path, host, headers or {}, pieces, len(body)))


async def _call(app: Any, method: str, path: str, host: str, headers: dict[str, str],
                pieces: list[bytes], size: int) -> Answer:
    consumed = 0
    sent: list[dict[str, Any]] = []
    finished = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal consumed
        if not pieces:
            await finished.wait()
            return {"type": "http.disconnect"}
        # A real transport's body arrives in pieces between which the loop runs other
        # callbacks (and the loop watchdog measures each stretch on its own).
        await asyncio.sleep(0)
        piece = pieces.pop(0)
        consumed += len(piece)
        return {"type": "http.request", "body": piece, "more_body": bool(pieces)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            finished.set()

    raw = [(b"host", host.encode()), *((k.lower().encode(), v.encode())
                                       for k, v in headers.items())]
    if size:
        raw.append((b"content-length", str(size).encode()))
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


# ------------------------------------------------------------------------ loop watchdog

# The most CPU time one callback of an event loop may take: while it runs, the server
# answers nobody else.
LOOP_STALL_LIMIT_S = 0.050


@dataclass(frozen=True)
class Stall:
    cpu_s: float
    callback: str


@dataclass
class LoopWatchdog:
    """Measures every callback an asyncio event loop runs in this process (each step of
    every task included): the CPU time its thread spent inside it, less what the garbage
    collector took meanwhile. CPU time and not wall-clock lag, so that a loaded machine
    taking the CPU away from the server never makes a callback look long, nor a slow one
    short; the collector's share is left out because it depends on everything else the
    test process holds, not on the request.

        with watchdog.installed():    # the `loop_watchdog` fixture does this
            ...attack...
        watchdog.assert_no_stall()    # fails naming the longest callbacks

    `paused()` leaves out a stretch that is not the attack (building a site through the
    API, say); `callbacks` counts what was measured, so a test can show it saw the loop
    at all.

    What it cannot see: a worker thread holding the GIL inside one long C call (a
    backtracking regex match, say) stops the loop without the loop's thread using any
    CPU. Work moved off the loop is bounded on its own terms (RE2, step budgets)."""

    limit_s: float = LOOP_STALL_LIMIT_S
    callbacks: int = 0
    asserted: bool = False  # assert_no_stall ran (the fixture does not repeat a failure)
    stalls: list[Stall] = field(default_factory=list)
    _paused: int = 0
    _gc: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def installed(self) -> Iterator[LoopWatchdog]:
        original = asyncio.events.Handle._run
        watchdog = self

        def run(handle: asyncio.Handle) -> None:
            state = watchdog._gc
            started, collected = time.thread_time(), getattr(state, "spent", 0.0)
            try:
                original(handle)
            finally:
                spent = (time.thread_time() - started
                         - (getattr(state, "spent", 0.0) - collected))
                watchdog._measured(spent, handle)

        asyncio.events.Handle._run = run  # type: ignore[method-assign]
        gc.callbacks.append(self._collecting)
        try:
            yield self
        finally:
            asyncio.events.Handle._run = original  # type: ignore[method-assign]
            gc.callbacks.remove(self._collecting)

    @contextmanager
    def paused(self) -> Iterator[None]:
        with self._lock:
            self._paused += 1
        try:
            yield
        finally:
            with self._lock:
                self._paused -= 1

    def assert_no_stall(self) -> None:
        self.asserted = True
        assert self.callbacks, "the watchdog measured no callback: no event loop ran"
        worst = sorted(self.stalls, key=lambda stall: -stall.cpu_s)[:3]
        assert not worst, (
            f"the event loop was held for more than {self.limit_s * 1000:g} ms of CPU "
            "time by: " + "; ".join(f"{s.cpu_s * 1000:.1f} ms in {s.callback}"
                                      for s in worst))

    def _measured(self, spent: float, handle: asyncio.Handle) -> None:
        with self._lock:
            if self._paused:
                return
            self.callbacks += 1
            if spent > self.limit_s:
                self.stalls.append(Stall(spent, repr(handle)[:300]))

    def _collecting(self, phase: str, info: dict[str, Any]) -> None:
        state = self._gc
        if phase == "start":
            state.started = time.thread_time()
        elif hasattr(state, "started"):
            state.spent = getattr(state, "spent", 0.0) + time.thread_time() - state.started
