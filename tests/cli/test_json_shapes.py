"""docs/json.md documents the --json output of every command: each documented command is
run here and its top-level keys must be exactly the documented ones (`key?` may be
absent), and every command that has --json is documented."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest

from basedb.cli import cli
from basedb.cli.reference import iter_commands
from tests.cli.deploy_support import app_token_of, error_json, init_site, ok_json, run

DOC = Path(__file__).resolve().parents[2] / "docs" / "json.md"
SECTION = re.compile(r"^### `basedb ([^`]+)`$|^### (error envelope)$", re.M)
KEY_CELL = re.compile(r"^\| ((?:`[A-Za-z]+\??`(?:, )?)+) \|", re.M)


def documented() -> dict[str, tuple[set[str], set[str]]]:
    """Section title -> (keys always present, optional keys)."""
    text = DOC.read_text(encoding="utf-8")
    matches = list(SECTION.finditer(text))
    sections = {}
    for match, following in zip(matches, [*matches[1:], None], strict=True):
        body = text[match.end():following.start() if following else len(text)]
        keys = [k for cell in KEY_CELL.findall(body) for k in re.findall(r"`([^`]+)`", cell)]
        sections[match.group(1) or match.group(2)] = (
            {k for k in keys if not k.endswith("?")}, {k[:-1] for k in keys if k.endswith("?")})
    return sections


def assert_shape(section: str, document: dict[str, Any]) -> None:
    required, optional = documented()[section]
    keys = set(document)
    assert required <= keys, f"{section}: documented but missing {required - keys}"
    assert keys <= required | optional, f"{section}: undocumented {keys - required - optional}"


@pytest.fixture
def outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    """Every documented section's document, from one journey on the embedded platform."""
    for name in ("HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    out: dict[str, dict[str, Any]] = {}
    out["init --json"] = ok_json("init", str(tmp_path / "created"), "--template", "blank")
    site = str(init_site(tmp_path / "site"))
    out["check --json"] = ok_json("check", "-C", site)
    out["contracts generate --json"] = ok_json("contracts", "generate", "-C", site)
    out["catalog pull --json"] = ok_json("catalog", "pull", "-C", site)
    out.update(schema_outputs(Path(site)))
    out["deploy --dry-run --json"] = ok_json("deploy", "-C", site, "--dry-run")
    out["deploy --json"] = ok_json("deploy", "-C", site)
    out["deploy --production --dry-run --json"] = ok_json("deploy", "-C", site, "--production",
                                                          "--dry-run")
    prod = ok_json("deploy", "-C", site, "--production", "--yes")
    out["deploy --production --yes --json"] = prod
    out["deployments list --json"] = ok_json("deployments", "list", "-C", site)
    out["deployments status --json"] = ok_json("deployments", "status", "-C", site)
    out["deployments rollback --yes --json"] = ok_json(
        "deployments", "rollback", "--yes", prod["deploymentId"], "-C", site)
    out["logs --json"] = ok_json("logs", "-C", site)
    out["ai-functions sync --json"] = ok_json("ai-functions", "sync", "-C", site)
    out["ai-functions list --json"] = ok_json("ai-functions", "list", "-C", site)
    out["ai-functions get --json"] = ok_json("ai-functions", "get", "summarizeLeave", "-C", site)
    out["secrets set --json"] = json.loads(
        run("secrets", "set", "API_KEY", "-C", site, "--json", input="a-value").stdout)
    out["secrets list --json"] = ok_json("secrets", "list", "-C", site)
    out["secrets unset --json"] = ok_json("secrets", "unset", "API_KEY", "-C", site)
    out["pull --json"] = ok_json("pull", str(tmp_path / "pulled"), "--app-token",
                                 app_token_of(Path(site)))
    out["init --app-token APP --json"] = ok_json("init", str(tmp_path / "restored"),
                                                 "--app-token", app_token_of(Path(site)))
    out["demo --json"] = ok_json("demo", str(tmp_path / "demo"))
    out["doctor --json"] = ok_json("doctor", "-C", site)
    out["sites list --json"] = ok_json("sites", "list")
    spare = app_token_of(init_site(tmp_path / "spare", "blank"))
    out["sites delete --json"] = ok_json("sites", "delete", spare, "--yes")
    out["auth login --json"] = ok_json("auth", "login", "--endpoint", "http://127.0.0.1:9",
                                       "--token", "bdb_not_checked", "--no-verify",
                                       "--profile", "other")
    out["auth list --json"] = ok_json("auth", "list")
    out["auth logout --json"] = ok_json("auth", "logout", "--profile", "other")
    out["auth status --json"] = ok_json("auth", "status")
    out["agent-tools list --json"] = ok_json("agent-tools", "list", "-C", site)
    out["agent-tools skill install --json"] = ok_json("agent-tools", "skill", "install",
                                                      "-C", site)
    out["skill install --json"] = ok_json("skill", "install")
    out["sdk pack --json"] = ok_json("sdk", "pack", "--out", str(tmp_path / "vendor"))
    out["api --json"] = ok_json("api", "GET", "/users/me")
    failed = run("deployments", "status", "dplNoSuchDeployment", "-C", site, "--json")
    assert failed.exit_code == 1 and failed.stdout == ""
    out["error envelope"] = json.loads(failed.stderr.strip().splitlines()[-1])
    assert error_json(failed)["type"] == "api_error"
    return out


def schema_outputs(site: Path) -> dict[str, dict[str, Any]]:
    """The schema and binding commands, run in `site` (the example site)."""
    out: dict[str, dict[str, Any]] = {}
    out["base create --json"] = ok_json("base", "create", "Scratch")
    workspace = ("-C", str(site))
    out["table create --json"] = ok_json("table", "create", "任务", "--field", "标题:text",
                                         *workspace)
    out["table list --json"] = ok_json("table", "list", *workspace)
    out["field create --json"] = ok_json("field", "create", "任务", "完成", "--type",
                                         "checkbox", *workspace)
    out["field update --json"] = ok_json("field", "update", "任务", "完成", "--name", "已完成",
                                         *workspace)
    out["field list --json"] = ok_json("field", "list", "任务", *workspace)
    out["bind --json"] = ok_json("bind", "任务", *workspace)
    out["field delete --yes --json"] = ok_json("field", "delete", "任务", "已完成", "--yes",
                                               *workspace)
    out["unbind --yes --json"] = ok_json("unbind", "任务", "--yes", *workspace)
    out["table delete --yes --json"] = ok_json("table", "delete", "任务", "--yes", *workspace)
    app = app_token_of(site)
    out["link --json"] = ok_json("link", "--app-token", app, *workspace)
    return out


def test_every_documented_output_has_the_documented_keys(
        outputs: dict[str, dict[str, Any]]) -> None:
    assert set(outputs) == set(documented()), "run each documented command once"
    for section, document in outputs.items():
        assert_shape(section, document)


def test_every_command_with_json_output_is_documented() -> None:
    root = click.Context(cli, info_name="basedb", **cli.context_settings)
    commands = {path.removeprefix("basedb ") for path, command, _ in iter_commands(cli, root)
                if any(param.name == "as_json" for param in command.params)}
    sections = {title.split(" --")[0] for title in documented()}
    assert commands - sections == set(), "document their --json output in docs/json.md"
