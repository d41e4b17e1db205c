"""A listing's `total` comes from a count kept by triggers in the same transaction as
every write (storage/physical.py), not from reading the table: it must stay true
through every kind of write, a table rebuild, and the migration that starts it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from basedb.platform import LocalPlatform, open_platform
from basedb.platform.domain import bases, records
from basedb.platform.storage import physical
from tests.platform.conftest import Api, make_table


def counted(platform: LocalPlatform, table_id: str) -> tuple[int, int]:
    """(the kept count, COUNT(*) of the table)."""
    with platform.store.read() as conn:
        kept = conn.execute("SELECT records FROM record_counts WHERE table_id = ?",
                            (table_id,)).fetchone()
        actual = conn.execute(
            f"SELECT COUNT(*) FROM {physical.table_name(table_id)}").fetchone()[0]
    assert kept is not None
    return kept[0], actual


def test_the_kept_count_follows_every_write(api: Api, platform: LocalPlatform, base: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    table = make_table(api, base, "Things", [{"name": "Name", "type": "text"}])
    path = f"/bases/{base}/tables/{table['id']}/records"
    assert counted(platform, table["id"]) == (0, 0)
    made = api.ok("POST", f"{path}/batch_create", json={
        "fields": ["Name"], "rows": [[str(n)] for n in range(5)]})["record_id_list"]
    one = api.ok("POST", path, json={"Name": "x"})["record_id"]
    api.ok("DELETE", f"{path}/{made[0]}")
    api.ok("PATCH", f"{path}/{one}", json={"Name": "y"})  # an update counts nothing
    assert counted(platform, table["id"]) == (5, 5)
    assert api.ok("GET", path, params={"limit": 1})["total"] == 5
    # A rebuilt table (SQLite before 3.35) keeps counting.
    field = api.ok("POST", f"/bases/{base}/tables/{table['id']}/fields",
                   json={"name": "Extra", "type": "text"})
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 34, 0))
    api.ok("DELETE", f"/bases/{base}/tables/{table['id']}/fields/{field['id']}")
    monkeypatch.undo()
    api.ok("POST", path, json={"Name": "z"})
    assert counted(platform, table["id"]) == (6, 6)
    # A deleted table takes its count with it.
    api.ok("DELETE", f"/bases/{base}/tables/{table['id']}")
    with platform.store.read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM record_counts WHERE table_id = ?",
                            (table["id"],)).fetchone()[0] == 0


def test_the_migration_counts_the_tables_it_finds(tmp_path: Path) -> None:
    platform = open_platform(tmp_path / "data")
    with platform.store.write() as conn:
        owner = conn.execute("SELECT user_id FROM users LIMIT 1").fetchone()[0]
        base = bases.create_base(conn, "Work", owner)
        table = bases.create_table(conn, base.base_token, "Things",
                                   [bases.FieldSpec(name="Name", type="text")])
        prepared: list[Any] = [records.prepare_values(conn, table, {"Name": str(n)},
                                                      zone="UTC") for n in range(3)]
        records.insert_records(conn, table, prepared, actor=owner, zone="UTC")
        # As before the migration: no count and no triggers.
        conn.execute("DROP TABLE record_counts")
        for name in ("insert", "delete"):
            conn.execute(f"DROP TRIGGER {physical.table_name(table.table_id)}__counted_{name}")
        conn.execute("DELETE FROM schema_migrations WHERE version = 16")
    platform.close()
    reopened = open_platform(tmp_path / "data")
    try:
        assert counted(reopened, table.table_id) == (3, 3)
        with reopened.store.write() as conn:
            records.insert_records(conn, table, prepared[:1], actor=owner, zone="UTC")
            assert records.record_count(conn, table.table_id) == 4
    finally:
        reopened.close()
