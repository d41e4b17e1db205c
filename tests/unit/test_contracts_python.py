"""Python contracts: golden output, that the module imports and type-checks, naming rules."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
import typing
from pathlib import Path
from types import ModuleType

import pytest

from basedb.contracts import generate
from basedb.contracts.python import pascal_case
from basedb.workspace import load_workspace
from tests.tools import npm_tool
from tests.unit._builders import write_workspace
from tests.unit._contracts_fixture import write_representative_workspace

GOLDEN = Path(__file__).parent / "golden" / "function_inputs.py.golden"
UPDATE_GOLDEN = os.environ.get("BASEDB_UPDATE_GOLDEN") == "1"


def import_source(path: Path, text: str, name: str) -> ModuleType:
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # get_type_hints resolves names through the module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@pytest.fixture
def representative(tmp_path: Path) -> str:
    ws = load_workspace(write_representative_workspace(tmp_path / "ws"))
    generated = generate(ws, lang="python")
    assert generated.path == "src/generated/function_inputs.py"
    assert generated.skipped == ()
    return generated.content


def test_representative_workspace_matches_golden_bytes(representative: str) -> None:
    if UPDATE_GOLDEN:
        GOLDEN.write_bytes(representative.encode("utf-8"))
    assert representative.encode("utf-8") == GOLDEN.read_bytes()


def test_same_bytes_twice(tmp_path: Path) -> None:
    root = write_representative_workspace(tmp_path)
    assert generate(load_workspace(root), lang="python").data == generate(
        load_workspace(root), lang="python").data


def test_module_imports_and_every_type_resolves(tmp_path: Path, representative: str) -> None:
    module = import_source(tmp_path / "function_inputs.py", representative, "gen_inputs_a")
    try:
        assert module.DATABASE_FUNCTION_PARAMETER_OPTIONS["listLeaveByIntent"] == {
            "intentName": ("不休假", "需要休假")}
        assert module.MUTATION_PARAMETER_OPTIONS["deleteLeaves"]["reasons"] == (
            "duplicate", "mistake")
        assert sorted(module.DATABASE_FUNCTION_INPUT_MAP) == [
            "countAll", "importRows", "listLeaveByIntent", "listTeamLeave", "managePeriod",
            "searchLeave"]
        assert sorted(module.MUTATION_INPUT_MAP) == ["createLeave", "deleteLeaves",
                                                     "updateLeave"]
        intent = module.ListLeaveByIntentInput
        assert typing.get_type_hints(intent)["intentName"] == typing.Literal["不休假", "需要休假"]
        assert intent.__required_keys__ == frozenset({"intentName"})
        team = module.ListTeamLeaveInput
        assert team.__required_keys__ == frozenset({"periodId"})
        assert team.__optional_keys__ == frozenset({"offset"})
        search = module.SearchLeaveInput  # functional syntax: `from` is a keyword
        assert "from" in search.__required_keys__
        assert "statuses" in search.__optional_keys__
        period = module.DATABASE_FUNCTION_INPUT_MAP["managePeriod"]
        create, close = typing.get_args(period)
        assert create.__required_keys__ == frozenset({"action", "title", "start", "end"})
        assert close.__required_keys__ == frozenset({"action", "periodId"})
        for value in [*module.DATABASE_FUNCTION_INPUT_MAP.values(),
                      *module.MUTATION_INPUT_MAP.values()]:
            for member in typing.get_args(value) or (value,):
                typing.get_type_hints(member)  # every annotation must resolve
    finally:
        del sys.modules["gen_inputs_a"]


USAGE_PY = """\
from function_inputs import (
    DATABASE_FUNCTION_INPUT_MAP,
    DATABASE_FUNCTION_PARAMETER_OPTIONS,
    MUTATION_PARAMETER_OPTIONS,
    CreateLeaveInput,
    CreateLeaveIntent,
    DatabaseFunctionId,
    DatabaseFunctionInputMap,
    ListLeaveByIntentInput,
    ListLeaveByIntentIntentName,
    ManagePeriodInput,
    MutationId,
    SearchLeaveInput,
)


def invoke(function_id: DatabaseFunctionId, params: object) -> None: ...


def load_by_intent(intent: ListLeaveByIntentIntentName) -> ListLeaveByIntentInput:
    return {"intentName": intent}


def listing(inputs: DatabaseFunctionInputMap) -> ListLeaveByIntentInput:
    return inputs["listLeaveByIntent"]


intents = DATABASE_FUNCTION_PARAMETER_OPTIONS["listLeaveByIntent"]["intentName"]
first: ListLeaveByIntentIntentName = intents[0]
leave_intent: CreateLeaveIntent = MUTATION_PARAMETER_OPTIONS["createLeave"]["intent"][1]
invoke("listLeaveByIntent", load_by_intent(first))
period: ManagePeriodInput = {"action": "close", "periodId": "rec1"}
leave: CreateLeaveInput = {"title": "t", "intent": leave_intent, "owner": "ou_1", "days": None}
search: SearchLeaveInput = {"includeClosed": True, "from": "2024-01-01", "levels": [1, 3],
                            "ratio": 0.5}
days: float | None = leave.get("days")
ids: list[DatabaseFunctionId] = sorted(DATABASE_FUNCTION_INPUT_MAP)
mutation: MutationId = "updateLeave"
bad: ListLeaveByIntentInput = {"intentName": "随便"}
missing: CreateLeaveInput = {"title": "t", "intent": "不休假"}
wrong_id: DatabaseFunctionId = "createLeave"
wrong_level: SearchLeaveInput = {"includeClosed": True, "from": "x", "levels": [4], "ratio": 1}
"""
# The lines of USAGE_PY that must be refused, and nothing else.
USAGE_ERRORS = [number for number, line in enumerate(USAGE_PY.splitlines(), 1)
                if line.startswith(("bad:", "missing:", "wrong_id:", "wrong_level:"))]


def _usage_project(tmp_path: Path, module: str) -> Path:
    (tmp_path / "function_inputs.py").write_text(module, encoding="utf-8")
    (tmp_path / "usage.py").write_text(USAGE_PY, encoding="utf-8")
    return tmp_path


def test_generated_module_imports_only_the_standard_library(representative: str) -> None:
    tree = ast.parse(representative)
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert imported and imported <= set(sys.stdlib_module_names), imported
    assert "typing_extensions" not in representative and "Any" not in representative


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.10", "3.12"])
def test_generated_module_type_checks_with_mypy_strict(tmp_path: Path, representative: str,
                                                       version: str) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed")
    project = _usage_project(tmp_path, representative)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--python-version", version, "--cache-dir", str(tmp_path / ".mypy_cache"),
         "function_inputs.py", "usage.py"],
        cwd=project, capture_output=True, text=True, timeout=300)
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    # The generated module is clean; only the wrong values in usage.py are caught.
    assert all(line.startswith("usage.py:") for line in errors), result.stdout
    assert sorted({int(line.split(":")[1]) for line in errors}) == USAGE_ERRORS, result.stdout


@pytest.mark.slow
def test_generated_module_type_checks_with_pyright_strict(tmp_path: Path,
                                                          representative: str) -> None:
    pyright = npm_tool("pyright")
    project = _usage_project(tmp_path, representative)
    (project / "pyrightconfig.json").write_text(json.dumps({
        "typeCheckingMode": "strict", "pythonVersion": "3.10",
        "include": ["function_inputs.py", "usage.py"]}), encoding="utf-8")
    result = subprocess.run([str(pyright), "--outputjson"], cwd=project, capture_output=True,
                            text=True, timeout=300)
    report = json.loads(result.stdout)
    errors = [(Path(d["file"]).name, d["range"]["start"]["line"] + 1, d["message"])
              for d in report["generalDiagnostics"] if d["severity"] == "error"]
    warnings = [d for d in report["generalDiagnostics"] if d["severity"] == "warning"]
    assert not warnings, warnings
    assert [e for e in errors if e[0] != "usage.py"] == [], errors
    assert sorted({line for _, line, _ in errors}) == USAGE_ERRORS, errors


def test_awkward_names_and_text_still_give_valid_python(tmp_path: Path) -> None:
    # Awkward names and text: keywords, dunder-like keys, quotes, newlines, NUL bytes.
    schema = {"type": "object", "additionalProperties": False, "properties": {
        "import": {"type": "string", "description": "line one\nline two\x00"},
        "__secret": {"type": "integer"},
        "with space": {"type": "boolean"},
        "nested": {"type": "object", "properties": {"x y": {"type": "number"}},
                   "required": ["x y"], "description": 'has "quotes" and \\ slashes'},
        "never": False,
        "choice": {"enum": [1.5, "a", None, True]},
    }}
    ws = load_workspace(write_workspace(tmp_path / "ws", functions={
        "faas/odd": {"name": "odd", "description": "Odd \u2028names\r\nhere",
                     "inputSchema": schema},
    }))
    text = generate(ws, lang="python").content
    compile(text, "function_inputs.py", "exec")
    module = import_source(tmp_path / "odd_inputs.py", text, "gen_inputs_b")
    try:
        odd = module.OddInput
        assert odd.__optional_keys__ == frozenset(
            {"import", "__secret", "with space", "nested", "choice"})
        hints = typing.get_type_hints(odd)
        assert hints["choice"] == typing.Literal["a", None, True] | float
        nested = typing.get_type_hints(module.OddInputNested)
        assert nested == {"x y": float}
    finally:
        del sys.modules["gen_inputs_b"]


def test_class_names_do_not_collide(tmp_path: Path) -> None:
    doc = {"name": "x", "description": "Lists rows.", "meta": {"params": []}}
    ws = load_workspace(write_workspace(tmp_path / "ws", functions={
        "database-functions/leave_list": doc, "database-functions/leaveList": doc,
        "database-functions/LeaveList": doc, "database-functions/Literal": doc,
    }))
    text = generate(ws, lang="python").content
    module = import_source(tmp_path / "names.py", text, "gen_inputs_c")
    try:
        names = {k: v.__name__ for k, v in module.DATABASE_FUNCTION_INPUT_MAP.items()}
        assert len(set(names.values())) == 4
        assert names["LeaveList"] == "LeaveListInput"
        assert names["Literal"] == "LiteralInput"
    finally:
        del sys.modules["gen_inputs_c"]


def test_empty_workspace_gives_a_valid_module(tmp_path: Path) -> None:
    text = generate(load_workspace(write_workspace(tmp_path / "ws")), lang="python").content
    module = import_source(tmp_path / "empty.py", text, "gen_inputs_d")
    try:
        assert module.DATABASE_FUNCTION_INPUT_MAP == {}
        assert module.MUTATION_PARAMETER_OPTIONS == {}
        assert "Sequence" not in text and "DatabaseFunctionId = NoReturn" in text
    finally:
        del sys.modules["gen_inputs_d"]


def test_single_value_enums_are_one_element_tuples(tmp_path: Path) -> None:
    doc = {"name": "x", "description": "Lists rows.", "meta": {"params": [
        {"name": "only", "kind": "TEXT", "description": "The only mode", "enum": ["a"]}]}}
    ws = load_workspace(write_workspace(tmp_path / "ws",
                                        functions={"database-functions/one": doc}))
    text = generate(ws, lang="python").content
    assert '        "only": ("a",),\n' in text


@pytest.mark.parametrize(("text", "expected"), [
    ("listLeave", "ListLeave"), ("list_leave", "ListLeave"), ("meta-data", "MetaData"),
    ("x y", "XY"), ("", "Field"), ("不休假", "Field"), ("a1b", "A1b"),
])
def test_pascal_case(text: str, expected: str) -> None:
    assert pascal_case(text) == expected
