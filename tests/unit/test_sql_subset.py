"""The supported subset is check's function table: everything in it runs locally.

Every signature of every function `check` lists (tests/differential/signatures.py) is
called over the differential dataset. Each call `check` accepts must compile and run on
the local platform — failing only where PostgreSQL fails on the same data (a domain
error such as sqrt(-1); tests/differential compares those with a real server) — and
never for being unsupported. Each function is accepted in at least one call, and what
`check` refuses of these calls it refuses as PostgreSQL would (SQL_INVALID), never as
outside the subset.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from basedb.sql.functions import FUNCTIONS
from basedb.sql.sqlite.query import prepare_connection
from tests.differential import dataset
from tests.differential.engines import Case, analyse, run_local
from tests.differential.signatures import signature_cases

CATALOG = dataset.catalog()
CASES = list(signature_cases())
# What a UDF raising (PostgreSQL's error on the data) looks like from SQLite.
DATA_ERROR = "OperationalError: user-defined function raised exception"


@pytest.fixture(scope="module")
def conn() -> Iterator[sqlite3.Connection]:
    local = sqlite3.connect(":memory:", isolation_level=None)
    dataset.load_sqlite(local, CATALOG)
    prepare_connection(local)
    yield local
    local.close()


def test_every_function_of_the_table_has_calls() -> None:
    named = {case.note.split("(")[0] for case in CASES}
    assert named >= set(FUNCTIONS), sorted(set(FUNCTIONS) - named)
    assert len(CASES) >= 2 * len(FUNCTIONS)


@pytest.mark.parametrize("case", CASES, ids=[c.note for c in CASES])
def test_a_call_check_accepts_runs_on_the_local_platform(conn: sqlite3.Connection,
                                                         case: Case) -> None:
    analysis = analyse(case, CATALOG)
    codes = {p.code for p in analysis.problems}
    assert codes <= {"SQL_INVALID"}, [p.message for p in analysis.problems]
    if codes:
        return
    found = run_local(conn, analysis, case, CATALOG, "Asia/Shanghai")
    assert found.error is None or found.error == DATA_ERROR, found.error


def test_each_function_is_accepted_somewhere() -> None:
    accepted = {case.note.split("(")[0] for case in CASES
                if not analyse(case, CATALOG).problems}
    assert accepted == set(FUNCTIONS), sorted(set(FUNCTIONS) - accepted)
