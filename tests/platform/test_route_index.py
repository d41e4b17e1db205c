"""The route index (`basedb/platform/web/routes/index.py`) that an embedded platform routes
by: it lists every endpoint of the route modules, and an app built from it routes as the
app built from the modules themselves, loading a route group only when one of its routes
is called."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from starlette.routing import Route
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform
from basedb.platform.web.app import build_app
from basedb.platform.web.routes import (
    INDEX_PATH,
    LazyHandler,
    render_route_index,
    route_index,
)
from basedb.platform.web.routes.index import ROUTE_INDEX


def test_the_checked_in_index_lists_every_route_of_the_route_modules() -> None:
    assert INDEX_PATH.read_text(encoding="utf-8") == render_route_index(route_index()), (
        "basedb/platform/web/routes/index.py is stale: run "
        "python -m basedb.platform.web.openapi --write")
    assert route_index() == ROUTE_INDEX


def _routes(app: object) -> list[tuple[str, list[str]]]:
    routes = app.router.routes  # type: ignore[attr-defined]
    return [(route.path, sorted(route.methods or ())) for route in routes
            if isinstance(route, Route)]


def test_a_lazy_app_routes_as_the_eager_one(platform: LocalPlatform) -> None:
    eager = build_app(platform.store, data_dir=platform.data_dir)
    lazy = build_app(platform.store, data_dir=platform.data_dir, lazy_routes=True)
    assert _routes(lazy) == _routes(eager)
    assert len(_routes(lazy)) > 20


def test_a_lazy_app_takes_the_direct_routes_of_the_eager_one(platform: LocalPlatform) -> None:
    eager = build_app(platform.store, data_dir=platform.data_dir)
    lazy = build_app(platform.store, data_dir=platform.data_dir, lazy_routes=True)
    direct = [[(route.method, route.path) for route in app._direct]  # type: ignore[attr-defined]
              for app in (eager, lazy)]
    assert direct[0] == direct[1]
    assert direct[0], "no route is direct: the invoke route should be"


def test_a_lazy_route_answers_as_the_eager_one(platform: LocalPlatform) -> None:
    headers = {"Authorization": f"Bearer {platform.owner_token}"}
    answers = []
    for lazy in (False, True):
        app = build_app(platform.store, data_dir=platform.data_dir, lazy_routes=lazy)
        with TestClient(app, base_url="http://localhost") as client:
            me = client.get("/open-apis/base/v3/users/me", headers=headers)
            missing = client.get("/open-apis/base/v3/sites/nosuchsite/deployments",
                                 headers=headers)
            wrong_method = client.delete("/open-apis/base/v3/users/me", headers=headers)
        answers.append((me.status_code, me.json()["data"], missing.status_code,
                        missing.json()["code"], wrong_method.status_code,
                        wrong_method.headers.get("allow")))
    assert answers[0] == answers[1]
    assert answers[0][0] == 200


def test_a_stale_index_entry_fails_loudly(platform: LocalPlatform) -> None:
    handler = LazyHandler("users", "GET", "/open-apis/base/v3/users/nobody", platform.app
                          .state.context)
    try:
        handler.load()
    except LookupError as error:
        assert "route index is stale" in str(error)
    else:
        raise AssertionError("a route its module does not define was loaded")


def test_the_embedded_platform_loads_only_the_route_groups_it_is_asked_for(
        tmp_path: Path) -> None:
    code = f"""
import json, sys
from pathlib import Path
from starlette.testclient import TestClient
from basedb.platform import open_platform

platform = open_platform(Path({str(tmp_path / "data")!r}))
def groups():
    return sorted(name.rsplit(".", 1)[1] for name in sys.modules
                  if name.startswith("basedb.platform.web.routes."))
before = groups()
with TestClient(platform.app, base_url="http://localhost") as client:
    answer = client.get("/open-apis/base/v3/users/me",
                        headers={{"Authorization": f"Bearer {{platform.owner_token}}"}})
print(json.dumps({{"before": before, "after": groups(), "status": answer.status_code,
                  "invoke": "basedb.platform.domain.invoke" in sys.modules}}))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    seen = json.loads(result.stdout)
    assert seen["status"] == 200
    assert seen["before"] == ["index"]
    assert seen["after"] == ["index", "schemas", "users"]
    assert seen["invoke"] is False
