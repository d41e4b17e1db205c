"""What the platform keeps in memory: one set of memos per app, keyed by deployment and
catalog revision (never by object identity), so an entry never goes stale."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from basedb.platform import LocalPlatform, open_platform
from basedb.platform.domain.caches import DomainCaches
from tests.platform.conftest import Api
from tests.platform.functions_support import STATUSES, TaskSite, released_site


def caches_of(platform: LocalPlatform) -> DomainCaches:
    caches: DomainCaches = platform.app.state.context.caches
    return caches


@pytest.fixture
def site(api: Api) -> TaskSite:
    return released_site(api)


def plan_keys(platform: LocalPlatform, function_id: str) -> set[tuple[str, str, int]]:
    memo = caches_of(platform).plans
    return {key for key in memo.held() if key[1] == function_id}


def test_a_plan_is_built_once_per_deployment_and_catalog_revision(
        site: TaskSite, platform: LocalPlatform) -> None:
    site.invoke("listTasks", {"status": "Open"})
    site.invoke("listTasks", {"status": "Done"})
    first = plan_keys(platform, "listTasks")
    assert len(first) == 1
    # Renaming an option moves the catalog revision: the next call is judged afresh, and
    # finds the enum no longer matches the field (upstream: schemaStatus unavailable).
    fields = site.api.ok("GET", f"/bases/{site.base_token}/tables/{site.tasks_table}/fields")
    status = next(f for f in fields["fields"] if f["name"] == "Status")
    renamed = [{"name": "Closed" if name == "Done" else name} for name in STATUSES]
    site.api.ok("PUT", f"/bases/{site.base_token}/tables/{site.tasks_table}/fields/"
                f"{status['id']}", json={"name": "Status", "type": "select",
                                               "options": renamed})
    [item] = [f for f in site.api.ok("GET", site.url())["functions"]
              if f["functionId"] == "listTasks"]
    assert item["schemaStatus"] == "unavailable"
    second = plan_keys(platform, "listTasks")
    assert first < second and len(second) == 2
    (old_revision,) = {key[2] for key in first}
    assert all(key[2] > old_revision for key in second - first)


def test_each_platform_app_has_its_own_memos(tmp_path: Path, site: TaskSite,
                                             platform: LocalPlatform) -> None:
    site.invoke("listTasks", {"status": "Open"})
    other = open_platform(tmp_path / "other-data")
    try:
        assert caches_of(other) is not caches_of(platform)
        assert len(caches_of(other).plans) == 0 and len(caches_of(platform).plans) > 0
        with TestClient(other.app, base_url="http://localhost") as client:
            # The same app token means nothing on another platform's data.
            response = client.get(f"/open-apis/base/v3/sites/{site.app_token}/functions",
                                  headers={"Authorization": f"Bearer {other.owner_token}"})
        assert response.json()["code"] != 0
        assert len(caches_of(other).snapshots) == 0
    finally:
        other.close()
