"""Helpers for the deploy, pull, catalog, init, demo and doctor tests.

Every command runs against the real embedded platform in the test's isolated data dir
(tests/conftest.py). `forward_to_platform` serves a stored HTTP profile's endpoint from
the same in-process app through respx, so that faults can be injected for one route
while every other request still reaches the real platform.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import respx
from click.testing import CliRunner, Result

from basedb.cli import cli
from basedb.client.client import Client, connect
from basedb.client.profiles import LOCAL, Profile, save_profile
from basedb.client.transport import InProcessTransport
from basedb.platform import LocalPlatform, open_platform

ENDPOINT = "http://127.0.0.1:8799"
REMOTE = "remote"


def run(*args: str, cwd: Path | None = None, input: str | None = None) -> Result:
    """`basedb ARGS…` in-process; stdout and stderr kept apart."""
    previous = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, list(args), input=input, prog_name="basedb")
    finally:
        os.chdir(previous)
    platform = open_platform()
    assert platform.owner_token not in result.stdout + result.stderr, "a token was printed"
    return result


def ok_json(*args: str, cwd: Path | None = None) -> Any:
    result = run(*args, "--json", cwd=cwd)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def error_json(result: Result) -> dict[str, Any]:
    """The error envelope a failed `--json` command wrote to stderr."""
    doc = json.loads(result.stderr.strip().splitlines()[-1])
    assert doc["ok"] is False
    error: dict[str, Any] = doc["error"]
    return error


def api_data(workspace: Path, method: str, path: str, data: Any = None,
             params: dict[str, Any] | None = None) -> Any:
    """`basedb api` as an external agent calls it from `workspace`; the envelope's data."""
    args = ["api", method, path]
    if params is not None:
        args += ["--params", json.dumps(params)]
    if data is not None:
        args += ["--data", json.dumps(data, ensure_ascii=False)]
    result = run(*args, cwd=workspace)
    assert result.exit_code == 0, result.stderr
    envelope = json.loads(result.stdout)
    assert envelope["code"] == 0, envelope
    return envelope["data"]


def init_site(directory: Path, template: str = "example", *extra: str) -> Path:
    """`basedb init DIRECTORY` on the embedded platform."""
    result = run("init", str(directory), "--template", template, *extra)
    assert result.exit_code == 0, result.stderr
    return directory


def app_token_of(workspace: Path) -> str:
    from basedb.workspace.config import workspace_app_token

    return workspace_app_token(workspace)


def platform() -> LocalPlatform:
    return open_platform()


@contextmanager
def local_client() -> Iterator[Client]:
    with connect(LOCAL, embedded=open_platform) as client:
        yield client


def platform_data(method: str, path: str, body: Any = None) -> Any:
    """The `data` of one request to the embedded platform, as the local profile."""
    with local_client() as client:
        return client.request(method, path, json=body)["data"]


def forward(request: httpx.Request) -> httpx.Response:
    """Answer `request` from the embedded platform, as if it had gone over HTTP."""
    transport = InProcessTransport(open_platform().app)
    answer = transport.handle_request(request)
    content = answer.read()
    return httpx.Response(answer.status_code, headers=answer.headers, content=content)


class Faults:
    """Requests to ENDPOINT, answered by the embedded platform unless a fault says not.

    A fault matches a method and a path suffix, fires `times` times, and either never
    delivers the request (`"refused"` connection, `"timeout"`, `"reset"`, `"503"` with no
    envelope, `"500"` with one, `"404"`: no such route, `"code N STATUS"`: a business
    error, `"ctrl_c"`: the user interrupts) or delivers it and then loses the answer
    (`"applied_then_timeout"`, `"applied_then_500"`, `"applied_then_ctrl_c"`): the write
    took effect, but the client cannot know.
    """

    def __init__(self) -> None:
        self.rules: list[dict[str, Any]] = []
        self.calls: list[tuple[str, str]] = []
        self.requests: list[httpx.Request] = []  # every request, body read

    def add(self, method: str, suffix: str, kind: str, *, times: int = 1,
            after: tuple[str, str] | None = None) -> None:
        """A fault; with `after` (method, suffix) only for requests that follow one."""
        self.rules.append({"method": method, "suffix": suffix, "kind": kind, "left": times,
                           "after": after, "armed": after is None})

    def answer(self, method: str, suffix: str, response: httpx.Response) -> None:
        """Answer matching requests with `response` instead of the platform's."""
        self.rules.append({"method": method, "suffix": suffix, "kind": "answer",
                           "left": 10**6, "response": response, "armed": True})

    def count(self, method: str, suffix: str) -> int:
        return sum(1 for m, p in self.calls if m == method and p.endswith(suffix))

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.calls.append((request.method, path))
        request.read()
        self.requests.append(request)
        fired = next((rule for rule in self.rules
                      if rule["left"] and rule["armed"] and request.method == rule["method"]
                      and path.endswith(rule["suffix"])), None)
        for rule in self.rules:
            after = rule.get("after")
            if after and request.method == after[0] and path.endswith(after[1]):
                rule["armed"] = True
        if fired is None:
            return forward(request)
        fired["left"] -= 1
        if fired["kind"] == "answer":
            response: httpx.Response = fired["response"]
            return response
        return self._fault(fired["kind"], request)

    def _fault(self, kind: str, request: httpx.Request) -> httpx.Response:
        if kind.startswith("applied_then_"):
            forward(request)
            kind = kind.removeprefix("applied_then_")
        if kind == "timeout":
            raise httpx.ReadTimeout("timed out", request=request)
        if kind == "ctrl_c":  # the user presses Ctrl-C while the request is in flight
            raise KeyboardInterrupt
        if kind == "reset":
            raise httpx.ReadError("connection reset by peer", request=request)
        if kind == "refused":  # no connection: the request was never sent
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        if kind == "503":
            return httpx.Response(503, text="Service Unavailable")
        if kind == "404":  # a platform that does not have the route at all
            return httpx.Response(404, text="404 page not found")
        if kind == "500":
            return httpx.Response(500, json={"code": 500, "msg": "internal error",
                                             "error": {"log_id": "log-fault"}})
        if kind.startswith("code "):  # "code 800004011 400": a business error envelope
            _, code, status = kind.split()
            return httpx.Response(int(status), json={"code": int(code), "msg": f"refused "
                                                     f"with {code}", "error": {"log_id": "x"}})
        raise AssertionError(f"unknown fault {kind}")


@contextmanager
def forward_to_platform() -> Iterator[Faults]:
    """A stored profile `remote` at ENDPOINT whose requests reach the embedded platform,
    through `Faults`."""
    save_profile(Profile(REMOTE, ENDPOINT, open_platform().owner_token))
    faults = Faults()
    with respx.mock(base_url=ENDPOINT, assert_all_called=False) as router:
        router.route().mock(side_effect=faults.handle)
        yield faults


def site_path(app_token: str, rest: str = "") -> str:
    return f"/sites/{app_token}{rest}"
