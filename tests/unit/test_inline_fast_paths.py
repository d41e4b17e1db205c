"""The shortcuts of a Database Function call run in the server's process: the answer's
size bound (`fetch_capped`), the authorizer kept per statement (`sql_inline`) and the
result shape kept per statement (`runtimes.sql.shape_result`) answer exactly as doing
the work in full every time would."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from basedb.platform.domain.runtimes import sql as sql_runtime
from basedb.platform.domain.runtimes import sql_inline, sql_worker
from basedb.platform.domain.runtimes.sql_worker import fetch_capped, json_size
from basedb.platform.storage.sql_results import column_decoder
from basedb.sql.model import OutputColumn
from basedb.sql.sqlite.query import CompiledQuery, StatementConnection
from basedb.workspace.model import Field


def counted_one_by_one(rows: Sequence[tuple[Any, ...]], column_names: Sequence[str],
                       row_cap: int, response_cap_bytes: int) -> tuple[Any, ...]:
    """What `fetch_capped` answers: every row counted as it comes."""
    kept: list[tuple[Any, ...]] = []
    size = 0
    names = sum(len(name.encode("utf-8")) + 4 for name in column_names)
    for row in rows:
        if len(kept) >= row_cap:
            return ("ok", kept, True)
        size += names + sum(json_size(cell) for cell in row)
        if size > response_cap_bytes:
            return ("ok", kept, True) if kept else ("row_too_big",)
        kept.append(row)
    return ("ok", kept, False)


def _cell(rng: random.Random) -> Any:
    kind = rng.randrange(6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.randrange(-10**12, 10**12)
    if kind == 2:
        return rng.random() * 1000
    if kind == 3:
        return "".join(rng.choice("ab订单😀\u00e9") for _ in range(rng.randrange(40)))
    if kind == 4:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(30)))
    return "x" * rng.randrange(300)


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:", isolation_level=None)
    connection.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, a, b, c)")
    yield connection
    connection.close()


@pytest.mark.parametrize("seed", range(12))
def test_the_capped_answer_is_the_one_of_counting_every_row(conn: sqlite3.Connection,
                                                             seed: int) -> None:
    rng = random.Random(seed)
    count = rng.choice([0, 1, 3, 255, 256, 257, 600])
    rows = [(n, _cell(rng), _cell(rng), _cell(rng)) for n in range(count)]
    conn.execute("DELETE FROM t")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    stored = conn.execute("SELECT n, a, b, c FROM t ORDER BY n").fetchall()
    names = ["n", "a", "名前", "c"]
    full = sum(len(n.encode()) + 4 for n in names) * count + sum(
        json_size(cell) for row in stored for cell in row)
    caps = {0, 1, 50, 100, 400, full - 1, full, full + 1, full // 2, full // 3, 10**9}
    for row_cap in (0, 1, 3, 255, 256, 257, 599, 5_000):
        for byte_cap in sorted(cap for cap in caps if cap >= 0):
            cursor = conn.execute("SELECT n, a, b, c FROM t ORDER BY n")
            assert fetch_capped(cursor, names, row_cap, byte_cap) == counted_one_by_one(
                stored, names, row_cap, byte_cap), (row_cap, byte_cap)


def test_the_size_bound_is_never_below_the_count() -> None:
    rng = random.Random(7)
    for _ in range(200):
        batch = [tuple(_cell(rng) for _ in range(4)) for _ in range(rng.randrange(1, 20))]
        counted = sum(9 + sum(json_size(cell) for cell in row) for row in batch)
        assert sql_worker._size_bound(batch, 9) >= counted


def _compiled(sql: str, tables: frozenset[str]) -> CompiledQuery:
    return CompiledQuery(sql=sql, slots=(), columns=(OutputColumn("v"),), tables=tables)


def test_the_authorizer_kept_for_a_statement_follows_its_tables() -> None:
    """The same text compiled with other tables gets an authorizer of its own: one built
    for a statement never decides for another."""
    sql = "SELECT v FROM t_a"
    first = sql_inline._authorizer(_compiled(sql, frozenset({"t_a"})))
    assert sql_inline._authorizer(_compiled(sql, frozenset({"t_a"}))) is first
    other = sql_inline._authorizer(_compiled(sql, frozenset({"t_b"})))
    assert other is not first
    assert other(20, "t_a", "v", "main", None) == sqlite3.SQLITE_DENY
    assert other(20, "t_b", "v", "main", None) == sqlite3.SQLITE_OK
    assert first(20, "t_a", "v", "main", None) == sqlite3.SQLITE_OK


def test_a_function_refused_once_is_never_tried_in_the_process_again(tmp_path: Any) -> None:
    conn = sqlite3.connect(tmp_path / "db.sqlite", isolation_level=None,
                           factory=StatementConnection)
    sql = "SELECT replace('a', 'a', 'b') AS v"
    compiled = _compiled(sql, frozenset())
    try:
        assert sql_inline._attempt(conn, compiled, (), ["v"], 10, 10_000, {}, 1.0,
                                   None) is None
        assert sql in sql_inline._refused
        assert sql_inline.run_inline(conn, compiled, (), site="s", column_names=["v"],
                                     row_cap=10, response_cap_bytes=10_000,
                                     statement_limits={}) is None
    finally:
        conn.close()
        with sql_inline._refused_lock:
            sql_inline._refused.pop(sql, None)


def test_each_statement_is_shaped_by_its_own_columns() -> None:
    numbers = (OutputColumn("n", field=Field(field_id="f1", name="n", type="number")),)
    texts = (OutputColumn("n", type="text"),)
    assert sql_runtime.shape_result(numbers, [(2.0,)], False)["rows"] == [{"n": 2}]
    assert sql_runtime.shape_result(texts, [(2.0,)], False)["rows"] == [{"n": 2.0}]
    shaped = sql_runtime.shape_result(numbers, [(2.0,)], False)
    shaped["columns"][0]["name"] = "changed by a caller"
    assert sql_runtime.shape_result(numbers, [], False)["columns"] == [
        {"name": "n", "type": "number"}]
    assert column_decoder(numbers[0])(2.0) == 2
