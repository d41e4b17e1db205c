"""Run an ASGI app in-process behind a synchronous httpx transport.

The embedded `local` profile talks to the local platform without a socket, so plain
synchronous code (and many threads at once) can use
`httpx.Client(transport=InProcessTransport(app))` as it would any HTTP server. Where
the app runs:

- on the calling thread, when the app declares it may (a true `RUNS_ON_CALLER_LOOP`
  attribute) and the thread is not itself running an event loop: each calling thread
  gets an event loop of its own, which runs while the thread waits for its answer
  (`basedb.client.caller_loop`). No thread switch unless the app hands work to a
  worker thread; requests from several threads run side by side, one loop each;
- otherwise on an event loop in a background thread of the transport, started on first
  use: the calling thread blocks on a queue while that loop serves the request.

A caller holding a request's ASGI scope and whole body may skip httpx's Request and
Response (`answer_in_memory`): on the calling thread's loop, a response the app sends
whole comes back as (status, headers, body).

Bodies stream both ways: a request body that is not already in memory is pulled chunk
by chunk from a worker thread, and response chunks reach the caller as the app sends
them, with a bounded number in flight so a slow reader holds back the app rather than
buffering an unbounded body. `close()` (the client's) cancels what still runs, closes
the loops and stops the background thread.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from concurrent.futures import Future
from functools import partial
from typing import Any, Protocol

import anyio
import anyio.to_thread
import httpx

from basedb.client.caller_loop import CallerLoop, CallerLoops, Exchange, LoopClosed

ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[dict[str, Any]]],
     Callable[[MutableMapping[str, Any]], Awaitable[None]]],
    Awaitable[None],
]

Answer = tuple[int, list[tuple[bytes, bytes]], bytes]
"""A response the app sent whole: status, headers as sent, body."""

# Response chunks the app may send ahead of the reader before it has to wait.
_CHUNKS_IN_FLIGHT = 16
# How often a blocked writer re-checks whether the reader has gone away (seconds).
_POLL_INTERVAL = 0.05

RUNS_ON_CALLER_LOOP = "runs_on_caller_loop"
"""The attribute by which an ASGI app declares that it may run on its callers' own event
loops, which stand still between their requests. A true value promises that:

- nothing the app schedules on the event loop for a request has to progress once the
  response has been sent (its background work runs in threads of its own, and a
  timer left behind may fire late or never);
- whatever it keeps per event loop it keeps per running loop (several run at once);
- it needs no lifespan events (this transport sends none, on either path).

Its responses may stream and may take long (a long poll): the calling thread runs the
app while it waits for them, as it would wait on a socket."""


class _EventLoopThread:
    """One daemon thread running an event loop (anyio on asyncio), for the requests of one
    transport that cannot run on their caller's loop.

    Requests are scheduled with `asyncio.run_coroutine_threadsafe`, which hands the app
    to the loop without waiting for it (an anyio blocking portal waits for the task to be
    spawned first: one more thread round trip per request, about 40 µs). The loop runs a
    long-lived root task, so anyio keeps its worker threads (Starlette runs sync code in
    them) alive across requests instead of starting new ones for each. Daemon, so a
    forgotten client never keeps the interpreter alive; stopped when the transport is
    closed (or collected, or at exit) so in-flight app tasks are cancelled rather than
    frozen mid-write.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._pid = 0

    def loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is not None and self._pid == os.getpid():
            return loop
        with self._lock:
            # A forked child inherits the object but not the thread: start afresh.
            if self._loop is None or self._pid != os.getpid():
                self._start()
                self._pid = os.getpid()
            assert self._loop is not None
            return self._loop

    def _start(self) -> None:
        ready: Future[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = Future()

        async def root() -> None:
            stop = asyncio.Event()
            ready.set_result((asyncio.get_running_loop(), stop))
            await stop.wait()

        def run() -> None:
            try:
                anyio.run(root)  # on return, tasks still running are cancelled
            except BaseException as exc:
                if not ready.done():
                    ready.set_exception(exc)

        thread = threading.Thread(target=run, name="basedb-inprocess-asgi", daemon=True)
        thread.start()
        self._loop, self._stop = ready.result()
        self._thread = thread

    def stop(self) -> None:
        with self._lock:
            loop, stop, thread = self._loop, self._stop, self._thread
            self._loop, self._stop, self._thread = None, None, None
        if loop is None or stop is None or thread is None or self._pid != os.getpid():
            return
        if not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=5)



class _Exchange:
    """The state of one request/response exchange between a caller thread and the app."""

    def __init__(self) -> None:
        # Messages for the caller: ("start", status, headers), ("body", bytes),
        # ("done", None), ("error", exception), or the response in one piece once the
        # app has returned: ("whole", status, (headers, body)).
        self.inbox: queue.SimpleQueue[tuple[str, Any, Any]] = queue.SimpleQueue()
        self.credits = threading.Semaphore(_CHUNKS_IN_FLIGHT)
        self.closed = threading.Event()
        self.future: Future[None] | None = None

    def wait_for_credit(self) -> bool:
        """Block (in a worker thread) until the reader takes a chunk or goes away."""
        while not self.closed.is_set():
            if self.credits.acquire(timeout=_POLL_INTERVAL):
                return True
        return False

    def close(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        future = self.future
        if future is not None and not future.done():
            future.cancel()  # cancels the app task in the event loop


class _ResponseStream(httpx.SyncByteStream):
    """The response body, read in the caller's thread as the app produces it."""

    def __init__(self, exchange: _Exchange, request: httpx.Request, read_timeout: float | None,
                 raise_app_exceptions: bool) -> None:
        self._exchange = exchange
        self._request = request
        self._read_timeout = read_timeout
        self._raise = raise_app_exceptions

    def __iter__(self) -> Iterator[bytes]:
        exchange = self._exchange
        while not exchange.closed.is_set():
            kind, value, _ = _next_message(exchange, self._request, self._read_timeout)
            if kind == "body":
                exchange.credits.release()
                if value:
                    yield value
            elif kind == "done":
                return
            elif kind == "error":
                if self._raise:
                    raise value
                return

    def close(self) -> None:
        self._exchange.close()


def _next_message(exchange: _Exchange, request: httpx.Request,
                  timeout: float | None) -> tuple[str, Any, Any]:
    try:
        return exchange.inbox.get(timeout=timeout)
    except queue.Empty:
        exchange.close()
        raise _read_timeout(timeout, request) from None


class InProcessTransport(httpx.BaseTransport):
    """A synchronous httpx transport that serves requests from an ASGI app in-process.

    `raise_app_exceptions` (default True, as in httpx's ASGITransport) re-raises an
    exception escaping the app in the calling thread; with False the caller sees the
    response the app sent, or an empty 500 when it sent none.
    """

    def __init__(self, app: ASGIApp, *, raise_app_exceptions: bool = True,
                 root_path: str = "", client: tuple[str, int] = ("127.0.0.1", 123)) -> None:
        self.app = app
        self.raise_app_exceptions = raise_app_exceptions
        self.root_path = root_path
        self.client = client
        self._caller_loops = (CallerLoops() if getattr(app, RUNS_ON_CALLER_LOOP, False) is True
                              else None)
        self._background = _EventLoopThread()
        # Whatever is left open when the transport is forgotten (or at exit) is closed
        # without waiting for threads still running a loop.
        self._finalizer = weakref.finalize(self, _release, self._caller_loops,
                                           self._background)

    def __repr__(self) -> str:
        return f"InProcessTransport(app={type(self.app).__name__})"

    def close(self) -> None:
        """Cancel the requests still running (their callers get an error), close the
        calling threads' event loops and stop the background one. A later request
        starts afresh."""
        if self._caller_loops is not None:
            self._caller_loops.close()
        self._background.stop()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout") or {}
        read_timeout = timeouts.get("read")
        if self._caller_loops is not None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:  # no loop running in this thread: run the app here
                return self._handle_here(request, self._caller_loops.current(), read_timeout)
        exchange = _Exchange()
        exchange.future = asyncio.run_coroutine_threadsafe(self._serve(request, exchange),
                                                           self._background.loop())

        kind, value, extra = _next_message(exchange, request, read_timeout)
        if kind == "whole":
            # The app has returned: nothing is left to cancel.
            exchange.closed.set()
            headers, content = extra
            return httpx.Response(value, headers=headers, content=content,
                                  extensions={"http_version": b"HTTP/1.1"})
        if kind == "start":
            stream = _ResponseStream(exchange, request, read_timeout, self.raise_app_exceptions)
            return httpx.Response(value, headers=extra, stream=stream,
                                  extensions={"http_version": b"HTTP/1.1"})
        exchange.close()
        if kind == "error" and self.raise_app_exceptions:
            raise value
        # The app ended (or failed) without starting a response.
        return httpx.Response(500, headers=[], content=b"")

    def _handle_here(self, request: httpx.Request, caller: CallerLoop,
                     read_timeout: float | None) -> httpx.Response:
        """Serve the request on the calling thread's own loop."""
        answer = self._answer_here(caller, self.scope_of(request), _request_body(request),
                                   read_timeout, request)
        if isinstance(answer, httpx.Response):
            return answer
        status, headers, content = answer
        return httpx.Response(status, headers=headers, content=content,
                              extensions={"http_version": b"HTTP/1.1"})

    def answer_in_memory(self, scope: dict[str, Any], content: bytes,
                         read_timeout: float | None) -> Answer | httpx.Response | None:
        """Serve a request whose body is `content`, described by its ASGI `scope` (as
        `handle_request` would make it), on the calling thread's own loop, without an
        httpx Request: the response in one piece (status, headers, body) when the app
        sent it all before returning, as an httpx Response when its body still streams
        (or the app sent none: an empty 500), or None, having sent nothing, when the
        request cannot run on the calling thread (then use `handle_request`). Errors are
        those of `handle_request`, without a request attached."""
        if self._caller_loops is None:
            return None
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop running in this thread: run the app here
            pending: list[bytes] = [content] if content else []

            async def from_memory() -> bytes | None:
                return pending.pop() if pending else None

            return self._answer_here(self._caller_loops.current(), scope, from_memory,
                                     read_timeout, None)
        return None

    def _answer_here(self, caller: CallerLoop, scope: dict[str, Any],
                     body_chunks: Callable[[], Awaitable[bytes | None]],
                     read_timeout: float | None,
                     request: httpx.Request | None) -> Answer | httpx.Response:
        """Run the app on the calling thread's loop: the whole response, or a Response
        whose body streams (`request`, if any, is named by the errors)."""
        exchange = Exchange(_CHUNKS_IN_FLIGHT)
        try:
            with caller.driving():
                caller.spawn(exchange, partial(self._serve_here, scope, body_chunks,
                                               request))
                if not caller.wait_for(exchange, read_timeout):
                    caller.cancel(exchange)  # ends when the loop next runs
                    raise _read_timeout(read_timeout, request)
                kind, value, extra = exchange.take()
                if kind == "start":
                    # Most apps send their whole body before the loop stops: hand it
                    # over in one piece. A body still to come streams.
                    chunks: list[bytes] = []
                    messages = exchange.messages
                    while messages and messages[0][0] == "body":
                        chunks.append(exchange.take()[1])
                    if messages and messages[0][0] == "done":
                        return value, extra, (chunks[0] if len(chunks) == 1
                                              else b"".join(chunks))
                    stream = _CallerLoopStream(caller, exchange, request, read_timeout,
                                               self.raise_app_exceptions, chunks)
                    return httpx.Response(value, headers=extra, stream=stream,
                                          extensions={"http_version": b"HTTP/1.1"})
        except LoopClosed as exc:
            raise httpx.ReadError(str(exc), request=request) from None
        if kind == "error" and self.raise_app_exceptions:
            raise value
        # The app ended (or failed) without starting a response.
        return httpx.Response(500, headers=[], content=b"")

    def scope_of(self, request: httpx.Request) -> dict[str, Any]:
        """The ASGI scope the app is given for `request`."""
        url = request.url
        default_port = 443 if url.scheme == "https" else 80
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": url.scheme,
            "path": url.path,
            "raw_path": url.raw_path.split(b"?", 1)[0],
            "query_string": url.query,
            "root_path": self.root_path,
            "headers": [(name.lower(), value) for name, value in request.headers.raw],
            "server": (url.host, url.port or default_port),
            "client": self.client,
            "extensions": {},
        }

    async def _serve(self, request: httpx.Request, exchange: _Exchange) -> None:
        """Run the app for one request (in the event loop thread).

        Each message handed to the caller wakes its thread, so a response whose whole
        body follows its start without the app waiting in between (most responses) is
        handed over once, as one "whole" message, when the app returns. A response that
        streams, or whose app waits on something after starting it, goes out as it
        comes: the held start (and body) leaves as soon as the loop regains control."""
        inbox = exchange.inbox
        response_started = False
        response_complete = anyio.Event()
        receive = _receiver(_request_body(request), response_complete)
        # The start (status, headers) and the final body, while they are held back.
        held: tuple[int, list[Any]] | None = None
        held_body: bytes | None = None

        def release_held() -> None:
            nonlocal held, held_body
            if held is None:
                return
            inbox.put(("start", held[0], held[1]))
            if held_body:
                exchange.credits.acquire(blocking=False)  # the first chunk: credits remain
                inbox.put(("body", held_body, None))
            held, held_body = None, None

        async def send(message: MutableMapping[str, Any]) -> None:
            nonlocal response_started, held, held_body
            if message["type"] == "http.response.start":
                if response_started:
                    raise RuntimeError("The app sent http.response.start twice.")
                response_started = True
                held = (message["status"], list(message.get("headers", [])))
                # Released when the loop next runs callbacks, i.e. once the app waits.
                asyncio.get_running_loop().call_soon(release_held)
            elif message["type"] == "http.response.body":
                if not response_started or response_complete.is_set():
                    raise RuntimeError("The app sent a body outside a response.")
                if exchange.closed.is_set():
                    # ASGI 2.4: send() raises OSError once the client has gone.
                    raise OSError("The client closed the response.")
                body = bytes(message.get("body", b"")) if request.method != "HEAD" else b""
                more_body = message.get("more_body", False)
                if held is not None and not more_body:
                    held_body = body
                    response_complete.set()
                    return
                release_held()
                if body:
                    if (not exchange.credits.acquire(blocking=False)
                            and not await anyio.to_thread.run_sync(
                                exchange.wait_for_credit, abandon_on_cancel=True)):
                        raise OSError("The client closed the response.")
                    inbox.put(("body", body, None))
                if not more_body:
                    response_complete.set()

        try:
            await self.app(self.scope_of(request), receive, send)
        except anyio.get_cancelled_exc_class():
            release_held()
            inbox.put(("error", httpx.ReadError("The request was cancelled.", request=request),
                       None))
            raise
        except Exception as exc:  # delivered to the caller, who decides whether to raise
            release_held()
            inbox.put(("error", exc, None))
            return
        if not response_started:
            inbox.put(("error", RuntimeError("The app returned without sending a response."),
                       None))
            return
        if held is not None:
            status, headers = held
            held = None
            inbox.put(("whole", status, (headers, held_body or b"")))
            return
        inbox.put(("done", None, None))


    async def _serve_here(self, scope: dict[str, Any],
                          body_chunks: Callable[[], Awaitable[bytes | None]],
                          request: httpx.Request | None, exchange: Exchange) -> None:
        """Run the app for one request on a caller loop, putting what it sends in
        `exchange`. Never raises: a cancelled request must not end the loop's others."""
        response_started = False
        response_complete = asyncio.Event()
        receive = _receiver(body_chunks, response_complete)
        head = scope["method"] == "HEAD"

        async def send(message: MutableMapping[str, Any]) -> None:
            nonlocal response_started
            if message["type"] == "http.response.start":
                if response_started:
                    raise RuntimeError("The app sent http.response.start twice.")
                response_started = True
                exchange.put(("start", message["status"], list(message.get("headers", []))))
            elif message["type"] == "http.response.body":
                if not response_started or response_complete.is_set():
                    raise RuntimeError("The app sent a body outside a response.")
                more_body = message.get("more_body", False)
                body = b"" if head else bytes(message.get("body", b""))
                if body:
                    if more_body:
                        await exchange.wait_for_room()
                    if exchange.closed:
                        # ASGI 2.4: send() raises OSError once the client has gone.
                        raise OSError("The client closed the response.")
                    exchange.put(("body", body, None))
                if not more_body:
                    response_complete.set()

        try:
            await self.app(scope, receive, send)
        except asyncio.CancelledError:
            exchange.put(("error", httpx.ReadError("The request was cancelled.",
                                                   request=request), None))
            return
        except Exception as exc:  # delivered to the caller, who decides whether to raise
            exchange.put(("error", exc, None))
            return
        if not response_started:
            exchange.put(("error", RuntimeError("The app returned without sending a response."),
                          None))
            return
        exchange.put(("done", None, None))


class _CallerLoopStream(httpx.SyncByteStream):
    """A response body still coming from an app on a caller loop: reading it runs the loop
    (whichever thread reads), so the app goes on only as fast as it is read."""

    def __init__(self, caller: CallerLoop, exchange: Exchange, request: httpx.Request | None,
                 read_timeout: float | None, raise_app_exceptions: bool,
                 first: list[bytes]) -> None:
        self._caller = caller
        self._exchange = exchange
        self._request = request
        self._read_timeout = read_timeout
        self._raise = raise_app_exceptions
        self._first = first

    def __iter__(self) -> Iterator[bytes]:
        first, self._first = self._first, []
        yield from first
        exchange = self._exchange
        while not exchange.closed:
            try:
                with self._caller.driving():
                    arrived = bool(exchange.messages) or self._caller.wait_for(
                        exchange, self._read_timeout)
                    if arrived:
                        kind, value, _ = exchange.take()
            except LoopClosed as exc:
                raise httpx.ReadError(str(exc), request=self._request) from None
            if not arrived:
                self.close()
                raise _read_timeout(self._read_timeout, self._request)
            if kind == "body":
                yield value
            elif kind == "done":
                exchange.closed = True
                return
            elif kind == "error":
                exchange.closed = True
                if self._raise:
                    raise value
                return

    def close(self) -> None:
        task = self._exchange.task
        if task is not None and not task.done():
            self._caller.stop(self._exchange)
        self._exchange.closed = True


def _read_timeout(timeout: float | None, request: httpx.Request | None) -> httpx.ReadTimeout:
    return httpx.ReadTimeout(f"The in-process app sent nothing for {timeout:g}s.",
                             request=request)


def _release(caller_loops: CallerLoops | None, background: _EventLoopThread) -> None:
    """Close what a forgotten transport left open."""
    if caller_loops is not None:
        caller_loops.close(wait=False)
    background.stop()


class _Event(Protocol):  # asyncio.Event or anyio.Event
    async def wait(self) -> Any: ...


def _receiver(body_chunks: Callable[[], Awaitable[bytes | None]],
              response_complete: _Event) -> Callable[[], Awaitable[dict[str, Any]]]:
    """The app's `receive` for a request whose body `body_chunks` gives chunk by chunk
    (None at the end): its body, then (once the response is complete) a disconnect."""
    request_complete = False

    async def receive() -> dict[str, Any]:
        nonlocal request_complete
        if request_complete:
            await response_complete.wait()
            return {"type": "http.disconnect"}
        chunk = await body_chunks()
        if chunk is None:
            request_complete = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.request", "body": chunk, "more_body": True}

    return receive


def _request_body(request: httpx.Request) -> Callable[[], Awaitable[bytes | None]]:
    """A coroutine function returning the next request body chunk, or None at the end.

    A body already in memory (JSON, forms, small uploads) is handed over in one piece;
    any other stream is iterated in a worker thread so the event loop never blocks on it.
    """
    stream = request.stream
    if isinstance(stream, httpx.ByteStream):
        content = b"".join(stream)
        pending: list[bytes] = [content] if content else []

        async def from_memory() -> bytes | None:
            return pending.pop() if pending else None

        return from_memory

    if not isinstance(stream, httpx.SyncByteStream):
        raise TypeError("InProcessTransport needs a synchronous request body.")
    iterator = iter(stream)

    def next_chunk() -> bytes | None:
        for chunk in iterator:
            if chunk:
                return bytes(chunk)
        return None

    async def from_stream() -> bytes | None:
        return await anyio.to_thread.run_sync(next_chunk)

    return from_stream
