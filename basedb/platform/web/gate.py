"""The gate every HTTP request passes before routing (`RequestGate`): its log id and
platform log, the host guard, the body guard against a body that stalls, routing errors
as envelopes, the last line of defence, and the access log.

The gate leaves the request's log id (`LOG_ID_KEY`) in the ASGI scope for the handlers,
and a handler leaves the caller's user id (`USER_ID_KEY`) for the access log.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from json.encoder import encode_basestring
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from basedb import protocol
from basedb.core.frozen import frozen_dataclass
from basedb.platform.storage import platform_log, server_output
from basedb.platform.storage.ids import new_log_id
from basedb.platform.web.context import AppContext
from basedb.platform.web.origins import HOST_KEY, classify_host
from basedb.platform.web.responses import (
    failure_response,
    http_failure,
    report_unexpected,
    unexpected_response,
)
from basedb.protocol import ApiFailure

LOG_ID_KEY = "basedb.log_id"
USER_ID_KEY = "basedb.user_id"


async def http_exception_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    log_id = request.scope.get(LOG_ID_KEY) or new_log_id()
    return failure_response(http_failure(request.method, request.url.path, exc), log_id)


@frozen_dataclass
class BodyTimeouts:
    """How long a request body may take: `idle_s` between two chunks, `total_s` in all."""

    idle_s: float = 10.0
    total_s: float = 120.0


_HOST_NOT_ALLOWED = (
    "This platform does not answer to the host name the request was sent to. Fix: use the "
    "address `basedb serve` printed (127.0.0.1 or localhost), a site's page address "
    "(<app>.localhost), or set BASEDB_PUBLIC_URL to the name it is reached by. Executed: "
    "no. Retry: retry after fixing.")
_BODY_STALLED = (
    "The request body stopped arriving before it was complete. Fix: send the whole body "
    "without pauses. Executed: no. Retry: retry after fixing.")


class RequestGate:
    """The one layer every HTTP request passes before routing, in this order:

    - a log id (header `X-Tt-Logid`) and the app's platform log for the request;
    - the host guard: only the platform's own host names (basedb.platform.web.origins)
      are answered; any other `Host` (a DNS-rebinding page's, say) gets 421 before
      routing. The classified host is left in the scope for the routes;
    - the body guard (slowloris): a body that stalls for `idle_s`, or is still arriving
      after `total_s`, fails the read with 408. A response that starts before the whole
      body was read says `Connection: close`, so the server closes the connection
      instead of reading (or waiting for) the rest;
    - routing errors (404, 405) as envelopes, and the last line of defence: anything
      that escapes becomes the safe 500 envelope;
    - one JSON access-log line per request on stderr, when enabled.

    One layer rather than a stack of middlewares: each layer costs every request a
    coroutine, a `send` wrapper and a look through the headers."""

    def __init__(self, app: ASGIApp, *, context: AppContext | None = None,
                 access_log: bool = False, private_names: frozenset[str] = frozenset(),
                 timeouts: BodyTimeouts | None = None) -> None:
        self.app = app
        self.context = context
        self.access_log = access_log
        self.private_names = private_names
        self.timeouts = timeouts or BodyTimeouts()
        self._stalls = _StallWatches(self.timeouts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        log_id = new_log_id()
        scope[LOG_ID_KEY] = log_id
        started = time.perf_counter()
        host_header = length = None
        chunked = False
        for name, value in scope["headers"]:
            if name == b"host":
                host_header = value if host_header is None else host_header
            elif name == b"content-length":
                length = value
            elif name == b"transfer-encoding":
                chunked = True
        exchange = _Exchange(complete=not chunked and length in (None, b"", b"0"))
        host = None if host_header is None else classify_host(
            host_header.decode("latin-1"), private_names=self.private_names)
        if host is None:
            failure = ApiFailure(protocol.Code.HOST_NOT_ALLOWED, _HOST_NOT_ALLOWED, status=421)
            await self._answer(failure_response(failure, log_id), scope, receive, send,
                               exchange, log_id, started)
            return
        scope[HOST_KEY] = host
        log_scope = platform_log.LogScope(log_id)
        log_header = (b"x-tt-logid", log_id.encode("ascii"))
        writer = self.context.log_writer if self.context is not None else None

        async def gated_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                # Handed to the log writer before the answer leaves; readers of the log
                # wait for it, so `basedb logs LOGID` finds what a failed call's message
                # points at.
                if writer is not None:
                    writer.submit(log_scope)
                exchange.status = message["status"]
                exchange.started = True
                headers = [*message.get("headers", ()), log_header]
                if not exchange.complete and not any(
                        name.lower() == b"connection" for name, _ in headers):
                    headers.append((b"connection", b"close"))
                message["headers"] = headers
            await send(message)

        gated_receive = receive if exchange.complete else self._guarded(receive, exchange)
        log_file = self.context.log_file if self.context is not None else None
        try:
            with platform_log.request_logging(log_scope, log_file):
                try:
                    await self.app(scope, gated_receive, gated_send)
                except Exception as exc:
                    if exchange.started:
                        report_unexpected(exc, log_id, scope["method"], scope["path"])
                        if writer is not None:
                            writer.submit(log_scope)
                    elif isinstance(exc, HTTPException):  # routing: 404, 405
                        response = await http_exception_handler(Request(scope), exc)
                        await response(scope, receive, gated_send)
                    else:
                        response = unexpected_response(exc, log_id, scope["method"],
                                                       scope["path"])
                        await response(scope, receive, gated_send)
        finally:
            if self.access_log:
                write_access_line(scope, log_id, exchange.status,
                                  (time.perf_counter() - started) * 1000)

    def _guarded(self, receive: Receive, exchange: _Exchange) -> Receive:
        """`receive`, failing with 408 once the body stalls or takes too long in all."""
        timeouts = self.timeouts
        watch = self._stalls.of_running_loop()
        started = watch.loop.time()

        async def guarded_receive() -> Message:
            if exchange.complete:
                return await receive()
            deadline = min(watch.loop.time() + timeouts.idle_s, started + timeouts.total_s)
            task = asyncio.current_task()
            assert task is not None
            entry = watch.add(task, deadline)
            try:
                message = await receive()
            except asyncio.CancelledError:
                if entry.expired and task.uncancel() <= entry.cancelling:
                    raise ApiFailure(protocol.Code.REQUEST_TIMEOUT, _BODY_STALLED, status=408,
                                     headers={"Connection": "close"}) from None
                raise
            finally:
                watch.discard(task, entry)
            if message["type"] != "http.request" or not message.get("more_body", False):
                exchange.complete = True
            return message

        return guarded_receive

    async def _answer(self, response: Response, scope: Scope, receive: Receive, send: Send,
                      exchange: _Exchange, log_id: str, started: float) -> None:
        """Send an answer made before routing (with the log id header)."""
        response.headers["x-tt-logid"] = log_id
        if not exchange.complete:
            response.headers["connection"] = "close"
        try:
            await response(scope, receive, send)
        finally:
            if self.access_log:
                write_access_line(scope, log_id, response.status_code,
                                  (time.perf_counter() - started) * 1000)


@dataclass(slots=True)
class _Waiting:
    deadline: float  # on the loop's clock
    cancelling: int  # the task's cancel requests when it started waiting
    expired: bool = False


class _StallWatch:
    """The body reads waiting on one event loop, and one timer that fails those past
    their deadline (by cancelling the task, which the read turns into 408). One timer
    for all rather than one per read: a read's timer, armed and cancelled around every
    body, cost a request more than the rest of the gate. A stalled read fails at most
    `interval_s` after its deadline."""

    def __init__(self, loop: asyncio.AbstractEventLoop, interval_s: float) -> None:
        self.loop = loop
        self._interval_s = interval_s
        self._waiting: dict[asyncio.Task[Any], _Waiting] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add(self, task: asyncio.Task[Any], deadline: float) -> _Waiting:
        entry = _Waiting(deadline, task.cancelling())
        self._waiting[task] = entry
        if self._timer is None:
            self._timer = self.loop.call_later(self._interval_s, self._check)
        return entry

    def discard(self, task: asyncio.Task[Any], entry: _Waiting) -> None:
        if self._waiting.get(task) is entry:
            del self._waiting[task]

    def _check(self) -> None:
        self._timer = None
        now = self.loop.time()
        for task, entry in list(self._waiting.items()):
            if not entry.expired and now >= entry.deadline:
                entry.expired = True
                task.cancel()
        if self._waiting:
            self._timer = self.loop.call_later(self._interval_s, self._check)


class _StallWatches:
    """An app's `_StallWatch` for each event loop it runs on (an embedded app may serve
    on several, one per thread)."""

    def __init__(self, timeouts: BodyTimeouts) -> None:
        self._interval_s = min(1.0, max(0.01, timeouts.idle_s / 10))
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _StallWatch] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()

    def of_running_loop(self) -> _StallWatch:
        loop = asyncio.get_running_loop()
        watch = self._by_loop.get(loop)
        if watch is None:
            with self._lock:
                watch = self._by_loop.setdefault(loop, _StallWatch(loop, self._interval_s))
        return watch


@dataclass(slots=True)
class _Exchange:
    complete: bool  # the whole request body has been received
    status: int = 500
    started: bool = False


def write_access_line(scope: Scope, log_id: str, status: int, ms: float) -> None:
    """One structured line per request; never headers (they carry the token). The line
    `json.dumps` makes of {"ts", "log_id", "method", "path", "status", "ms", "user_id"},
    written out field by field: a dict and the encoder's walk over it cost a request
    more than the write."""
    user_id = scope.get(USER_ID_KEY)
    server_output.STDERR.write(
        f'{{"ts": {_string(_timestamp(int(time.time())))}, "log_id": {_string(log_id)}, '
        f'"method": {_string(scope["method"])}, "path": {_string(scope["path"])}, '
        f'"status": {int(status)!r}, "ms": {float(round(ms, 2))!r}, '
        f'"user_id": {"null" if user_id is None else _string(user_id)}}}\n')


_string: Callable[[str], str] = encode_basestring  # a JSON string, as json.dumps writes it


@lru_cache(maxsize=4)
def _timestamp(second: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(second))
