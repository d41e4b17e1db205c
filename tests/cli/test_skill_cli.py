"""`basedb skill install`: the developer Skill shipped in skills/lark-base-database, its
format and content, and the same target and replacing rules as site Skills."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from basedb.agent_tools.dev_skill import DEVELOPER_SKILL, developer_skill_dir
from basedb.core.skill_spec import DESCRIPTION_MAX, frontmatter_problems, split_frontmatter
from basedb.protocol.findings import ERROR_CODES, HINT_CODES
from tests.cli.deploy_support import error_json, ok_json, run


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return {"codex": tmp_path / "codex" / "skills", "agents": home / ".agents" / "skills",
            "claude": home / ".claude" / "skills"}


def shipped_files() -> dict[str, str]:
    root = developer_skill_dir()
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in root.rglob("*") if p.is_file()}


# ----------------------------------------------------------------- the Skill itself


def test_the_shipped_skill_follows_the_agent_skills_format() -> None:
    files = shipped_files()
    split = split_frontmatter(files["SKILL.md"])
    assert split is not None
    front, body = split
    assert frontmatter_problems(front, directory=DEVELOPER_SKILL) == []
    assert front["name"] == DEVELOPER_SKILL
    assert 200 < len(front["description"]) <= DESCRIPTION_MAX
    assert "Use inside a workspace" in front["description"]
    assert len(body.splitlines()) < 500


def test_links_between_files_resolve() -> None:
    files = shipped_files()
    for name, text in files.items():
        for target in re.findall(r"\]\((references/[^)#]+)", text):
            assert target in files, f"{name} links to missing {target}"


def test_the_skill_covers_the_workflow() -> None:
    text = shipped_files()["SKILL.md"]
    for command in ("basedb init", "basedb check", "functionHints", "basedb contracts generate",
                    "basedb deploy", "basedb deploy --production --yes", "basedb api",
                    "basedb pull", "basedb catalog pull", "basedb agent-tools skill install",
                    "basedb mcp", "basedb serve", "--profile", "exclude"):
        assert command in text, command


def test_the_skill_says_what_upstreams_skill_says_about_ai_faas_and_delivery() -> None:
    text = " ".join(shipped_files()["SKILL.md"].split())
    # AI is optional: no ai/ unless the task needs it, and never prompt to enable it
    assert "otherwise create no `ai/`, run no `ai-functions` command" in text
    assert "never ask or prompt the user to enable AI" in text
    assert "`no_local_ai_functions`" in text
    # server logic when unsure: FaaS
    assert "When unsure where server logic goes, use a FaaS." in text
    # the three delivery states, reported without further questions
    assert "End every task in one of three states, and say which, without asking further " \
           "questions" in text
    for state in ("**Done**", "**Partial**", "**Blocked**"):
        assert state in text, state
    assert "top-level `baseAppUrl` only" in text
    assert "sync --dry-run" in text and "base-database-cli" in text


def test_the_classic_project_path_is_documented() -> None:
    declarations = shipped_files()["references/declarations.md"]
    section = declarations[declarations.index("## Classic projects"):]
    for step in ("basedb init --app-token APP DIR", "basedb check", "startBaseApp",
                 "@lark-base-open/base-database-app-sdk/page", "basedb contracts generate"):
        assert step in section, step


def test_every_check_code_is_documented() -> None:
    declarations = shipped_files()["references/declarations.md"]
    for code in (*ERROR_CODES, *HINT_CODES):
        assert f"`{code}`" in declarations, code


# --------------------------------------------------------------------- installing


def test_install_copies_the_skill_into_codex(homes: dict[str, Path],
                                             isolated_dirs: dict[str, Path]) -> None:
    result = ok_json("skill", "install")
    path = homes["codex"] / DEVELOPER_SKILL
    assert result["installed"] == [{"target": "codex", "name": DEVELOPER_SKILL,
                                    "path": str(path)}]
    assert result["skillCommand"] == f"cat {path}/SKILL.md"
    installed = {p.relative_to(path).as_posix(): p.read_text(encoding="utf-8")
                 for p in path.rglob("*") if p.is_file()}
    assert installed == shipped_files()
    doc = json.loads((isolated_dirs["state"] / "skill-installs.json").read_text())
    [record] = doc["installs"]
    assert record["kind"] == "developer" and record["appToken"] is None
    assert record["version"] == result["version"]


def test_reinstalling_updates_the_recorded_install(homes: dict[str, Path]) -> None:
    ok_json("skill", "install")
    (homes["codex"] / DEVELOPER_SKILL / "SKILL.md").write_text("stale\n")
    again = ok_json("skill", "install")
    assert again["notices"] == [f"Replaced {homes['codex'] / DEVELOPER_SKILL}."]
    assert (homes["codex"] / DEVELOPER_SKILL / "SKILL.md").read_text() == \
        shipped_files()["SKILL.md"]


def test_an_unknown_directory_needs_force(homes: dict[str, Path]) -> None:
    mine = homes["codex"] / DEVELOPER_SKILL
    mine.mkdir(parents=True)
    (mine / "notes.md").write_text("mine\n")
    refused = run("skill", "install", "--json")
    assert refused.exit_code == 1 and error_json(refused)["code"] == "SKILL_DIR_EXISTS"
    assert (mine / "notes.md").exists()
    ok_json("skill", "install", "--force")
    assert not (mine / "notes.md").exists() and (mine / "SKILL.md").is_file()


def test_all_targets_and_dir(homes: dict[str, Path], tmp_path: Path) -> None:
    result = ok_json("skill", "install", "--target", "all")
    assert [Path(i["path"]).parent for i in result["installed"]] == [
        homes["codex"], homes["agents"], homes["claude"]]
    mine = ok_json("skill", "install", "--dir", str(tmp_path / "mine"))
    assert mine["installed"][0]["path"] == str(tmp_path / "mine" / DEVELOPER_SKILL)


def test_a_conflict_in_one_target_writes_none(homes: dict[str, Path]) -> None:
    (homes["claude"] / DEVELOPER_SKILL).mkdir(parents=True)
    refused = run("skill", "install", "--target", "all", "--json")
    assert refused.exit_code == 1
    assert not homes["codex"].exists() and not homes["agents"].exists()


def test_text_output(homes: dict[str, Path]) -> None:
    result = run("skill", "install")
    assert result.exit_code == 0, result.stderr
    assert "Installed the basedb developer Skill" in result.stdout
