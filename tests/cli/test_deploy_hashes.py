"""A redeploy sends only what the platform lacks: unchanged functions go as
`{functionId, contentHash}` and an unchanged site.zip is not uploaded again, with the
full content sent whenever the platform says it does not hold what was named.

The workspace talks to the real platform through a stored HTTP profile
(`tests.cli.deploy_support.Faults`), which records every request."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from basedb.client.sites import SiteApi
from basedb.core.site_zip import read_site_zip
from basedb.deploy import payloads, pipeline
from basedb.deploy.state import LocalState
from basedb.workspace import files
from tests.cli.deploy_support import (
    Faults,
    app_token_of,
    forward_to_platform,
    local_client,
    ok_json,
    run,
)

STATE_ROOT = ".base-database-cli"

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


def edit_keeping_size_and_mtime(path: Path, old: str, new: str) -> None:
    """Replace `old` by `new` (as long in UTF-8) in `path`, and give the file back its
    modification time: a change that size and mtime alone would not show."""
    assert len(old.encode()) == len(new.encode()) and old != new
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


SAME_SIZE_EDITS = {
    "sql": ("database-functions/listPeriods/main.sql", "SELECT", "select"),
    "param description": ("database-functions/listTeamLeave/function.json",
                          "跳过的记录数", "略过的记录数"),
    "faas handler": ("faas/managePeriod/index.mjs", "managePeriod: create",
                     "managePeriod: CREATE"),
    "page asset": ("src/style.css", "#f5f6f8", "#f5f6f9"),
    "agent-tools.json": ("agent-tools.json", '"debugSubmissionIntegrity"',
                         '"listMembers"' + " " * 13),
    "catalog": ("catalog.json", "{\n", "{ "),
}


@pytest.mark.parametrize("what", sorted(SAME_SIZE_EDITS))
def test_a_change_keeping_size_and_mtime_is_deployed(site: Path, what: str) -> None:
    app = app_token_of(site)
    first = ok_json("deploy", "-C", str(site))
    rel, old, new = SAME_SIZE_EDITS[what]
    edit_keeping_size_and_mtime(site / rel, old, new)
    again = ok_json("deploy", "-C", str(site))
    assert again["fingerprint"] != first["fingerprint"]
    shipped = read_site_zip(artifact(app, again["deploymentId"])).contents
    assert shipped[rel] == (site / rel).read_bytes()
    build = next(s for s in again["stages"] if s["stage"] == "build")
    assert build["detail"]["bytes"] == len(artifact(app, again["deploymentId"]))
    if what in ("sql", "param description", "faas handler"):
        function_id = rel.split("/")[1]
        [stored] = [json.dumps(item, ensure_ascii=False) for items in draft(app).values()
                    if isinstance(items, list) for item in items
                    if item["functionId"] == function_id]
        assert new in stored and old not in stored
    if what == "agent-tools.json":
        shown = platform_get(f"/sites/{app}/deployments/{again['deploymentId']}")
        assert shown["agentTools"] == {"exclude": ["listMembers"]}


def test_a_damaged_cached_site_zip_is_not_what_the_build_reports(site: Path) -> None:
    first = ok_json("deploy", "-C", str(site))
    cached = LocalState(site).artifact_path(first["fingerprint"])
    intact = cached.read_bytes()
    for damaged in (intact[:-7], b"PK\x03\x04" + bytes(40), intact[:100] + intact[101:]):
        cached.write_bytes(damaged)
        again = ok_json("deploy", "-C", str(site))
        build = next(s for s in again["stages"] if s["stage"] == "build")
        assert build["detail"]["bytes"] == len(intact)
        assert cached.read_bytes() == intact  # built again, and cached again


def test_a_deploy_reads_each_input_file_once(site: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ok_json("deploy", "-C", str(site))
    opened: list[str] = []

    def counting(real_open: Any) -> Any:
        def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            path = Path(file)
            if path.is_relative_to(site) and not path.is_relative_to(site / STATE_ROOT):
                opened.append(path.relative_to(site).as_posix())
            return real_open(file, *args, **kwargs)
        return counting_open

    # Files are opened as Python file objects, and the inputs as plain descriptors.
    monkeypatch.setattr("builtins.open", counting(open))
    monkeypatch.setattr("os.open", counting(os.open))
    ok_json("deploy", "-C", str(site))
    assert "database-functions/listPeriods/function.json" in opened
    assert "database-functions/listPeriods/main.sql" in opened
    # base-database.jsonc is also read before the deploy starts, to find its profile.
    assert [rel for rel in set(opened) if opened.count(rel) > 1] == ["base-database.jsonc"]


def test_a_deploy_decodes_and_parses_each_input_file_once(
        site: Path, faults: Faults, monkeypatch: pytest.MonkeyPatch) -> None:
    """The request bodies and content hashes take the text and documents the workspace
    was loaded from: a first deploy (nothing remembered, everything sent in full)
    decodes and parses each file once."""
    decoded: list[str] = []
    parsed: list[str] = []
    real_decode, real_parse = files.decode_text, files.parse_json

    def decode_text(data: bytes, *, label: str) -> str:
        decoded.append(label)
        return real_decode(data, label=label)

    def parse_json(text: str, *, label: str) -> Any:
        parsed.append(label)
        return real_parse(text, label=label)

    monkeypatch.setattr(files, "decode_text", decode_text)
    monkeypatch.setattr(files, "parse_json", parse_json)
    deploy(site)
    [put] = sent(faults, "PUT", "/draft/functions")
    assert all("declaration" in item for item in function_items(put))  # sent in full
    assert "database-functions/listPeriods/function.json" in parsed
    assert "database-functions/listPeriods/main.sql" in decoded
    assert [label for label in set(parsed) if parsed.count(label) > 1] == []
    assert [label for label in set(decoded) if decoded.count(label) > 1] == []


def test_a_redeploy_names_unchanged_functions_without_parsing_them(
        site: Path, faults: Faults, monkeypatch: pytest.MonkeyPatch) -> None:
    deploy(site)
    parsed: list[str] = []
    real = payloads._document

    def counting(by_path: Any, path: str) -> Any:
        if not path.startswith("ai/"):  # AI Functions are always sent whole
            parsed.append(path)
        return real(by_path, path)

    monkeypatch.setattr(payloads, "_document", counting)
    faults.requests.clear()
    deploy(site)
    assert parsed == []  # every hash was remembered by its files' digests
    [put] = sent(faults, "PUT", "/draft/functions")
    assert all(set(item) == {"functionId", "contentHash"} for item in function_items(put))
    path = site / SQL
    path.write_text(path.read_text(encoding="utf-8") + "LIMIT 3\n", encoding="utf-8")
    deploy(site)
    assert sorted(set(parsed)) == ["database-functions/listPeriods/function.json"]


@pytest.mark.parametrize("text", ["not json", '{"definition": 0, "hashes": {}}', "[]",
                                  '{"definition": 1, "hashes": {"x": 1}}'])
def test_an_unusable_content_hash_cache_is_rebuilt(site: Path, faults: Faults,
                                                   text: str) -> None:
    first = deploy(site)
    state = LocalState(site)
    (state.directory / "content-hashes.json").write_text(text, encoding="utf-8")
    again = deploy(site)
    assert again["functionHints"] == first["functionHints"]
    assert state.load_content_hashes()  # written anew
