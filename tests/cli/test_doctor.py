"""`basedb doctor`: installation, profile, token, workspace and catalog freshness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from basedb.client.profiles import Profile, save_profile
from tests.cli.deploy_support import (
    ENDPOINT,
    forward_to_platform,
    init_site,
    local_client,
    run,
)


def doctor(*args: str, cwd: Path | None = None) -> tuple[int, dict[str, dict[str, Any]]]:
    result = run("doctor", "--json", *args, cwd=cwd)
    doc = json.loads(result.stdout)
    assert doc["ok"] is (result.exit_code == 0)
    return result.exit_code, {c["name"]: c for c in doc["checks"]}


def test_a_fresh_workspace_is_healthy(tmp_path: Path) -> None:
    site = init_site(tmp_path / "site")
    code, checks = doctor("-C", str(site))
    assert code == 0
    assert list(checks) == ["python", "basedb", "sqlglotc", "node", "faas sandbox", "profile",
                            "token", "sites", "workspace", "catalog"]
    assert checks["sites"]["status"] == "ok" and "state" not in checks["sites"]
    assert checks["profile"]["status"] == "ok"
    assert checks["profile"]["detail"].startswith("local (the default)")
    assert checks["token"]["status"] == "ok"
    assert checks["workspace"]["status"] == "ok" and str(site) in checks["workspace"]["detail"]
    assert checks["catalog"] == {"name": "catalog", "status": "ok", "fix": None,
                                 "detail": "catalog.json matches the live catalog "
                                           "(3 tables)"}


def test_outside_a_workspace_only_warns(tmp_path: Path) -> None:
    code, checks = doctor(cwd=tmp_path)
    assert code == 0
    assert checks["workspace"]["status"] == "warn"
    assert "basedb init" in checks["workspace"]["fix"]
    assert "catalog" not in checks


def test_a_stale_catalog_is_a_warning_with_the_fix(tmp_path: Path) -> None:
    site = init_site(tmp_path / "site")
    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    table = catalog["tables"][1]
    with local_client() as client:
        client.request("POST", f"/bases/{catalog['baseToken']}/tables/{table['tableId']}"
                               "/fields", json={"name": "负责人", "type": "text"})
    code, checks = doctor("-C", str(site))
    assert code == 0
    assert checks["catalog"]["status"] == "warn"
    assert checks["catalog"]["fix"] == "basedb catalog pull"
    run("catalog", "pull", "-C", str(site))
    assert doctor("-C", str(site))[1]["catalog"]["status"] == "ok"


def test_an_unknown_profile_fails(tmp_path: Path) -> None:
    code, checks = doctor("--profile", "nowhere", cwd=tmp_path)
    assert code == 1
    assert checks["profile"]["status"] == "fail"
    assert "basedb auth login" in checks["profile"]["fix"]


def test_a_rejected_token_fails_with_the_login_fix(tmp_path: Path) -> None:
    with forward_to_platform():
        save_profile(Profile("stale", ENDPOINT, "bdb_not_the_right_token_1234"))
        code, checks = doctor("--profile", "stale", cwd=tmp_path)
    assert code == 1
    assert checks["token"]["status"] == "fail"
    assert checks["token"]["fix"] == ("basedb auth login --endpoint URL --token TOKEN "
                                      "--profile stale")


def test_an_unreachable_platform_fails(tmp_path: Path) -> None:
    save_profile(Profile("down", "http://127.0.0.1:9", "bdb_whatever_token_12345"))
    code, checks = doctor("--profile", "down", cwd=tmp_path)
    assert code == 1
    assert checks["token"]["status"] == "fail"
    assert "could not be reached" in checks["token"]["detail"]


def test_missing_node_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BASEDB_NODE", str(tmp_path / "no-such-node"))
    code, checks = doctor(cwd=tmp_path)
    assert code == 0
    assert checks["node"]["status"] == "warn" and "FaaS" in checks["node"]["detail"]
    assert "BASEDB_NODE" in checks["node"]["fix"]


def test_missing_sqlglotc_is_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.machinery

    import basedb.deploy.doctor

    pure = importlib.machinery.ModuleSpec("sqlglot.tokenizer_core", None,
                                          origin="/site-packages/sqlglot/tokenizer_core.py")
    monkeypatch.setattr(basedb.deploy.doctor.importlib.util, "find_spec", lambda name: pure)
    check = basedb.deploy.doctor.check_sqlglotc()
    assert check.status == "warn" and check.fix == "pip install 'basedb-cli[fast]'"


def test_compiled_sqlglot_is_recognised(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.machinery

    import basedb.deploy.doctor

    built = importlib.machinery.ModuleSpec(
        "sqlglot.tokenizer_core", None,
        origin="/site-packages/sqlglot/tokenizer_core.cpython-311-x86_64-linux-gnu.so")
    monkeypatch.setattr(basedb.deploy.doctor.importlib.util, "find_spec", lambda name: built)
    assert basedb.deploy.doctor.check_sqlglotc().status == "ok"


def test_a_broken_workspace_config_fails(tmp_path: Path) -> None:
    site = init_site(tmp_path / "site", "blank")
    (site / "base-database.jsonc").write_text('{"title": "no app token"}', encoding="utf-8")
    code, checks = doctor("-C", str(site))
    assert code == 1
    assert checks["workspace"]["status"] == "fail"
    assert "appToken" in checks["workspace"]["detail"]


def test_text_output(tmp_path: Path) -> None:
    site = init_site(tmp_path / "site", "blank")
    result = run("doctor", "-C", str(site))
    assert result.exit_code == 0
    assert "[ok  ] token: signed in as" in result.stdout
    last = result.stdout.rstrip().splitlines()[-1]
    warned = result.stdout.count("[warn]")  # e.g. sqlglotc not installed
    assert "(s)" not in result.stdout
    if warned == 1:
        assert last == "No check failed; 1 warning above says what would work better."
    elif warned:
        assert last == f"No check failed; {warned} warnings above say what would work better."
    else:
        assert last == "All checks passed."
    assert "\x1b[" not in result.stdout  # not a terminal


def test_text_output_has_colour_on_a_terminal_unless_no_color(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from basedb.cli import common

    site = init_site(tmp_path / "site", "blank")
    monkeypatch.setattr(common, "use_colour", lambda stream: True)
    coloured = run("doctor", "-C", str(site)).stdout
    assert "\x1b[32m\x1b[22m[ok  ]\x1b[0m" in coloured
    monkeypatch.undo()

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert common.use_colour(Terminal()) is True
    assert common.use_colour(io.StringIO()) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert common.use_colour(Terminal()) is False
    monkeypatch.setenv("NO_COLOR", "")  # set but empty: colour stays on (no-color.org)
    assert common.use_colour(Terminal()) is True
