"""The access log: one JSON line per request on stderr, never the token; off by default."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform
from basedb.platform.web.app import build_app


def test_one_line_per_request_without_the_token(platform: LocalPlatform,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    app = build_app(platform.store, data_dir=platform.data_dir, access_log=True)
    with TestClient(app, base_url="http://localhost") as client:
        ok = client.get("/open-apis/base/v3/users/me",
                        headers={"Authorization": f"Bearer {platform.owner_token}"})
        denied = client.get("/open-apis/base/v3/users/me?x=1")
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert len(lines) == 2
    first, second = lines
    assert set(first) == {"ts", "log_id", "method", "path", "status", "ms", "user_id"}
    assert first["log_id"] == ok.headers["x-tt-logid"] and first["status"] == 200
    assert first["method"] == "GET" and first["path"] == "/open-apis/base/v3/users/me"
    assert first["user_id"] == ok.json()["data"]["user_id"] and first["ms"] >= 0
    assert second["status"] == 401 and second["user_id"] is None
    assert second["log_id"] == denied.headers["x-tt-logid"]
    assert platform.owner_token not in json.dumps(lines)


def test_quiet_by_default(client: TestClient, platform: LocalPlatform,
                          capsys: pytest.CaptureFixture[str]) -> None:
    client.get("/open-apis/base/v3/users/me",
               headers={"Authorization": f"Bearer {platform.owner_token}"})
    assert capsys.readouterr().err == ""
