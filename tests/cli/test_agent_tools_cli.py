"""`basedb agent-tools skill install` and `basedb agent-tools list`: targets and their
environment variables, the install summaries, replacing rules (own install, project
install, unknown directories, another site's skill), atomic writes and hostile answers."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest

from basedb.agent_tools import install as install_module
from basedb.agent_tools.install import write_skill_dir
from basedb.core.skill_spec import frontmatter_problems, split_frontmatter
from tests.cli.deploy_support import (
    REMOTE,
    app_token_of,
    error_json,
    forward_to_platform,
    init_site,
    ok_json,
    run,
)


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """HOME, CODEX_HOME and CLAUDE_CONFIG_DIR inside tmp_path (the last two unset)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return {"home": home, "codex": home / ".codex" / "skills",
            "agents": home / ".agents" / "skills", "claude": home / ".claude" / "skills"}


def released(directory: Path, *init_args: str) -> Path:
    """A workspace whose site has a production release."""
    init_site(directory, "example", *init_args)
    ok_json("deploy", "-C", str(directory))
    ok_json("deploy", "-C", str(directory), "--production", "--yes")
    return directory


@pytest.fixture
def site(tmp_path: Path, homes: dict[str, Path]) -> Path:
    return released(tmp_path / "site")


def installed_skill(path: Path) -> tuple[dict[str, Any], str]:
    split = split_frontmatter((path / "SKILL.md").read_text(encoding="utf-8"))
    assert split is not None
    return split


def records(isolated_dirs: dict[str, Path]) -> list[dict[str, Any]]:
    doc = json.loads((isolated_dirs["state"] / "skill-installs.json").read_text())
    installs: list[dict[str, Any]] = doc["installs"]
    return installs


def test_project_install_into_codex(site: Path, homes: dict[str, Path],
                                    isolated_dirs: dict[str, Path]) -> None:
    result = ok_json("agent-tools", "skill", "install", cwd=site)
    app = app_token_of(site)
    [item] = result["installed"]
    path = homes["codex"] / item["name"]
    assert item == {"target": "codex", "name": item["name"], "path": str(path)}
    assert item["name"].startswith("site-")  # the example's title is Chinese
    assert result["skillCommand"] == f"cat {path}/SKILL.md" and result["notices"] == []
    assert result["appToken"] == app and result["functionCount"] == 12
    assert result["readFunctionCount"] == 6
    front, body = installed_skill(path)
    assert frontmatter_problems(front, directory=path.name) == []
    assert front["metadata"]["appToken"] == app and front["metadata"]["profile"] == "local"
    assert f"basedb api --profile local GET /open-apis/base/v3/sites/{app}/functions" in body
    assert "debugSubmissionIntegrity" not in body  # excluded by agent-tools.json
    assert (path / "references" / "functions.md").is_file()
    [record] = records(isolated_dirs)
    assert record | {"installedAt": "T"} == {
        "name": path.name, "path": str(path), "kind": "site", "appToken": app,
        "endpoint": "embedded", "deploymentId": result["deploymentId"],
        "installedAt": "T", "target": "codex"}
    mode = stat.S_IMODE((isolated_dirs["state"] / "skill-installs.json").stat().st_mode)
    assert mode == 0o600
    assert not [p for p in homes["codex"].iterdir() if p.name.startswith(".")]


def test_targets_follow_their_environment_variables(
        site: Path, homes: dict[str, Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    result = ok_json("agent-tools", "skill", "install", "--target", "all", cwd=site)
    roots = {item["target"]: Path(item["path"]).parent for item in result["installed"]}
    assert roots == {"codex": tmp_path / "codex-home" / "skills",
                     "agents": homes["agents"],
                     "claude": tmp_path / "claude-config" / "skills"}
    claude = ok_json("agent-tools", "skill", "install", "--target", "claude", "--force",
                     cwd=site)
    assert Path(claude["installed"][0]["path"]).parent == roots["claude"]


def test_default_roots_without_environment_variables(site: Path,
                                                     homes: dict[str, Path]) -> None:
    result = ok_json("agent-tools", "skill", "install", "--target", "all", cwd=site)
    assert [Path(i["path"]).parent for i in result["installed"]] == [
        homes["codex"], homes["agents"], homes["claude"]]


def test_dir_is_a_skills_root_and_excludes_target(site: Path, tmp_path: Path) -> None:
    result = ok_json("agent-tools", "skill", "install", "--dir", str(tmp_path / "mine"),
                     cwd=site)
    assert result["installed"][0]["target"] == "dir"
    assert Path(result["installed"][0]["path"]).parent == tmp_path / "mine"
    clash = run("agent-tools", "skill", "install", "--dir", str(tmp_path / "x"), "--target",
                "codex", "--json", cwd=site)
    assert clash.exit_code == 2 and error_json(clash)["code"] == "SKILL_TARGET_CONFLICT"


def test_a_project_install_into_an_existing_directory_needs_force(site: Path) -> None:
    first = ok_json("agent-tools", "skill", "install", cwd=site)
    again = run("agent-tools", "skill", "install", "--json", cwd=site)
    assert again.exit_code == 1
    error = error_json(again)
    assert error["code"] == "SKILL_DIR_EXISTS" and "--force" in error["hint"]
    forced = ok_json("agent-tools", "skill", "install", "--force", cwd=site)
    assert forced["installed"] == first["installed"]
    assert forced["notices"] == [f"Replaced {first['installed'][0]['path']}."]


def test_site_install_updates_its_own_install_from_anywhere(
        site: Path, tmp_path: Path, homes: dict[str, Path],
        isolated_dirs: dict[str, Path]) -> None:
    app = app_token_of(site)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first = ok_json("agent-tools", "skill", "install", "--site", app, cwd=elsewhere)
    link = f"http://{app.lower()}.localhost:8787/sites/{app}/"  # its baseAppUrl
    second = ok_json("agent-tools", "skill", "install", "--site", link, cwd=elsewhere)
    assert second["installed"] == first["installed"] and second["appToken"] == app
    assert len(records(isolated_dirs)) == 1
    # The project install of the same site is the same skill, but still needs --force.
    assert run("agent-tools", "skill", "install", cwd=site).exit_code == 1


def test_unknown_directories_need_force(site: Path, homes: dict[str, Path]) -> None:
    app = app_token_of(site)
    name = ok_json("agent-tools", "skill", "install", "--dir", str(homes["home"] / "probe"),
                   cwd=site)["installed"][0]["name"]
    mine = homes["codex"] / name
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("my own notes\n")
    for args in (("--site", app), ()):
        refused = run("agent-tools", "skill", "install", *args, "--json", cwd=site)
        assert refused.exit_code == 1 and error_json(refused)["code"] == "SKILL_DIR_EXISTS"
        assert (mine / "SKILL.md").read_text() == "my own notes\n"
    ok_json("agent-tools", "skill", "install", "--site", app, "--force", cwd=site)
    assert "my own notes" not in (mine / "SKILL.md").read_text()


def test_a_same_named_skill_of_another_site_gets_a_suffix(
        tmp_path: Path, homes: dict[str, Path]) -> None:
    one = released(tmp_path / "one", "--title", "Team Leave")
    two = released(tmp_path / "two", "--title", "Team Leave")
    first = ok_json("agent-tools", "skill", "install", "--site", app_token_of(one))
    assert first["installed"][0]["name"] == "team-leave"
    second = ok_json("agent-tools", "skill", "install", "--site", app_token_of(two))
    name = second["installed"][0]["name"]
    assert name.startswith("team-leave-") and len(name) == len("team-leave-") + 6
    assert any("holds the skill of another site" in n for n in second["notices"])
    front, _ = installed_skill(homes["codex"] / name)
    assert front["name"] == name and front["metadata"]["appToken"] == app_token_of(two)
    front, _ = installed_skill(homes["codex"] / "team-leave")
    assert front["metadata"]["appToken"] == app_token_of(one)
    # Each site's reinstall finds its own directory again.
    assert ok_json("agent-tools", "skill", "install", "--site",
                   app_token_of(two))["installed"] == second["installed"]
    assert ok_json("agent-tools", "skill", "install", "--site",
                   app_token_of(one))["installed"] == first["installed"]


def test_the_self_check_needs_a_read_function(tmp_path: Path, homes: dict[str, Path]) -> None:
    """Upstream: check an install by describing and calling one read function; without
    one, say the check cannot be done rather than suggest a write."""
    example = run("agent-tools", "skill", "install", "--site",
                  app_token_of(released(tmp_path / "example")))
    assert example.exit_code == 0 and "Check it: ask your agent to describe one read " \
        "function" in example.stdout
    blank = init_site(tmp_path / "blank", "blank")
    ok_json("deploy", "-C", str(blank))
    ok_json("deploy", "-C", str(blank), "--production", "--yes")
    result = run("agent-tools", "skill", "install", "--site", app_token_of(blank))
    assert result.exit_code == 0 and "Check it" not in result.stdout
    assert "Not checked: the site has no read function open to agents" in result.stdout


def test_a_site_without_production_installs_nothing(tmp_path: Path,
                                                     homes: dict[str, Path]) -> None:
    site = init_site(tmp_path / "site")
    ok_json("deploy", "-C", str(site))
    result = run("agent-tools", "skill", "install", "--json", cwd=site)
    assert result.exit_code == 1
    error = error_json(result)
    assert error["code"] == 800004004 and "retry after publishing" in error["message"]
    assert not homes["codex"].exists()


def test_site_values_that_are_neither_token_nor_link(site: Path) -> None:
    result = run("agent-tools", "skill", "install", "--site", "not a token", "--json")
    assert result.exit_code == 2 and error_json(result)["code"] == "SITE_INVALID"


def test_a_profile_other_than_local_is_named_in_the_skill(
        site: Path, homes: dict[str, Path], isolated_dirs: dict[str, Path]) -> None:
    with forward_to_platform():
        result = ok_json("agent-tools", "skill", "install", "--profile", REMOTE, cwd=site)
    _, body = installed_skill(Path(result["installed"][0]["path"]))
    assert f"basedb api --profile {REMOTE} GET" in body
    # A description's callCommand has no profile: the Skill says to use its own commands.
    assert "rather than a description's `callCommand`" in body
    assert records(isolated_dirs)[0]["endpoint"] == "http://127.0.0.1:8799"


@pytest.mark.parametrize(("change", "why"), [
    ({"references": {"../escape.md": "x"}}, "reference"),
    ({"name": "Not_A_Name"}, "valid skill name"),
    ({"markdown": "no frontmatter here"}, "frontmatter"),
])
def test_an_unusable_answer_writes_nothing(site: Path, homes: dict[str, Path],
                                           tmp_path: Path, change: dict[str, Any],
                                           why: str) -> None:
    with forward_to_platform() as faults:
        good = ok_json("agent-tools", "skill", "install", "--profile", REMOTE, "--dir",
                       str(tmp_path / "probe"), cwd=site)
        assert good["installed"]
        body = {"code": 0, "msg": "success", "data": {
            "name": "evil", "markdown": "---\nname: evil\ndescription: x\n---\nbody\n",
            "references": {}, "deploymentId": "d", "functions": [], **change}}
        faults.answer("GET", "/skill", httpx.Response(200, json=body))
        result = run("agent-tools", "skill", "install", "--profile", REMOTE, "--json",
                     cwd=site)
    assert result.exit_code == 2
    error = error_json(result)
    assert error["code"] == "SKILL_RESPONSE_INVALID" and why in error["message"]
    assert not homes["codex"].exists() and not (tmp_path / "escape.md").exists()


def test_an_unreadable_summary_file_is_reported_and_rewritten(
        site: Path, isolated_dirs: dict[str, Path]) -> None:
    isolated_dirs["state"].mkdir(parents=True)
    (isolated_dirs["state"] / "skill-installs.json").write_text("{not json")
    result = ok_json("agent-tools", "skill", "install", cwd=site)
    assert any("could not be read" in notice for notice in result["notices"])
    assert len(records(isolated_dirs)) == 1


def test_text_output(site: Path) -> None:
    result = run("agent-tools", "skill", "install", cwd=site)
    assert result.exit_code == 0, result.stderr
    assert "Installed the Skill of site" in result.stdout and "Read it: cat " in result.stdout


# ------------------------------------------------------------------- atomic writes


def test_a_failed_rename_keeps_the_previous_skill(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "skills" / "tasks"
    write_skill_dir(target, {"SKILL.md": "old\n", "references/a.md": "a\n"})
    real_replace = os.replace
    calls: list[str] = []

    def failing_replace(src: Any, dst: Any) -> None:
        calls.append(str(src))
        if len(calls) == 2:  # moving the new skill into place
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(install_module.os, "replace", failing_replace)
    with pytest.raises(OSError):
        write_skill_dir(target, {"SKILL.md": "new\n"})
    monkeypatch.setattr(install_module.os, "replace", real_replace)
    assert (target / "SKILL.md").read_text() == "old\n"
    assert (target / "references" / "a.md").read_text() == "a\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["tasks"]


def test_a_failed_file_write_leaves_no_half_skill(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "skills" / "tasks"
    real_write = Path.write_text

    def failing_write(self: Path, *args: Any, **kwargs: Any) -> int:
        if self.name == "b.md":
            raise OSError(5, "Input/output error")
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", failing_write)
    with pytest.raises(OSError):
        write_skill_dir(target, {"SKILL.md": "new\n", "references/b.md": "b\n"})
    assert not target.exists() and list(target.parent.iterdir()) == []


def test_replacing_swaps_the_whole_directory(tmp_path: Path) -> None:
    target = tmp_path / "skills" / "tasks"
    write_skill_dir(target, {"SKILL.md": "old\n", "references/gone.md": "x\n"})
    write_skill_dir(target, {"SKILL.md": "new\n"})
    assert (target / "SKILL.md").read_text() == "new\n"
    assert not (target / "references").exists()
    assert sorted(p.name for p in target.parent.iterdir()) == ["tasks"]


# ---------------------------------------------------------------------------- list


def test_list_shows_functions_open_to_agents(site: Path) -> None:
    result = ok_json("agent-tools", "list", cwd=site)
    ids = [f["functionId"] for f in result["functions"]]
    assert result["env"] == "prod" and result["appToken"] == app_token_of(site)
    assert "debugSubmissionIntegrity" not in ids and "listTeamLeave" in ids
    access = {f["functionId"]: f["access"] for f in result["functions"]}
    assert access["listTeamLeave"] == "read" and access["submitLeave"] == "write"
    preview = ok_json("agent-tools", "list", "--env", "preview", cwd=site)
    assert preview["deploymentId"] == result["deploymentId"]
    text = run("agent-tools", "list", cwd=site)
    assert text.exit_code == 0 and "listTeamLeave" in text.stdout and "read" in text.stdout


def test_list_searches_and_filters(site: Path) -> None:
    found = ok_json("agent-tools", "list", "--query", "leave", "--access", "read",
                    "--limit", "2", cwd=site)
    assert 0 < len(found["functions"]) <= 2
    assert all(f["access"] == "read" for f in found["functions"])
    assert all("leave" in f"{f['functionId']} {f['description']}".lower()
               for f in found["functions"])
    writes = ok_json("agent-tools", "list", "--access", "write", cwd=site)
    assert writes["functions"] and all(f["access"] == "write" for f in writes["functions"])
    nothing = run("agent-tools", "list", "--query", "zzzqqq", cwd=site)
    assert nothing.exit_code == 0 and "matches the search" in nothing.stdout


def test_list_outside_a_workspace_needs_a_site(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run("agent-tools", "list", "--json", cwd=empty)
    assert result.exit_code == 2 and error_json(result)["code"] == "WORKSPACE_NOT_FOUND"
