"""The deploy benchmark: real deploys of the generated workspace to sites of their own,
judged against `deploy --dry-run`, and refusals when the runs did not do what they say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.registry import BenchContext, Settings
from bench.suites.deploy import _verified, deploy_benchmark, point_workspace_at
from bench.timing import BenchError

# Each test runs whole deploy rounds against a served platform.
pytestmark = pytest.mark.slow


def test_each_size_deploys_twice_to_a_new_site_and_dry_runs(tmp_path: Path) -> None:
    ctx = BenchContext(Settings(functions=200, runs=1, startup_runs=20, seed=7, quick=True,
                                profile=False), tmp_path)
    result = deploy_benchmark(ctx)
    by_name = {figure.name: figure for figure in result.figures}
    assert set(by_name) == {"preview-100", "redeploy-100", "preview-200", "redeploy-200",
                            "preview-400", "redeploy-400", "linearity"}
    preview, redeploy = by_name["preview-200"], by_name["redeploy-200"]
    assert len(preview.measure.seconds) == len(redeploy.measure.seconds) == 1
    assert redeploy.peer is preview.measure  # the redeploy is judged against the first
    assert preview.peer is not None and "--dry-run" in preview.peer.command
    assert preview.measure.command[-4:-2] == ["deploy", "--json"]
    rounds = {size["functions"]: size["round"] for size in result.details["sizes"]}
    assert rounds[200]["files"] > 200 and rounds[200]["bytes"] > 0
    config = json.loads((tmp_path / "deploy-workspace-200" / "base-database.jsonc")
                        .read_text())
    assert config["appToken"] == rounds[200]["appToken"]  # the measured round's own site
    linearity = by_name["linearity"]  # its sign is the machine's: only its shape is checked
    assert len(linearity.measure.seconds) == 1 and linearity.peer is not None
    assert "400" in linearity.measure.label and "100" in linearity.peer.label


def test_point_workspace_at_rewrites_only_the_app_token(tmp_path: Path) -> None:
    config = tmp_path / "base-database.jsonc"
    config.write_text('// comment\n{"appToken": "old", "title": "appToken"}\n')
    point_workspace_at(tmp_path, "PrjNew")
    assert config.read_text() == '// comment\n{"appToken": "PrjNew", "title": "appToken"}\n'
    config.write_text("{}")
    with pytest.raises(BenchError, match="no appToken"):
        point_workspace_at(tmp_path, "PrjNew")


def deployed(deployment_id: str, fingerprint: str = "sha256:a") -> str:
    return json.dumps({"appToken": "Prj1", "deploymentId": deployment_id,
                       "fingerprint": fingerprint, "functionHints": []})


def test_runs_that_did_not_deploy_what_was_built_are_refused() -> None:
    planned = json.dumps({"fingerprint": "sha256:a", "files": 3, "bytes": 10})
    assert _verified("Prj1", deployed("dpl1"), deployed("dpl2"), planned)["files"] == 3
    with pytest.raises(BenchError, match="first deploy's deploymentId"):
        _verified("Prj1", deployed("dpl1"), deployed("dpl1"), planned)
    with pytest.raises(BenchError, match="different fingerprints"):
        _verified("Prj1", deployed("dpl1"), deployed("dpl2", "sha256:b"), planned)
    with pytest.raises(BenchError, match="did not create a preview of Prj2"):
        _verified("Prj2", deployed("dpl1"), deployed("dpl2"), planned)
    with pytest.raises(BenchError, match="printed no JSON"):
        _verified("Prj1", "oops", deployed("dpl2"), planned)
