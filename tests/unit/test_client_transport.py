"""InProcessTransport: a synchronous httpx transport serving an ASGI app in-process.

Every test runs twice: with an app run on the transport's background loop, and with
one that declares it may run on its callers' own loops (RUNS_ON_CALLER_LOOP)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from basedb.client.transport import RUNS_ON_CALLER_LOOP, InProcessTransport

BASE = "http://basedb.local"


class Probe:
    """Shared state between a test and the app it drives."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.produced = 0
        self.worker_threads = 0
        self.per_thread = threading.local()
        self.arrived = 0
        self.stopped = threading.Event()  # set when the endless producer is closed


def make_app(probe: Probe) -> Starlette:
    async def echo(request: Request) -> Response:
        body = await request.body()
        return JSONResponse({
            "method": request.method,
            "path": request.url.path,
            "query": list(request.query_params.multi_items()),
            "auth": request.headers.get("authorization"),
            "content_type": request.headers.get("content-type"),
            "body": body.decode("utf-8"),
            "client": request.client.host if request.client else None,
        })

    async def gated(request: Request) -> Response:
        async def chunks() -> AsyncIterator[bytes]:
            yield b"first;"
            # Only continues once the test has read the first chunk: a transport that
            # buffered the whole body would never deliver it, and the wait times out.
            released = await anyio.to_thread.run_sync(probe.release.wait, 5)
            yield b"second" if released else b"timeout"

        return StreamingResponse(chunks(), media_type="text/plain")

    class Endless:
        """A raw ASGI app that sends chunks until it is stopped: being cancelled while it
        waits to send is how a closed response stops it, and it says so."""

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/octet-stream")]})
            try:
                while True:
                    probe.produced += 1
                    await send({"type": "http.response.body", "body": b"x" * 1024,
                                "more_body": True})
            finally:
                probe.stopped.set()

    async def slow(request: Request) -> Response:
        await anyio.sleep(float(request.query_params.get("s", "5")))
        return JSONResponse({"slept": True})

    async def together(request: Request) -> Response:
        # Answers once `n` requests are inside the app at the same time: serialised
        # requests never meet, and the first one gives up after 10 s.
        expected = int(request.query_params["n"])
        probe.arrived += 1
        with anyio.move_on_after(10):
            while probe.arrived < expected:
                await anyio.sleep(0.01)
        return JSONResponse({"met": probe.arrived >= expected})

    async def where(request: Request) -> Response:
        return JSONResponse({"loop": id(asyncio.get_running_loop()),
                             "thread": threading.get_ident()})

    async def boom(request: Request) -> Response:
        raise RuntimeError("the app failed")

    async def ping(request: Request) -> Response:
        return JSONResponse({"code": 0, "msg": "ok", "n": request.query_params.get("n")})

    def sync_handler(request: Request) -> Response:
        # Starlette runs plain functions in anyio worker threads; count the distinct ones.
        if not getattr(probe.per_thread, "seen", False):
            probe.per_thread.seen = True
            probe.worker_threads += 1
        return JSONResponse({"ok": True})

    return Starlette(routes=[
        Route("/sync", sync_handler),
        Route("/echo", echo, methods=["GET", "POST", "PUT", "DELETE"]),
        Route("/gated", gated),
        Route("/endless", Endless()),
        Route("/slow", slow),
        Route("/together", together),
        Route("/where", where),
        Route("/boom", boom),
        Route("/ping", ping),
    ])


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture(params=["background", "caller"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def make_transport(probe: Probe, mode: str, **options: Any) -> InProcessTransport:
    app = make_app(probe)
    setattr(app, RUNS_ON_CALLER_LOOP, mode == "caller")
    return InProcessTransport(app, **options)


@pytest.fixture
def client(probe: Probe, mode: str) -> Iterator[httpx.Client]:
    with httpx.Client(transport=make_transport(probe, mode), base_url=BASE) as c:
        yield c


def test_get_with_query_and_headers(client: httpx.Client) -> None:
    response = client.get("/echo", params={"a": "1", "b": ["x", "y"]},
                          headers={"Authorization": "Bearer abc"})
    assert response.status_code == 200
    body = response.json()
    assert body["method"] == "GET"
    assert body["path"] == "/echo"
    assert body["query"] == [["a", "1"], ["b", "x"], ["b", "y"]]
    assert body["auth"] == "Bearer abc"
    assert body["client"] == "127.0.0.1"


def test_json_body_in_memory(client: httpx.Client) -> None:
    response = client.post("/echo", json={"name": "ü"})
    assert response.json()["body"] == '{"name":"ü"}'
    assert response.json()["content_type"] == "application/json"


def test_streamed_request_body_arrives_whole(client: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        for i in range(50):
            yield f"{i:03d},".encode()

    response = client.post("/echo", content=chunks())
    assert response.json()["body"] == "".join(f"{i:03d}," for i in range(50))


def test_multipart_upload(client: httpx.Client) -> None:
    response = client.post("/echo", files={"file": ("site.zip", b"PK\x03\x04data")},
                           data={"fingerprint": "abc"})
    body = response.json()
    assert body["content_type"].startswith("multipart/form-data")
    assert "fingerprint" in body["body"] and "site.zip" in body["body"]


def test_response_streams_before_the_app_finishes(client: httpx.Client, probe: Probe) -> None:
    with client.stream("GET", "/gated") as response:
        chunks = response.iter_raw()
        assert next(chunks) == b"first;"
        probe.release.set()
        assert b"".join(chunks) == b"second"


def test_slow_reader_holds_the_app_back(client: httpx.Client, probe: Probe) -> None:
    with client.stream("GET", "/endless") as response:
        chunks = response.iter_raw()
        next(chunks)
        # Time for an unbounded producer to run far ahead; a busy machine only gives it
        # less, which cannot make the assertion fail.
        time.sleep(0.3)
        assert probe.produced <= 40
    # Closing the response early stops the app instead of leaving it producing: the
    # producer is closed (the wait is a guard against a hang, not a window).
    assert probe.stopped.wait(timeout=60), "the app kept producing after the close"
    stopped_at = probe.produced
    time.sleep(0.1)
    assert probe.produced == stopped_at


def test_app_exception_is_raised_in_the_caller(client: httpx.Client) -> None:
    with pytest.raises(RuntimeError, match="the app failed"):
        client.get("/boom")


def test_app_exception_can_become_a_500(probe: Probe, mode: str) -> None:
    transport = make_transport(probe, mode, raise_app_exceptions=False)
    with httpx.Client(transport=transport, base_url=BASE) as c:
        response = c.get("/boom")
    assert response.status_code == 500


def test_read_timeout(probe: Probe, mode: str) -> None:
    transport = make_transport(probe, mode)
    with httpx.Client(transport=transport, base_url=BASE, timeout=0.2) as c, \
            pytest.raises(httpx.ReadTimeout):
        c.get("/slow", params={"s": "5"})


def test_head_has_no_body(client: httpx.Client) -> None:
    response = client.head("/ping")
    assert response.status_code in (200, 405)
    assert response.content == b""


def test_many_threads_share_the_transport(client: httpx.Client) -> None:
    errors: list[str] = []

    def worker(index: int) -> None:
        for n in range(40):
            key = f"{index}-{n}"
            got = client.get("/ping", params={"n": key}).json()["n"]
            if got != key:
                errors.append(f"{key} != {got}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors


def test_requests_from_threads_run_concurrently(client: httpx.Client) -> None:
    answers: list[bool] = []

    def call() -> None:
        answers.append(client.get("/together", params={"n": "6"}).json()["met"])

    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert answers == [True] * 6


def test_requests_reuse_one_event_loop_thread(client: httpx.Client) -> None:
    # A new thread or event loop per request would cost several milliseconds each.
    client.get("/where")
    threads_before = threading.active_count()
    seen = {tuple(client.get("/where").json().values()) for _ in range(100)}
    assert len(seen) == 1
    assert threading.active_count() <= threads_before


def test_worker_threads_are_reused_across_requests(client: httpx.Client, probe: Probe) -> None:
    for _ in range(30):
        assert client.get("/sync").json() == {"ok": True}
    # A new worker thread per request would cost a thread start each time.
    assert probe.worker_threads <= 3


def test_repr_names_the_app(probe: Probe) -> None:
    assert "Starlette" in repr(InProcessTransport(make_app(probe)))
