"""Two commands whose user token is due for a refresh at the same moment spend the
single-use refresh token once: the refresh runs under a lock shared by every process,
and whoever waited re-reads the store and finds the fresh token."""

from __future__ import annotations

import threading
import time

import httpx
import respx

from basedb.client.lark.brands import Hosts
from basedb.client.lark.http import AuthHttp
from basedb.client.lark.oauth import OAuth, StoredToken, UserCredentials, load_token, save_token
from basedb.client.secrets import FileStore

OPEN = "http://lark.test"


def test_concurrent_refreshes_spend_the_refresh_token_once() -> None:
    store = FileStore()
    now = int(time.time() * 1000)
    save_token(store, "me", StoredToken(
        userOpenId="ou_a", appId="cli_a", accessToken="u-" + "O" * 30,
        refreshToken="ur-" + "R" * 30, expiresAt=now + 60_000,
        refreshExpiresAt=now + 86_400_000, scope="offline_access", grantedAt=now))
    refreshes: list[str] = []
    gate = threading.Event()

    def refresh(request: httpx.Request) -> httpx.Response:
        refreshes.append(request.content.decode())
        gate.wait(2)  # hold the lock while the other thread arrives
        return httpx.Response(200, json={
            "code": 0, "access_token": "u-" + "N" * 30, "expires_in": 7200,
            "refresh_token": "ur-" + "M" * 30, "refresh_token_expires_in": 604800})

    tokens: list[str] = []
    with respx.mock(base_url=OPEN) as router:
        router.post("/open-apis/authen/v2/oauth/token").mock(side_effect=refresh)

        def command() -> None:
            oauth = OAuth(hosts=Hosts(OPEN, OPEN), app_id="cli_a", app_secret="s",
                          http=AuthHttp(), login_command="basedb auth login")
            tokens.append(UserCredentials(profile="me", oauth=oauth, store=store).token())

        threads = [threading.Thread(target=command) for _ in range(2)]
        for thread in threads:
            thread.start()
        while not refreshes:
            time.sleep(0.01)
        gate.set()
        for thread in threads:
            thread.join(10)
    assert len(refreshes) == 1
    assert tokens == ["u-" + "N" * 30] * 2
    stored = load_token(store, "me")
    assert stored is not None and stored.refreshToken == "ur-" + "M" * 30
