"""The client hands a plain request to the in-process transport as its ASGI scope and
body, without httpx's Request and Response. The app must see exactly what the httpx
path gives it, and the caller get exactly what that path gives: the envelope, or the
same error after the same retries."""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import pytest

from basedb.client.client import Client
from basedb.client.retry import RetryPolicy
from basedb.client.transport import InProcessTransport
from basedb.core.errors import (
    ApiError,
    BadResponse,
    ConnectionLost,
    RateLimited,
    ServerError,
)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Recorder:
    """An app that records what it is given and answers what `answers` says next."""

    runs_on_caller_loop = True

    def __init__(self) -> None:
        self.seen: list[tuple[dict[str, Any], bytes]] = []
        self.answers: list[tuple[int, list[tuple[bytes, bytes]], list[bytes]]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.seen.append((dict(scope), body))
        status, headers, chunks = (self.answers.pop(0) if self.answers else
                                   (200, [(b"content-type", b"application/json")],
                                    [b'{"code":0,"msg":"success","data":{"n":1}}']))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        for index, chunk in enumerate(chunks):
            await send({"type": "http.response.body", "body": chunk,
                        "more_body": index < len(chunks) - 1})


class _Quiet:
    """A trace that says nothing: a traced request takes the httpx path."""

    def request(self, *args: Any) -> None: ...
    def response(self, *args: Any) -> None: ...
    def note(self, *args: Any) -> None: ...
    def failure(self, *args: Any) -> None: ...


def _client(app: Recorder, **kwargs: Any) -> Client:
    return Client(base_url="http://basedb.local", token="tok", timeout=5,
                  transport=InProcessTransport(app), **kwargs)


REQUESTS: list[tuple[str, str, Any]] = [
    ("POST", "/sites/app/functions/f/invoke", {"params": {"名": "值", "n": 1.5}}),
    ("POST", "sites/app", None),
    ("GET", "/open-apis/base/v3/bases", None),
    ("PUT", "/sites/%E4%B8%AD/x", {"a": [1, 2]}),
    ("PATCH", "/bases/b/tables/t/records/r", {}),
    ("DELETE", "/sites/app", None),
    ("DELETE", "/sites/app", {"x": None}),
    ("GET", "/bases/b/tables?page_size=5&x=%20", None),
]


@pytest.mark.parametrize(("method", "path", "body"), REQUESTS)
def test_the_app_sees_what_the_httpx_path_gives_it(method: str, path: str, body: Any) -> None:
    app = Recorder()
    client = _client(app)
    try:
        fast = client.request(method, path, json=body)
        client.trace = _Quiet()  # type: ignore[assignment]
        slow = client.request(method, path, json=body)
        client.trace = None
        again = client.request(method, path, json=body)  # the kept scope and headers
    finally:
        client.close()
    assert fast == slow == again == {"code": 0, "msg": "success", "data": {"n": 1}}
    (fast_scope, fast_body), (slow_scope, slow_body), (again_scope, again_body) = app.seen
    assert fast_scope == slow_scope == again_scope
    assert fast_body == slow_body == again_body
    assert fast_scope["method"] == method
    assert (b"authorization", b"Bearer tok") in fast_scope["headers"]


def test_the_app_may_change_its_scope_without_changing_the_next() -> None:
    app = Recorder()

    async def meddling(scope: Scope, receive: Receive, send: Send) -> None:
        scope["extensions"]["x"] = 1
        scope["asgi"]["x"] = 1
        scope["headers"].append((b"x", b"y"))
        await Recorder.__call__(app, scope, receive, send)

    meddling.runs_on_caller_loop = True  # type: ignore[attr-defined]
    client = Client(base_url="http://basedb.local", token="tok",
                    transport=InProcessTransport(meddling))
    try:
        client.request("POST", "/x", json={})
        client.request("POST", "/x", json={})
    finally:
        client.close()
    first, second = (scope for scope, _ in app.seen)
    assert first == second
    assert first["headers"].count((b"x", b"y")) == 1


def _same_failure(answers: list[tuple[int, list[tuple[bytes, bytes]], list[bytes]]],
                  method: str = "POST") -> tuple[BaseException, BaseException, int, int]:
    """The error each path raises for the same answers, and how many requests each sent."""
    errors: list[BaseException] = []
    counts: list[int] = []
    for traced in (False, True):
        app = Recorder()
        app.answers = list(answers)
        client = _client(app, retry=RetryPolicy(attempts=3, base_delay=0.0, max_delay=0.0))
        if traced:
            client.trace = _Quiet()  # type: ignore[assignment]
        try:
            with pytest.raises(Exception) as raised:
                client.request(method, "/sites/app", json={"a": 1})
        finally:
            client.close()
        errors.append(raised.value)
        counts.append(len(app.seen))
    return errors[0], errors[1], counts[0], counts[1]


def _error_view(error: BaseException) -> tuple[Any, ...]:
    return (type(error), str(error), getattr(error, "code", None),
            json.dumps(getattr(error, "detail", None), sort_keys=True, default=str))


JSON = [(b"content-type", b"application/json")]


@pytest.mark.parametrize(("answers", "kind"), [
    ([(400, JSON, [b'{"code":1254000,"msg":"bad field"}'])], ApiError),
    ([(200, JSON, [b'{"code":false,"msg":"odd"}'])], BadResponse),
    ([(200, JSON, [b"not json"])], BadResponse),
    ([(200, [(b"content-type", b"text/plain")], [b""])], BadResponse),
    ([(500, JSON, [b'{"code":1,"msg":"down"}'])], ServerError),
    ([(502, [], [b""])], BadResponse),
    ([(429, JSON, [b'{"code":0,"msg":"success"}'])] * 3, RateLimited),
])
def test_a_failure_is_the_same_on_both_paths(answers: Any, kind: type[Exception]) -> None:
    fast, slow, fast_sent, slow_sent = _same_failure(answers)
    assert isinstance(fast, kind)
    assert _error_view(fast) == _error_view(slow)
    assert fast_sent == slow_sent


def test_a_read_is_retried_after_a_server_error_on_both_paths() -> None:
    for traced in (False, True):
        app = Recorder()
        app.answers = [(503, JSON, [b'{"code":1,"msg":"down"}'])]
        client = _client(app, retry=RetryPolicy(attempts=3, base_delay=0.0, max_delay=0.0))
        if traced:
            client.trace = _Quiet()  # type: ignore[assignment]
        try:
            assert client.request("GET", "/sites")["code"] == 0
        finally:
            client.close()
        assert len(app.seen) == 2


def test_a_streamed_answer_and_a_cookie_arrive_as_on_the_httpx_path() -> None:
    app = Recorder()
    app.answers = [(200, [*JSON, (b"set-cookie", b"s=1; Path=/")],
                    [b'{"code":0,', b'"msg":"success"}'])]
    client = _client(app)
    try:
        assert client.request("POST", "/x", json={}) == {"code": 0, "msg": "success"}
        assert client._http.cookies.get("s") == "1"
        client.request("POST", "/x", json={})  # a jar with cookies: the httpx path
    finally:
        client.close()
    assert (b"cookie", b"s=1") in app.seen[1][0]["headers"]


def test_an_app_that_never_answers_times_out_as_on_the_httpx_path() -> None:
    release = threading.Event()

    async def stuck(scope: Scope, receive: Receive, send: Send) -> None:
        while not release.is_set():
            await __import__("asyncio").sleep(0.01)

    stuck.runs_on_caller_loop = True  # type: ignore[attr-defined]
    errors = []
    for traced in (False, True):
        client = Client(base_url="http://basedb.local", token="tok", timeout=0.2,
                        transport=InProcessTransport(stuck),
                        retry=RetryPolicy(attempts=1))
        if traced:
            client.trace = _Quiet()  # type: ignore[assignment]
        try:
            with pytest.raises(ConnectionLost) as lost:
                client.request("POST", "/x", json={})
            errors.append(lost.value)
        finally:
            client.close()
    release.set()
    assert _error_view(errors[0]) == _error_view(errors[1])
    assert errors[0].code == "TIMEOUT"
