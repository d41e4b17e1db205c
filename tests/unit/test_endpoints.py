"""basedb.client.endpoints is the one place paths are written: the local platform serves
every one of them, and the inferred ones are the ones docs/lark.md lists."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from basedb.client import endpoints
from basedb.core.paths import API_PREFIX
from basedb.platform.web.routes import all_endpoints

DOCS = Path(__file__).resolve().parents[2] / "docs" / "lark.md"


def _served() -> list[tuple[str, re.Pattern[str]]]:
    served = []
    for endpoint in all_endpoints():
        pattern = re.sub(r"\{[^}]+\}", "[^/]+", re.escape(endpoint.full_path)
                         .replace(r"\{", "{").replace(r"\}", "}"))
        served.append((endpoint.method, re.compile(f"^{pattern}$")))
    return served


def _builders() -> dict[str, str]:
    """Every path the module declares, built with sample arguments."""
    paths: dict[str, str] = {}
    for name, value in vars(endpoints).items():
        if name.startswith("_") or name == "INFERRED":
            continue
        if isinstance(value, str) and value.startswith("/"):
            paths[name] = value
        elif inspect.isfunction(value) and value.__module__ == endpoints.__name__:
            arguments = [f"x{index}" for index in range(len(inspect.signature(value).parameters))]
            paths[name] = value(*arguments)
    return paths


def test_the_local_platform_serves_every_declared_path() -> None:
    served = _served()
    for name, path in _builders().items():
        full = path if path.startswith("/open-apis/") else API_PREFIX + path
        assert any(pattern.match(full) for _, pattern in served), f"{name}: {full}"


def test_known_real_site_paths() -> None:
    assert endpoints.SITES_CREATE == "/sites/create"
    assert endpoints.SITES_LIST == "/sites/list"
    assert endpoints.site("a/b") == "/sites/a%2Fb"  # one path segment, whatever the token


def test_the_inferred_paths_are_named_and_documented() -> None:
    for name in endpoints.INFERRED:
        assert inspect.isfunction(getattr(endpoints, name)), name
    text = DOCS.read_text(encoding="utf-8")
    for name in endpoints.INFERRED:
        path = getattr(endpoints, name)(*["APP", "ID"][:len(inspect.signature(
            getattr(endpoints, name)).parameters)])
        assert path.replace("APP", ":app").replace("ID", ":id") in text, name
