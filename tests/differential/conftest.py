"""A PostgreSQL server and a local SQLite database holding the same rows.

The server comes from $BASEDB_TEST_POSTGRES (a libpq connection string, e.g.
postgresql://postgres@127.0.0.1:54329/postgres); `.ci/run` installs Debian's
postgresql, starts it on loopback and sets the variable. Without it the differential
tests skip and say why; with it set and the server unreachable they fail. Each session
works in a database of its own (C collation, UTF-8), dropped at the end.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from basedb.sql.sqlite.query import prepare_connection
from basedb.workspace.model import Catalog
from tests.differential import dataset
from tests.differential.engines import NOW, setup_session

DSN_ENV = "BASEDB_TEST_POSTGRES"
ZONE = "Asia/Shanghai"


SUMMARIES: list[str] = []  # one line per corpus run, shown after the test session
SUMMARY_KEY = "sql_differential"
SUMMARY_TITLE = "SQL compared with PostgreSQL"


def pytest_sessionfinish(session: Any) -> None:
    """Under pytest-xdist a worker hands its lines to the controller, which prints them
    (tests/conftest.py); in one process they are printed from here."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[SUMMARY_KEY] = list(SUMMARIES)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The corpus sizes and outcomes, printed whatever pytest captures."""
    if SUMMARIES:
        terminalreporter.section(SUMMARY_TITLE)
        for line in SUMMARIES:
            terminalreporter.write_line(line)


@dataclass
class Engines:
    sqlite: sqlite3.Connection
    postgres: Any
    catalog: Catalog
    zone: str


def _server() -> Any:
    dsn = os.environ.get(DSN_ENV)
    if not dsn:
        pytest.skip(f"no PostgreSQL to compare with: set {DSN_ENV} to a connection string "
                    "(.ci/run starts a server and sets it)")
    try:
        import psycopg
    except ImportError:
        pytest.skip("psycopg is not installed (pip install -e '.[test]')")
    try:
        return psycopg.connect(dsn, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as error:
        # Set but unreachable is a broken setup (CI sets it after starting the server),
        # not a missing tool: fail, so that the comparison is never skipped unnoticed.
        pytest.fail(f"PostgreSQL at ${DSN_ENV} is not reachable: "
                    f"{str(error).splitlines()[0]}; start it, or unset {DSN_ENV} to skip "
                    "the comparison", pytrace=False)


@pytest.fixture(scope="session")
def engines() -> Iterator[Engines]:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    admin = _server()
    name = f"basedb_diff_{secrets.token_hex(4)}"
    admin.execute(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' "
                  "LC_COLLATE 'C' LC_CTYPE 'C.UTF-8'")
    params = conninfo_to_dict(os.environ[DSN_ENV])
    params["dbname"] = name
    conn = psycopg.connect(make_conninfo(**params), autocommit=True)
    catalog = dataset.catalog()
    try:
        dataset.load_postgres(conn, catalog)
        conn.execute("CREATE SCHEMA basedb_pin")
        conn.execute("CREATE FUNCTION basedb_pin.now() RETURNS timestamptz LANGUAGE sql "
                     f"STABLE AS $$ SELECT '{NOW.isoformat()}'::timestamptz $$")
        conn.execute("CREATE FUNCTION basedb_pin.current_user_id() RETURNS text LANGUAGE "
                     "sql STABLE AS $$ SELECT current_setting('basedb.user_id') $$")
        setup_session(conn, ZONE)
        local = sqlite3.connect(":memory:", isolation_level=None)
        dataset.load_sqlite(local, catalog)
        prepare_connection(local)
        yield Engines(sqlite=local, postgres=conn, catalog=catalog, zone=ZONE)
    finally:
        conn.close()
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.close()
