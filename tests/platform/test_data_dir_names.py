"""A data dir may be named with characters that mean something in a `file:` URI."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from basedb.platform import open_platform
from tests.platform.conftest import Api
from tests.platform.functions_support import DATABASE_FUNCTIONS, released_site, sql_function

# strpos() (SQLite's instr) keeps a statement off the server's own loop: it runs in a
# query worker, which opens the database by itself.
IN_A_WORKER = sql_function("inWorker", 'SELECT strpos(\'ab\', \'b\') AS n, count(*) AS tasks '
                                       'FROM "Tasks"')
IN_PROCESS = sql_function("inProcess", 'SELECT count(*) AS tasks FROM "Tasks"')


def test_functions_read_the_platform_database_whatever_its_dir_is_named(
        tmp_path: Path) -> None:
    platform = open_platform(tmp_path / "data #1?x=%20 y")
    try:
        with TestClient(platform.app, base_url="http://localhost") as client:
            site = released_site(Api(client, platform.owner_token),
                                 database_functions=[*DATABASE_FUNCTIONS, IN_A_WORKER,
                                                     IN_PROCESS])
            assert site.invoke("inProcess", {})["rows"] == [{"tasks": 4}]
            assert site.invoke("inWorker", {})["rows"] == [{"n": 2, "tasks": 4}]
    finally:
        platform.close()
