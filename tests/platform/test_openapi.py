"""The OpenAPI document describes exactly the app's routes, and docs/openapi.yaml is
the same document."""

from __future__ import annotations

import json
import re

import yaml
from starlette.routing import Route
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform
from basedb.platform.web.http import Endpoint
from basedb.platform.web.openapi import (
    DOCUMENT_PATH,
    current_document,
    error_statuses,
    main,
    openapi_path,
    render_yaml,
)
from basedb.platform.web.routes import all_endpoints

HTTP_METHODS = {"get", "post", "put", "patch", "delete"}
# Operations anyone may call: the document itself, the page runtime, signing in, and
# pages (which answer the sign-in page to a browser that is not signed in).
PUBLIC_OPERATIONS = {
    ("get", "/openapi.json"),
    ("get", "/"),
    ("get", "/_basedb/runtime.js"),
    ("get", "/_basedb/sign-in"),
    ("post", "/_basedb/sign-in"),
    ("get", "/_basedb/session/start"),
    ("get", "/_basedb/session/callback"),
    ("get", "/sites/{app_token}/{path}"),
    ("get", "/sites/{app_token}/preview/{path}"),
    # The Lark stand-in's sign-in endpoints authenticate with app credentials instead.
    ("post", "/open-apis/auth/v3/tenant_access_token/internal"),
    ("post", "/oauth/v1/device_authorization"),
    ("post", "/open-apis/authen/v2/oauth/token"),
    ("get", "/oauth/v1/device/verify"),
}
# The sign-in steps that send the browser on: the form without its state, and the page
# host's start (basedb.platform.web.sign_in).
SIGN_IN_REDIRECTS = {("get", "/_basedb/sign-in"), ("get", "/_basedb/session/start")}


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


def test_every_server_named_is_where_the_document_was_served(platform: LocalPlatform) -> None:
    # Served on another port than the default, no operation names 127.0.0.1:8787 or
    # {site}.localhost:8787.
    with TestClient(platform.app, base_url="http://127.0.0.1:9123") as served:
        document = served.get("/openapi.json").json()
    urls = {server["url"] for server in document["servers"]}
    for item in document["paths"].values():
        for operation in item.values():
            urls |= {server["url"] for server in operation.get("servers", [])}
    assert urls == {"http://127.0.0.1:9123", "http://{site}.localhost:9123"}


def test_every_operation_is_described() -> None:
    document = current_document()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            where = f"{method.upper()} {path}"
            assert operation["summary"] and operation["tags"], where
            redirects = {"3XX"} if path.startswith("/sites/") or \
                (method, path) in SIGN_IN_REDIRECTS else set()
            assert set(operation["responses"]) == {"200", *redirects, *error_statuses(
                endpoint_of(method, path))}, where
            assert "default" not in operation["responses"], where
            for status in set(operation["responses"]) - {"200", *redirects}:
                failure = operation["responses"][status]["content"]["application/json"]
                assert "ErrorEnvelope" in json.dumps(failure["schema"]), where
            names = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
            assert names == set(re.findall(r"\{(\w+)\}", path)), where
            assert all(p.get("description") for p in operation.get("parameters", [])), where
            if method in ("post", "put", "patch") and path != "/openapi.json":
                assert "requestBody" in operation, where
            public = operation.get("security") == []
            assert public == ((method, path) in PUBLIC_OPERATIONS), where
    error = document["components"]["schemas"]["ErrorEnvelope"]
    assert error["required"] == ["code", "msg", "error"]


def endpoint_of(method: str, path: str) -> Endpoint:
    [endpoint] = [e for e in all_endpoints()
                  if e.method.lower() == method and openapi_path(e.full_path) == path]
    return endpoint


def test_error_statuses_follow_the_endpoint() -> None:
    by_operation = {(e.method, openapi_path(e.full_path)): error_statuses(e)
                    for e in all_endpoints()}
    # Input to refuse, a token, a path that may name nothing, a body that may be too big
    # or too slow; any request may come with a Host the platform does not answer to.
    assert by_operation["POST", "/open-apis/base/v3/sites/{app_token}/deployments/"
                        "{deployment_id}/promote"] == ["400", "401", "403", "404", "408",
                                                       "409", "413", "421", "5XX"]
    # An API route is not found on a site's page host.
    assert by_operation["GET", "/open-apis/base/v3/users/me"] == ["401", "404", "421", "5XX"]
    assert by_operation["GET", "/_basedb/runtime.js"] == ["421", "5XX"]
