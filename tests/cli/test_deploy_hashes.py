"""A redeploy sends only what the platform lacks: unchanged functions go as
`{functionId, contentHash}` and an unchanged site.zip is not uploaded again, with the
full content sent whenever the platform says it does not hold what was named.

The workspace talks to the real platform through a stored HTTP profile
(`tests.cli.deploy_support.Faults`), which records every request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from basedb.client.sites import SiteApi
from basedb.deploy import pipeline
from tests.cli.deploy_support import Faults, app_token_of, forward_to_platform, local_client, run

SQL = Path("database-functions") / "listPeriods" / "main.sql"


@pytest.fixture
def faults() -> Iterator[Faults]:
    with forward_to_platform() as found:
        yield found


def deploy(site: Path) -> dict[str, Any]:
    result = run("deploy", "-C", str(site), "--profile", "remote", "--json")
    assert result.exit_code == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def sent(faults: Faults, method: str, suffix: str) -> list[httpx.Request]:
    return [r for r in faults.requests if r.method == method and r.url.path.endswith(suffix)]


def function_items(request: httpx.Request) -> list[dict[str, Any]]:
    body = json.loads(request.content)
    return [item for key in ("databaseFunctions", "mutations", "faas") for item in body[key]]


def uploads_artifact(request: httpx.Request) -> bool:
    return b'name="artifact"' in request.content


def platform_get(path: str) -> Any:
    with local_client() as client:
        return client.request("GET", path)["data"]


def draft(app: str) -> dict[str, Any]:
    found: dict[str, Any] = platform_get(f"/sites/{app}/draft/functions")
    found.pop("draftRevision")
    return found


def artifact(app: str, deployment_id: str) -> bytes:
    with local_client() as client:
        return SiteApi(client, app).artifact(deployment_id)


def test_a_redeploy_of_unchanged_files_names_everything_by_hash(site: Path,
                                                                faults: Faults) -> None:
    first = deploy(site)
    app = app_token_of(site)
    stored = draft(app)
    faults.requests.clear()
    again = deploy(site)
    [put] = sent(faults, "PUT", "/draft/functions")
    items = function_items(put)
    assert items and all(set(item) == {"functionId", "contentHash"} for item in items)
    [post] = sent(faults, "POST", "/deployments")
    assert not uploads_artifact(post)
    # The same result, shape and content, as a deploy that sent everything.
    assert set(again) == set(first)
    assert again["deploymentId"] != first["deploymentId"]
    assert again["fingerprint"] == first["fingerprint"]
    assert again["functionHints"] == first["functionHints"]
    assert draft(app) == stored
    one = platform_get(f"/sites/{app}/deployments/{first['deploymentId']}")
    two = platform_get(f"/sites/{app}/deployments/{again['deploymentId']}")
    assert one["functions"] == two["functions"] and one["artifact"] == two["artifact"]


def test_only_the_changed_function_is_sent_in_full(site: Path, faults: Faults) -> None:
    deploy(site)
    path = site / SQL
    path.write_text(path.read_text(encoding="utf-8") + "LIMIT 3\n", encoding="utf-8")
    faults.requests.clear()
    deploy(site)
    [put] = sent(faults, "PUT", "/draft/functions")
    full = [item["functionId"] for item in function_items(put) if "contentHash" not in item]
    assert full == ["listPeriods"]
    [post] = sent(faults, "POST", "/deployments")
    assert uploads_artifact(post)  # the files changed, so site.zip did too
    stored = draft(app_token_of(site))
    sql = next(f["sql"] for f in stored["databaseFunctions"] if f["functionId"] == "listPeriods")
    assert sql.endswith("LIMIT 3\n")


def test_content_the_platform_no_longer_holds_is_sent_in_full(site: Path,
                                                              faults: Faults) -> None:
    deploy(site)
    app = app_token_of(site)
    held = platform_get(f"/sites/{app}/draft/hashes")
    stored = draft(app)
    # Someone empties the draft after the deploy read what the platform holds.
    faults.answer("GET", "/draft/hashes", httpx.Response(200, json={
        "code": 0, "msg": "ok", "data": held}))
    with local_client() as client:
        client.request("PUT", f"/sites/{app}/draft/functions", json={})
    faults.requests.clear()
    deploy(site)
    first, second = sent(faults, "PUT", "/draft/functions")
    assert all("contentHash" in item for item in function_items(first))
    assert not any("contentHash" in item for item in function_items(second))
    assert draft(app) == stored


def test_a_site_zip_the_platform_lacks_is_uploaded_after_all(site: Path,
                                                             faults: Faults) -> None:
    app = app_token_of(site)
    plan = json.loads(run("deploy", "-C", str(site), "--dry-run", "--json").stdout)
    # A platform that claims the fingerprint but has no deployment of it.
    faults.answer("GET", "/draft/hashes", httpx.Response(200, json={
        "code": 0, "msg": "ok", "data": {"databaseFunctions": {}, "mutations": {}, "faas": {},
                                         "timezone": "UTC", "draftRevision": 0,
                                         "fingerprints": [plan["fingerprint"]]}}))
    done = deploy(site)
    first, second = sent(faults, "POST", "/deployments")
    assert not uploads_artifact(first) and uploads_artifact(second)
    assert artifact(app, done["deploymentId"])[:2] == b"PK"


def test_a_platform_without_the_hashes_endpoint_gets_everything(site: Path,
                                                                faults: Faults) -> None:
    deploy(site)
    faults.add("GET", "/draft/hashes", "404", times=10)
    faults.requests.clear()
    deploy(site)
    [put] = sent(faults, "PUT", "/draft/functions")
    assert not any("contentHash" in item for item in function_items(put))
    [post] = sent(faults, "POST", "/deployments")
    assert uploads_artifact(post)


def test_an_unchanged_site_zip_is_neither_rebuilt_nor_uploaded(
        site: Path, faults: Faults, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = pipeline.build_site_zip

    def counting(inputs: Any, fingerprint: str) -> bytes:
        built.append(fingerprint)
        return real(inputs, fingerprint)

    monkeypatch.setattr(pipeline, "build_site_zip", counting)
    first = deploy(site)
    assert built == [first["fingerprint"]]
    deploy(site)  # the local cache and the platform both have it
    assert built == [first["fingerprint"]]
    # A platform that cannot say what it holds gets an upload built anew, never the
    # cached copy as it lies on disk.
    faults.add("GET", "/draft/hashes", "404", times=10)
    faults.requests.clear()
    again = deploy(site)
    assert built == [first["fingerprint"]] * 2
    [post] = sent(faults, "POST", "/deployments")
    assert uploads_artifact(post) and again["fingerprint"] == first["fingerprint"]
