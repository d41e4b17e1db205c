"""Installing a skill directory into local agents (upstream agent-tools.md "安装到本地
Agent"), for site Skills and for the developer Skill alike.

Targets are skills roots:

    codex   $CODEX_HOME/skills          (default ~/.codex/skills)
    agents  ~/.agents/skills
    claude  $CLAUDE_CONFIG_DIR/skills   (default ~/.claude/skills)
    --dir   any skills root

Every install is summarised in `<state dir>/skill-installs.json` (mode 0600): which
skill (a site by endpoint and app token, or the developer Skill) sits at which path.
The summaries decide what may be replaced:

- a directory recorded for the same skill is overwritten (a project install, i.e. a site
  Skill installed without --site, still needs --force);
- the name of a site's skill held by another site's recorded skill is suffixed with a
  short hash of the site token, and the new name is reported;
- any other existing directory needs --force.

A skill directory is written next to its destination, then renamed into place, so an
agent never reads half a skill and a failure leaves the previous one intact.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from basedb.core.atomic import PRIVATE_FILE_MODE, ensure_private_dir, write_file_atomically
from basedb.core.errors import ConflictError, InputError, UsageError
from basedb.core.frozen import frozen_dataclass
from basedb.core.paths import state_dir
from basedb.core.skill_spec import suffixed_name

TARGETS = ("codex", "agents", "claude")
TARGET_CHOICES = (*TARGETS, "all")
DIR_TARGET = "dir"
RECORDS_FILE = "skill-installs.json"
RECORDS_VERSION = 1
SkillKind = Literal["site", "developer"]


def target_roots(target: str | None, directory: Path | None) -> list[tuple[str, Path]]:
    """(target name, skills root) pairs: `--dir` alone, else one target or all three
    (default codex). Environment variables are read now, so tests can isolate them."""
    if directory is not None:
        if target is not None:
            raise UsageError("--dir and --target both say where to install; pass one.",
                             code="SKILL_TARGET_CONFLICT",
                             hint="Use --dir PATH for a skills root of your own, or --target "
                                  f"{'|'.join(TARGET_CHOICES)}.")
        return [(DIR_TARGET, directory.expanduser().resolve())]
    chosen = target or "codex"
    if chosen not in TARGET_CHOICES:
        raise UsageError(f"Unknown target {chosen!r}.", code="SKILL_TARGET_INVALID",
                         hint=f"Use one of {', '.join(TARGET_CHOICES)}.")
    names = TARGETS if chosen == "all" else (chosen,)
    roots: list[tuple[str, Path]] = []
    for name in names:
        root = _default_root(name).resolve()
        if all(root != seen for _, seen in roots):  # e.g. CODEX_HOME=~/.agents
            roots.append((name, root))
    return roots


def _default_root(target: str) -> Path:
    home = Path.home()
    if target == "codex":
        base = os.environ.get("CODEX_HOME")
        return (Path(base).expanduser() if base else home / ".codex") / "skills"
    if target == "claude":
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return (Path(base).expanduser() if base else home / ".claude") / "skills"
    return home / ".agents" / "skills"


# -------------------------------------------------------------------- summaries


@frozen_dataclass
class SkillOwner:
    """Whose skill a directory holds: a site (endpoint + app token) or basedb's own."""

    kind: SkillKind
    app_token: str | None = None
    endpoint: str | None = None

    def owns(self, record: Mapping[str, Any]) -> bool:
        return (record.get("kind", "site") == self.kind
                and record.get("appToken") == self.app_token
                and record.get("endpoint") == self.endpoint)


def records_path() -> Path:
    return state_dir() / RECORDS_FILE


@dataclass
class InstallRecords:
    """The install summaries; `notices` says when the file could not be used."""

    path: Path
    installs: list[dict[str, Any]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    @classmethod
    def load(cls) -> InstallRecords:
        path = records_path()
        found = cls(path)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return found
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            # Without summaries every existing directory counts as unknown and needs
            # --force, so carrying on is the safe side; the file is rewritten below.
            found.notices.append(f"{path} could not be read ({type(exc).__name__}); its "
                                 "install summaries were ignored and it will be rewritten.")
            return found
        installs = doc.get("installs") if isinstance(doc, dict) else None
        if not isinstance(installs, list):
            found.notices.append(f"{path} is not a basedb install summary file; it will be "
                                 "rewritten.")
            return found
        found.installs = [item for item in installs
                          if isinstance(item, dict) and isinstance(item.get("path"), str)]
        return found

    def at(self, path: Path) -> dict[str, Any] | None:
        key = str(path)
        return next((item for item in self.installs if item["path"] == key), None)

    def owned_in(self, root: Path, owner: SkillOwner) -> dict[str, Any] | None:
        """The newest existing install of `owner` directly under `root`."""
        for item in reversed(self.installs):
            path = Path(item["path"])
            if path.parent == root and owner.owns(item) and path.is_dir():
                return item
        return None

    def put(self, record: dict[str, Any]) -> None:
        self.installs = [item for item in self.installs if item["path"] != record["path"]]
        self.installs.append(record)

    def save(self) -> None:
        """Write the file atomically, mode 0600, in a directory of mode 0700."""
        doc = {"version": RECORDS_VERSION, "installs": self.installs}
        try:
            ensure_private_dir(self.path.parent)
            write_file_atomically(self.path,
                                  json.dumps(doc, ensure_ascii=False, indent=2) + "\n",
                                  mode=PRIVATE_FILE_MODE)
        except OSError as exc:
            raise InputError(f"Cannot record the install in {self.path}: "
                             f"{exc.strerror or exc}.", code="STATE_NOT_WRITABLE",
                             hint=f"The skill files were written. Make {self.path.parent} "
                                  "a writable directory (or point $BASEDB_STATE_DIR at one) "
                                  "so that later installs know these directories are "
                                  "basedb's.") from exc


# ------------------------------------------------------------------------ planning


@frozen_dataclass
class PlannedInstall:
    target: str
    root: Path
    name: str
    path: Path
    replaces: bool  # an existing directory will be replaced
    notices: tuple[str, ...] = ()


def plan_install(records: InstallRecords, *, target: str, root: Path, name: str,
                 owner: SkillOwner, force: bool, replace_own: bool) -> PlannedInstall:
    """Where the skill called `name` goes under `root`, or ConflictError saying why it
    cannot go there without --force. `replace_own`: an existing directory recorded for
    `owner` may be overwritten without --force."""
    notices: list[str] = []
    own = records.owned_in(root, owner) if owner.kind == "site" else None
    if own is not None:
        # One skill per site per root: a renamed site keeps its installed directory.
        path = Path(own["path"])
        if path.name != name:
            notices.append(f"Kept the installed name {path.name} for this site (its title "
                           f"now gives {name}).")
        name = path.name
    else:
        path = root / name
        occupant = records.at(path)
        if owner.kind == "site" and path.exists() and occupant is not None \
                and not owner.owns(occupant):
            name = suffixed_name(name, owner.app_token or "")
            notices.append(f"{path} holds the skill of another site "
                           f"({occupant.get('appToken') or 'unknown'}); this site's skill is "
                           f"installed as {name}.")
            path = root / name
    exists = path.exists() or path.is_symlink()
    if exists:
        record = records.at(path)
        recorded = record is not None and owner.owns(record)
        if not force:
            if not recorded:
                raise ConflictError(
                    f"{path} already exists and basedb has no record of installing this "
                    "skill there.", code="SKILL_DIR_EXISTS",
                    hint="Check what the directory holds; to replace it, run the command "
                         "again with --force.")
            if not replace_own:
                raise ConflictError(
                    f"{path} already holds this skill; a project install does not replace "
                    "an existing directory on its own.", code="SKILL_DIR_EXISTS",
                    hint="Check the directory, then run again with --force to reinstall it "
                         "(or install with --site, which updates its own install).")
        notices.append(f"Replaced {path}.")
    if not root.is_dir() and root.exists():
        raise InputError(f"The skills root {root} is not a directory.",
                         code="SKILL_ROOT_INVALID", hint="Pass --dir with a directory path.")
    return PlannedInstall(target=target, root=root, name=name, path=path, replaces=exists,
                          notices=tuple(notices))


# ------------------------------------------------------------------------- writing


def write_skill_dir(path: Path, files: Mapping[str, str]) -> None:
    """Write `files` (relative POSIX path -> UTF-8 text) as the directory `path`,
    replacing what was there in one rename, so the skill is never half written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".basedb-{path.name}-", dir=path.parent))
    old: Path | None = None
    try:
        for relative, text in sorted(files.items()):
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
        staging.chmod(0o755)
        if path.exists() or path.is_symlink():
            old = path.parent / f".basedb-old-{path.name}-{os.getpid()}"
            _remove(old)
            os.replace(path, old)
        try:
            os.replace(staging, path)
        except OSError:
            if old is not None:
                os.replace(old, path)  # put the previous skill back
                old = None
            raise
    finally:
        _remove(staging)
        if old is not None:
            _remove(old)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        with contextlib.suppress(OSError):
            path.unlink()
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)


def install_record(planned: PlannedInstall, owner: SkillOwner, *,
                   deployment_id: str | None = None, version: str | None = None
                   ) -> dict[str, Any]:
    record: dict[str, Any] = {
        "name": planned.name, "path": str(planned.path), "kind": owner.kind,
        "appToken": owner.app_token, "endpoint": owner.endpoint,
        "deploymentId": deployment_id,
        "installedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "target": planned.target}
    if version is not None:
        record["version"] = version
    return record


@frozen_dataclass
class InstalledSkill:
    """One skill directory written: the agent target, the skill's name, its path."""

    target: str
    name: str
    path: str

    def to_dict(self) -> dict[str, str]:
        return {"target": self.target, "name": self.name, "path": self.path}


@frozen_dataclass
class Installed:
    """What an install wrote, what to read, and what the user should know."""

    skills: tuple[InstalledSkill, ...]
    notices: tuple[str, ...]

    @property
    def skill_command(self) -> str:
        """The command that shows the installed SKILL.md."""
        return "cat " + shlex.quote(f"{self.skills[0].path}/SKILL.md")

    def to_dict(self) -> dict[str, Any]:
        return {"installed": [s.to_dict() for s in self.skills],
                "skillCommand": self.skill_command, "notices": list(self.notices)}


def install_everywhere(plans: Sequence[PlannedInstall],
                       files_for: Callable[[PlannedInstall], Mapping[str, str]],
                       records: InstallRecords,
                       record_for: Callable[[PlannedInstall], dict[str, Any]],
                       ) -> Installed:
    """Write every planned skill and record each. Callers plan every target first, so
    a conflict in one target never leaves another half done; the summaries are saved
    even when a later write fails, so what was installed stays known."""
    installed: list[InstalledSkill] = []
    try:
        for planned in plans:
            try:
                write_skill_dir(planned.path, files_for(planned))
            except OSError as exc:
                raise InputError(f"Could not write the skill to {planned.path}: "
                                 f"{exc.strerror or exc}.", code="SKILL_WRITE_FAILED",
                                 hint="Check that the directory is writable, or pass --dir "
                                      "with another skills root.") from None
            records.put(record_for(planned))
            installed.append(InstalledSkill(planned.target, planned.name, str(planned.path)))
    finally:
        if installed:
            records.save()
    notices = [*records.notices, *(n for planned in plans for n in planned.notices)]
    return Installed(tuple(installed), tuple(notices))
