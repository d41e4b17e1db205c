"""Attacks on the sign-in throttles through forwarded headers: a client that sends
`X-Forwarded-For` to name itself someone else, over loopback, as `basedb serve` is
reached. The headers count only from the proxies `--forwarded-allow-ips` names."""

from __future__ import annotations

import httpx

from basedb.platform import LocalPlatform
from basedb.platform.domain import lark_auth
from basedb.platform.web.routes.lark import TENANT_PATH
from tests.security.support import served

WRONG = {"app_id": "cli_guessed", "app_secret": "not-the-secret"}


def _spend_the_budget(client: httpx.Client) -> None:
    for _ in range(lark_auth.MAX_FAILURES):
        assert client.post(TENANT_PATH, json=WRONG).status_code == 400
    assert client.post(TENANT_PATH, json=WRONG).status_code == 429


def test_a_forwarded_for_header_does_not_reset_the_throttle(platform: LocalPlatform) -> None:
    with served(platform.app) as port, httpx.Client(
            base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
        _spend_the_budget(client)
        for spoofed in ("203.0.113.9", "198.51.100.1, 127.0.0.1"):
            answer = client.post(TENANT_PATH, json=WRONG,
                                 headers={"X-Forwarded-For": spoofed})
            assert answer.status_code == 429, (spoofed, answer.text)


def test_a_configured_proxy_is_trusted(platform: LocalPlatform) -> None:
    """With `--forwarded-allow-ips 127.0.0.1` (a proxy on this machine), each client it
    forwards has a throttle of its own."""
    with served(platform.app, forwarded_allow_ips="127.0.0.1") as port, httpx.Client(
            base_url=f"http://127.0.0.1:{port}", timeout=10,
            headers={"X-Forwarded-For": "203.0.113.9"}) as client:
        _spend_the_budget(client)
        other = client.post(TENANT_PATH, json=WRONG, headers={"X-Forwarded-For": "192.0.2.4"})
        assert other.status_code == 400, other.text
