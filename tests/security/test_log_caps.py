"""Log floods (issue finding 6): the platform log is kept in bytes per owner and in all,
not only by count per site, and `basedb serve`'s own stderr has a budget.

Mallory owns two sites and makes them log as much as she can (every call keeps its
output, up to 32 KiB an entry); Victor's site logs a little. Her entries stay within
one owner's cap, the oldest going first, and Victor's stay.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform
from basedb.platform.domain.quotas import OwnerQuotas
from basedb.platform.storage import platform_log, server_output
from basedb.platform.storage.platform_log import Entry, LogCaps, LogScope
from basedb.platform.web.app import build_app
from tests.platform.conftest import Api

KIB = 1024
CAPS = LogCaps(owner_bytes=256 * KIB, total_bytes=1024 * KIB)


def _user(api: Api, name: str) -> tuple[Api, str]:
    created = api.ok("POST", "/users", json={"name": name})
    return api.as_user(created["token"]), str(created["user_id"])


def _save(platform: LocalPlatform, site: str | None, user_id: str, count: int,
          size: int, caps: LogCaps = CAPS, *, tag: str = "x") -> None:
    """`count` requests' entries of `size` characters on `site`, saved as the platform's
    log writer saves them (batches of 100 requests)."""
    scopes = []
    for n in range(count):
        scope = LogScope(f"{tag}{n:08d}", site, user_id)
        scope.add(Entry("detail", "error", tag * size))
        scopes.append(scope)
    for start in range(0, count, 100):
        with platform.store.write() as conn:
            platform_log.save_all(conn, scopes[start:start + 100], caps)


def _kept(platform: LocalPlatform, sites: tuple[str, ...] | None) -> tuple[int, int]:
    """(entries, bytes) kept for `sites` (`()`: the platform's own; None: all), counted
    from the rows themselves."""
    where = "" if sites is None else "WHERE app_token IS NULL" if not sites else \
        f"WHERE app_token IN ({', '.join('?' * len(sites))})"
    with platform.store.read() as conn:
        count, size = conn.execute(f"SELECT count(*), coalesce(sum(bytes), 0) FROM "
                                   f"platform_log {where}", sites or ()).fetchone()
        assert platform_log.usage(conn, sites) == size  # the running totals agree
    return int(count), int(size)


@pytest.fixture
def tenants(api: Api) -> tuple[tuple[str, str], str, tuple[str, str]]:
    """Mallory's two sites and her id, and Victor's site and his id."""
    mallory, mallory_id = _user(api, "Mallory")
    sites = tuple(mallory.ok("POST", "/sites/create", json={"title": t})["appToken"]
                  for t in ("M1", "M2"))
    victor, victor_id = _user(api, "Victor")
    victims = victor.ok("POST", "/sites/create", json={"title": "V"})["appToken"]
    return (sites[0], sites[1]), mallory_id, (victims, victor_id)


def test_an_owners_flood_stays_within_their_cap_and_spares_others(
        platform: LocalPlatform, tenants: tuple[tuple[str, str], str, tuple[str, str]]) -> None:
    (m1, m2), mallory_id, (victims, victor_id) = tenants
    _save(platform, victims, victor_id, 20, 2 * KIB, tag="v")
    victims_before = _kept(platform, (victims,))
    for round_ in range(4):  # 4 × 2 sites × 200 entries of 8 KiB: 12.5 MiB in all
        for site in (m1, m2):
            _save(platform, site, mallory_id, 200, 8 * KIB, tag=f"m{round_}")
            entries, size = _kept(platform, (m1, m2))
            assert size <= CAPS.owner_bytes, (round_, size)
    assert entries > 0
    assert _kept(platform, (victims,)) == victims_before
    with platform.store.read() as conn:  # the newest of hers stay, the oldest went
        newest = conn.execute("SELECT message FROM platform_log WHERE app_token IN (?, ?) "
                              "ORDER BY entry_id DESC LIMIT 1", (m1, m2)).fetchone()[0]
        oldest = conn.execute("SELECT min(log_id) FROM platform_log WHERE app_token IN "
                              "(?, ?)", (m1, m2)).fetchone()[0]
    assert newest.startswith("m3") and not oldest.startswith("m0")


def test_the_platforms_own_entries_and_the_total_are_capped(
        platform: LocalPlatform, api: Api) -> None:
    """Entries of no site (requests by strangers, say) count as one more owner, and
    many owners together stay within the total."""
    for n in range(6):  # six owners at their cap would hold 1.5 MiB
        user, user_id = _user(api, f"U{n}")
        site = user.ok("POST", "/sites/create", json={"title": f"S{n}"})["appToken"]
        _save(platform, site, user_id, 40, 8 * KIB, tag=f"u{n}")
    _save(platform, None, "ou_stranger", 200, 8 * KIB, tag="n")
    assert _kept(platform, ())[1] <= CAPS.owner_bytes
    assert _kept(platform, None)[1] <= CAPS.total_bytes


def test_deleting_a_site_frees_its_share(
        platform: LocalPlatform, tenants: tuple[tuple[str, str], str, tuple[str, str]]) -> None:
    (m1, _), mallory_id, _ = tenants
    _save(platform, m1, mallory_id, 20, 8 * KIB)
    assert _kept(platform, (m1,))[1] > 0
    with platform.store.write() as conn:
        conn.execute("DELETE FROM sites WHERE app_token = ?", (m1,))
    assert _kept(platform, (m1,)) == (0, 0)


def test_the_caps_of_basedb_serve_reach_requests(platform: LocalPlatform) -> None:
    """A flood of real calls, each logged: the app keeps what its quotas say."""
    quotas = OwnerQuotas(log_bytes=32 * KIB, log_bytes_total=64 * KIB)
    app = build_app(platform.store, data_dir=platform.data_dir, quotas=quotas)
    with TestClient(app, base_url="http://localhost") as client:
        owner = Api(client, platform.owner_token)
        mallory, _ = _user(owner, "Mallory")
        site = mallory.ok("POST", "/sites/create", json={"title": "M"})["appToken"]
        for n in range(600):
            mallory.call("POST", f"/sites/{site}/functions/nope{n}/invoke",
                         json={"params": {}}, params={"env": "prod"})
        app.state.context.log_writer.flush()
    entries, size = _kept(platform, (site,))
    assert 0 < size <= quotas.log_bytes and entries < 600


# ------------------------------------------------------------------------ stderr


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_stderr_prints_within_its_budget_and_says_what_it_left_out() -> None:
    stream, clock = io.StringIO(), Clock()
    output = server_output.CappedOutput(bytes_per_minute=64 * KIB, stream=lambda: stream,
                                        clock=clock)
    line = "y" * 1023 + "\n"
    printed = sum(output.write(line) for _ in range(10_000))  # 10 MiB at once
    assert printed == 64 and len(stream.getvalue()) == 64 * KIB
    clock.now += 30  # half a minute: half the budget again
    assert output.write("after\n")
    text = stream.getvalue()[64 * KIB:]
    assert len(text) <= 32 * KIB
    assert text.startswith("basedb platform: 9936 lines (10174464 bytes) of this server's "
                           "output were not printed") and text.endswith("after\n")
    assert "basedb logs" in text
    big = output.write("z" * 100_000 + "\n")  # one entry: clipped, not the whole
    assert big and len(stream.getvalue()) < 64 * KIB + 6 * KIB


@pytest.fixture
def small_stderr() -> Iterator[None]:
    server_output.STDERR.configure(bytes_per_minute=8 * KIB)
    try:
        yield
    finally:
        server_output.STDERR.configure(bytes_per_minute=server_output.BYTES_PER_MINUTE)


@pytest.mark.usefixtures("small_stderr")
def test_a_request_flood_does_not_flood_stderr(platform: LocalPlatform,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    app = build_app(platform.store, data_dir=platform.data_dir, access_log=True)
    started = time.monotonic()
    with TestClient(app, base_url="http://localhost") as client:
        for _ in range(1000):  # about 150 KiB of access lines
            client.get("/open-apis/base/v3/users/me")
    elapsed = time.monotonic() - started
    printed = len(capsys.readouterr().err.encode())
    refilled = elapsed * 8 * KIB / 60
    assert printed <= 8 * KIB + refilled  # notes of what was left out included


def test_the_embedded_platforms_file_is_rotated(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform_log, "FILE_MAX_BYTES", 16 * KIB)
    path = tmp_path / platform_log.FILE_NAME
    with platform_log.logging_to(path):
        for n in range(1000):  # 500 KiB
            platform_log.write(f"entry {n} " + "w" * 500)
    kept = [path, path.with_name(path.name + ".1")]
    assert all(p.stat().st_size <= 16 * KIB + 600 for p in kept)
    assert "entry 999 " in path.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["platform.log", "platform.log.1"]
