"""One caller never freezes every tenant (issue 21, items 1-3): nothing a call sends or
asks for holds the server's event loop, whatever the function's schema or answer.

Each attack runs under the loop's watchdog (`loop_watchdog`, autouse in
tests/security/conftest.py): a callback of the loop that takes more than 50 ms of CPU
time fails the test, however the assertions below fare.

- a FaaS inputSchema `pattern` that backtracks (`^(a+)+$`) meets a param made to blow it
  up: patterns run on a linear-time engine (RE2);
- `uniqueItems` over an array of distinct objects: a linear check;
- a schema whose validation grows exponentially (anyOf over a recursive `$ref`): it is
  validated off the loop, within a step budget, and refused past it;
- a cheap statement whose answer is megabytes: fetched, shaped and encoded off the loop;
- a body of megabytes of small JSON values: parsed off the loop.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from basedb.platform.domain import function_plans, invoke
from basedb.platform.domain.runtimes import sql as sql_runtime
from basedb.platform.domain.runtimes import sql_inline
from basedb.protocol import ApiFailure, Code
from basedb.workspace.model import FaaS
from tests.platform.conftest import Api
from tests.platform.functions_support import (  # noqa: F401 - fresh_loop_budget: a fixture
    TaskSite,
    build_site,
    deploy,
    fresh_loop_budget,
    save_drafts,
    sql_function,
)
from tests.security.support import LoopWatchdog

ECHO = ("export default async function (input) {\n"
        "  return {code: 0, msg: 'ok', data: {got: input}};\n}\n")


def faas(function_id: str, properties: dict[str, Any], **schema: Any) -> dict[str, Any]:
    return {"functionId": function_id, "handler": ECHO, "declaration": {
        "name": function_id, "description": f"{function_id}: an attack surface of the tests",
        "inputSchema": {"type": "object", "properties": properties, **schema}}}


def ai_function(key: str, properties: dict[str, Any], **schema: Any) -> dict[str, Any]:
    return {"key": key, "declaration": {
        "name": key, "description": f"{key}: validates its input, then needs a model",
        "capability": "text", "prompt": "Answer {{code}}",
        "inputSchema": {"type": "object", "properties": properties, **schema}}}


BACKTRACKING = "^(a+)+$"
CODE = {"code": {"type": "string", "pattern": BACKTRACKING,
                 "description": "A code of letters a"}}
ITEMS = {"items": {"type": "array", "uniqueItems": True, "items": {"type": "object"},
                   "description": "Items, each once"}}
# anyOf over a recursive $ref: the first case fails only after validating the whole
# subtree, the second validates it again, so each level of nesting doubles the work.
TREE_DEFS = {"node": {"anyOf": [
    {"type": "array", "items": {"$ref": "#/$defs/node"}, "minItems": 2},
    {"type": "array", "items": {"$ref": "#/$defs/node"}}]}}
TREE = {"tree": {"$ref": "#/$defs/node", "description": "Nested lists"}}

ATTACK_FAAS = [faas("checkCode", CODE, required=["code"]),
               faas("uniqueThings", ITEMS, required=["items"]),
               faas("walkTree", TREE, **{"$defs": TREE_DEFS})]
ATTACK_AI = [ai_function("explainCode", CODE, required=["code"]),
             ai_function("countThings", ITEMS, required=["items"])]

BIG_ROWS = 5_000
BIG_COLUMNS = [f"C{n:02d}" for n in range(64)]
BIG_ANSWER = sql_function("everything", "SELECT " + ", ".join(f'"{c}"' for c in BIG_COLUMNS)
                          + ' FROM "Big"')

@pytest.fixture
def site(api: Api) -> TaskSite:
    found = build_site(api)
    save_drafts(found, database_functions=[], mutations=[], faas=ATTACK_FAAS,
                ai_functions=ATTACK_AI, exclude=[])
    deploy(found)
    return found


def call(site: TaskSite, function_id: str, body: bytes) -> dict[str, Any]:
    """Invoke with `body` exactly as given (compact JSON, its size chosen by the test)."""
    response = site.api.call("POST", site.url(f"/{function_id}/invoke"), content=body,
                             params={"env": "prod"})
    answer: dict[str, Any] = response.json()
    return answer


def params_body(params: dict[str, Any]) -> bytes:
    return json.dumps({"params": params}, separators=(",", ":")).encode()


def planned(site: TaskSite, *function_ids: str) -> None:
    """Have the platform plan each function (its validator built, in a worker thread on
    the first call), so that the attack meets the loop's own path: a call with a wrong
    type that is refused before anything runs."""
    for function_id in function_ids:
        answer = call(site, function_id, params_body({"code": 1, "items": 1, "tree": 1}))
        assert answer["code"] in (Code.BAD_REQUEST, Code.PARAMETER_INVALID), answer


# ------------------------------------------------------------------------ patterns


def test_a_backtracking_pattern_answers_at_once(site: TaskSite,
                                                loop_watchdog: LoopWatchdog) -> None:
    """25 letters and a mismatch take Python's backtracking engine 2^25 steps (seconds,
    doubling with each letter); the platform answers at once that the value does not
    match, and nothing ran."""
    planned(site, "checkCode", "explainCode")
    for length in (25, 26, 5_000):
        answer = call(site, "checkCode", params_body({"code": "a" * length + "!"}))
        assert answer["code"] == Code.PARAMETER_INVALID, answer
        assert "does not have the required format" in answer["msg"]
        assert "Parameter: /params/code" in answer["msg"] and "Executed: no." in answer["msg"]
    # A value that matches passes validation (the AI Function then needs a model).
    answer = call(site, "explainCode", params_body({"code": "a" * 30}))
    assert answer["code"] == Code.AI_FUNCTION_NOT_ENABLED, answer
    answer = call(site, "explainCode", params_body({"code": "a" * 30 + "b"}))
    assert answer["code"] == Code.PARAMETER_INVALID, answer
    loop_watchdog.assert_no_stall()


# ----------------------------------------------------------------------- uniqueItems


def distinct_objects(size_chars: int) -> list[dict[str, int]]:
    """As many distinct small objects as fit in a body of about `size_chars`."""
    items: list[dict[str, int]] = []
    used = 40
    while used < size_chars:
        items.append({"a": len(items)})
        used += len(json.dumps(items[-1], separators=(",", ":"))) + 1
    return items


def test_unique_items_over_many_objects_answers_at_once(site: TaskSite,
                                                       loop_watchdog: LoopWatchdog) -> None:
    """About 1,500 distinct objects in a 16 KiB body (validated on the loop): comparing
    each with every other is a million comparisons; the check is linear instead."""
    planned(site, "uniqueThings", "countThings")
    items = distinct_objects(16 * 1024 - 64)
    assert len(items) > 1_400
    body = params_body({"items": items})
    assert len(body) <= 16 * 1024
    assert call(site, "countThings", body)["code"] == Code.AI_FUNCTION_NOT_ENABLED
    repeated = params_body({"items": [*items[:-1], {"a": 0.0}]})  # 0.0 == 0 in JSON Schema
    answer = call(site, "uniqueThings", repeated)
    assert answer["code"] == Code.PARAMETER_INVALID, answer
    assert "must not repeat an item" in answer["msg"]
    loop_watchdog.assert_no_stall()


# ------------------------------------------------------------------ exponential schemas


def nested(depth: int) -> list[Any]:
    tree: list[Any] = []
    for _ in range(depth):
        tree = [tree]
    return tree


def test_an_exponential_schema_is_refused_within_a_budget(site: TaskSite,
                                                          loop_watchdog: LoopWatchdog) -> None:
    """Each level of nesting doubles the work of validating `tree`: a small input is
    validated (off the loop), a deep one is refused as too complex for the schema once
    the validation has spent its budget, and nothing ran."""
    planned(site, "walkTree")
    answer = call(site, "walkTree", params_body({"tree": nested(3)}))
    assert answer["code"] != Code.PARAMETER_INVALID, answer  # valid: it reaches the handler
    answer = call(site, "walkTree", params_body({"tree": nested(40)}))
    assert answer["code"] == Code.PARAMETER_INVALID, answer
    msg = answer["msg"]
    assert "too complex" in msg and "Parameter: /params" in msg and "Executed: no." in msg
    loop_watchdog.assert_no_stall()


# ------------------------------------------------------------------------ big answers


@pytest.fixture
def big_site(api: Api) -> TaskSite:
    found = build_site(api)
    base, app = found.base_token, found.app_token
    table = api.ok("POST", f"/bases/{base}/tables", json={
        "name": "Big", "fields": [{"name": name, "type": "text"} for name in BIG_COLUMNS]})
    for start in range(0, BIG_ROWS, 200):
        api.ok("POST", f"/bases/{base}/tables/{table['id']}/records/batch_create", json={
            "fields": BIG_COLUMNS,
            "rows": [[f"{name}{n:05d}" + "x" * 8 for name in BIG_COLUMNS]
                     for n in range(start, start + 200)]})
    api.ok("POST", f"/sites/{app}/bind_base", json={
        "baseToken": base, "tableIds": [found.tasks_table, found.projects_table, table["id"]]})
    save_drafts(found, database_functions=[BIG_ANSWER], mutations=[], faas=[],
                ai_functions=[], exclude=[])
    deploy(found)
    return found


@pytest.mark.usefixtures("fresh_loop_budget")
def test_an_answer_of_megabytes_is_made_off_the_loop(big_site: TaskSite,
                                                    loop_watchdog: LoopWatchdog) -> None:
    """A statement the loop could run at once (no function, a plain scan), whose answer
    is about 8 MB: fetching, decoding and encoding its rows is the loop's to budget too,
    so the answer is made off the loop, complete."""
    for _ in range(3):
        answer = big_site.invoke("everything", {})
        assert answer["rowCount"] == BIG_ROWS and not answer["truncated"]
        assert answer["rows"][-1]["C63"] == f"C63{BIG_ROWS - 1:05d}" + "x" * 8
    loop_watchdog.assert_no_stall()

@pytest.mark.usefixtures("fresh_loop_budget")
def test_an_answer_fetched_at_once_still_leaves_the_loop(
        big_site: TaskSite, loop_watchdog: LoopWatchdog,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a machine fast enough to fetch the whole answer within the loop's SQLite
    budgets (here: a second each), the answer is still made off the loop: the
    loop keeps answers of at most LOOP_ANSWER_BYTES, whose shaping and encoding are
    cheap too."""
    monkeypatch.setattr(sql_inline, "LOOP_BUDGET_S", 1.0)
    monkeypatch.setattr(sql_runtime, "BUDGET_S", 1.0)
    for _ in range(2):  # the first call plans the function, in a worker thread
        answer = big_site.invoke("everything", {})
        assert answer["rowCount"] == BIG_ROWS and not answer["truncated"]
    loop_watchdog.assert_no_stall()


def test_a_body_of_megabytes_is_parsed_off_the_loop(site: TaskSite,
                                                   loop_watchdog: LoopWatchdog) -> None:
    """Two million small values in a 4 MiB invoke body, and in a record batch: parsing
    them takes the JSON parser about 100 ms, off the loop."""
    planned(site, "explainCode")
    padding = [0] * 2_000_000
    answer = call(site, "explainCode", params_body({"code": "aaa", "pad": padding}))
    assert answer["code"] == Code.AI_FUNCTION_NOT_ENABLED, answer  # parsed and validated
    path = f"/bases/{site.base_token}/tables/{site.tasks_table}/records/batch_create"
    body = json.dumps({"fields": ["Title"], "rows": [padding]}).encode()
    response = site.api.call("POST", path, content=body)
    assert response.status_code == 400 and "one per entry of fields" in response.text
    loop_watchdog.assert_no_stall()


# ------------------------------------------------------------- patterns RE2 cannot run


def test_a_pattern_that_needs_backtracking_is_refused_at_deploy(
        api: Api, loop_watchdog: LoopWatchdog) -> None:
    """A draft whose schema has a backreference is refused as `basedb check` refuses it
    (FAAS_PATTERN_UNSUPPORTED): nothing deployable runs a pattern RE2 cannot."""
    found = build_site(api)
    twice = {"code": {"type": "string", "pattern": r"^(\w+)\1$", "description": "Twice"}}
    response = api.call("PUT", f"/sites/{found.app_token}/draft/functions", json={
        "databaseFunctions": [], "mutations": [], "faas": [faas("twice", twice)]})
    assert response.status_code == 400
    assert "FAAS_PATTERN_UNSUPPORTED" in response.json()["msg"]
    loop_watchdog.assert_no_stall()


def test_a_deployed_pattern_that_needs_backtracking_is_unavailable() -> None:
    """A deployment made before the rule (or by a platform without it) is judged when
    its plan is built: unavailable, saying why, so no call runs the pattern."""
    schema = {"type": "object", "properties": {"code": {
        "type": "string", "pattern": r"^(?=x)\w+$", "description": "Code"}}}
    declaration = FaaS(function_id="lookahead", kind="faas", file="faas/lookahead/function.json",
                       name="lookahead", description="A lookahead", raw={},
                       input_schema=schema, has_input_schema=True)
    plan = function_plans._declared_schema_plan(
        {"deployment_id": "d", "function_id": "lookahead", "kind": "faas",
         "declaration": declaration, "revision": 1, "name": "lookahead",
         "description": "A lookahead"}, declaration)
    assert plan.status == "unavailable" and plan.validator is None
    assert plan.status_hint is not None
    assert "/properties/code/pattern" in plan.status_hint and "lookahead" in plan.status_hint


def test_params_nested_past_the_stack_are_refused_by_name() -> None:
    """uniqueItems over arrays nested about as deep as JSON parsing allows: comparing
    them recurses past Python's stack, which is a refusal ("too complex"), not a 500."""
    schema = {"type": "object", "properties": {"tree": {
        "type": "array", "uniqueItems": True, "description": "Nested lists"}}}
    declaration = FaaS(function_id="deep", kind="faas", file="faas/deep/function.json",
                       name="deep", description="Deep", raw={}, input_schema=schema,
                       has_input_schema=True)
    plan = function_plans._declared_schema_plan(
        {"deployment_id": "d", "function_id": "deep", "kind": "faas",
         "declaration": declaration, "revision": 1, "name": "deep",
         "description": "Deep"}, declaration)
    assert plan.validator is not None and plan.validator.linear
    params = {"tree": [nested(5_000), []]}
    with pytest.raises(invoke.OffTheLoop):
        invoke.checked_input(plan, params, on_loop=True)
    with pytest.raises(ApiFailure) as refused:
        invoke.checked_input(plan, params)
    assert refused.value.code == Code.PARAMETER_INVALID
    assert "too complex" in refused.value.msg and "Executed: no." in refused.value.msg
