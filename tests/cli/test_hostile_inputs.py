"""Hostile workspaces: each yields one clear finding (or none), never a traceback.

Every case starts from a small valid workspace (one Database Function) and breaks one
thing the way real files get broken: wrong encoding, enormous, binary, a symlink loop,
a directory in a file's place, the wrong JSON shape, syntax errors, pathological nesting.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from basedb.cli import cli

CASES = Path(__file__).resolve().parents[1] / "cases"
SOURCE = CASES / "positive" / "task_site"
FUNCTION_DIR = "database-functions/listProjects"
DECLARATION = f"{FUNCTION_DIR}/function.json"
SQL = f"{FUNCTION_DIR}/main.sql"
MIB = 1024 * 1024


def small_workspace(root: Path) -> Path:
    root.mkdir()
    for name in ("base-database.jsonc", "catalog.json"):
        shutil.copy(SOURCE / name, root / name)
    shutil.copytree(SOURCE / FUNCTION_DIR, root / FUNCTION_DIR)
    return root


@dataclass(frozen=True)
class Hostile:
    name: str
    make: Callable[[Path], None]
    code: str | None  # the one expected error code; None: the workspace is valid
    file: str = ""
    says: str = ""  # a fragment the message must contain


def _write(rel: str, data: bytes | str) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        path = root / rel
        path.unlink()
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
    return make


def _huge_declaration(root: Path) -> None:
    with (root / DECLARATION).open("r+b") as f:
        f.truncate(50 * MIB)  # sparse: 50 MB on paper, nothing to write


def _symlink_loop(root: Path) -> None:
    (root / DECLARATION).unlink()
    os.symlink("function.json", root / DECLARATION)


def _directory_for_file(root: Path) -> None:
    (root / DECLARATION).unlink()
    (root / DECLARATION).mkdir()
    (root / DECLARATION / "oops.json").write_text("{}", encoding="utf-8")


def _invalid_function_dir(root: Path) -> None:
    (root / FUNCTION_DIR).rename(root / "database-functions" / "list projects!")


def _jsonc_config(root: Path) -> None:
    (root / "base-database.jsonc").write_text("""// Site config with every JSONC liberty
{
  /* the app token
     spans a block comment */
  "appToken": "app_hostile", // trailing comment
  "title": "Hostile, but valid",
  "binding": {
    "baseToken": "bascnTaskSite01",
    "tableIds": ["tblProjects", "tblTasks", "tblComments",],
  },
}
""", encoding="utf-8")


_VALID = (SOURCE / DECLARATION).read_text(encoding="utf-8")

HOSTILE = [
    Hostile("invalid_utf8", _write(DECLARATION, b'{"name": "list\xff\xfeProjects"}'),
            "DECLARATION_INVALID", DECLARATION, "not valid UTF-8"),
    Hostile("fifty_megabytes", _huge_declaration, "DECLARATION_INVALID", DECLARATION,
            "50.0 MB; at most 1.0 MB"),
    Hostile("binary_sql", _write(SQL, b"SELECT\x00\x01\x02\xff FROM"), "DECLARATION_INVALID",
            SQL, "binary"),
    Hostile("symlink_loop", _symlink_loop, "DECLARATION_INVALID", DECLARATION, "symlink loop"),
    Hostile("directory_for_file", _directory_for_file, "DECLARATION_INVALID", DECLARATION,
            "not a regular file"),
    Hostile("catalog_array", _write("catalog.json", '[{"tableId": "tblTasks"}]'),
            "CATALOG_INVALID", "catalog.json", "must contain a JSON object, not an array"),
    Hostile("malformed_json", _write(DECLARATION, _VALID.replace('"meta": {', '"meta" {')),
            "DECLARATION_INVALID", DECLARATION, "line 4 column 10"),
    Hostile("jsonc_config", _jsonc_config, None),
    Hostile("deep_nesting", _write(DECLARATION, "[" * 100_000 + "]" * 100_000),
            "DECLARATION_INVALID", DECLARATION, "nests too deeply"),
    Hostile("invalid_function_dir", _invalid_function_dir, "FUNCTION_ID_INVALID",
            "database-functions/list projects!/", "not a valid functionId"),
    Hostile("nan", _write(DECLARATION, _VALID.replace('"Paused",', "NaN,")),
            "DECLARATION_INVALID", DECLARATION, "NaN"),
]


def check(root: Path, *args: str) -> Result:
    result = CliRunner().invoke(cli, ["check", "-C", str(root), *args], catch_exceptions=False)
    assert "Traceback" not in result.stdout + result.stderr
    return result


@pytest.fixture
def hostile_workspace(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, Hostile]:
    case: Hostile = request.param
    root = small_workspace(tmp_path / "site")
    case.make(root)
    return root, case


@pytest.mark.parametrize("hostile_workspace", HOSTILE, ids=[h.name for h in HOSTILE],
                         indirect=True)
def test_one_clear_finding(hostile_workspace: tuple[Path, Hostile]) -> None:
    root, case = hostile_workspace
    result = check(root, "--json")
    report = json.loads(result.stdout)
    if case.code is None:
        assert result.exit_code == 0, report
        assert report["ok"] is True and report["errors"] == []
        return
    assert result.exit_code == 1
    (error,) = report["errors"]
    assert (error["code"], error["file"]) == (case.code, case.file), error
    assert case.says in error["message"], error["message"]
    assert error.get("fix"), "every finding says how to fix it"


@pytest.mark.parametrize("fmt", ["text", "github", "sarif"])
@pytest.mark.parametrize("hostile_workspace", HOSTILE, ids=[h.name for h in HOSTILE],
                         indirect=True)
def test_every_format_renders_it(hostile_workspace: tuple[Path, Hostile], fmt: str) -> None:
    root, case = hostile_workspace
    result = check(root, "--format", fmt)
    assert result.exit_code == (0 if case.code is None else 1)
    if case.code is None:
        return
    assert case.code in result.stdout
    if fmt == "sarif":
        # the one error (hints, such as the agent-facing ones, are notes beside it)
        (res,) = [found for found in json.loads(result.stdout)["runs"][0]["results"]
                  if found["level"] == "error"]
        assert res["ruleId"] == case.code


def test_malformed_json_reports_line_and_column(tmp_path: Path) -> None:
    root = small_workspace(tmp_path / "site")
    (root / DECLARATION).write_text(_VALID.replace('"meta": {', '"meta" {'), encoding="utf-8")
    (error,) = json.loads(check(root, "--json").stdout)["errors"]
    assert (error["line"], error["column"]) == (4, 10)
    text = check(root).stdout
    assert text.startswith(f"{DECLARATION}:4:10: DECLARATION_INVALID ")
    github = check(root, "--format", "github").stdout
    assert f"::error file={DECLARATION},line=4,col=10,title=DECLARATION_INVALID::" in github


def test_unreadable_files_are_anchored_at_their_start(tmp_path: Path) -> None:
    root = small_workspace(tmp_path / "site")
    _huge_declaration(root)
    log = json.loads(check(root, "--format", "sarif").stdout)
    (res,) = log["runs"][0]["results"]
    location = res["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == DECLARATION
    # the finding is about the whole file: code scanning still needs a line to show it on
    assert location["region"] == {"startLine": 1, "startColumn": 1}


def test_dependency_and_cache_dirs_are_not_functions(tmp_path: Path) -> None:
    # Deploy never ships node_modules/ or __pycache__/, so check must not judge them.
    from basedb.check.run import check_workspace
    from basedb.workspace import load_workspace
    from tests.unit._builders import write_workspace

    root = write_workspace(tmp_path / "site")
    for kind in ("database-functions", "faas"):
        (root / kind / "node_modules" / "left-pad").mkdir(parents=True)
        (root / kind / "__pycache__").mkdir()
    ws = load_workspace(root)
    assert "node_modules" not in ws.ids and "__pycache__" not in ws.ids
    assert check_workspace(ws).ok
