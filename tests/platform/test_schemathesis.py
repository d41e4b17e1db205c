"""Schemathesis against the platform's own OpenAPI document, through the real app.

Every documented operation gets generated requests, valid and schema-violating, sent as
the platform owner. Path parameters are drawn either from the generated value or from
the real objects of a released site (its Base, tables, fields, records, deployments,
functions and pages), so requests reach handlers and not only the 404 path. Each
operation runs against a site of its own, so that deleting a table or rolling back in
one operation leaves the others' sites whole.

Every check schemathesis has runs on every response (`ALL_CHECKS`), on the cases of its
coverage phase (each boundary and each violation of the document, one at a time, and
the methods the document does not list) and on generated ones: no 5xx; the status,
content type, log-id header and body match what the document says (the `{code, msg,
data}` envelope, with `code` 0 exactly on success); what the document allows is
accepted and what it forbids is refused; `Allow` lists exactly the documented methods.

FUZZ_MAX_EXAMPLES (default 40) sets the generated cases per operation, for a quicker
local run: `FUZZ_MAX_EXAMPLES=5 pytest -m slow tests/platform/test_schemathesis.py`.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.drivers import CoverageGenerator
from schemathesis.generation.feedback import NO_FEEDBACK
from schemathesis.generation.meta import FuzzingPhaseData
from schemathesis.generation.overrides import Override
from schemathesis.schemas import APIOperation, BaseSchema
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

MAX_EXAMPLES = int(os.environ.get("FUZZ_MAX_EXAMPLES", "40"))
load_all_checks()
# Every check the installed schemathesis has; the test below fails if one goes missing.
ALL_CHECKS = CHECKS.get_all()
ALL_CHECK_NAMES = {"not_a_server_error", "status_code_conformance", "content_type_conformance",
                   "response_headers_conformance", "response_schema_conformance",
                   "negative_data_rejection", "positive_data_acceptance",
                   "missing_required_header", "unsupported_method", "allow_header_conformance",
                   "use_after_free", "ensure_resource_availability", "ignored_auth",
                   "object_level_authorization"}
MODES = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
OPERATIONS = [(method, path) for path, item in current_document()["paths"].items()
              for method in item]
# Runs until the query time limit stops it (5 s a call): covered by the invoke tests.
SLOW_FUNCTIONS = {"countForever"}
INVOKE_PATH = API_PREFIX + "/sites/{app_token}/functions/{function_id}/invoke"
# Not "": schemathesis holds a path parameter to be non-empty (the site root,
# /sites/{app}/, is covered by the page tests).
PAGE_PATHS = ["index.html", "app.js", "style.css", "docs", "docs/", "data/logo.svg",
              "preview", "missing.html", "../base-database.jsonc"]


# What can be the first label of a page host name; any other path goes to localhost.
_DNS_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


class AsBrowsersAddressIt:
    """The app as a browser or client reaches it: schemathesis sends every request to
    the made-up host `testserver`, which the platform refuses (it answers only to its own
    names). Pages go to their site's page host, the page session to the page host of
    `session_site` (the site under test), everything else to localhost."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.session_site = ""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            parts = scope["path"].split("/")
            host = "localhost"
            if len(parts) > 2 and parts[1] == "sites" and _DNS_LABEL.fullmatch(parts[2]):
                host = f"{parts[2].lower()}.localhost"
            elif scope["path"].startswith("/_basedb/session") and self.session_site:
                host = f"{self.session_site.lower()}.localhost"
            scope = {**scope, "headers": [
                (name, host.encode("latin-1") if name == b"host" else value)
                for name, value in scope["headers"]]}
        await self.app(scope, receive, send)


@dataclass(frozen=True)
class StatedRule:
    """A rule an operation's description states and JSON Schema cannot express (it
    depends on the data or on the site's state): the server's 400 for a request that
    breaks it is kept, as upstream answers, and is not a `positive_data_acceptance`
    failure. `said` is what the operation's description (or its request body's) must
    say; `refusal` matches the error envelope of exactly that refusal, so that any other
    400 still fails."""

    said: str
    refusal: re.Pattern[str]

    def refused(self, body: Any) -> bool:
        if not isinstance(body, dict):
            return False
        return bool(self.refusal.search(f"{body.get('code')} {body.get('msg')}"))


_FIELD_RULES = StatedRule(
    "options only on select fields",
    re.compile(r"^9499 (options apply to select|multiple applies to select and user|"
               r"link_table applies to link) fields|^9499 A link field needs link_table|"
               r"^9499 Field name .* is used twice|^9499 Option .* is listed twice"))
_FIELD_UPDATE = StatedRule(
    "the type and link_table cannot change",
    re.compile(r"^9499 (Changing a field's type|A link field's link_table cannot change|"
               r"options apply to select|multiple applies to select and user|"
               r"link_table applies to link|Option .* is listed twice)"))
_TABLE_KEYS = StatedRule("Keys are the table's field names or ids",
                         re.compile(r"^9499 Table .* has no field "))
_TIMEZONE = StatedRule("IANA time zone name",
                       re.compile(r"^9499 timezone must be an IANA time zone name"))
_CHECKED_DRAFT = StatedRule(
    "the findings of `basedb check`",
    re.compile(r"^9499 The (AI Function |development )?draft has \d+ errors?; the first is "))
STATED_RULES: dict[tuple[str, str], tuple[StatedRule, ...]] = {
    ("POST", "/bases"): (_TIMEZONE,),
    ("POST", "/bases/{base_token}/tables"): (_FIELD_RULES,),
    ("POST", "/bases/{base_token}/tables/{table_id}/fields"): (_FIELD_RULES,),
    ("PUT", "/bases/{base_token}/tables/{table_id}/fields/{field_id}"): (_FIELD_UPDATE,),
    ("POST", "/bases/{base_token}/tables/{table_id}/records"): (_TABLE_KEYS,),
    ("PATCH", "/bases/{base_token}/tables/{table_id}/records/{record_id}"): (_TABLE_KEYS,),
    ("POST", "/bases/{base_token}/tables/{table_id}/records/batch_create"): (StatedRule(
        "one value per entry of fields",
        re.compile(r"^9499 (Each row must be an array of \d+ values|Table .* has no field )")),),
    ("DELETE", "/bases/{base_token}/grants"): (StatedRule(
        "in the body or as ?user_id=; one of the two is needed",
        re.compile(r"^9499 user_id is missing")),),
    ("POST", "/sites/{app_token}/bind_base"): (StatedRule(
        "A site binds one Base",
        re.compile(r"^9499 Site \w+ is bound to Base \w+; a site binds one Base")),),
    ("DELETE", "/sites/{app_token}/members"): (StatedRule(
        "in the body or as ?userId=; one of the two is needed",
        re.compile(r"^9499 userId is missing")),),
    # maxLength counts characters; the limit is in bytes, and the count is the site's.
    ("PUT", "/sites/{app_token}/secrets/{secret_name}"): (StatedRule(
        "bytes of UTF-8 without NUL characters; a site has at most",
        re.compile(r"^9499 (The secret's value must be at most \d+ bytes|"
                   r"Site \w+ already has \d+ secrets)")),),
    ("POST", "/sites/{app_token}/deployments"): (StatedRule(
        "site.zip must be a zip archive", re.compile(r"^9499 .* Parameter: /artifact\b")),),
    ("PUT", "/sites/{app_token}/draft/functions"): (_CHECKED_DRAFT, _TIMEZONE, StatedRule(
        "that the site's draft does not hold is refused",
        re.compile(r"^9499 The site's draft holds no \w+ with this contentHash"))),
    ("PUT", "/sites/{app_token}/dev/functions"): (_CHECKED_DRAFT, _TIMEZONE),
    ("PUT", "/sites/{app_token}/draft/ai-functions"): (_CHECKED_DRAFT,),
    ("PUT", "/sites/{app_token}/draft/agent-tools"): (StatedRule(
        "Every id in exclude must be a draft function", re.compile(r"^800004030 ")),),
    ("POST", "/sites/{app_token}/functions/{function_id}/stream"): (StatedRule(
        "800004002 for params that fail the inputSchema",
        re.compile(r"^800004002 |^800004011 ai function feature is not enabled")),),
    ("POST", "/sites/{app_token}/functions/{function_id}/invoke"): (StatedRule(
        "params must match the function's inputSchema",
        re.compile(r"^800004002 |^9499 .*Parameter: /params|"
                   r"^800004011 ai function feature is not enabled")),),
}


@dataclass(frozen=True)
class Fuzzing:
    platform: LocalPlatform
    schema: BaseSchema
    api: Api
    router: AsBrowsersAddressIt


@dataclass(frozen=True)
class RealObjects:
    """Values of each path parameter that name something that exists."""

    by_parameter: dict[str, list[str]]
    # A pageToken each listing returned (functions: one per env, a token is tied to it).
    page_tokens: dict[str, dict[str, str]]

    # AI Functions alone stream: on /stream the functions are these.
    ai_functions: list[str] = field(default_factory=list)

    def choices(self, path: str) -> dict[str, list[str]]:
        found = {name: values for name, values in self.by_parameter.items()
                 if "{" + name + "}" in path}
        if path.endswith("/{function_id}/stream") and "function_id" in found:
            found["function_id"] = self.ai_functions
        return found

    def with_short_wait(self, case: Any) -> Any:
        """The logs' `wait` holds an answer up to 25 s for an entry to arrive (the long
        poll is covered by tests/platform/test_logs.py); here a valid wait is kept to
        1 s, so that the examples are spent on inputs rather than on waiting."""
        wait = (case.query or {}).get("wait")
        if not (isinstance(wait, int | str) and str(wait).isdigit() and int(wait) > 1):
            return case
        short = case.derive(keep_auth=True)
        short.query = {**case.query, "wait": 1}
        return short

    def with_real_page_token(self, case: Any) -> Any:
        """A page token is opaque and only a listing's own is valid (a random string is
        refused with 400), so a case that sends one sends a real one: the token of the
        listing's first page (per env), or none where no such token applies (a search's
        token is tied to its arguments, a records token to its table; tests of their
        own cover those)."""
        name = next((key for key in _PAGE_TOKEN_NAMES if key in (case.query or {})), None)
        if name is None:
            return case
        tokens = self.page_tokens.get(case.operation.path, {})
        env = case.query.get("env", "prod")
        token = tokens.get(env) if isinstance(env, str) else tokens.get("prod")
        if any(case.query.get(key) not in (None, "") for key in _SEARCH_ARGUMENTS):
            token = None
        real = case.derive(keep_auth=True)
        # A listing with no second page (dev, here) has no token: send none.
        real.query = ({**case.query, name: token} if token is not None else
                      {k: v for k, v in case.query.items() if k != name})
        return real


_PAGE_TOKEN_NAMES = ("pageToken", "page_token")
# The function listing's search arguments, which a pageToken is tied to.
_SEARCH_ARGUMENTS = ("query", "table", "access")


# One platform for the module, its schema loaded here rather than through
# schemathesis.pytest.from_fixture, which relies on a private pytest attribute that
# pytest 9 no longer has; each operation still gets a site of its own (real_objects).
@pytest.fixture(scope="module")
def fuzzing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzing]:
    platform = open_platform(tmp_path_factory.mktemp("fuzz") / "data")
    try:
        # The document as the app serves it, and the app itself as the transport.
        router = AsBrowsersAddressIt(platform.app)
        schema = schemathesis.openapi.from_asgi("/openapi.json", router)
        # Every call carries the owner's token: the token tests cover a missing or bad
        # one, and here the examples are better spent past authentication.
        schema.config.generation.update(with_security_parameters=False)
        with TestClient(platform.app, base_url="http://localhost") as client:
            yield Fuzzing(platform, schema, Api(client, platform.owner_token), router)
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
    fuzzing.router.session_site = app
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
    api.ok("POST", "/sites/create", json={"title": "Second"})  # so that sites page
    page_tokens = {
        API_PREFIX + "/sites/list": {"prod": api.ok("GET", "/sites/list",
                                                    params={"pageSize": 1})["pageToken"]},
        API_PREFIX + "/sites/{app_token}/functions": {
            env: api.ok("GET", f"/sites/{app}/functions",
                        params={"env": env, "pageSize": 1})["pageToken"]
            for env in ("prod", "preview")},
    }
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
    }, page_tokens, ai_functions=sorted(f["functionId"] for f in functions
                                        if f["functionType"] == "ai_function"))


@pytest.mark.parametrize(("method", "path"), OPERATIONS,
                         ids=[f"{method.upper()} {path}" for method, path in OPERATIONS])
def test_operation_answers_as_documented(method: str, path: str, fuzzing: Fuzzing,
                                         real_objects: RealObjects) -> None:
    operation = fuzzing.schema[path][method]
    cases = st.one_of(operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
                      operation.as_strategy(generation_mode=GenerationMode.NEGATIVE))
    choices = real_objects.choices(path)
    # None keeps the generated value (mostly an object that does not exist).
    real = st.fixed_dictionaries({name: st.sampled_from([*values, None])
                                  for name, values in choices.items()})
    headers = {"Authorization": f"Bearer {fuzzing.platform.owner_token}"}

    # The coverage phase: each case a boundary or one violation of the document (and the
    # methods it does not list), run once with the generated path and once with real
    # objects, so that the checks see both the not-found answer and the handler's.
    for generated in coverage_cases(fuzzing.schema, operation):
        case = real_objects.with_short_wait(real_objects.with_real_page_token(generated))
        call_and_check(case, headers)
        if choices:
            call_and_check(with_real_objects(case, choices), headers)

    @given(case=cases, chosen=real)
    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    def answers_as_documented(case: Any, chosen: dict[str, str | None]) -> None:
        # A case generated to violate the path keeps its path: a real object in its
        # place would leave schemathesis judging a request it no longer sends.
        if not path_was_negated(case):
            for name, value in chosen.items():
                if value is not None:
                    case.path_parameters[name] = value
        call_and_check(real_objects.with_short_wait(real_objects.with_real_page_token(case)),
                       headers)

    answers_as_documented()


def coverage_cases(schema: BaseSchema, operation: APIOperation) -> list[Any]:
    generation = schema.config.generation_for(operation=operation, phase="coverage")
    return list(CoverageGenerator(operation=operation, generation_modes=MODES,
                                  generation_config=generation, auth_storage=None,
                                  override=Override(), feedback=NO_FEEDBACK))


def with_real_objects(case: Any, choices: dict[str, list[str]]) -> Any:
    """The case with each path parameter the first real object of its kind."""
    real = case.derive(keep_auth=True)
    real.path_parameters = {**(case.path_parameters or {}),
                            **{name: values[0] for name, values in choices.items()}}
    return real


def call_and_check(case: Any, headers: dict[str, str], **kwargs: Any) -> None:
    response = case.call(headers=headers, **kwargs)
    checks = ALL_CHECKS
    rules = STATED_RULES.get((case.method.upper(), api_path(case.operation.path)), ())
    if response.status_code == 400 and any(rule.refused(response.json()) for rule in rules):
        checks = [check for check in ALL_CHECKS
                  if check.__name__ != "positive_data_acceptance"]
    case.validate_response(response, checks=checks, headers=headers)
    assert_envelope_code(response.status_code, content_type(response), response.content)


def path_was_negated(case: Any) -> bool:
    data = case.meta.phase.data if case.meta is not None else None
    if not isinstance(data, FuzzingPhaseData):
        return False
    targeted = {data.parameter_location, *(m.parameter_location for m in data.mutations)}
    return ParameterLocation.PATH in targeted


def api_path(path: str) -> str:
    """An operation path below the API prefix (invoke documents use concrete paths)."""
    if path.startswith(API_PREFIX + "/sites/") and path.endswith("/invoke"):
        return "/sites/{app_token}/functions/{function_id}/invoke"
    return path.removeprefix(API_PREFIX)


def test_every_schemathesis_check_runs() -> None:
    assert {check.__name__ for check in ALL_CHECKS} >= ALL_CHECK_NAMES


@pytest.mark.parametrize(("method", "path"), sorted(STATED_RULES),
                         ids=[f"{m} {p}" for m, p in sorted(STATED_RULES)])
def test_each_stated_rule_is_in_the_document(method: str, path: str) -> None:
    # A 400 the fuzzing tolerates is one the document announces: the rule in the
    # operation's description (or its request body's), and 400 among its responses.
    operation = current_document()["paths"][API_PREFIX + path][method.lower()]
    stated = operation.get("description", "") + json.dumps(operation.get("requestBody"))
    for rule in STATED_RULES[method, path]:
        assert rule.said in stated, rule.said
    assert "400" in operation["responses"]


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
        # Without `params` the function runs with none: a body may leave it out only
        # when the inputSchema requires nothing.
        params_required = ["params"] if described["inputSchema"].get("required") else []
        operation["requestBody"] = {"required": True, "content": {"application/json": {
            "schema": {"type": "object", "properties": {"params": described["inputSchema"]},
                       "required": params_required, "additionalProperties": False}}}}
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
            call_and_check(case, headers, params=query)

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
    case.validate_response(response, checks=ALL_CHECKS, headers=headers)


def test_every_documented_operation_is_fuzzed(fuzzing: Fuzzing) -> None:
    assert sorted((m, p) for p, item in fuzzing.schema.raw_schema["paths"].items()
                  for m in item) == sorted(OPERATIONS)

