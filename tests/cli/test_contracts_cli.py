"""`basedb contracts generate` and CONTRACTS_STALE, through the real CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from basedb.cli import cli
from basedb.contracts import generate, stale_findings
from basedb.workspace import load_workspace
from tests.unit._builders import write_workspace
from tests.unit._contracts_fixture import write_representative_workspace

TS = "src/generated/function-inputs.ts"
PY = "src/generated/function_inputs.py"
GOLDEN_TS = Path(__file__).parents[1] / "unit" / "golden" / "function-inputs.ts.golden"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["contracts", "generate", *args], catch_exceptions=False)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_representative_workspace(tmp_path / "site")


def edit_description(root: Path, text: str) -> None:
    path = root / "database-functions" / "countAll" / "function.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["description"] = text
    path.write_text(json.dumps(doc), encoding="utf-8")


def age(path: Path) -> int:
    """Push the file's mtime into the past and return it, so a rewrite would show."""
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    return path.stat().st_mtime_ns


# ---------------------------------------------------------------------- writing


def test_generate_writes_the_typescript_file(root: Path) -> None:
    result = run("-C", str(root))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"written   {TS}\n"
    assert result.stderr == ""
    assert (root / TS).read_bytes() == GOLDEN_TS.read_bytes()
    assert not (root / PY).exists()
    assert [p.name for p in (root / "src" / "generated").iterdir()] == ["function-inputs.ts"]


def test_unchanged_output_leaves_the_file_untouched(root: Path) -> None:
    assert run("-C", str(root)).exit_code == 0
    mtime = age(root / TS)
    result = run("-C", str(root))
    assert result.exit_code == 0
    assert result.stdout == f"unchanged {TS} (up to date)\n"
    assert (root / TS).stat().st_mtime_ns == mtime


def test_changed_declarations_rewrite_the_file(root: Path) -> None:
    run("-C", str(root))
    mtime = age(root / TS)
    edit_description(root, "Counts every leave request of the whole team.")
    result = run("-C", str(root))
    assert result.stdout == f"written   {TS}\n"
    assert (root / TS).stat().st_mtime_ns != mtime
    assert "/** Counts every leave request of the whole team. */" in (root / TS).read_text()


def test_generate_from_a_subdirectory_finds_the_workspace(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (root / "src").mkdir(exist_ok=True)
    monkeypatch.chdir(root / "src")
    assert run().exit_code == 0
    assert (root / TS).is_file()


def test_python_lang_writes_the_python_file(root: Path) -> None:
    result = run("-C", str(root), "--lang", "python")
    assert result.exit_code == 0
    assert result.stdout == f"written   {PY}\n"
    assert not (root / TS).exists()
    compile((root / PY).read_text(encoding="utf-8"), PY, "exec")


def test_default_run_refreshes_every_existing_language(root: Path) -> None:
    run("-C", str(root), "--lang", "python")
    edit_description(root, "Counts every leave request, team-wide.")
    result = run("-C", str(root), "--json")
    assert json.loads(result.stdout) == {"files": [
        {"path": TS, "status": "written"}, {"path": PY, "status": "written"}], "skipped": []}
    assert stale_findings(load_workspace(root)) == []


def test_written_files_end_in_lf_and_have_no_leftover_temp_files(root: Path) -> None:
    run("-C", str(root))
    run("-C", str(root), "--lang", "python")
    for rel in (TS, PY):
        data = (root / rel).read_bytes()
        assert data.endswith(b"\n") and b"\r\n" not in data
    assert sorted(p.name for p in (root / "src" / "generated").iterdir()) == [
        "function-inputs.ts", "function_inputs.py"]


# ---------------------------------------------------------------------- --check


def test_check_passes_when_fresh_and_writes_nothing(root: Path) -> None:
    run("-C", str(root))
    mtime = age(root / TS)
    result = run("-C", str(root), "--check")
    assert result.exit_code == 0
    assert result.stdout == f"unchanged {TS} (up to date)\n"
    assert (root / TS).stat().st_mtime_ns == mtime


def test_check_prints_a_diff_and_fails_when_stale(root: Path) -> None:
    run("-C", str(root))
    before = (root / TS).read_bytes()
    edit_description(root, "Counts all leave requests.")
    result = run("-C", str(root), "--check")
    assert result.exit_code == 1
    assert result.stdout.startswith(f"--- a/{TS}\n+++ b/{TS}\n")
    assert "-  /** Counts every leave request; no input. */\n" in result.stdout
    assert "+  /** Counts all leave requests. */\n" in result.stdout
    assert "-// input-hash: " in result.stdout and "+// input-hash: " in result.stdout
    assert f"{TS} is stale" in result.stderr and "basedb contracts generate" in result.stderr
    assert (root / TS).read_bytes() == before


def test_check_fails_when_the_file_is_missing(root: Path) -> None:
    result = run("-C", str(root), "--check")
    assert result.exit_code == 1
    assert f"{TS} does not exist" in result.stderr
    assert not (root / "src" / "generated").exists()


def test_check_without_lang_checks_the_files_that_exist(root: Path) -> None:
    run("-C", str(root), "--lang", "python")
    result = run("-C", str(root), "--check", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["files"] == [{"path": PY, "status": "unchanged"}]
    (root / PY).write_text("# edited by hand\n", encoding="utf-8")
    result = run("-C", str(root), "--check", "--json")
    assert result.exit_code == 1
    [entry] = json.loads(result.stdout)["files"]
    assert entry["status"] == "stale" and entry["path"] == PY
    assert entry["diff"].startswith(f"--- a/{PY}\n+++ b/{PY}\n")


def test_check_json_reports_missing(root: Path) -> None:
    result = run("-C", str(root), "--check", "--lang", "ts", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {"files": [{"path": TS, "status": "missing"}],
                                         "skipped": []}


# ------------------------------------------------------------- stale detection


def test_stale_findings_cover_every_generated_file(root: Path) -> None:
    ws = load_workspace(root)
    assert stale_findings(ws) == []  # nothing generated yet: nothing to be stale
    run("-C", str(root))
    run("-C", str(root), "--lang", "python")
    assert stale_findings(load_workspace(root)) == []
    edit_description(root, "Counts leave requests, now described differently.")
    findings = stale_findings(load_workspace(root))
    assert [(f.code, f.file, f.pointer) for f in findings] == [
        ("CONTRACTS_STALE", TS, ""), ("CONTRACTS_STALE", PY, "")]
    assert all(f.fix and "basedb contracts generate" in f.fix for f in findings)
    assert all(f.file in f.message for f in findings)


def test_a_hand_edit_is_stale_even_with_the_same_hash(root: Path) -> None:
    run("-C", str(root))
    text = (root / TS).read_text(encoding="utf-8")
    (root / TS).write_text(text.replace("countAll: Record<string, never>;",
                                        "countAll: { all?: boolean };"), encoding="utf-8")
    [finding] = stale_findings(load_workspace(root))
    assert finding.file == TS
    assert run("-C", str(root), "--check").exit_code == 1


def test_a_crlf_checkout_is_up_to_date_and_left_as_it_is(root: Path) -> None:
    # Git for Windows checks text files out with CRLF (core.autocrlf=true).
    run("-C", str(root))
    run("-C", str(root), "--lang", "python")
    for path in (root / TS, root / PY):
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert stale_findings(load_workspace(root)) == []
    assert run("-C", str(root), "--check").exit_code == 0
    crlf = (root / TS).read_bytes()
    mtime = age(root / TS)
    assert run("-C", str(root)).stdout == (f"unchanged {TS} (up to date)\n"
                                           f"unchanged {PY} (up to date)\n")
    assert (root / TS).read_bytes() == crlf and (root / TS).stat().st_mtime_ns == mtime
    edit_description(root, "Counts leave requests, now described differently.")
    assert [f.file for f in stale_findings(load_workspace(root))] == [TS, PY]


def test_a_directory_in_place_of_the_file_is_reported(root: Path) -> None:
    (root / TS).mkdir(parents=True)
    [finding] = stale_findings(load_workspace(root))
    assert finding.code == "CONTRACTS_STALE" and "directory" in finding.message
    result = run("-C", str(root))
    assert result.exit_code == 2
    assert f"{TS} is a directory" in result.stderr


# ---------------------------------------------------------------- bad workspaces


def test_blocking_errors_still_generate_from_valid_declarations(tmp_path: Path) -> None:
    good = {"name": "good", "description": "Lists rows of one period.",
            "meta": {"params": [{"name": "id", "kind": "TEXT", "description": "Period id"}]}}
    bad = {"name": "bad", "description": "Lists rows badly.",
           "meta": {"params": [{"name": "id", "kind": "STRING", "description": "Period id"}]}}
    root = write_workspace(tmp_path / "site", functions={
        "database-functions/good": good, "database-functions/bad": bad,
        "faas/broken": "{ not json"})
    result = run("-C", str(root))
    assert result.exit_code == 0
    assert result.stdout == f"written   {TS}\n"
    assert "blocking declaration errors" in result.stderr and "basedb check" in result.stderr
    assert "left out bad: param 'id' has an unknown kind 'STRING'" in result.stderr
    assert "left out broken: faas/broken/function.json is not valid JSON" in result.stderr
    text = (root / TS).read_text(encoding="utf-8")
    assert "  good: {" in text and "bad" not in text and "broken" not in text
    as_json = run("-C", str(root), "--json")
    assert json.loads(as_json.stdout)["skipped"] == [{
        "functionId": "bad", "file": "database-functions/bad/function.json",
        "reason": "param 'id' has an unknown kind 'STRING'"}]


def test_no_workspace_exits_2(tmp_path: Path) -> None:
    result = run("-C", str(tmp_path))
    assert result.exit_code == 2
    assert "base-database.jsonc" in result.stderr


def test_a_file_blocking_the_output_directory_exits_2(root: Path) -> None:
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "generated").write_text("not a directory", encoding="utf-8")
    result = run("-C", str(root))
    assert result.exit_code == 2
    assert "src/generated/" in result.stderr and "in the way" in result.stderr
    assert "Traceback" not in result.output


def test_json_error_envelope_on_stderr(root: Path) -> None:
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "generated").write_text("x", encoding="utf-8")
    result = run("-C", str(root), "--json")
    assert result.exit_code == 2
    envelope: dict[str, Any] = json.loads(result.stderr)
    assert envelope["ok"] is False
    assert envelope["error"]["code"] == "CONTRACTS_WRITE_FAILED"
    assert result.stdout == ""


def test_unknown_lang_is_a_usage_error(root: Path) -> None:
    result = run("-C", str(root), "--lang", "rust")
    assert result.exit_code == 2
    assert "rust" in result.stderr


def test_generate_is_a_pure_function_of_the_workspace(root: Path) -> None:
    # What the command writes is exactly what the library generates.
    run("-C", str(root), "--lang", "python")
    ws = load_workspace(root)
    assert (root / PY).read_bytes() == generate(ws, lang="python").data


def test_check_reports_contracts_stale_end_to_end(tmp_path: Path) -> None:
    from tests.unit._builders import catalog, field, table

    root = write_workspace(
        tmp_path / "site",
        catalog=catalog(table("Leave", field("Name", "text"),
                              field("Intent", "select", options=["a", "b"]))),
        functions={"database-functions/byIntent": {
            "name": "byIntent", "description": "Lists leave requests with one intent; read-only.",
            "meta": {"params": [{"name": "intent", "kind": "TEXT", "enum": ["a", "b"],
                                 "description": "Intent option to filter by"}]}}},
        files={"database-functions/byIntent/main.sql":
               'SELECT "Name" FROM "Leave" WHERE "Intent" = $1\n'})
    check = CliRunner()
    assert check.invoke(cli, ["check", "-C", str(root), "--json"]).exit_code == 0
    assert run("-C", str(root)).exit_code == 0
    assert check.invoke(cli, ["check", "-C", str(root), "--json"]).exit_code == 0
    with (root / TS).open("a", encoding="utf-8") as handle:
        handle.write("// a hand edit\n")
    result = check.invoke(cli, ["check", "-C", str(root), "--json"])
    assert result.exit_code == 1
    [error] = json.loads(result.stdout)["errors"]
    assert (error["code"], error["file"]) == ("CONTRACTS_STALE", TS)
    assert "basedb contracts generate" in error["fix"]
