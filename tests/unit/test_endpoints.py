"""basedb.client.endpoints is the one place paths are written: the local platform serves
every one of them, and the inferred ones are the ones docs/lark.md lists."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

from basedb.client import endpoints
from basedb.core.errors import InputError
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
        if name.startswith("_") or name in ("INFERRED", "INFERRED_PATHS"):
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


def test_every_inferred_path_is_declared_once_and_built_from_its_template() -> None:
    assert set(endpoints.INFERRED) == set(endpoints.INFERRED_PATHS)
    for name, template in endpoints.INFERRED_PATHS.items():
        builder = getattr(endpoints, name)
        count = len(inspect.signature(builder).parameters)
        built = builder(*["A/p", "I d"][:count])
        assert built == template.replace("{app}", "A%2Fp").replace("{id}", "I%20d"), name
    # dev_functions and logs were in neither list; batch_update had no builder.
    assert {"site", "unbind_base", "dev_functions", "logs"} <= set(endpoints.INFERRED)
    assert endpoints.batch_update("b", "t") == "/bases/b/tables/t/records/batch_update"


def test_inferred_paths_are_overridden_by_a_file(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "endpoints.json"
    table.write_text(json.dumps({"deployments": "/sites/{app}/releases",
                                 "promote": "/sites/{app}/releases/{id}:publish"}))
    monkeypatch.setenv("BASEDB_LARK_ENDPOINTS", str(table))
    assert endpoints.deployments("a b") == "/sites/a%20b/releases"
    assert endpoints.promote("app", "d/1") == "/sites/app/releases/d%2F1:publish"
    assert endpoints.skill("app") == "/sites/app/skill", "the others stay as inferred"
    for wrong in ({"deployment": "/sites/{app}/x"}, {"nope": "/x"}, ["/x"]):
        bad = tmp_path / f"bad{len(str(wrong))}.json"
        bad.write_text(json.dumps(wrong))
        monkeypatch.setenv("BASEDB_LARK_ENDPOINTS", str(bad))
        with pytest.raises(InputError) as caught:
            endpoints.deployments("app")
        assert caught.value.code == "ENDPOINTS_INVALID" and str(bad) in caught.value.message
