"""The expectations of tests/unit/test_sql_known_differences.py are PostgreSQL's own, and
so is what `check` says of PostgreSQL's functions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from basedb.sql.functions import (
    FUNCTIONS,
    OTHER_DIALECT_FUNCTIONS,
    REFUSED_FUNCTIONS,
    UNSUPPORTED_FUNCTIONS,
)
from tests.differential.engines import analyse, oracle_sql, run_postgres
from tests.differential.known import KNOWN_DIFFERENCES, Expected


@pytest.mark.parametrize("expected", KNOWN_DIFFERENCES, ids=lambda e: e.bullet)
def test_postgresql_gives_the_expected_result(engines: Any, expected: Expected) -> None:
    analysis = analyse(expected.case, engines.catalog)
    found = run_postgres(engines.postgres, oracle_sql(analysis), expected.case, engines.zone)
    if isinstance(expected.result, list) and expected.result and isinstance(
            expected.result[0], str) and expected.result[0].startswith("SQL_"):
        if "SQL_INVALID" in expected.result:
            assert found.error is not None, "check refuses what PostgreSQL runs"
        return  # SQL_UNSUPPORTED: valid PostgreSQL, refused by the subset
    assert ("error" if found.error is not None else found.rows) == expected.result


def test_what_check_says_of_postgresql_functions_is_true(engines: Any) -> None:
    # check calls a name of another dialect SQL_INVALID ("does not exist in PostgreSQL")
    # and a PostgreSQL function outside the subset SQL_UNSUPPORTED: ask the server.
    rows = engines.postgres.execute("SELECT DISTINCT proname FROM pg_proc").fetchall()
    names = {name for (name,) in rows}
    assert not set(OTHER_DIALECT_FUNCTIONS) & names
    assert set(UNSUPPORTED_FUNCTIONS) | set(REFUSED_FUNCTIONS) <= names
    # These are syntax in PostgreSQL, not functions of its catalog.
    syntax = {"extract", "position", "trim", "coalesce", "nullif", "greatest", "least"}
    assert set(FUNCTIONS) - syntax - {"current_user_id"} <= names


def test_the_collation_docs_sql_md_states_is_the_one_compared_with(engines: Any) -> None:
    (collate, ctype), = engines.postgres.execute(
        "SELECT datcollate, datctype FROM pg_database WHERE datname = current_database()"
    ).fetchall()
    assert (collate, ctype) == ("C", "C.UTF-8")
    docs = (Path(__file__).resolve().parents[2] / "docs" / "sql.md").read_text("utf-8")
    assert "the C collation" in docs and "`LC_COLLATE 'C'`" in docs and "`C.UTF-8`" in docs
