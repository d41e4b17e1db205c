"""Attacks on name checks: a name with a trailing newline ("listAll\\n").

Python's `$` matches at the end of the text and also just before a final newline, so a
pattern ending in `$` used with `match` or `search` accepts "listAll\\n". Every regex in
basedb is collected here (the compiled ones its modules hold, and every literal handed to
a `re` function in its source), and none may end a match with `$`; each pattern anchored
at the end is then shown a string it accepts, followed by a newline, and must refuse it
(unless it accepts trailing blanks by design, as the SQL value parsers do). The platform's
own checks of function ids, parameter names and secret names are attacked end to end."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import re._constants as sre  # the parser's opcodes: what `$` and `\Z` compile to
import re._parser as sre_parse
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import basedb
from basedb.client.profiles import PROFILE_NAME_RE
from basedb.core.skill_spec import NAME_RE as SKILL_NAME_RE
from basedb.protocol import Code
from basedb.workspace.config import APP_TOKEN_RE
from basedb.workspace.faas_access import SECRET_NAME_RE
from basedb.workspace.model import FUNCTION_ID_RE, PARAM_NAME_RE
from tests.platform.conftest import Api
from tests.platform.release_support import TaskSite, functions_body, list_tasks, task_site

ROOT = Path(basedb.__file__).parent
_RE_FUNCTIONS = {"compile", "match", "search", "fullmatch", "sub", "subn", "split",
                 "findall", "finditer"}


def _held(value: Any, found: dict[int, re.Pattern[str]]) -> None:
    if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
        found.setdefault(id(value), value)
    elif isinstance(value, list | tuple | frozenset | set):
        for item in value:
            _held(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _held(item, found)


def _compiled() -> dict[str, re.Pattern[str]]:
    """Every compiled pattern a basedb module holds (directly or in a collection)."""
    found: dict[int, re.Pattern[str]] = {}
    names: dict[int, str] = {}
    for info in pkgutil.walk_packages(basedb.__path__, "basedb."):
        module = importlib.import_module(info.name)
        source = Path(str(module.__file__)).read_text(encoding="utf-8")
        for name, value in vars(module).items():
            held: dict[int, re.Pattern[str]] = {}
            _held(value, held)
            found.update(held)
            for key in held:  # named where it is made, not where it is imported
                if key not in names or re.search(rf"^{name}\b.*=", source, re.MULTILINE):
                    names[key] = f"{info.name}.{name}"
    return {names[key]: pattern for key, pattern in found.items()}


def _literals() -> dict[str, tuple[str, int]]:
    """Every string literal handed to a `re` function in basedb's source (as pattern,
    flags), named by file and line: the patterns made inside functions."""
    found: dict[str, tuple[str, int]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.func.attr in _RE_FUNCTIONS and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                flags = re.VERBOSE if "VERBOSE" in ast.unparse(node) else 0
                where = f"{path.relative_to(ROOT.parent)}:{node.lineno}"
                found[where] = (node.args[0].value, flags)
    return found


COMPILED = _compiled()
PATTERNS = {**{name: (p.pattern, p.flags) for name, p in COMPILED.items()}, **_literals()}


def _anchors(pattern: str, flags: int) -> set[str]:
    """Which end anchors the pattern uses: "$" (AT_END) and "\\Z" (AT_END_STRING)."""
    found: set[str] = set()

    def walk(items: Any) -> None:
        for op, arg in items:
            if op is sre.AT and arg is sre.AT_END:
                found.add("$")
            elif op is sre.AT and arg is sre.AT_END_STRING:
                found.add("\\Z")
            elif isinstance(arg, sre_parse.SubPattern):
                walk(arg)
            elif isinstance(arg, list | tuple):
                for part in arg:
                    if isinstance(part, sre_parse.SubPattern):
                        walk(part)
                    elif isinstance(part, list | tuple):
                        for inner in part:
                            if isinstance(inner, sre_parse.SubPattern):
                                walk(inner)

    walk(sre_parse.parse(pattern, flags))
    return found


def test_the_collection_finds_the_name_patterns() -> None:
    """The walk is not empty-handed: the names the platform and check refuse are in it."""
    held = {id(pattern) for pattern in COMPILED.values()}
    for pattern in (FUNCTION_ID_RE, PARAM_NAME_RE, SECRET_NAME_RE, PROFILE_NAME_RE,
                    APP_TOKEN_RE, SKILL_NAME_RE):
        assert id(pattern) in held, pattern
    assert len(PATTERNS) > 50


@pytest.mark.parametrize("where", sorted(PATTERNS))
def test_no_pattern_ends_a_match_with_dollar(where: str) -> None:
    pattern, flags = PATTERNS[where]
    if flags & re.MULTILINE:  # `$` is a line's end on purpose
        return
    assert "$" not in _anchors(pattern, flags), (
        f"{where}: {pattern!r} ends with $, which also matches before a final newline; "
        "end it with \\Z")


END_ANCHORED = sorted(name for name, p in COMPILED.items()
                      if "\\Z" in _anchors(p.pattern, p.flags)
                      and not p.pattern.endswith("(?:\\r?\\n|\\Z)"))


@pytest.mark.parametrize("name", END_ANCHORED)
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_a_trailing_newline_is_refused(name: str, data: st.DataObject) -> None:
    pattern = COMPILED[name]
    accepted = data.draw(st.from_regex(pattern, fullmatch=True).filter(
        lambda text: pattern.match(text) is not None and "\n" not in text[-1:]))
    if pattern.match(accepted + " ") is not None:
        return  # it trims blanks around a value by design (the SQL value parsers)
    assert pattern.match(accepted + "\n") is None, f"{name} accepts {accepted + chr(10)!r}"
    assert pattern.search(accepted + "\n") is None, f"{name} finds {accepted + chr(10)!r}"


# ------------------------------------------------------------- the platform's names


@pytest.fixture
def site(api: Api) -> TaskSite:
    return task_site(api)


def _refused(api: Api, method: str, path: str, body: Any) -> dict[str, Any]:
    response = api.call(method, path, json=body)
    found: dict[str, Any] = response.json()
    assert response.status_code == 400 and found["code"] == Code.BAD_REQUEST, found
    return found


def test_a_function_id_with_a_newline_is_refused(api: Api, site: TaskSite) -> None:
    body = functions_body(database_functions=[list_tasks(["Open"], function_id="listAll\n")])
    refused = _refused(api, "PUT", f"/sites/{site.app_token}/draft/functions", body)
    assert [e["code"] for e in refused["data"]["errors"]] == ["FUNCTION_ID_INVALID"]


def test_a_parameter_name_with_a_newline_is_refused(api: Api, site: TaskSite) -> None:
    function = list_tasks(["Open"])
    function["declaration"]["meta"]["params"][0]["name"] = "status\n"
    refused = _refused(api, "PUT", f"/sites/{site.app_token}/draft/functions",
                       functions_body(database_functions=[function]))
    assert "PARAM_NAME_INVALID" in [e["code"] for e in refused["data"]["errors"]]


def test_a_secret_name_with_a_newline_is_refused(api: Api, site: TaskSite) -> None:
    _refused(api, "PUT", f"/sites/{site.app_token}/secrets/API_KEY%0A", {"value": "v"})
    assert api.ok("GET", f"/sites/{site.app_token}/secrets")["secrets"] == []
