"""The wire has one home, `basedb.protocol`: no other module of basedb writes a code as a
number, lists the values of a code family, or builds an envelope.

Each rule reads the source with `ast`, so a docstring or comment that names a code (as
documentation should) is not flagged; each is shown to catch what it is for.
"""

from __future__ import annotations

import ast
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
