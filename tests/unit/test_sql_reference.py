"""docs/sql.md is generated from the tables `check` uses, and kept up to date."""

from __future__ import annotations

from pathlib import Path

from basedb.sql.analysis import analyze_sql
from basedb.sql.constructs import CONSTRUCTS
from basedb.sql.functions import FUNCTIONS
from basedb.sql.reference import render_sql_reference
from tests.unit._sql_fixture import make_catalog

DOC = Path(__file__).resolve().parents[2] / "docs" / "sql.md"


def test_docs_sql_md_is_up_to_date() -> None:
    assert DOC.read_text(encoding="utf-8") == render_sql_reference(), (
        "docs/sql.md is stale: run python -m basedb.cli.reference --write")


def test_every_function_and_construct_is_listed() -> None:
    text = render_sql_reference()
    for name in FUNCTIONS:
        assert f"`{name}(" in text or f"`{name.upper()}" in text, name
    for construct in CONSTRUCTS:
        assert construct.title.replace("|", "\\|") in text, construct.key
        if not construct.supported:
            assert construct.note, f"{construct.key} says nothing about what to write instead"


def test_a_function_outside_the_table_is_refused_by_name() -> None:
    problems = analyze_sql("SELECT regexp_replace(标题, 'a', 'b') FROM 任务", make_catalog(),
                           0).problems
    assert [p.code for p in problems] == ["SQL_UNSUPPORTED"]
    assert problems[0].fix and "LIKE" in problems[0].fix


def test_the_number_mapping_and_collation_are_stated() -> None:
    text = render_sql_reference()
    section = text.split("## Numbers and text on the local platform", 1)[1].split("\n## ")[0]
    for type_ in ("integer, bigint", "double precision", "numeric", "text"):
        assert f"| {type_}" in section, type_
    assert "15 significant digits" in section and "bigint out of range" in section
    assert "by code point: the C collation" in section
