"""The access log: one JSON line per request on stderr, never the token; off by default."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform
from basedb.platform.web.app import build_app
from basedb.platform.web.gate import USER_ID_KEY, write_access_line


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


@pytest.mark.parametrize("path", ["/open-apis/base/v3/users/me", '/é"\\\n\t\x00\u2028/x',
                                  "/日本/x"])
@pytest.mark.parametrize("user_id", [None, "ou_1", 'é"x'])
@pytest.mark.parametrize("ms", [0.0, 1.23456, 12345.678, 1e-9, 3.0])
def test_each_line_is_what_json_dumps_writes(path: str, user_id: str | None, ms: float,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    scope = {"method": "POST", "path": path, USER_ID_KEY: user_id}
    write_access_line(scope, "20260101000000ABCDEF", 200, ms)
    line = capsys.readouterr().err
    expected = {"ts": json.loads(line)["ts"], "log_id": "20260101000000ABCDEF",
                "method": "POST", "path": path, "status": 200, "ms": round(ms, 2),
                "user_id": user_id}
    assert line == json.dumps(expected, ensure_ascii=False) + "\n"


def test_a_signed_in_page_request_is_logged_with_its_viewer(
        platform: LocalPlatform, capsys: pytest.CaptureFixture[str]) -> None:
    from basedb.platform.web.origins import site_label
    from tests.platform.conftest import Api
    from tests.platform.release_support import deploy, functions_body, task_site
    from tests.platform.sign_in_support import sign_in

    app = build_app(platform.store, data_dir=platform.data_dir, access_log=True)
    with TestClient(app, base_url="http://localhost") as client:
        api = Api(client, platform.owner_token)
        site = task_site(api)
        api.ok("PUT", f"/sites/{site.app_token}/draft/functions", json=functions_body())
        deploy(api, site.app_token)
        me = api.ok("GET", "/users/me")["user_id"]
    with TestClient(app, base_url=f"http://{site_label(site.app_token)}.localhost") as tab:
        sign_in(tab, platform.owner_token)
        capsys.readouterr()
        assert tab.get(f"/sites/{site.app_token}/preview/").status_code == 200
    line = json.loads(capsys.readouterr().err.splitlines()[-1])
    assert line["path"] == f"/sites/{site.app_token}/preview/"
    assert line["status"] == 200 and line["user_id"] == me
