"""The expectations of tests/unit/test_sql_known_differences.py are PostgreSQL's own."""

from __future__ import annotations

from typing import Any

import pytest

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
