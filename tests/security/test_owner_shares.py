"""Tenants against each other (issue finding 5): one user owning several sites must not
hold the whole platform. Shares of FaaS calls and slow-query slots are counted per
owner, below the global caps, and one user may own only so many sites.

The scenario: Mallory (an ordinary user) owns two sites and keeps as many calls
running on them as she can; Victor's site is another tenant's. While Mallory holds all
she may, Victor's calls still get their turn.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform
from basedb.platform.domain import quotas
from basedb.platform.domain.quotas import OwnerQuotas
from basedb.platform.domain.runtimes import sql as sql_runtime
from basedb.platform.domain.runtimes.faas import FaasLimits, FaasRuntime
from basedb.platform.domain.runtimes.faas.workdirs import runtime_root
from basedb.platform.domain.runtimes.sql_pool import QueryPool, default_settings
from basedb.platform.web.app import build_app
from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.functions_support import (
    DATABASE_FUNCTIONS,
    TaskSite,
    build_site,
    deploy,
    save_drafts,
    sql_function,
)
from tests.platform.test_faas_runtime import needs_node

READY_S = 60  # a guard against a hang, not a window


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + READY_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def _user(api: Api, name: str) -> Api:
    return api.as_user(api.ok("POST", "/users", json={"name": name})["token"])


class Calls:
    """Invoke calls running in threads, and what they answered."""

    def __init__(self) -> None:
        self.codes: list[int] = []
        self.threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self, site: TaskSite, function_id: str, params: dict[str, Any]) -> None:
        def call() -> None:
            answer = site.api.call("POST", site.url(f"/{function_id}/invoke"),
                                   json={"params": params}, params={"env": "prod"}).json()
            with self._lock:
                self.codes.append(answer["code"])

        thread = threading.Thread(target=call)
        thread.start()
        self.threads.append(thread)

    def answered(self, code: int) -> int:
        with self._lock:
            return self.codes.count(code)

    def join(self) -> None:
        for thread in self.threads:
            thread.join()


# ---------------------------------------------------------------------- slow queries

SLOW_BUT_FINITE = sql_function(
    "countMillions", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r "
    "WHERE n < 2000000) SELECT count(*) AS c FROM r WHERE EXISTS (SELECT 1 FROM \"Tasks\")")


@pytest.fixture
def own_pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[QueryPool]:
    """Query workers of this test's own, whose statements the test can end at once:
    the statement deadline is far off, so what ends a hog is the test, not a clock."""
    pool = QueryPool(default_settings(sql_runtime.STATEMENT_LIMITS))
    monkeypatch.setattr(sql_runtime, "QUERY_POOL", pool)
    monkeypatch.setattr(sql_runtime, "TIME_LIMIT_S", 120.0)
    monkeypatch.setattr(sql_runtime, "SLOW_AFTER_S", 0.05)
    try:
        yield pool
    finally:
        _end_workers(pool)
        pool.close()


def _end_workers(pool: QueryPool) -> None:
    """Kill the pool's forker and every worker it forked (their own process group)."""
    forker = pool._forker
    if forker is not None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(forker._process.pid, signal.SIGKILL)


def test_an_owner_with_many_sites_holds_only_their_share_of_slow_queries(
        api: Api, own_pool: QueryPool) -> None:
    mallory = _user(api, "Mallory")
    hogs = []
    for _ in range(2):
        site = build_site(mallory)
        save_drafts(site)
        deploy(site)
        hogs.append(site)
    victim = build_site(_user(api, "Victor"))
    save_drafts(victim, database_functions=[*DATABASE_FUNCTIONS, SLOW_BUT_FINITE])
    deploy(victim)

    calls = Calls()
    for site in hogs:  # as many as each site may run slowly, the platform's four in all
        for _ in range(sql_runtime.SLOW_PER_SITE):
            calls.start(site, "countForever", {})
    share = quotas.SLOW_QUERIES_PER_OWNER
    hogs_slots: Callable[[], int] = lambda: sum(  # noqa: E731
        own_pool.slow_queries().get(site.app_token, 0) for site in hogs)
    _until(lambda: hogs_slots() == share and calls.answered(Code.RATE_LIMITED) == 2,
           "Mallory's queries did not take her share")
    assert share < sql_runtime.SLOW_PER_PLATFORM

    # Another tenant's query that needs a slow-query slot gets one and finishes.
    assert victim.invoke("countMillions", {})["rows"] == [{"c": 2_000_000}]
    assert hogs_slots() == share  # Mallory's were running all along
    _end_workers(own_pool)
    calls.join()


# ------------------------------------------------------------------------------ FaaS

# Runs until the test sets its gate record's Status to Done.
GATED = {"functionId": "hold", "declaration": {
    "name": "hold", "description": "Hold a FaaS slot until the gate record is Done",
    "timeoutMs": 120_000,
    "inputSchema": {"type": "object", "properties": {
        "gate": {"type": "string", "description": "Record id of the gate task"}},
        "required": ["gate"]}},
    "handler": """export default async (input, ctx) => {
  for (;;) {
    const gate = await ctx.records.get("Tasks", input.gate);
    if (gate.fields.Status === "Done") return {code: 0, data: "released"};
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
"""}
PING = {"functionId": "ping", "declaration": {
    "name": "ping", "description": "Answer pong",
    "inputSchema": {"type": "object", "properties": {}}},
    "handler": 'export default async () => ({code: 0, data: "pong"});\n'}


@pytest.fixture
def faas_app(platform: LocalPlatform) -> Iterator[tuple[Api, FaasRuntime]]:
    """The platform with small FaaS caps (4 calls in all, 2 per site) and an owner's
    share of 2, as `basedb serve --faas-per-owner 2` would run it."""
    root = runtime_root() / f"test-{secrets.token_hex(4)}"
    runtime = FaasRuntime(FaasLimits(spares=0, global_concurrency=4, site_concurrency=2),
                          root=root)
    app = build_app(platform.store, data_dir=platform.data_dir, faas=runtime,
                    quotas=OwnerQuotas(faas_calls=2))
    try:
        with TestClient(app, base_url="http://localhost") as client:
            yield Api(client, platform.owner_token), runtime
    finally:
        app.state.context.log_writer.flush()  # while the platform's store is open
        runtime.close()
        root.rmdir()


@needs_node
def test_an_owner_with_many_sites_holds_only_their_share_of_faas_calls(
        faas_app: tuple[Api, FaasRuntime]) -> None:
    api, runtime = faas_app
    mallory = _user(api, "Mallory")
    hogs = []
    for _ in range(2):
        site = build_site(mallory)
        save_drafts(site, faas=[GATED])
        deploy(site)
        hogs.append(site)
    victim = build_site(_user(api, "Victor"))
    save_drafts(victim, faas=[PING])
    deploy(victim)
    gates = {site.app_token: site.api.ok("POST", f"/bases/{site.base_token}/tables/"
                                         f"{site.tasks_table}/records",
                                         json={"Title": "gate", "Status": "Open"})["record_id"]
             for site in hogs}

    calls = Calls()
    for site in hogs:  # each site's cap, the platform's four in all
        for _ in range(2):
            calls.start(site, "hold", {"gate": gates[site.app_token]})
    _until(lambda: runtime.stats()["active"] == 2 and calls.answered(Code.PLATFORM_BUSY) == 2,
           "Mallory's calls did not take her share")

    assert victim.invoke("ping", {}) == "pong"  # another tenant still gets a slot
    assert runtime.stats()["active"] == 2  # while Mallory's were running
    for site in hogs:
        site.api.ok("PATCH", f"/bases/{site.base_token}/tables/{site.tasks_table}/records/"
                    f"{gates[site.app_token]}", json={"Status": "Done"})
    calls.join()
    assert sorted(calls.codes) == [0, 0, Code.PLATFORM_BUSY, Code.PLATFORM_BUSY]


@needs_node
def test_the_owner_share_is_named_in_the_refusal(faas_app: tuple[Api, FaasRuntime]) -> None:
    api, runtime = faas_app
    mallory = _user(api, "Mallory")
    sites = []
    for _ in range(2):
        site = build_site(mallory)
        save_drafts(site, faas=[GATED])
        deploy(site)
        sites.append(site)
    first, second = sites
    gate = first.api.ok("POST", f"/bases/{first.base_token}/tables/{first.tasks_table}/"
                        "records", json={"Title": "gate", "Status": "Open"})["record_id"]
    calls = Calls()
    for _ in range(2):
        calls.start(first, "hold", {"gate": gate})
    _until(lambda: runtime.stats()["active"] == 2, "the calls did not start")
    msg = second.api.fail("POST", second.url("/hold/invoke"), json={"params": {"gate": gate}},
                          params={"env": "prod"}, code=Code.PLATFORM_BUSY)
    assert "the sites of its owner already run 2 FaaS calls, the limit per owner" in msg
    assert "--faas-per-owner" in msg and "Retry: retry later." in msg
    first.api.ok("PATCH", f"/bases/{first.base_token}/tables/{first.tasks_table}/records/"
                 f"{gate}", json={"Status": "Done"})
    calls.join()


# ---------------------------------------------------------------------------- sites


def test_one_user_owns_only_so_many_sites(api: Api) -> None:
    mallory = _user(api, "Mallory")
    for n in range(quotas.SITES_PER_OWNER):
        mallory.ok("POST", "/sites/create", json={"title": f"S{n}"})
    refused = mallory.call("POST", "/sites/create", json={"title": "one more"})
    body = refused.json()
    assert refused.status_code == 403 and body["code"] == Code.PERMISSION_DENIED
    assert f"already owns {quotas.SITES_PER_OWNER} sites" in body["msg"]
    assert "Fix:" in body["msg"] and "--sites-per-owner" in body["msg"]
    assert len(mallory.ok("GET", "/sites/list", params={"pageSize": 100})["sites"]) == \
        quotas.SITES_PER_OWNER
    # Deleting one makes room; membership of others' sites does not count.
    first = mallory.ok("GET", "/sites/list", params={"pageSize": 1})["sites"][0]["appToken"]
    mallory.ok("DELETE", f"/sites/{first}")
    mallory.ok("POST", "/sites/create", json={"title": "again"})


def test_the_platform_owner_is_not_held_to_the_site_quota(platform: LocalPlatform) -> None:
    app = build_app(platform.store, data_dir=platform.data_dir,
                    quotas=OwnerQuotas(sites=1))
    with TestClient(app, base_url="http://localhost") as client:
        owner = Api(client, platform.owner_token)
        for n in range(3):
            owner.ok("POST", "/sites/create", json={"title": f"S{n}"})
        user = _user(owner, "Mallory")
        user.ok("POST", "/sites/create", json={"title": "first"})
        user.fail("POST", "/sites/create", json={"title": "second"},
                  code=Code.PERMISSION_DENIED, status=403)
