"""bench/fast_paths.py's switches: each replaces something that exists, so that a
fast path renamed or moved makes the measurement fail here rather than quietly measure
basedb against itself."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from basedb.client.transport import InProcessTransport
from basedb.platform import local
from basedb.platform.domain import fast_schema
from basedb.platform.web import app
from basedb.platform.web.app import IndexedRouter, PlatformApp
from basedb.platform.web.routes import functions
from bench import fast_paths

TARGETS: dict[str, list[tuple[Any, str]]] = {
    "gc": [(gc, "disable"), (gc, "freeze")],
    "gc@check": [(gc, "disable"), (gc, "freeze")],
    "lazy-routes": [(app, "build_app"), (local, "build_app")],
    "lazy-routes@api": [(app, "build_app"), (local, "build_app")],
    "direct-routes": [(app, "build_app"), (local, "build_app")],
    "route-index": [(IndexedRouter, "candidates")],
    "answer-in-memory": [(InProcessTransport, "answer_in_memory")],
    "caller-loop": [(PlatformApp, "runs_on_caller_loop")],
    "httpx-asgi": [(fast_paths, "_HTTPX_ASGI")],
    "fast-schema": [(fast_schema, "compile_is_valid")],
    "sql-on-loop": [(functions, "start_on_loop")],
}


def test_every_switch_is_checked_here() -> None:
    assert set(TARGETS) == set(fast_paths.BY_NAME)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_a_switch_replaces_what_it_names(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    before = []
    for owner, attribute in TARGETS[name]:
        value = getattr(owner, attribute)  # raises when the fast path moved
        monkeypatch.setattr(owner, attribute, value)  # put back after the test
        before.append(value)
    fast_paths.BY_NAME[name].off()
    after = [getattr(owner, attribute) for owner, attribute in TARGETS[name]]
    assert all(new is not old for new, old in zip(after, before, strict=True))


def test_eager_routes_wins_over_the_embedded_platform_asking_for_lazy_ones(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[dict[str, Any]] = []
    monkeypatch.setattr(app, "build_app", lambda *args, **kwargs: asked.append(kwargs))
    monkeypatch.setattr(local, "build_app", local.build_app)
    fast_paths.BY_NAME["lazy-routes"].off()
    build: Any = local.build_app  # as open_platform calls it
    build("store", lazy_routes=True)
    assert asked == [{"lazy_routes": False}]
