from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from basedb.core.errors import InputError
from basedb.core.site_zip import InputFile, build_site_zip, fingerprint
from basedb.deploy import state as state_module
from basedb.deploy.state import (
    DeploymentRecord,
    LocalState,
    new_attempt_id,
    scrub,
)
from basedb.protocol.deployments import DeploymentCreated
from basedb.protocol.wire import decode

TOKEN = "bdb_live_0123456789abcdef"
FP_A = "sha256:" + "a" * 64
FP_B = "sha256:" + "b" * 64


def record(deployment_id: str, *, env: str = "preview", app: str = "app_1",
           fp: str = FP_A) -> DeploymentRecord:
    return DeploymentRecord(deployment_id=deployment_id, env=env, fingerprint=fp,
                            base_app_url=f"http://127.0.0.1:8787/sites/{app}/preview/",
                            created_at="2025-01-31T08:00:00Z", app_token=app)


@pytest.fixture
def local(tmp_path: Path) -> LocalState:
    return LocalState(tmp_path)


# ---------------------------------------------------------------------------- directory


def test_state_directory_is_created_with_a_gitignore_of_everything(local: LocalState,
                                                                   tmp_path: Path) -> None:
    directory = local.ensure()
    assert directory == tmp_path / ".base-database-cli" / "state"
    assert (directory / ".gitignore").read_text() == "*\n"
    (directory / ".gitignore").write_text("*\n!keep\n")
    local.ensure()
    assert (directory / ".gitignore").read_text() == "*\n!keep\n"


def test_a_file_in_the_way_is_reported(local: LocalState, tmp_path: Path) -> None:
    (tmp_path / ".base-database-cli").write_text("oops")
    with pytest.raises(InputError) as caught:
        local.ensure()
    assert caught.value.code == "STATE_UNWRITABLE"
    assert ".base-database-cli/state/" in caught.value.message


# ---------------------------------------------------------------------------- stage log


def test_stage_log_appends_json_lines(local: LocalState) -> None:
    first, second = new_attempt_id(), new_attempt_id()
    assert first != second
    assert re.match(r"^\d{8}T\d{6}Z-[0-9a-f]{8}$", first)
    local.stages.append(first, "check", "started")
    local.stages.append(first, "check", "ok", {"errors": 0})
    local.stages.append(second, "draft_functions", "unknown", "timed out after 30s")

    lines = local.stages.path.read_text().splitlines()
    assert len(lines) == 3
    doc = json.loads(lines[1])
    assert set(doc) == {"ts", "attemptId", "stage", "status", "detail"}
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", doc["ts"])
    assert (doc["attemptId"], doc["stage"], doc["status"], doc["detail"]) == (
        first, "check", "ok", {"errors": 0})

    entries = local.stages.entries()
    assert [(e.stage, e.status) for e in entries] == [
        ("check", "started"), ("check", "ok"), ("draft_functions", "unknown")]
    assert [e.status for e in local.stages.attempt(first)] == ["started", "ok"]
    latest = local.stages.latest_attempt()
    assert [(e.attempt_id, e.detail) for e in latest] == [(second, "timed out after 30s")]


def test_stage_log_is_empty_before_the_first_deploy(local: LocalState) -> None:
    assert local.stages.entries() == []
    assert local.stages.latest_attempt() == []


def test_stage_log_never_holds_tokens(local: LocalState) -> None:
    local.stages.append("a1", "upload", "failed", f"401 for Authorization: Bearer {TOKEN}")
    local.stages.append("a1", "upload", "failed", {
        "token": "plain-secret-value", "accessToken": "x", "client_secret": "y",
        "headers": {"Authorization": f"Bearer {TOKEN}"},
        "steps": [f"used {TOKEN}", 3, None, True],
        "appToken": "app_visible", "baseToken": "bas_visible",
    })
    raw = local.stages.path.read_text()
    assert TOKEN not in raw and "plain-secret-value" not in raw
    detail = local.stages.entries()[1].detail
    assert detail["token"] == detail["accessToken"] == detail["client_secret"] == "***"
    assert detail["headers"]["Authorization"] == "***"
    assert detail["steps"] == ["used ***", 3, None, True]
    assert (detail["appToken"], detail["baseToken"]) == ("app_visible", "bas_visible")


def test_scrub_handles_odd_values() -> None:
    assert scrub(None) is None
    assert scrub(("a", 1.5)) == ["a", 1.5]
    assert scrub(Path(f"/tmp/{TOKEN}")) == "/tmp/***"


def test_unknown_status_is_a_bug(local: LocalState) -> None:
    with pytest.raises(ValueError, match="unknown stage status"):
        local.stages.append("a1", "check", "done")  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "problem"), [
    ('{"ts": "t", "attemptId": "a", "stage": "s", "status": "ok"}\n{not json\n',
     "line 2 is not JSON"),
    ("[1, 2]\n", "line 1 is not a JSON object"),
    ('{"ts": "t", "attemptId": "a", "stage": "s", "status": "exploded"}\n',
     "line 1 lacks ts, attemptId, stage or a known status"),
    ('{"ts": "t", "stage": "s", "status": "ok"}\n',
     "line 1 lacks ts, attemptId, stage or a known status"),
])
def test_corrupt_stage_log_is_reported_with_the_fix(local: LocalState, text: str,
                                                    problem: str) -> None:
    local.ensure()
    local.stages.path.write_text(text)
    with pytest.raises(InputError) as caught:
        local.stages.entries()
    error = caught.value
    assert error.code == "STATE_CORRUPT"
    assert error.message == f".base-database-cli/state/stages.jsonl is corrupt: {problem}."
    assert error.hint is not None
    assert error.hint.startswith("Delete .base-database-cli/state/stages.jsonl")


def test_binary_stage_log_is_reported(local: LocalState) -> None:
    local.ensure()
    local.stages.path.write_bytes(b"\x00\xff\xfe")
    with pytest.raises(InputError, match=r"stages.jsonl is corrupt: .*binary"):
        local.stages.entries()


def test_stage_log_keeps_the_newest_events_within_its_size(
        local: LocalState, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_module, "MAX_STAGE_LOG_BYTES", 2000)
    for number in range(100):
        local.stages.append(f"attempt{number:03d}", "check", "ok")
    assert local.stages.path.stat().st_size <= 2000
    entries = local.stages.entries()
    assert 5 < len(entries) < 100
    assert entries[-1].attempt_id == "attempt099"
    numbers = [int(e.attempt_id.removeprefix("attempt")) for e in entries]
    assert numbers == list(range(numbers[0], 100))


# -------------------------------------------------------------------------- deployments


def test_latest_preview_is_the_newest_preview_of_that_site(local: LocalState) -> None:
    history = local.deployments
    assert history.latest_preview("app_1") is None
    history.record(record("dep_1"))
    history.record(record("dep_2", fp=FP_B))
    history.record(record("dep_9", app="app_2"))
    history.record(record("dep_2", env="prod", fp=FP_B))
    assert history.latest_preview("app_1") == record("dep_2", fp=FP_B)
    assert history.latest("app_1") == record("dep_2", env="prod", fp=FP_B)
    assert history.latest_preview("app_2") == record("dep_9", app="app_2")
    assert history.latest_preview("app_3") is None


def test_deployments_file_format_and_atomic_write(local: LocalState) -> None:
    local.deployments.record(record("dep_1"))
    local.deployments.record(record("dep_1"))  # the same deployment again: one record
    doc = json.loads(local.deployments.path.read_text())
    assert doc == {"version": 1, "deployments": [{
        "deploymentId": "dep_1", "env": "preview", "fingerprint": FP_A,
        "baseAppUrl": "http://127.0.0.1:8787/sites/app_1/preview/",
        "createdAt": "2025-01-31T08:00:00Z", "appToken": "app_1"}]}
    leftovers = [p.name for p in local.directory.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    assert (local.directory / ".gitignore").is_file()


def test_history_keeps_the_newest_records(local: LocalState,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_module, "MAX_DEPLOYMENT_RECORDS", 3)
    for number in range(5):
        local.deployments.record(record(f"dep_{number}"))
    assert [r.deployment_id for r in local.deployments.all()] == ["dep_2", "dep_3", "dep_4"]


def test_record_from_the_deployments_response() -> None:
    data = {"deploymentId": "dep_7", "env": "preview", "status": "ready",
            "fingerprint": FP_A, "baseAppUrl": "http://127.0.0.1:8787/sites/app_1/preview/",
            "functionHints": [], "createdAt": "2025-02-01T10:00:00Z"}
    made = DeploymentRecord.from_api(decode(data, DeploymentCreated, what="POST deployments"),
                                     app_token="app_1")
    assert made == DeploymentRecord("dep_7", "preview", FP_A,
                                    "http://127.0.0.1:8787/sites/app_1/preview/",
                                    "2025-02-01T10:00:00Z", "app_1")


def test_a_record_needs_a_real_fingerprint(local: LocalState) -> None:
    with pytest.raises(InputError, match="is not a fingerprint"):
        local.deployments.record(record("dep_1", fp="sha256:nope"))
    assert not local.deployments.path.exists()


@pytest.mark.parametrize(("text", "problem"), [
    ("{", "not valid JSON"),
    ("[]", 'it has no "deployments" list'),
    ('{"version": 2, "deployments": []}', "version 2 is not 1"),
    ('{"version": 1, "deployments": [{"deploymentId": 5}]}',
     "deployments[0] needs the strings deploymentId, env"),
])
def test_corrupt_deployments_file_is_reported_with_the_fix(local: LocalState, text: str,
                                                           problem: str) -> None:
    local.ensure()
    local.deployments.path.write_text(text)
    for action in (lambda: local.deployments.latest_preview("app_1"),
                   lambda: local.deployments.record(record("dep_1"))):
        with pytest.raises(InputError) as caught:
            action()
        error = caught.value
        assert error.code == "STATE_CORRUPT"
        assert error.message.startswith(".base-database-cli/state/deployments.json is corrupt")
        assert problem in error.message
        assert error.hint is not None and error.hint.startswith(
            "Delete .base-database-cli/state/deployments.json")
    assert local.deployments.path.read_text() == text  # never silently replaced


# ---------------------------------------------------------------------------- artifacts


def artifact(text: str) -> tuple[str, bytes]:
    inputs = [InputFile.of("README.md", text.encode())]
    value = fingerprint(inputs)
    return value, build_site_zip(inputs, value)


def test_artifacts_are_cached_by_fingerprint(local: LocalState) -> None:
    value, data = artifact("one")
    path = local.save_artifact(value, data)
    assert path == local.directory / "artifacts" / f"{value.removeprefix('sha256:')}.zip"
    assert local.load_artifact(value) == data
    assert local.save_artifact(value, data) == path
    assert local.load_artifact(FP_B) is None


def test_a_damaged_cached_artifact_is_dropped(local: LocalState) -> None:
    value, data = artifact("one")
    other_value, other = artifact("two")
    path = local.save_artifact(value, data)
    path.write_bytes(other)  # intact zip, wrong fingerprint
    assert local.load_artifact(value) is None
    assert not path.exists()
    local.save_artifact(value, data)
    path.write_bytes(b"garbage")
    assert local.load_artifact(value) is None
    assert local.load_artifact(other_value) is None


def test_only_the_newest_artifacts_are_kept(local: LocalState,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_module, "MAX_CACHED_ARTIFACTS", 3)
    saved = []
    for number in range(5):
        value, data = artifact(f"version {number}")
        path = local.save_artifact(value, data)
        old = time.time() - 100 + number
        os.utime(path, (old, old))
        saved.append(value)
    kept = sorted(p.name for p in (local.directory / "artifacts").iterdir())
    assert kept == sorted(f"{v.removeprefix('sha256:')}.zip" for v in saved[2:])


def test_malformed_fingerprint_is_refused_for_artifacts(local: LocalState) -> None:
    with pytest.raises(InputError, match="is not a fingerprint"):
        local.artifact_path("../../etc/passwd")
