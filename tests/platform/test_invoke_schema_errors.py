"""Which validation error an invoke reports, and how, for declared JSON Schemas.

A FaaS input schema expresses conditional required fields with `oneOf` cases told apart
by an enum property (upstream agent-tool-design.md). The message must come from the case
the caller chose: following its Fix must lead to a valid call. Nothing runs before
validation, so these tests need no Node.js.
"""

from __future__ import annotations

from typing import Any

import pytest

from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.release_support import TaskSite, deploy, functions_body, task_site

PERIOD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["create", "close"],
                   "description": "create opens a period; close closes one"},
        "title": {"type": "string", "maxLength": 20, "description": "Title of a new period"},
        "start": {"type": "string", "description": "First day of a new period"},
        "periodId": {"type": "string", "description": "Record id of the period to close"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2,
                 "description": "Labels of a new period"},
    },
    "required": ["action"],
    "additionalProperties": False,
    "oneOf": [
        {"properties": {"action": {"enum": ["create"]}}, "required": ["title", "start"]},
        {"properties": {"action": {"const": "close"}}, "required": ["periodId"]},
    ],
}


def publish(api: Api, site: TaskSite, schema: dict[str, Any]) -> None:
    """Deploy managePeriod with `schema` and promote it to prod."""
    manage = {"functionId": "managePeriod", "handler": "export default async () => "
              "({code: 0, msg: 'ok', data: null});\n",
              "declaration": {"name": "managePeriod", "description": "Open or close a period",
                              "inputSchema": schema}}
    api.ok("PUT", f"/sites/{site.app_token}/draft/functions",
           json=functions_body(database_functions=[], mutations=[], faas=[manage]))
    deployment = deploy(api, site.app_token)["deploymentId"]
    api.ok("POST", f"/sites/{site.app_token}/deployments/{deployment}/promote")


@pytest.fixture
def site(api: Api) -> TaskSite:
    site = task_site(api)
    publish(api, site, PERIOD_SCHEMA)
    return site


def refusal(api: Api, site: TaskSite, params: dict[str, Any]) -> str:
    return api.fail("POST", f"/sites/{site.app_token}/functions/managePeriod/invoke",
                    json={"params": params}, params={"env": "prod"}, code=Code.PARAMETER_INVALID)


@pytest.mark.parametrize(("params", "expected"), [
    ({"action": "close"},
     'Required parameter "periodId" is missing (when action is "close"). Parameter: '
     "/params/periodId. Fix: send periodId: Record id of the period to close."),
    ({"action": "create", "title": "Spring"},
     'Required parameter "start" is missing (when action is "create"). Parameter: '
     "/params/start. Fix: send start: First day of a new period."),
])
def test_a_missing_field_is_reported_in_the_case_the_caller_chose(
        api: Api, site: TaskSite, params: dict[str, Any], expected: str) -> None:
    assert refusal(api, site, params) == f"{expected} Executed: no. Retry: retry after fixing."


def test_a_value_no_case_accepts_lists_the_values_of_every_case(api: Api,
                                                                 site: TaskSite) -> None:
    msg = refusal(api, site, {"action": "archive"})
    assert msg.startswith('Parameter "action" is not one of the allowed values. Parameter: '
                          '/params/action (received "archive"). Fix: use one of "create", '
                          '"close"')


def test_a_value_no_case_accepts_is_merged_even_without_a_top_level_enum(
        api: Api, site: TaskSite) -> None:
    action = {"type": "string", "description": "what to do"}
    publish(api, site, {**PERIOD_SCHEMA, "properties": {**PERIOD_SCHEMA["properties"],
                                                        "action": action}})
    msg = refusal(api, site, {"action": "archive"})
    assert 'Fix: use one of "create", "close"; Candidates:' in msg


def test_errors_outside_the_cases_come_first(api: Api, site: TaskSite) -> None:
    msg = api.fail("POST", f"/sites/{site.app_token}/functions/managePeriod/invoke",
                   json={"params": {"action": "close", "periodId": 7}},
                   params={"env": "prod"}, code=Code.BAD_REQUEST)  # a type: 9499
    assert msg.startswith('Parameter "periodId" must be text (a JSON string). Parameter: '
                          "/params/periodId (received 7).")


@pytest.mark.parametrize(("params", "reason"), [
    ({"action": "create", "title": "x" * 21, "start": "2027-01-01"},
     'Parameter "title" must be at most 20 characters long. Parameter: /params/title'),
    ({"action": "create", "title": "Spring", "start": "2027-01-01", "tags": ["a", "b", "c"]},
     'Parameter "tags" must have at most 2 items. Parameter: /params/tags'),
])
def test_bounds_are_named_with_their_limit(api: Api, site: TaskSite, params: dict[str, Any],
                                           reason: str) -> None:
    msg = refusal(api, site, params)
    assert msg.startswith(reason), msg
    assert "'" not in msg.split("(received")[0]  # no Python repr of the value


def test_input_fitting_several_cases_says_so(api: Api, site: TaskSite) -> None:
    publish(api, site, {"type": "object", "properties": {
        "email": {"type": "string", "description": "Where to send the notice"},
        "phone": {"type": "string", "description": "Where to text the notice"}},
        "oneOf": [{"required": ["email"]}, {"required": ["phone"]}]})
    msg = refusal(api, site, {"email": "a@example.com", "phone": "123"})
    assert msg.startswith("params matches more than one case of the inputSchema (oneOf). "
                          "Parameter: /params")
    assert "{'" not in msg
    missing = refusal(api, site, {})
    assert missing.startswith('Required parameter "email" is missing. Parameter: '
                              "/params/email. Fix: send email: Where to send the notice.")
