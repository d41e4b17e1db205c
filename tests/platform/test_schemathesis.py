"""Schemathesis against the platform's own OpenAPI document, through the real app.

Every documented operation gets generated requests, valid and schema-violating, sent as
the platform owner. Path parameters are drawn either from the generated value or from
the real objects of a released site (its Base, tables, fields, records, deployments,
functions and pages), so requests reach handlers and not only the 404 path. Each
operation runs against a site of its own, so that deleting a table or rolling back in
one operation leaves the others' sites whole.

What must hold for every response: no 5xx; the status, content type, log-id header and
body match what the document says (the `{code, msg, data}` envelope, with `code` 0
exactly on success).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.schemas import BaseSchema
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
)
from starlette.testclient import TestClient

from basedb.core.paths import API_PREFIX
from basedb.platform import LocalPlatform, open_platform
from basedb.platform.domain.runtimes.ai import BASE_URL_ENV
from basedb.platform.web.openapi import current_document
from tests.platform.conftest import Api
from tests.platform.functions_support import build_site, save_drafts
from tests.platform.release_support import SITE_FILES
from tests.platform.release_support import deploy as upload_site

pytestmark = pytest.mark.slow

MAX_EXAMPLES = 40
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance,
          response_headers_conformance]
OPERATIONS = [(method, path) for path, item in current_document()["paths"].items()
              for method in item]
# Runs until the query time limit stops it (5 s a call): covered by the invoke tests.
SLOW_FUNCTIONS = {"countForever"}
INVOKE_PATH = API_PREFIX + "/sites/{app_token}/functions/{function_id}/invoke"
PAGE_PATHS = ["", "index.html", "app.js", "style.css", "docs", "docs/", "data/logo.svg",
              "preview", "missing.html", "../base-database.jsonc"]


class AsBrowsersAddressIt:
    """The app as a browser or client reaches it: schemathesis sends every request to
    the made-up host `testserver`, which the platform refuses (it answers only to its own
    names). Pages go to their site's page host, everything else to localhost."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            parts = scope["path"].split("/")
            host = "localhost"
            if len(parts) > 2 and parts[1] == "sites" and re.fullmatch(r"[\w-]+", parts[2],
                                                                       re.ASCII):
                host = f"{parts[2].lower()}.localhost"
            scope = {**scope, "headers": [
                (name, host.encode("latin-1") if name == b"host" else value)
                for name, value in scope["headers"]]}
        await self.app(scope, receive, send)


@dataclass(frozen=True)
class Fuzzing:
    platform: LocalPlatform
    schema: BaseSchema
    api: Api


@dataclass(frozen=True)
class RealObjects:
    """Values of each path parameter that name something that exists."""

    by_parameter: dict[str, list[str]]

    def choices(self, path: str) -> dict[str, list[str]]:
        return {name: values for name, values in self.by_parameter.items()
                if "{" + name + "}" in path}


# One platform for the module, its schema loaded here rather than through
# schemathesis.pytest.from_fixture, which relies on a private pytest attribute that
# pytest 9 no longer has; each operation still gets a site of its own (real_objects).
@pytest.fixture(scope="module")
def fuzzing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzing]:
    platform = open_platform(tmp_path_factory.mktemp("fuzz") / "data")
    try:
        # The document as the app serves it, and the app itself as the transport.
        schema = schemathesis.openapi.from_asgi("/openapi.json",
                                                AsBrowsersAddressIt(platform.app))
        # Every call carries the owner's token: the token tests cover a missing or bad
        # one, and here the examples are better spent past authentication.
        schema.config.generation.update(with_security_parameters=False)
        with TestClient(platform.app, base_url="http://localhost") as client:
            yield Fuzzing(platform, schema, Api(client, platform.owner_token))
    finally:
        platform.close()


@pytest.fixture
def real_objects(fuzzing: Fuzzing, monkeypatch: pytest.MonkeyPatch) -> RealObjects:
    """A released site of its own: Projects and Tasks with records, every kind of function
    (Database Functions, Mutations, FaaS, an AI Function), two prod deployments."""
    monkeypatch.delenv(BASE_URL_ENV, raising=False)  # AI Functions answer "not enabled"
    api = fuzzing.api
    site = build_site(api)
    save_drafts(site)
    app = site.app_token
    deployment_ids = []
    for readme in (b"first", b"second"):
        deployed = upload_site(api, app, {**SITE_FILES, "README.md": readme})
        api.ok("POST", f"/sites/{app}/deployments/{deployed['deploymentId']}/promote")
        deployment_ids.append(str(deployed["deploymentId"]))
    fields = [str(field["id"]) for table in (site.tasks_table, site.projects_table)
              for field in api.ok("GET", f"/bases/{site.base_token}/tables/{table}/fields",
                                  params={"limit": 200})["fields"]]
    functions = api.ok("GET", f"/sites/{app}/functions",
                       params={"env": "prod", "includeInternal": "true"})["functions"]
    return RealObjects({
        "base_token": [site.base_token],
        "table_id": [site.tasks_table, site.projects_table],
        "field_id": fields,
        "record_id": [*site.tasks.values(), *site.projects.values()],
        "app_token": [app],
        "deployment_id": deployment_ids,
        "function_id": sorted(f["functionId"] for f in functions
                              if f["functionId"] not in SLOW_FUNCTIONS),
        "path": PAGE_PATHS,
    })


@pytest.mark.parametrize(("method", "path"), OPERATIONS,
                         ids=[f"{method.upper()} {path}" for method, path in OPERATIONS])
def test_operation_answers_as_documented(method: str, path: str, fuzzing: Fuzzing,
                                         real_objects: RealObjects) -> None:
    operation = fuzzing.schema[path][method]
    cases = st.one_of(operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
                      operation.as_strategy(generation_mode=GenerationMode.NEGATIVE))
    # None keeps the generated value (mostly an object that does not exist).
    real = st.fixed_dictionaries({name: st.sampled_from([*values, None])
                                  for name, values in real_objects.choices(path).items()})
    headers = {"Authorization": f"Bearer {fuzzing.platform.owner_token}"}

    @given(case=cases, chosen=real)
    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    def answers_as_documented(case: Any, chosen: dict[str, str | None]) -> None:
        for name, value in chosen.items():
            if value is not None:
                case.path_parameters[name] = value
        if isinstance(case.query, dict) and isinstance(case.query.get("wait"), int):
            # A log read holds its answer up to `wait` seconds for a new entry (tested in
            # tests/platform/test_logs.py); here it would only hold the run.
            case.query["wait"] = 0
        response = case.call(headers=headers)
        case.validate_response(response, checks=CHECKS, headers=headers)
        assert_envelope_code(response.status_code, content_type(response), response.content)

    answers_as_documented()


def described_invoke_document(api: Api, app_token: str,
                              function_ids: list[str]) -> dict[str, Any]:
    """The invoke operation once per function, its body and result as the function's
    own description (GET …/functions/{id}) gives them: `params` must match inputSchema,
    `data` must match outputSchema."""
    document = copy.deepcopy(current_document())
    template = document["paths"][INVOKE_PATH]["post"]
    paths: dict[str, Any] = {}
    for function_id in function_ids:
        described = api.ok("GET", f"/sites/{app_token}/functions/{function_id}",
                           params={"env": "prod", "includeInternal": "true"})["function"]
        if described["inputSchema"] is None:
            continue  # takes any input: the generic invoke fuzzing covers it
        operation = copy.deepcopy(template)
        operation["operationId"] = f"invoke_{function_id}"
        operation.pop("parameters", None)  # the path is concrete; env and the flag are fixed
        operation["requestBody"] = {"required": True, "content": {"application/json": {
            "schema": {"type": "object", "properties": {"params": described["inputSchema"]},
                       "required": ["params"], "additionalProperties": False}}}}
        if described.get("outputSchema") is not None:
            success = operation["responses"]["200"]["content"]["application/json"]["schema"]
            success["allOf"][1]["properties"]["data"] = described["outputSchema"]
        paths[INVOKE_PATH.format(app_token=app_token, function_id=function_id)] = {
            "post": operation}
    document["paths"] = paths
    return document


def test_invoke_with_params_from_each_description(fuzzing: Fuzzing,
                                                  real_objects: RealObjects) -> None:
    [app_token] = real_objects.by_parameter["app_token"]
    function_ids = real_objects.by_parameter["function_id"]
    schema = schemathesis.openapi.from_dict(
        described_invoke_document(fuzzing.api, app_token, function_ids))
    schema.app = AsBrowsersAddressIt(fuzzing.platform.app)
    schema.config.generation.update(with_security_parameters=False)
    headers = {"Authorization": f"Bearer {fuzzing.platform.owner_token}"}
    query = {"env": "prod", "includeInternal": "true"}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15  # every function but the FaaS without inputSchema
    for operation in operations:
        cases = st.one_of(operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
                          operation.as_strategy(generation_mode=GenerationMode.NEGATIVE))

        @given(case=cases)
        @settings(max_examples=MAX_EXAMPLES // 2, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
        def runs_as_described(case: Any) -> None:
            response = case.call(headers=headers, params=query)
            case.validate_response(response, checks=CHECKS, headers=headers)
            assert_envelope_code(response.status_code, content_type(response),
                                 response.content)

        runs_as_described()


def content_type(response: Any) -> str:
    """The Content-Type of a schemathesis response (its headers map to lists)."""
    return ",".join(response.headers.get("content-type", []))


def assert_envelope_code(status: int, content_type: str, content: bytes) -> None:
    """A JSON envelope says code 0 exactly when the status is 200."""
    if not content_type.startswith("application/json"):
        return
    body = json.loads(content)
    if isinstance(body, dict) and "code" in body and "msg" in body:
        assert (body["code"] == 0) == (status == 200), (status, body)


# ---------------------------------------------------------------- regression tests


@pytest.mark.parametrize(("page", "token", "status", "media_type"), [
    ("app.js", "owner", 200, "text/javascript"),
    ("style.css", "owner", 200, "text/css"),
    ("data/logo.svg", "owner", 200, "image/svg+xml"),
    ("index.html", "owner", 200, "text/html"),
    ("missing.html", "owner", 404, "text/html"),  # the not-found page
    ("index.html", None, 401, "text/html"),  # the sign-in page
    ("index.html", "bdb_unknown", 401, "application/json"),  # a bad token: an envelope
])
@pytest.mark.parametrize("route", ["/sites/{app_token}/{path}",
                                   "/sites/{app_token}/preview/{path}"])
def test_page_responses_have_documented_media_types(
        route: str, page: str, token: str | None, status: int, media_type: str,
        fuzzing: Fuzzing, real_objects: RealObjects) -> None:
    # The document once promised text/html for every page answer and JSON for every
    # failure, but a site serves its scripts, styles and images from these routes, and a
    # browser that is not signed in gets the sign-in page.
    operation = fuzzing.schema[route]["get"]
    case = operation.Case(path_parameters={"app_token": real_objects.by_parameter[
        "app_token"][0], "path": page})
    bearer = fuzzing.platform.owner_token if token == "owner" else token
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    response = case.call(headers=headers)
    assert response.status_code == status
    assert content_type(response).startswith(media_type)
    case.validate_response(response, checks=CHECKS, headers=headers)


def test_every_documented_operation_is_fuzzed(fuzzing: Fuzzing) -> None:
    assert sorted((m, p) for p, item in fuzzing.schema.raw_schema["paths"].items()
                  for m in item) == sorted(OPERATIONS)

