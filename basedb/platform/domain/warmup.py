"""Start-up warming: what the first calls need, loaded before the server answers them.

A call's first use of a deployed function builds its plan (re-validating the SQL, which
loads sqlglot, and compiling its input schema, which loads jsonschema) and its first
Database Function statement starts a query worker. `warm` does that work when the server
starts, so that the first call after `basedb serve` costs what every later one does:

    plans = warm(store, caches, query_pool=QUERY_POOL, budget_s=WARM_BUDGET_S)

Plans are built for each site's prod deployment, then its preview, until `budget_s` has
passed (a platform with thousands of functions starts in bounded time; the rest are
built on first use, as before).
"""

from __future__ import annotations

import time

from basedb.platform.domain import sites
from basedb.platform.domain.caches import DomainCaches
from basedb.platform.domain.function_plans import function_plan
from basedb.platform.domain.revision import live_catalog
from basedb.platform.domain.runtimes.sql_pool import QueryPool
from basedb.platform.domain.snapshots import ENVIRONMENTS, load_snapshot
from basedb.platform.storage.store import Store

WARM_BUDGET_S = 2.0


def warm(store: Store, caches: DomainCaches, *, query_pool: QueryPool | None,
         budget_s: float = WARM_BUDGET_S) -> int:
    """Start a spare query worker and build deployed functions' plans into `caches`
    (prod before preview), stopping once `budget_s` has passed; how many were built."""
    deadline = time.monotonic() + budget_s
    if query_pool is not None:
        query_pool.start_spare()
    built = 0
    with store.read() as conn:
        tokens = [row[0] for row in conn.execute("SELECT app_token FROM sites "
                                                 "ORDER BY created_at, app_token")]
        for env in ENVIRONMENTS:
            for app_token in tokens:
                site = sites.get_site(conn, app_token)
                snapshot = load_snapshot(conn, app_token, env, caches.snapshots)
                if site is None or snapshot is None:
                    continue
                live = live_catalog(conn, site, caches.catalogs)
                for function_id in snapshot.functions:
                    if time.monotonic() >= deadline:
                        return built
                    function_plan(snapshot, function_id, live, caches.plans)
                    built += 1
    return built
