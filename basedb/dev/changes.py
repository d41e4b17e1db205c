"""Which saved files matter to a dev session, and to what.

    changes = classify(root, {"/ws/database-functions/listTasks/main.sql", …})
    changes.functions   # {"listTasks"}: re-check and sync these
    changes.page        # a file under src/ changed: reload the page
    changes.workspace   # base-database.jsonc, catalog.json or agent-tools.json changed

Local state (.base-database-cli/), version control, dependencies and editors' swap and
backup files are ignored, so saving a file produces one batch with what it touched. So
are the temporary files of a save that writes a new file and renames it over the old one
(`sed -i`, many editors): a path created within a batch and gone by its end
(`settled_paths`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from basedb.workspace.catalog import CATALOG_FILE
from basedb.workspace.config import CONFIG_FILE
from basedb.workspace.loader import AGENT_TOOLS_FILE
from basedb.workspace.model import IGNORED_DIRS, KIND_DIRS

PAGE_DIR = "src"
WORKSPACE_FILES = frozenset({CONFIG_FILE, CATALOG_FILE, AGENT_TOOLS_FILE})
_FUNCTION_DIRS = frozenset(KIND_DIRS.values())
_IGNORED_TOP = frozenset({".base-database-cli", ".git", ".hg", ".svn", "node_modules",
                          ".venv", "__pycache__"}) | frozenset(IGNORED_DIRS)
_EDITOR_SUFFIXES = (".swp", ".swx", ".swo", "~", ".tmp", ".part", ".crdownload",
                    ".kate-swp", "___jb_tmp___", "___jb_old___")
# Temporary files named by their writer: sed -i's `sedXXXXXX`, GIO's (gedit, GNOME)
# `.goutputstream-XXXXXX`. Usually gone by the end of their batch (`settled_paths`), but
# a batch can end between the write and the rename.
_TEMPORARY_NAME = re.compile(r"sed[A-Za-z0-9]{6}|\.goutputstream-[A-Za-z0-9]{6}")


@dataclass(slots=True)
class Changes:
    page: bool = False
    functions: set[str] = field(default_factory=set)
    workspace: bool = False
    paths: list[str] = field(default_factory=list)  # relative, POSIX, sorted

    def __bool__(self) -> bool:
        return self.page or bool(self.functions) or self.workspace

    @property
    def needs_sync(self) -> bool:
        return bool(self.functions) or self.workspace


def relevant(root: Path, path: str | Path) -> str | None:
    """`path` relative to `root` (POSIX) when a dev session cares about it, else None."""
    try:
        rel = PurePosixPath(Path(path).resolve().relative_to(root.resolve()).as_posix())
    except (ValueError, OSError):
        return None
    parts = rel.parts
    if not parts or parts[0] in _IGNORED_TOP:
        return None
    name = parts[-1]
    if (name.startswith(".#") or name.endswith(_EDITOR_SUFFIXES) or name == "4913"
            or _TEMPORARY_NAME.fullmatch(name)):
        return None  # Emacs lock files, Vim's swap and write-test files, backups
    if len(parts) == 1:
        return str(rel) if name in WORKSPACE_FILES else None
    if parts[0] == PAGE_DIR or parts[0] in _FUNCTION_DIRS:
        return str(rel)
    return None


def settled_paths(batch: Iterable[tuple[object, str | Path]]) -> list[str | Path]:
    """The paths of a batch of (change, path) events, less those created within it and
    gone by its end: a save's temporary file, written and then renamed over the file
    it replaces. A file that existed before the batch and was deleted stays (its
    deletion is a change); `change` is watchfiles' name for it ("added", "modified",
    "deleted"), or its enum."""
    added: set[str] = set()
    paths: dict[str, str | Path] = {}
    for change, path in batch:
        key = str(path)
        paths.setdefault(key, path)
        if getattr(change, "name", change) == "added":
            added.add(key)
    return [path for key, path in paths.items()
            if key not in added or Path(path).exists()]


def classify(root: Path, paths: Iterable[str | Path]) -> Changes:
    """What the changed `paths` (absolute, or relative to the current directory) touch."""
    changes = Changes()
    seen: set[str] = set()
    for path in paths:
        rel = relevant(root, path)
        if rel is None or rel in seen:
            continue
        seen.add(rel)
        parts = PurePosixPath(rel).parts
        if len(parts) == 1:
            changes.workspace = True
        elif parts[0] == PAGE_DIR:
            changes.page = True
        else:
            changes.functions.add(parts[1])
    changes.paths = sorted(seen)
    return changes
