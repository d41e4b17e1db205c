"""The platform's router finds, through its index by segment count and last segment,
exactly the route Starlette's full walk would, and leaves 404, 405 and redirects to that
walk."""

from __future__ import annotations

import re

import pytest
from starlette.routing import Match, Route

from basedb.platform import LocalPlatform
from basedb.platform.web.app import IndexedRouter
from tests.platform.conftest import Api


def _sample(path: str, value: str = "x1") -> str:
    """A concrete path for a route path: each `{name}` as `value`, `{name:path}` as two
    segments."""
    return re.sub(r"\{[^}:]+(:path)?\}",
                  lambda m: "a/b.html" if m.group(1) else value, path)


def _first_full(routes: list[Route], scope: dict[str, object]) -> Route | None:
    return next((r for r in routes if r.matches(scope)[0] is Match.FULL), None)


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
def test_the_index_finds_the_route_the_full_walk_finds(platform: LocalPlatform,
                                                       method: str) -> None:
    router = platform.app.router
    assert isinstance(router, IndexedRouter)
    # Parameters also take the values of other routes' literal segments ("invoke",
    # "batch_create", …), where a literal route and a parameter route both match.
    literals = {segment for r in router.routes for segment in r.path.split("/")
                if segment and not segment.startswith("{")}
    paths = [_sample(r.path, value) for r in router.routes for value in ["x1", *literals]]
    paths += [p + "/extra" for p in paths] + ["/sites/x1/preview/a/b/c/d.js", "/nope"]
    for path in paths:
        scope = {"type": "http", "method": method, "path": path, "root_path": ""}
        found = _first_full(router.candidates(path), scope)
        assert found is _first_full(router.routes, scope), path


def test_unknown_routes_and_methods_still_get_their_envelopes(api: Api) -> None:
    assert api.call("GET", "/no/such/route").status_code == 404
    response = api.call("DELETE", "/logs")
    assert response.status_code == 405 and "GET" in response.headers["allow"]
