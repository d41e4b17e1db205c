"""Fixtures for the local platform: a fresh data dir, the real app in-process."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest
from starlette.testclient import TestClient

from basedb.core.paths import API_PREFIX
from basedb.platform import LocalPlatform, open_platform


class Response(Protocol):
    """What tests read of a response (TestClient's or httpx's)."""

    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...

    @property
    def headers(self) -> Any: ...

    def json(self) -> Any: ...


class Api:
    """Calls the platform as one user; paths are relative to the API prefix."""

    def __init__(self, client: TestClient, token: str | None) -> None:
        self.client = client
        self.token = token

    def as_user(self, token: str | None) -> Api:
        return Api(self.client, token)

    def call(self, method: str, path: str, *, json: Any = None, params: Any = None,
             content: bytes | None = None) -> Response:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return self.client.request(method, API_PREFIX + path, json=json, params=params,
                                   content=content, headers=headers)

    def ok(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.call(method, path, **kwargs)
        body = response.json()
        assert response.status_code == 200 and body["code"] == 0, body
        return body["data"]

    def fail(self, method: str, path: str, *, code: int, status: int | None = None,
             **kwargs: Any) -> str:
        """Assert the call fails with `code`; returns the message."""
        response = self.call(method, path, **kwargs)
        body = response.json()
        assert body["code"] == code, body
        if status is not None:
            assert response.status_code == status, body
        assert_error_shape(response)
        return message_without_log_id(body)


def message_without_log_id(body: dict[str, Any]) -> str:
    """The error message without its closing `LogID: <id>`, which must be there."""
    msg, suffix = str(body["msg"]), f" LogID: {body['error']['log_id']}"
    assert msg.endswith(suffix), msg
    return msg[: -len(suffix)]


def assert_error_shape(response: Response) -> None:
    body = response.json()
    assert set(body) <= {"code", "msg", "error", "data"}, body
    assert isinstance(body["code"], int) and body["code"] != 0
    assert isinstance(body["msg"], str) and 0 < len(body["msg"]) <= 500
    assert isinstance(body["error"]["log_id"], str) and body["error"]["log_id"]
    assert response.headers["x-tt-logid"] == body["error"]["log_id"]
    assert response.status_code >= 400
    lowered = body["msg"].lower()
    assert "traceback" not in lowered and "sqlite" not in lowered
    assert not re.search(r"\bselect\b.*\bfrom\b|\binsert into\b|\bupdate \w+ set\b", lowered)


@pytest.fixture
def platform(tmp_path: Path) -> Iterator[LocalPlatform]:
    found = open_platform(tmp_path / "data")
    yield found
    found.close()


@pytest.fixture
def client(platform: LocalPlatform) -> Iterator[TestClient]:
    with TestClient(platform.app, base_url="http://localhost") as test_client:
        yield test_client


@pytest.fixture
def api(client: TestClient, platform: LocalPlatform) -> Api:
    return Api(client, platform.owner_token)


@pytest.fixture
def base(api: Api) -> str:
    return str(api.ok("POST", "/bases", json={"name": "Work"})["base_token"])


def make_table(api: Api, base: str, name: str, fields: list[dict[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = api.ok("POST", f"/bases/{base}/tables",
                                  json={"name": name, "fields": fields})
    return data


def field_id(table: dict[str, Any], name: str) -> str:
    return next(str(f["id"]) for f in table["fields"] if f["name"] == name)
