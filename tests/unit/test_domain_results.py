"""The platform's domain calls return typed results, not dicts: frozen, slotted dataclasses
whose `to_dict()` makes the route's JSON (as `basedb.check.CheckResult` does), or the
wire's own models (`basedb.protocol.wire.WireModel`), which the route sends as they are.

A call that went back to returning `dict[str, Any]` fails here twice: its return
annotation is no longer a result type, and the scan of the domain modules finds a
dict-returning function that is not in the short list of those that rightly return one.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from basedb.platform import open_platform
from basedb.platform.domain import (
    bases,
    deployment_results,
    deployments,
    describe,
    dev_drafts,
    draft_content,
    draft_results,
    drafts,
    grants,
    identity,
    lark_auth,
    logs,
    records,
    schemas,
    site_secrets,
    site_skill,
    sites,
)
from basedb.platform.domain.caches import DomainCaches
from basedb.platform.domain.revision import live_catalog
from basedb.protocol.wire import WireModel, encode

MODULES = (bases, records, sites, grants, site_secrets, logs, site_skill, describe, schemas,
           lark_auth, identity, drafts, draft_content, draft_results, dev_drafts, deployments,
           deployment_results)

CONVERTED: tuple[Callable[..., Any], ...] = (
    bases.create_base, bases.list_tables, bases.delete_table, bases.delete_field,
    records.require_record, records.read_rows, records.list_page,
    sites.list_members,
    site_secrets.listing, site_secrets.put, site_secrets.delete,
    logs.site_entries, logs.platform_entries,
    site_skill.render_site_skill,
    describe.list_item, describe.describe_function,
    lark_auth.register_app, lark_auth.decide_device_grant,
    identity.create_user,
    draft_results.save_functions, draft_results.functions_listing, draft_results.held_content,
    draft_results.save_ai_functions, draft_results.ai_functions_listing,
    draft_results.save_agent_tools, draft_results.agent_tools_policy,
    dev_drafts.replace, dev_drafts.state, dev_drafts.discard,
    deployment_results.create, deployment_results.listing, deployment_results.view,
    deployment_results.promote, deployment_results.rollback,
)

# Public domain functions that rightly return a dict, and why. Anything else that does
# is a result that lost its type.
DICT_RETURNS = {
    # Cells keyed by field id or name: record data, not a result.
    "basedb.platform.domain.records.prepare_values",
    "basedb.platform.domain.records.prepare_rows",
    "basedb.platform.domain.records.read_records",
    # The environment a FaaS handler is given, by secret name.
    "basedb.platform.domain.site_secrets.values_for",
    # JSON Schema documents (a function's input or output schema) and the request
    # examples built from them: arbitrary JSON by nature.
    "basedb.platform.domain.schemas.cell_schema",
    "basedb.platform.domain.schemas.query_output_schema",
    "basedb.platform.domain.schemas.schema_from_specs",
    "basedb.platform.domain.describe.request_example",
    "basedb.platform.domain.describe.schema_request_example",
    # functionHints as `basedb check --json` rendered them when the draft was judged,
    # stored as that JSON and answered unchanged (DraftFunctionsSaved, deployments).
    "basedb.platform.domain.draft_content.judged_hints",
    "basedb.platform.domain.draft_content.parse_hints",
    # Lookups the results above are built from, not answers: stored drafts by (kind,
    # functionId), when each deployment last became prod, a deployment's functionIds by
    # kind (DeploymentDetail.functions).
    "basedb.platform.domain.drafts.held_hashes",
    "basedb.platform.domain.deployments.last_promotions",
    "basedb.platform.domain.deployments.function_ids_by_kind",
}

# Lark's own OAuth and auth/v3 answers, sent as they are (not in the envelope).
WIRE_ANSWERS = (lark_auth.LarkAnswer,)


def _name(function: Callable[..., Any]) -> str:
    return f"{function.__module__}.{function.__qualname__}"


def _returned_types(function: Callable[..., Any]) -> list[Any]:
    annotation = typing.get_type_hints(function)["return"]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return [t for t in typing.get_args(annotation) if t is not type(None)]
    return [annotation]


def _is_result_type(cls: Any) -> bool:
    if inspect.isclass(cls) and issubclass(cls, WireModel):
        return True
    return (inspect.isclass(cls) and dataclasses.is_dataclass(cls)
            and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
            and "__slots__" in cls.__dict__ and callable(getattr(cls, "to_dict", None)))


@pytest.mark.parametrize("function", CONVERTED, ids=_name)
def test_a_converted_call_is_annotated_with_a_result_type(function: Callable[..., Any]) -> None:
    returned = _returned_types(function)
    assert returned, _name(function)
    for cls in returned:
        if cls in WIRE_ANSWERS:
            continue
        assert _is_result_type(cls), (
            f"{_name(function)} returns {cls!r}: return a frozen, slotted dataclass with "
            "to_dict() or a wire model instead")


def test_no_other_domain_call_returns_a_dict() -> None:
    found = set()
    for module in MODULES:
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ != module.__name__ or name.startswith("_"):
                continue
            annotation = str(inspect.signature(function).return_annotation)
            if "dict[" in annotation or annotation in ("dict", "Dict"):
                found.add(_name(function))
    assert found - DICT_RETURNS == set(), "return a typed result (see CONVERTED) instead"
    assert DICT_RETURNS - found == set(), "no longer returns a dict: drop it from DICT_RETURNS"


def _assert_result(value: Any) -> dict[str, Any]:
    assert not isinstance(value, dict) and _is_result_type(type(value)), value
    data = encode(value) if isinstance(value, WireModel) else value.to_dict()
    assert isinstance(data, dict)
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    return data


def test_domain_calls_return_results_that_render_to_json(tmp_path: Path) -> None:
    platform = open_platform(tmp_path / "data")
    with platform.store.write() as conn:
        owner = identity.user_for_token(conn, platform.owner_token)
        assert owner is not None
        base = bases.create_base(conn, "Work", owner.user_id)
        assert _assert_result(base) == {"base_token": base.base_token, "name": "Work",
                                        "timezone": "UTC"}
        table = bases.create_table(conn, base.base_token, "Tasks", [
            bases.FieldSpec(name="Title", type="text"), bases.FieldSpec(name="Done",
                                                                         type="checkbox")])
        prepared = records.prepare_values(conn, table, {"Title": "Write"}, zone="UTC")
        [record_id] = records.insert_records(conn, table, [prepared], actor=owner.user_id,
                                             zone="UTC")
        assert _assert_result(records.require_record(conn, table, record_id)) == {
            "record_id": record_id, "fields": {"Title": "Write", "Done": False}}
        page = _assert_result(records.list_page(conn, table, 0, 10))
        assert list(page) == ["fields", "field_id_list", "record_id_list", "data",
                              "has_more", "total"]
        assert _assert_result(records.read_rows(conn, table, table.fields[:1], [record_id]))[
            "data"] == [["Write"]]
        tables = _assert_result(bases.list_tables(conn, base.base_token, 0, 10))
        assert tables["tables"] == [{"id": table.table_id, "name": "Tasks"}]
        site = sites.create_site(conn, "Site", owner.user_id)
        assert _assert_result(sites.list_members(conn, site.app_token))["total"] == 1
        _assert_result(site_secrets.put(conn, owner, site.app_token, "API_KEY", "v"))
        listed = _assert_result(site_secrets.listing(conn, owner, site.app_token))
        assert [s["name"] for s in listed["secrets"]] == ["API_KEY"]
        _assert_result(site_secrets.delete(conn, owner, site.app_token, "API_KEY"))
        _assert_result(lark_auth.register_app(conn, "CI"))
        assert _assert_result(bases.delete_field(conn, table, table.fields[1])) == {
            "id": table.fields[1].field_id, "deleted": True}
    with platform.store.read() as conn:
        entries = _assert_result(logs.platform_entries(conn, owner, logs.LogQuery()))
        assert list(entries) == ["entries", "hasMore", "cursor"]
        _assert_result(logs.site_entries(conn, owner, site.app_token, logs.LogQuery()))
        _assert_result(grants.GrantListing(base.owner_id,
                                           grants.list_grants(conn, base.base_token)))


def test_draft_and_deployment_calls_return_results_that_render_to_json(tmp_path: Path) -> None:
    platform = open_platform(tmp_path / "data")
    with platform.store.write() as conn:
        owner = identity.user_for_token(conn, platform.owner_token)
        assert owner is not None
        site = sites.create_site(conn, "Site", owner.user_id)
    app_token = site.app_token
    caches = DomainCaches()
    body = {"databaseFunctions": [], "mutations": [], "faas": [], "timezone": "Asia/Shanghai"}
    judged = draft_results.judge_functions(platform.store, caches, owner, app_token, body)
    ai = draft_results.judge_ai_functions({"aiFunctions": []})
    with platform.store.write() as conn:
        assert _assert_result(draft_results.save_functions(conn, owner, judged, None)) == {
            "functionHints": [], "counts": {"database_function": 0, "mutation": 0, "faas": 0},
            "draftRevision": 2}
        assert _assert_result(draft_results.save_ai_functions(conn, owner, app_token, ai,
                                                              2)) == {
            "keys": [], "draftRevision": 3}
        assert _assert_result(draft_results.save_agent_tools(
            conn, owner, app_token, {"exclude": []}, None)) == {"exclude": [],
                                                                "draftRevision": 4}
    with platform.store.read() as conn:
        assert _assert_result(draft_results.functions_listing(conn, app_token)) == {
            "databaseFunctions": [], "mutations": [], "faas": [], "timezone": "Asia/Shanghai",
            "draftRevision": 4}
        assert list(_assert_result(draft_results.ai_functions_listing(conn, app_token))) == [
            "aiFunctions", "draftRevision"]
        assert list(_assert_result(draft_results.held_content(conn, app_token))) == [
            "databaseFunctions", "mutations", "faas", "timezone", "fingerprints",
            "draftRevision"]
        assert _assert_result(draft_results.agent_tools_policy(conn, app_token)) == {
            "exclude": [], "draftRevision": 4}
        assert _assert_result(deployment_results.listing(conn, app_token)) == {
            "deployments": [], "prodDeploymentId": None, "previewDeploymentId": None}
        catalog = live_catalog(conn, site, caches.catalogs).catalog
    assert _assert_result(dev_drafts.state(caches.dev, app_token)) == {
        "revision": None, "functionIds": []}
    saved = _assert_result(dev_drafts.replace(caches.dev, app_token, {"faas": []}, catalog,
                                              by=owner, role="owner"))
    assert list(saved) == ["functionHints", "counts", "revision"]
    assert _assert_result(dev_drafts.discard(caches.dev, app_token, by=owner,
                                             role="owner")) == {"discarded": True}
