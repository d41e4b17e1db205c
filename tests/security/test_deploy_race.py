"""Two deploys of one site at once (issue finding 4): real `basedb deploy` processes of
two different workspaces of the same site, started together, many times.

Before, their draft writes interleaved: a deployment could snapshot one workspace's
functions next to the other's site.zip and fingerprint (11 of 30 runs), and prod then
ran one workspace's SQL while `basedb pull` restored the other's. Now every deployment
records the draft revision it was built from, each deploy's writes and its deployment
carry the revision its previous write left, and the platform refuses anything else.

What must hold after every round: each deployment's functions and agent-tools policy are
exactly those of its own site.zip; each deploy that exited 0 has its deployment, with its
own fingerprint; one that lost the race says so and exits 1.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from basedb.platform import open_platform
from basedb.platform.domain.deployments import list_deployments
from tests.cli.deploy_support import app_token_of, init_site, ok_json

pytestmark = pytest.mark.slow

ROUNDS = 20
KIND_DIRS = {"database-functions": "database_function", "mutations": "mutation",
             "faas": "faas", "ai": "ai_function"}


def second_workspace(first: Path, second: Path) -> Path:
    """The same site, other content: another SQL, one function fewer, another page."""
    shutil.copytree(first, second, ignore=shutil.ignore_patterns(".base-database-cli"))
    sql = second / "database-functions" / "listPeriods" / "main.sql"
    sql.write_text(sql.read_text(encoding="utf-8") + "LIMIT 7\n", encoding="utf-8")
    shutil.rmtree(second / "database-functions" / "listMembers")
    (second / "src" / "index.html").write_text("<!doctype html><title>Second</title>\n",
                                               encoding="utf-8")
    if (second / "src" / "generated").exists():
        ok_json("contracts", "generate", "-C", str(second))
    return second


def deploy_at_once(workspaces: list[Path]) -> list[tuple[int, dict[str, Any] | None, str]]:
    """`basedb deploy --json` of each workspace, all started together: (exit code, the
    result document when it succeeded, stderr)."""
    processes = [subprocess.Popen([sys.executable, "-m", "basedb", "deploy", "-C", str(root),
                                   "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=dict(os.environ))
                 for root in workspaces]
    outcomes = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        outcomes.append((process.returncode,
                         json.loads(out) if process.returncode == 0 else None, err))
    return outcomes


def artifact_functions(content: bytes) -> tuple[dict[str, tuple[Any, ...]], list[str]]:
    """The functions (by id: kind, declaration, sql, handler) and the exclude list a
    site.zip carries."""
    functions: dict[str, tuple[Any, ...]] = {}
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        names = set(archive.namelist())
        for name in names:
            parts = name.split("/")
            if len(parts) == 3 and parts[0] in KIND_DIRS and parts[2] == "function.json":
                folder = "/".join(parts[:2])
                sql = archive.read(f"{folder}/main.sql").decode() \
                    if f"{folder}/main.sql" in names else None
                handler = archive.read(f"{folder}/index.mjs").decode() \
                    if f"{folder}/index.mjs" in names else None
                functions[parts[1]] = (KIND_DIRS[parts[0]], json.loads(archive.read(name)),
                                       sql, handler)
        exclude = json.loads(archive.read("agent-tools.json"))["exclude"] \
            if "agent-tools.json" in names else []
    return functions, exclude


def test_concurrent_deploys_never_mix_their_content(tmp_path: Path,
                                                    isolated_dirs: dict[str, Path]) -> None:
    first = init_site(tmp_path / "first")
    second = second_workspace(first, tmp_path / "second")
    app = app_token_of(first)
    succeeded: list[tuple[Path, dict[str, Any]]] = []
    lost = 0
    for _ in range(ROUNDS):
        for root, (code, result, err) in zip((first, second), deploy_at_once([first, second]),
                                             strict=True):
            if code == 0:
                assert result is not None
                succeeded.append((root, result))
            else:
                # The only way to lose: the other deploy wrote the drafts meanwhile.
                assert code == 1, err
                envelope = json.loads(err.strip().splitlines()[-1])
                assert "another deploy of this site ran at the same time; run deploy again" \
                    in envelope["error"]["message"], err
                assert envelope["error"]["code"] == 800004020
                lost += 1
    assert len(succeeded) >= ROUNDS  # at least one of each pair gets through

    platform = open_platform(isolated_dirs["data"])
    with platform.store.read() as conn:
        deployments = {d.deployment_id: d for d in list_deployments(conn, app)}
        for deployment in deployments.values():
            stored = {row[0]: (row[1], json.loads(row[2]), row[3], row[4]) for row in conn.execute(
                "SELECT function_id, kind, declaration, sql, handler FROM deployment_functions "
                "WHERE deployment_id = ?", (deployment.deployment_id,))}
            content = conn.execute("SELECT content FROM deployment_artifacts WHERE "
                                   "deployment_id = ?", (deployment.deployment_id,)).fetchone()[0]
            functions, exclude = artifact_functions(bytes(content))
            assert stored == functions, deployment.deployment_id
            assert sorted(deployment.exclude) == sorted(exclude), deployment.deployment_id
    # Nothing acknowledged is lost: every deploy that exited 0 has its deployment.
    for root, result in succeeded:
        found = deployments[result["deploymentId"]]
        assert found.fingerprint == result["fingerprint"]
        local = ok_json("deploy", "--dry-run", "-C", str(root))
        assert local["fingerprint"] == found.fingerprint
    # A deploy that lost the race left no deployment behind.
    assert len(deployments) == len(succeeded)
    assert len(succeeded) + lost == 2 * ROUNDS
