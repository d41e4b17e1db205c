"""`basedb skill install`: the developer Skill shipped with basedb (skills/lark-base-database),
which teaches a coding agent to build, check and deploy sites with basedb.

Same targets and rules as a site Skill (basedb.agent_tools.install): a directory recorded
for the developer Skill is replaced (an upgrade), any other existing directory needs
--force.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from basedb import __version__
from basedb.agent_tools.install import (
    Installed,
    InstallRecords,
    SkillOwner,
    install_everywhere,
    install_record,
    plan_install,
)
from basedb.core.errors import InternalError
from basedb.core.frozen import frozen_dataclass
from basedb.core.resources import skills_dir
from basedb.core.skill_spec import frontmatter_problems, split_frontmatter

DEVELOPER_SKILL = "lark-base-database"


def developer_skill_dir() -> Path:
    return skills_dir() / DEVELOPER_SKILL


def developer_skill_files() -> dict[str, str]:
    """Every file of the shipped skill (relative POSIX path -> text), checked."""
    root = developer_skill_dir()
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if not path.is_file() or any(part.startswith((".", "__")) for part in relative.parts):
            continue
        files[relative.as_posix()] = path.read_text(encoding="utf-8")
    split = split_frontmatter(files.get("SKILL.md", ""))
    problems = (["SKILL.md has no frontmatter"] if split is None
                else frontmatter_problems(split[0], directory=DEVELOPER_SKILL))
    if problems:
        raise InternalError(f"basedb's developer Skill in {root} is broken: "
                            f"{'; '.join(problems)}.", code="RESOURCES_MISSING",
                            hint="Reinstall basedb.")
    return files


@frozen_dataclass
class DeveloperSkillInstall:
    """`basedb skill install`: the developer Skill of this basedb version, written."""

    version: str
    installed: Installed

    def to_dict(self) -> dict[str, Any]:
        out = self.installed.to_dict()
        return {"version": self.version, "installed": out["installed"],
                "skillCommand": out["skillCommand"], "notices": out["notices"]}


def install_developer_skill(*, roots: list[tuple[str, Path]],
                            force: bool) -> DeveloperSkillInstall:
    files = developer_skill_files()
    records = InstallRecords.load()
    owner = SkillOwner("developer")
    plans = [plan_install(records, target=target, root=root, name=DEVELOPER_SKILL,
                          owner=owner, force=force, replace_own=True)
             for target, root in roots]
    installed = install_everywhere(
        plans, lambda _planned: files, records,
        lambda planned: install_record(planned, owner, version=__version__))
    return DeveloperSkillInstall(__version__, installed)
