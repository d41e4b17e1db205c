"""The client against the real local platform, served in-process (the `local` profile)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from basedb.client.client import Client, connect
from basedb.client.profiles import LOCAL, profile_token
from basedb.core.errors import ApiError, AuthError
from basedb.platform import LocalPlatform, open_platform


@pytest.fixture
def platform(isolated_dirs: dict[str, Path]) -> Iterator[LocalPlatform]:
    opened = open_platform(isolated_dirs["data"])
    yield opened
    opened.close()


@pytest.fixture
def client(platform: LocalPlatform) -> Iterator[Client]:
    with connect(LOCAL, embedded=open_platform) as c:
        yield c


def test_local_profile_uses_the_owner_token(platform: LocalPlatform, client: Client) -> None:
    me = client.request("GET", "/users/me")
    assert me["code"] == 0
    assert me["data"]["is_platform_owner"] is True
    assert profile_token(LOCAL, embedded=open_platform) == platform.owner_token
    assert platform.owner_token not in repr(client)


def test_platform_errors_map_to_api_errors(client: Client) -> None:
    with pytest.raises(ApiError) as info:
        client.request("GET", "/sites/nope")
    error = info.value
    assert error.exit_code == 1
    assert "Executed: no" in error.message
    assert error.log_id


def test_a_wrong_token_is_an_auth_error(platform: LocalPlatform) -> None:
    from basedb.client.transport import InProcessTransport

    with Client(base_url="http://basedb.local", token="bdb_not_the_owner_token_0000",
                transport=InProcessTransport(platform.app)) as c, pytest.raises(AuthError) as info:
        c.request("GET", "/users/me")
    assert info.value.exit_code == 3
    assert info.value.code == 99991663


def test_offset_pagination_over_real_records(client: Client) -> None:
    base = client.request("POST", "/bases", json={"name": "Shop"})["data"]["base_token"]
    table = client.request("POST", f"/bases/{base}/tables", json={
        "name": "Orders", "fields": [{"name": "N", "type": "number"}]})["data"]["id"]
    rows = [[i] for i in range(7)]
    client.request("POST", f"/bases/{base}/tables/{table}/records/batch_create",
                   json={"fields": ["N"], "rows": rows})
    merged = client.paginate("GET", f"/bases/{base}/tables/{table}/records",
                             params={"limit": 3})["data"]
    assert merged["data"] == rows
    assert len(set(merged["record_id_list"])) == 7
    assert merged["has_more"] is False


def test_one_client_from_many_threads(client: Client) -> None:
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(10):
                assert client.request("GET", "/users/me")["code"] == 0
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures
