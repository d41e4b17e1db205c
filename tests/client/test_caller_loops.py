"""The in-process transport running a declaring app on its callers' own event loops:
which loop serves whom, and what is left once the transport is closed.

Nothing here depends on a timing window: timeouts only guard against a hang.
"""

from __future__ import annotations

import asyncio
import os
import threading
import warnings
from collections.abc import Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from basedb.client.transport import RUNS_ON_CALLER_LOOP, InProcessTransport

BASE = "http://basedb.local"
GUARD_S = 60.0


def make_app(entered: threading.Event | None = None) -> Starlette:
    async def where(request: Request) -> Response:
        return JSONResponse({"loop": id(asyncio.get_running_loop()),
                             "thread": threading.get_ident()})

    def sync_where(request: Request) -> Response:  # in an anyio worker thread
        return JSONResponse({"thread": threading.get_ident()})

    async def forever(request: Request) -> Response:
        if entered is not None:
            entered.set()
        await asyncio.Event().wait()
        return JSONResponse({})

    app = Starlette(routes=[Route("/where", where), Route("/sync", sync_where),
                            Route("/forever", forever)])
    setattr(app, RUNS_ON_CALLER_LOOP, True)
    return app


@pytest.fixture
def transport() -> Iterator[InProcessTransport]:
    found = InProcessTransport(make_app())
    yield found
    found.close()


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_the_app_runs_on_the_calling_thread(transport: InProcessTransport) -> None:
    with httpx.Client(transport=transport, base_url=BASE) as client:
        seen = client.get("/where").json()
        assert seen["thread"] == threading.get_ident()
        assert client.get("/where").json() == seen  # the same loop, request after request


def test_each_thread_has_its_own_loop(transport: InProcessTransport) -> None:
    client = httpx.Client(transport=transport, base_url=BASE)
    answers: dict[int, dict[str, int]] = {}
    all_called = threading.Barrier(4, timeout=GUARD_S)

    def call() -> None:
        answers[threading.get_ident()] = client.get("/where").json()
        all_called.wait()  # every loop is alive at once: no id is reused

    threads = [threading.Thread(target=call) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(GUARD_S)
    assert all(seen["thread"] == ident for ident, seen in answers.items())
    assert len({seen["loop"] for seen in answers.values()}) == 4


def test_a_caller_inside_an_event_loop_is_served_elsewhere(transport: InProcessTransport) -> None:
    """Sync code called from async code cannot run the app on its own (running) loop: it
    is served on the transport's background loop instead of failing."""
    client = httpx.Client(transport=transport, base_url=BASE)

    async def main() -> dict[str, int]:
        return dict(client.get("/where").json())

    seen = asyncio.run(main())
    assert seen["thread"] != threading.get_ident()


def test_closing_leaves_no_thread_loop_or_descriptor() -> None:
    """Short-lived threads each call once (a sync handler: each loop starts a worker
    thread); loops of ended threads are closed as new ones are made, and close() ends
    the rest, with their worker threads and file descriptors, without a warning."""
    threads_before = set(threading.enumerate())
    fds_before = open_fds()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        transport = InProcessTransport(make_app())
        client = httpx.Client(transport=transport, base_url=BASE)
        for _ in range(12):
            caller = threading.Thread(target=lambda: client.get("/sync").raise_for_status())
            caller.start()
            caller.join(GUARD_S)
        # At most the last thread's loop is still open, with its worker thread.
        assert open_fds() <= fds_before + 8
        client.close()
        for thread in set(threading.enumerate()) - threads_before:
            thread.join(GUARD_S)
            assert not thread.is_alive(), thread.name
        assert open_fds() == fds_before


def test_close_mid_call_gives_the_caller_an_error() -> None:
    entered = threading.Event()
    transport = InProcessTransport(make_app(entered))
    client = httpx.Client(transport=transport, base_url=BASE, timeout=None)
    failures: list[BaseException] = []

    def call() -> None:
        try:
            client.get("/forever")
        except BaseException as exc:
            failures.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    assert entered.wait(GUARD_S)
    transport.close()
    caller.join(GUARD_S)
    assert not caller.is_alive()
    [failure] = failures
    assert isinstance(failure, httpx.ReadError)


def test_a_closed_transport_serves_again(transport: InProcessTransport) -> None:
    client = httpx.Client(transport=transport, base_url=BASE)
    first = client.get("/where").json()
    transport.close()
    again = client.get("/where").json()
    assert again["thread"] == first["thread"]
    transport.close()


def test_a_loop_closes_cleanly_right_after_an_answer() -> None:
    """An app that answers within one turn of the loop leaves its finished task's
    callbacks for the next turn: closing the loop then must not trip over them."""
    transport = InProcessTransport(make_app())
    with httpx.Client(transport=transport, base_url=BASE) as client:
        first = client.get("/where").json()
        assert client.get("/where").json() == first
        transport.close()
        assert client.get("/where").json()["thread"] == threading.get_ident()
    transport.close()
