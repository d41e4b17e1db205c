"""Each place where SQLite and PostgreSQL part ways, run on the local platform: it behaves
as PostgreSQL does, or `check` refuses it with SQL_UNSUPPORTED (or SQL_INVALID where
PostgreSQL refuses it too).

The expected results are PostgreSQL's: tests/differential runs these very cases on a
real server and checks they agree (KNOWN_DIFFERENCES there).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from basedb.sql.sqlite.query import prepare_connection
from tests.differential import dataset
from tests.differential.engines import Case, analyse, run_local
from tests.differential.known import KNOWN_DIFFERENCES, Expected

CATALOG = dataset.catalog()


@pytest.fixture(scope="module")
def conn() -> Iterator[sqlite3.Connection]:
    local = sqlite3.connect(":memory:", isolation_level=None)
    dataset.load_sqlite(local, CATALOG)
    prepare_connection(local)
    yield local
    local.close()


def outcome(conn: sqlite3.Connection, case: Case) -> Any:
    analysis = analyse(case, CATALOG)
    if analysis.problems:
        return sorted({p.code for p in analysis.problems})
    found = run_local(conn, analysis, case, CATALOG, "Asia/Shanghai")
    return "error" if found.error is not None else found.rows


@pytest.mark.parametrize("expected", KNOWN_DIFFERENCES, ids=lambda e: e.bullet)
def test_the_local_platform_behaves_as_postgresql(conn: sqlite3.Connection,
                                                  expected: Expected) -> None:
    assert outcome(conn, expected.case) == expected.result, expected.case.sql
