"""One `check` reveals every independent error, and no message assumes a wrong sibling.

Each test puts two independent mistakes in one function: fixing the first must not be
needed to see the second, and a mistake must not make another rule speak as if it were
something else (a Mutation whose action is "upsert" is not "a create mutation").
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from basedb.check.run import check_workspace
from basedb.protocol.findings import Finding
from basedb.sql.analysis import analyze_sql
from basedb.workspace import load_workspace
from basedb.workspace.model import Catalog

EMPTY = Catalog("", ())
CASES = Path(__file__).resolve().parents[1] / "cases" / "negative"


def workspace_from(case: str, tmp_path: Path) -> Path:
    root = tmp_path / case
    shutil.copytree(CASES / case, root)
    return root


def errors(root: Path) -> list[Finding]:
    return check_workspace(load_workspace(root)).errors


def test_an_unknown_sql_field_does_not_hide_an_out_of_domain_enum(tmp_path: Path) -> None:
    root = workspace_from("enum_out_of_domain", tmp_path)
    sql = root / "database-functions" / "searchTasks" / "main.sql"
    sql.write_text('SELECT t."Title" AS title, t."Pionts" AS points\nFROM "Tasks" AS t\n'
                   'WHERE t."Status" = $1\n', encoding="utf-8")
    assert sorted(f.code for f in errors(root)) == ["ENUM_OUT_OF_DOMAIN", "SQL_UNKNOWN_FIELD"]


def test_an_unknown_table_stops_the_rules_that_would_guess(tmp_path: Path) -> None:
    """With a table unknown, an unqualified field could belong to it: the binding rules
    would judge the enum against a guess, so they say nothing."""
    root = workspace_from("enum_out_of_domain", tmp_path)
    sql = root / "database-functions" / "searchTasks" / "main.sql"
    sql.write_text('SELECT "Title" AS title\nFROM "Tasks" JOIN "Sprnts" ON true\n'
                   'WHERE "Status" = $1\n', encoding="utf-8")
    assert [f.code for f in errors(root)] == ["SQL_UNKNOWN_TABLE"]


def _mutation(root: Path, spec: dict[str, object]) -> None:
    folder = root / "mutations" / "saveTask"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "function.json").write_text(json.dumps({
        "name": "saveTask",
        "description": "Save a task: create it or change its title. Use it from the board.",
        "spec": spec}), encoding="utf-8")


def test_an_upsert_is_not_called_a_create_and_its_fields_are_still_checked(
        tmp_path: Path) -> None:
    root = workspace_from("mutation_field_unknown", tmp_path)
    shutil.rmtree(root / "mutations")
    _mutation(root, {
        "table": "Tasks", "action": "upsert", "recordId": "$taskId",
        "params": [
            {"name": "taskId", "kind": "RECORD_ID", "description": "Task to save, from "
             "listTasks rows[].record_id"},
            {"name": "title", "kind": "TEXT", "description": "New title of the task"},
            {"name": "bad-name", "kind": "TEXT", "description": "A parameter misnamed"}],
        "set": {"Titel": "$title"}})
    found = errors(root)
    messages = " ".join(f.message for f in found)
    assert "create mutation" not in messages
    assert sorted(f.code for f in found) == [
        "DECLARATION_INVALID", "MUTATION_FIELD_UNKNOWN", "PARAM_NAME_INVALID"]
    (action,) = [f for f in found if f.code == "DECLARATION_INVALID"]
    assert action.pointer == "/spec/action"
    assert "'upsert'" in action.message and "two Mutations" in (action.fix or "")
    (unknown,) = [f for f in found if f.code == "MUTATION_FIELD_UNKNOWN"]
    assert unknown.pointer == "/spec/set/Titel" and "'Title'" in unknown.message


def test_a_create_with_a_record_id_is_told_once(tmp_path: Path) -> None:
    root = workspace_from("mutation_field_unknown", tmp_path)
    shutil.rmtree(root / "mutations")
    _mutation(root, {
        "table": "Tasks", "action": "create", "recordId": "$nowhere",
        "params": [{"name": "title", "kind": "TEXT", "description": "Title of the new task"}],
        "set": {"Title": "$title", "Nope": "$title"}})
    found = errors(root)
    assert sorted((f.code, f.pointer) for f in found) == [
        ("DECLARATION_INVALID", "/spec/recordId"),  # not also "$nowhere is undeclared"
        ("MUTATION_FIELD_UNKNOWN", "/spec/set/Nope"),
    ]


def test_a_mutation_with_no_table_still_has_its_params_checked(tmp_path: Path) -> None:
    root = workspace_from("mutation_field_unknown", tmp_path)
    shutil.rmtree(root / "mutations")
    _mutation(root, {"action": "create", "params": [{"name": "title", "kind": "STRING",
                                                     "description": "Title of the task"}],
                     "set": {"Title": "$title", "Points": "$points"}})
    assert sorted((f.code, f.pointer) for f in errors(root)) == [
        ("DECLARATION_INVALID", "/spec/table"),
        ("MUTATION_PARAM_UNDECLARED", "/spec/set/Points"),
        ("PARAM_KIND_INVALID", "/spec/params/0/kind"),
    ]


def test_a_misspelt_keyword_is_a_parse_error_that_names_the_word() -> None:
    analysis = analyze_sql('SELEC "Title" FROM "Tasks"', EMPTY, 0, resolve=False)
    (problem,) = analysis.problems
    assert problem.code == "SQL_PARSE_ERROR"
    assert "'SELEC'" in problem.message and "did you mean SELECT?" in problem.message
    assert (problem.line, problem.column) == (1, 1)
    (with_typo,) = analyze_sql("WTIH a AS (SELECT 1) SELECT * FROM a", EMPTY, 0,
                               resolve=False).problems
    assert with_typo.code == "SQL_PARSE_ERROR" and "did you mean WITH?" in with_typo.message
    # A real statement the tokenizer reads as a plain word is still a write, not a typo.
    (attach,) = analyze_sql("ATTACH DATABASE 'x.db' AS other", EMPTY, 0,
                            resolve=False).problems
    assert attach.code == "SQL_NOT_READ_ONLY"


def test_every_read_only_violation_of_a_query_is_reported() -> None:
    problems = analyze_sql('SELECT * INTO copy FROM "Tasks" FOR UPDATE', EMPTY, 0,
                           resolve=False).problems
    assert [p.code for p in problems] == ["SQL_NOT_READ_ONLY", "SQL_NOT_READ_ONLY"]
    assert "INTO" in problems[0].message and "FOR UPDATE" in problems[1].message


def test_the_library_entry_point_finds_what_a_loaded_check_finds(tmp_path: Path) -> None:
    # basedb check calls check_directory; it loads, checks, and leaves the collector as
    # it found it.
    import gc

    from basedb.check.run import check_directory

    root = workspace_from("enum_out_of_domain", tmp_path)
    assert gc.isenabled()
    result = check_directory(root, cache=False)
    assert gc.isenabled()
    assert result.to_dict() == check_workspace(load_workspace(root)).to_dict()
    assert [f.code for f in result.errors] == ["ENUM_OUT_OF_DOMAIN"]
