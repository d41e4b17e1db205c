"""The OpenAPI document describes exactly the app's routes, and docs/openapi.yaml is
the same document."""

from __future__ import annotations

import re

import yaml
from starlette.routing import Route
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform
from basedb.platform.web.openapi import (
    DOCUMENT_PATH,
    current_document,
    main,
    openapi_path,
    render_yaml,
)

HTTP_METHODS = {"get", "post", "put", "patch", "delete"}
# Operations anyone may call: the document itself, the page runtime, signing in, and
# pages (which answer the sign-in page to a browser that is not signed in).
PUBLIC_OPERATIONS = {
    ("get", "/openapi.json"),
    ("get", "/_basedb/runtime.js"),
    ("post", "/_basedb/session"),
    ("get", "/sites/{app_token}/{path}"),
    ("get", "/sites/{app_token}/preview/{path}"),
    # The Lark stand-in's sign-in endpoints authenticate with app credentials instead.
    ("post", "/open-apis/auth/v3/tenant_access_token/internal"),
    ("post", "/oauth/v1/device_authorization"),
    ("post", "/open-apis/authen/v2/oauth/token"),
    ("get", "/oauth/v1/device/verify"),
}


def app_routes(platform: LocalPlatform) -> set[tuple[str, str]]:
    found = set()
    for route in platform.app.routes:
        assert isinstance(route, Route)
        for method in route.methods or ():
            if method != "HEAD":
                found.add((method.lower(), openapi_path(route.path)))
    return found


def documented(document: dict) -> set[tuple[str, str]]:
    return {(method, path) for path, item in document["paths"].items()
            for method in item if method in HTTP_METHODS}


def test_documented_paths_and_methods_equal_the_routes(platform: LocalPlatform) -> None:
    assert documented(current_document()) == app_routes(platform)


def test_docs_file_is_up_to_date() -> None:
    text = DOCUMENT_PATH.read_text(encoding="utf-8")
    assert text == render_yaml(current_document()), (
        "docs/openapi.yaml is stale: run python -m basedb.platform.web.openapi --write")
    assert yaml.safe_load(text)["openapi"] == "3.1.0"
    assert main(["--check"]) == 0


def test_served_document_needs_no_token(client: TestClient) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200 and response.headers["x-tt-logid"]
    document = response.json()
    assert documented(document) == documented(current_document())


def test_every_operation_is_described() -> None:
    document = current_document()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            where = f"{method.upper()} {path}"
            assert operation["summary"] and operation["tags"], where
            redirects = {"3XX"} if path.startswith("/sites/") else set()
            assert set(operation["responses"]) == {"200", "default"} | redirects, where
            names = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
            assert names == set(re.findall(r"\{(\w+)\}", path)), where
            assert all(p.get("description") for p in operation.get("parameters", [])), where
            if method in ("post", "put", "patch") and path != "/openapi.json":
                assert "requestBody" in operation, where
            public = operation.get("security") == []
            assert public == ((method, path) in PUBLIC_OPERATIONS), where
    error = document["components"]["schemas"]["ErrorEnvelope"]
    assert error["required"] == ["code", "msg", "error"]
