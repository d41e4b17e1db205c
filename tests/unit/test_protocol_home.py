"""The wire has one home, `basedb.protocol`: no other module of basedb writes a code as a
number, lists the values of a code family, or builds an envelope.

Each rule reads the source with `ast`, so a docstring or comment that names a code (as
documentation should) is not flagged; each is shown to catch what it is for.
"""

from __future__ import annotations

import ast
import dataclasses
from collections import Counter
from enum import Enum
from pathlib import Path

import pytest

import basedb
from basedb.protocol import codes

PACKAGE = Path(basedb.__file__).parent
HOME = PACKAGE / "protocol"

FAMILIES: tuple[type[Enum], ...] = (codes.Code, codes.RefreshCode, codes.SchemaStatus,
                                    codes.RecordErrorCode, codes.ErrorCode, codes.HintCode)
# Numbers that are also ordinary quantities (0, HTTP statuses) are not codes in code.
WIRE_NUMBERS = frozenset(int(code) for family in (codes.Code, codes.RefreshCode)
                         for code in family if int(code) >= 9000)
WIRE_RANGES = (range(99991000, 99992000), range(800004000, 800005000))
# The string families: a literal that lists two of a family's values re-defines it.
LISTED = {family.__name__: frozenset(member.value for member in family)
          for family in (codes.SchemaStatus, codes.RecordErrorCode)}
# An envelope: {code, msg} with nothing but its optional members.
ENVELOPE_KEYS = frozenset({"code", "msg", "data", "error"})
# lark-cli's ErrDetail: {type, message} with its optional members.
CLI_ERROR_KEYS = frozenset({"type", "code", "message", "hint", "console_url", "detail"})


def _is_code(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)
            and (value in WIRE_NUMBERS or any(value in span for span in WIRE_RANGES)))


def _keys(node: ast.Dict) -> frozenset[str]:
    return frozenset(key.value for key in node.keys
                     if isinstance(key, ast.Constant) and isinstance(key.value, str))


def offences(tree: ast.AST) -> list[tuple[int, str]]:
    """What `tree` defines that belongs in basedb.protocol, by line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and _is_code(node.value):
            found.append((node.lineno, f"code {node.value} written as a number"))
        elif isinstance(node, ast.Dict):
            keys = _keys(node)
            if {"code", "msg"} <= keys <= ENVELOPE_KEYS:
                found.append((node.lineno, f"an envelope built by hand: {sorted(keys)}"))
            elif {"type", "message"} <= keys <= CLI_ERROR_KEYS:
                found.append((node.lineno, f"lark-cli's error built by hand: {sorted(keys)}"))
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = {item.value for item in node.elts if isinstance(item, ast.Constant)}
            for family, values in LISTED.items():
                if len(items & values) >= 2:
                    found.append((node.lineno, f"{family} values listed: "
                                  f"{sorted(items & values)}"))
    return sorted(found)


def _modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if HOME not in path.parents)


def test_no_module_outside_protocol_defines_a_code_or_an_envelope() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{line}: {what}"
             for path in _modules()
             for line, what in offences(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("source", [
    "RATE_LIMITED = 99991400",
    "raise ApiError('no tables', code=9499)",
    "answer(800004999)",
    "if code == 20050: retry()",
    "body = {'code': 0, 'msg': 'success', 'data': data}",
    "body = {'code': code, 'msg': msg}",
    "error = {'type': kind, 'code': code, 'message': message}",
    "STATUS = {'enum': ['ready', 'missing', 'needs_upgrade', 'unavailable']}",
    "if status in ('ready', 'missing'): pass",
    "CODES = ('invalid_argument', 'table_not_found', 'busy')",
])
def test_each_rule_catches_what_it_is_for(source: str) -> None:
    assert offences(ast.parse(source)) != []


@pytest.mark.parametrize("source", [
    '"""Refused with 9499 (400), or 99991400 when rate limited."""',
    "port = 8080; status = 404; limit = 500",
    "finding = {'code': 'ENUM_NULL', 'message': 'null is not a value'}",
    "token = {'code': 0, 'msg': 'ok', 'tenant_access_token': t, 'expire': 7200}",
    "status = 'ready'",
])
def test_what_is_not_a_definition_passes(source: str) -> None:
    assert offences(ast.parse(source)) == []


def test_every_value_belongs_to_one_family() -> None:
    values = Counter(member.value for family in FAMILIES for member in family)
    assert [value for value, count in values.items() if count > 1] == []
    for family in FAMILIES:  # an alias would make two names for one value
        assert len(family.__members__) == len(list(family)), family


def test_no_enum_of_codes_is_defined_outside_protocol() -> None:
    defined = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                    isinstance(base, ast.Name) and base.id in ("IntEnum", "StrEnum")
                    for base in node.bases) and node.name.endswith(("Code", "Status")):
                defined.append(f"{path.relative_to(PACKAGE.parent)}: {node.name}")
    assert defined == []


# ------------------------------------------------------------------- wire shapes
# The operations whose bodies are wire models (docs/architecture.md, "A wire shape"):
# their schemas in the served document are msgspec's for the model, not written by hand.
MODELLED = {
    ("post", "/sites/{app_token}/deployments"): ("DeploymentForm", "DeploymentCreated"),
    ("get", "/sites/{app_token}/deployments"): (None, "DeploymentListing"),
    ("get", "/sites/{app_token}/deployments/{deployment_id}"): (None, "DeploymentDetail"),
    ("post", "/sites/{app_token}/deployments/{deployment_id}/promote"): ("NoBody",
                                                                         "ProdPointed"),
    ("post", "/sites/{app_token}/deployments/{deployment_id}/rollback"): ("NoBody",
                                                                          "ProdPointed"),
}


def _modelled_schemas() -> list[tuple[str, str, dict[str, object]]]:
    """(operation, model name, the schema the served document points at) of every body
    of the modelled operations."""
    from basedb.core.paths import API_PREFIX
    from basedb.platform.web.openapi import current_document

    document = current_document()
    components = document["components"]["schemas"]
    found = []
    for (method, path), (body, response) in MODELLED.items():
        operation = document["paths"][API_PREFIX + path][method]
        where = f"{method.upper()} {path}"
        if body is not None:
            [content] = operation["requestBody"]["content"].values()
            found.append((where, body, content["schema"]))
        data = operation["responses"]["200"]["content"]["application/json"]["schema"][
            "allOf"][1]["properties"]["data"]
        found.append((where, response, data))
    return [(where, name, ref if "$ref" not in ref else
             {"$ref": ref["$ref"], "resolved": components[ref["$ref"].rsplit("/", 1)[1]]})
            for where, name, ref in found]


def test_modelled_operations_take_their_schemas_from_the_models() -> None:
    import msgspec

    from basedb.protocol import deployments
    from basedb.protocol.wire import SCHEMA_REF

    for where, name, schema in _modelled_schemas():
        model = getattr(deployments, name)
        _, components = msgspec.json.schema_components((model,), ref_template=SCHEMA_REF)
        assert schema == {"$ref": SCHEMA_REF.format(name=name),
                          "resolved": components[name]}, where


def test_the_model_rule_catches_a_schema_written_by_hand(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from basedb.platform.web.routes import deployments as routes

    hand_written = {"type": "object", "properties": {"deploymentId": {"type": "string"}}}
    endpoints = [dataclasses.replace(e, response=hand_written)
                 if e.handler is routes.list_deployments else e for e in routes.ENDPOINTS]
    monkeypatch.setattr(routes, "ENDPOINTS", endpoints)
    with pytest.raises(AssertionError, match=r"GET /sites/\{app_token\}/deployments(?!/)"):
        test_modelled_operations_take_their_schemas_from_the_models()


def test_no_wire_model_is_declared_outside_protocol() -> None:
    declared = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                    ast.unparse(base) in ("WireModel", "msgspec.Struct", "Struct")
                    for base in node.bases):
                declared.append(f"{path.relative_to(PACKAGE.parent)}: {node.name}")
    assert declared == []
