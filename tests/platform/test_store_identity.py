"""Storage settings, migrations, the owner token file, users and authentication."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from pathlib import Path

import pytest

from basedb.platform import LocalPlatform, open_platform
from basedb.platform.storage import ids
from basedb.platform.storage import store as store_module
from basedb.platform.storage.schema import MIGRATIONS, Migration
from basedb.platform.storage.store import (
    DATABASE_FILE,
    Store,
    WriteBusy,
    WriteOutOfTime,
)
from basedb.protocol import Code
from tests.platform.conftest import Api, make_table


def test_connections_use_wal_busy_timeout_and_foreign_keys(platform: LocalPlatform) -> None:
    conn = platform.store.connection()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == [m.version for m in MIGRATIONS]


def test_new_migrations_apply_once(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    extra = Migration(max(m.version for m in MIGRATIONS) + 1, "demo table",
                      "CREATE TABLE demo (x INTEGER)")
    Store(path).close()
    store = Store(path, migrations=[*MIGRATIONS, extra])
    store.close()
    store = Store(path, migrations=[*MIGRATIONS, extra])  # a second start applies nothing
    with store.read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(
            MIGRATIONS) + 1
    store.close()


def test_a_newer_schema_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    from basedb.core.errors import ConflictError

    path = tmp_path / "x.db"
    extra = Migration(99, "future", "CREATE TABLE future (x INTEGER)")
    Store(path, migrations=[*MIGRATIONS, extra]).close()
    with pytest.raises(ConflictError, match="newer than this basedb"):
        Store(path)


def test_write_rolls_back_on_error_and_joins_outer_write(platform: LocalPlatform) -> None:
    store = platform.store
    with pytest.raises(RuntimeError), store.write() as conn:
        conn.execute("INSERT INTO users (user_id, name, created_at) VALUES ('ou_x', 'x', '')")
        raise RuntimeError("boom")
    with store.read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM users WHERE user_id='ou_x'").fetchone()[0] == 0
    with store.write() as outer, store.write() as inner:
        assert inner is outer
    with pytest.raises(RuntimeError, match=r"inside store\.read"), store.read(), store.write():
        pass


def _scratch(store: Store) -> None:
    with store.write() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS scratch (x INTEGER)")


def _count(store: Store) -> int:
    with store.read() as conn:
        return int(conn.execute("SELECT count(*) FROM scratch").fetchone()[0])


def test_write_now_never_waits_for_the_lock(tmp_path: Path) -> None:
    store = Store(tmp_path / "x.db")
    _scratch(store)
    with store.write_now(1.0) as conn:
        conn.execute("INSERT INTO scratch VALUES (1)")
    # Its connection does not wait for locks, and leaves checkpoints to a background
    # thread (a checkpoint syncs the database file).
    nowait = store._nowait_connection()
    assert nowait.execute("PRAGMA busy_timeout").fetchone() == (0,)
    assert nowait.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
    holder = sqlite3.connect(store.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    with pytest.raises(WriteBusy), store.write_now(1.0) as conn:
        conn.execute("INSERT INTO scratch VALUES (2)")
    holder.execute("ROLLBACK")
    holder.close()
    with store.write_now(1.0) as conn:
        conn.execute("INSERT INTO scratch VALUES (3)")
    assert _count(store) == 2
    store.close()


def test_write_now_out_of_time_rolls_back(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "x.db")
    _scratch(store)
    monkeypatch.setattr(store_module, "CHECK_EVERY", 1)
    with pytest.raises(WriteOutOfTime), store.write_now(0.0) as conn:
        conn.execute("INSERT INTO scratch VALUES (1)")
        conn.execute("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r "
                     "WHERE n < 1000000) INSERT INTO scratch SELECT n FROM r")
    assert _count(store) == 0
    # The connection is usable again, without the handler.
    with store.write_now(1.0) as conn:
        conn.execute("INSERT INTO scratch VALUES (1)")
    assert _count(store) == 1
    store.close()


def test_write_now_refuses_to_nest(tmp_path: Path) -> None:
    store = Store(tmp_path / "x.db")
    _scratch(store)
    with pytest.raises(RuntimeError), store.write_now(1.0), store.write():
        pass
    with pytest.raises(RuntimeError), store.write(), store.write_now(1.0):
        pass
    assert _count(store) == 0
    store.close()


def test_no_wait_commits_are_checkpointed_in_the_background(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "x.db")
    _scratch(store)
    monkeypatch.setattr(store_module, "CHECKPOINT_EVERY", 3)
    checkpointed = threading.Event()
    real = store._checkpointer._run

    def run() -> None:
        checkpointed.set()
        real()

    monkeypatch.setattr(store._checkpointer, "_run", run)
    for n in range(3):
        with store.write_now(1.0) as conn:
            conn.execute("INSERT INTO scratch VALUES (?)", (n,))
    assert checkpointed.wait(60)  # a guard against a hang, not a window
    store.close()


def test_owner_token_file_is_private_and_stable(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = open_platform(data)
    token_file = data / "owner.token"
    assert token_file.read_text().strip() == first.owner_token
    assert first.owner_token.startswith("bdb_")
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert open_platform(data) is first  # cached per data dir
    first.close()
    again = open_platform(data)
    assert again is not first and again.owner_token == first.owner_token
    # Only hashes are stored.
    raw = (data / DATABASE_FILE).read_bytes()
    assert first.owner_token.encode() not in raw
    with again.store.read() as conn:
        hashes = [r[0] for r in conn.execute("SELECT token_hash FROM tokens")]
    assert hashes == [ids.hash_token(first.owner_token)]
    again.close()


def test_a_lost_owner_token_is_reissued(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = open_platform(data)
    old = first.owner_token
    first.close()
    (data / "owner.token").unlink()
    second = open_platform(data)
    assert second.owner_token != old
    assert (data / "owner.token").read_text().strip() == second.owner_token
    with second.store.read() as conn:
        owners = conn.execute("SELECT COUNT(*) FROM users WHERE is_platform_owner=1").fetchone()
    assert owners[0] == 1
    second.close()


def test_unusable_data_dir_is_an_input_error(tmp_path: Path) -> None:
    from basedb.core.errors import InputError

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(InputError, match="platform data dir"):
        open_platform(blocker / "data")


def test_token_codes(api: Api) -> None:
    assert "Authorization: Bearer" in api.as_user(None).fail(
        "GET", "/users/me", code=Code.TOKEN_MISSING, status=401)
    api.as_user("bdb_notarealtoken").fail("GET", "/users/me", code=Code.TOKEN_INVALID, status=401)
    response = api.client.get("/open-apis/base/v3/users/me",
                              headers={"Authorization": "Basic abc"})
    assert response.json()["code"] == Code.TOKEN_MISSING


def test_users_me_and_owner_creates_users(api: Api) -> None:
    me = api.ok("GET", "/users/me")
    assert me["is_platform_owner"] is True and me["user_id"].startswith("ou_")
    created = api.ok("POST", "/users", json={"name": "Ada"})
    assert created["name"] == "Ada" and created["token"].startswith("bdb_")
    ada = api.as_user(created["token"])
    assert ada.ok("GET", "/users/me") == {"user_id": created["user_id"], "name": "Ada",
                                          "is_platform_owner": False}
    ada.fail("POST", "/users", json={"name": "Eve"}, code=Code.PERMISSION_DENIED, status=403)
    api.fail("POST", "/users", json={"name": "  "}, code=9499, status=400)
    api.fail("POST", "/users", json={"name": "x", "admin": True}, code=9499)


def test_ids_have_their_prefixes() -> None:
    assert ids.new_id(ids.RECORD_ID).startswith("rec")
    assert ids.new_id(ids.APP_TOKEN).startswith("Prj")
    assert ids.new_id(ids.USER_ID).startswith("ou_")
    sample = ids.new_id(ids.FIELD_ID)[3:]
    assert sample.isalnum() and len(sample) == ids.FIELD_ID[1]
    assert len({ids.new_id(ids.RECORD_ID) for _ in range(1000)}) == 1000


def test_owner_token_file_written_atomically_with_mode(tmp_path: Path) -> None:
    from basedb.platform.domain.identity import write_secret_file

    target = tmp_path / "secret"
    target.write_text("old")
    os.chmod(target, 0o644)
    write_secret_file(target, "new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["secret"]



def test_record_ids_start_with_the_time_so_that_inserts_append() -> None:
    earlier = ids.new_record_ids(200, now_ms=1_780_000_000_000)
    later = ids.new_record_ids(3, now_ms=1_780_000_000_001)
    assert len(set(earlier)) == 200
    assert max(earlier) < min(later)  # the primary key of a new record is the largest
    for record_id in (*earlier, *later):
        assert record_id.startswith("rec") and record_id[3:].isalnum()
        assert len(record_id) == 3 + ids.RECORD_ID[1]
    assert ids.new_record_ids(1, now_ms=0)[0][3:10] == "0000000"


def test_records_made_one_after_another_have_growing_ids(api: Api) -> None:
    base = api.ok("POST", "/bases", json={"name": "Ordered"})["base_token"]
    table = make_table(api, base, "Things", [{"name": "Name", "type": "text"}])
    made = [api.ok("POST", f"/bases/{base}/tables/{table['id']}/records",
                   json={"Name": str(n)})["record_id"] for n in range(20)]
    assert [record_id[:10] for record_id in made] == sorted(
        record_id[:10] for record_id in made)
