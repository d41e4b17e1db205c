"""check's agent-facing hints (basedb.check.agent_lint): what each finds, what it leaves
alone, and that each says how to fix it. The case tests/cases/positive/agent_lint has one
of each; these tests vary it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from basedb.check.run import check_directory
from basedb.core.text_search import named_table

CASE = Path(__file__).resolve().parents[1] / "cases" / "positive" / "agent_lint"
AGENT_CODES = {"description_near_duplicate", "description_names_closed",
               "description_vague_pointer", "name_contradicts_description"}


def site(tmp_path: Path, **descriptions: str) -> Path:
    """The case, with the descriptions of some functions replaced (a new id adds one)."""
    root = tmp_path / "site"
    shutil.copytree(CASE, root)
    for function_id, description in descriptions.items():
        folder = root / "database-functions" / function_id
        if not folder.is_dir():
            folder.mkdir(parents=True)
            (folder / "main.sql").write_text('SELECT "Title" AS title FROM "Tasks"\n')
        (folder / "function.json").write_text(json.dumps(
            {"name": function_id, "description": description}))
    return root


def agent_hints(root: Path) -> list[tuple[str, str, str]]:
    result = check_directory(root, cache=False)
    assert result.errors == []
    return sorted((h.code, h.function_id, h.message) for h in result.hints
                  if h.code in AGENT_CODES)


def test_each_hint_names_the_function_and_says_how_to_fix_it(tmp_path: Path) -> None:
    found = agent_hints(site(tmp_path))
    assert {code for code, _, _ in found} == AGENT_CODES
    assert all("Fix:" in message for _, _, message in found)
    closed = [m for code, _, m in found if code == "description_names_closed"]
    assert any("'hiddenTaskStats'" in m and "agent-tools.json" in m for m in closed)
    assert any("'deleteTasks'" in m and "not a function of this site" in m for m in closed)


def test_clean_descriptions_get_no_agent_hint(tmp_path: Path) -> None:
    root = site(
        tmp_path,
        myTasksAndComments="The current user's open tasks, most urgent first (read-only).",
        openTasks="Lists tasks that are not Done, newest first; pass the returned title "
                  "to projectList (read-only).",
        projectList="Lists projects by name. To list tasks use openTasks (read-only).",
        archiveTaskReport="Lists archived tasks for the monthly report (read-only).")
    (root / "database-functions" / "archiveTaskReport").rename(
        root / "database-functions" / "archivedTaskReport")
    declaration = root / "database-functions" / "archivedTaskReport" / "function.json"
    declaration.write_text(json.dumps({"name": "archivedTaskReport", "description":
                                       "Lists archived tasks for the monthly report."}))
    assert agent_hints(root) == []


def test_excluded_functions_are_not_linted_and_excluding_silences_a_pointer(
        tmp_path: Path) -> None:
    root = site(tmp_path, hiddenTaskStats="Counts tasks; see deleteEverything when it exists.")
    assert not [h for h in agent_hints(root) if h[1] == "hiddenTaskStats"]


def test_descriptions_that_differ_in_the_records_they_name_are_not_twins(
        tmp_path: Path) -> None:
    root = site(
        tmp_path,
        myTasksAndComments="The current user's tasks that have comments in one list, "
                           "ordered by date, for a personal agenda (read-only).",
        myCommentsAndTasks="The current user's tasks that have projects in one list, "
                           "ordered by date, for a personal agenda (read-only).")
    assert "description_near_duplicate" not in {code for code, _, _ in agent_hints(root)}


def test_a_table_name_that_starts_with_a_verb_is_not_a_verb() -> None:
    tables = ["Change Requests", "Tasks"]
    assert named_table("changeRequestsByStatus", tables) == "Change Requests"
    assert named_table("budgetsOfDepartment", ["Departments", "Budgets"]) == "Budgets"



def test_table_names_are_tokenized_once_not_once_per_function(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 5,000 functions over 50 tables took 12 s when every function tokenized every
    # table's name again: the work grows with functions plus tables, not their product.
    from basedb.check import agent_lint
    from basedb.core import text_search
    from basedb.workspace.loader import load_workspace

    text_search.name_tokens.cache_clear()
    tables = [f"Table {chr(65 + i)}{chr(65 + j)}" for i in range(6) for j in range(6)]
    declarations = list(load_workspace(site(tmp_path, **{
        f"listItems{n}": f"List the items of batch {n} with their owners and due dates"
        for n in range(120)})).declarations.values())
    calls = 0
    real = text_search.tokens

    def counted(text: str) -> list[str]:
        nonlocal calls
        calls += 1
        return real(text)

    monkeypatch.setattr(text_search, "tokens", counted)
    monkeypatch.setattr(agent_lint, "tokens", counted)
    for decl in declarations:
        list(agent_lint._name_hints(decl, tables))
        agent_lint._tables_of(decl, tables)
    assert calls <= 4 * len(declarations) + len(tables), calls
