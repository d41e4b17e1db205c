"""The input files of a deployment, and the fingerprint that identifies them.

What a deployment ships
-----------------------
An allowlist, so that nothing unexpected (local state, caches, a project nested in the
folder) leaves the machine:

- at the top of the workspace, only `base-database.jsonc` (required), `catalog.json`,
  `agent-tools.json` and `README.md`;
- everything below `database-functions/`, `mutations/`, `faas/`, `ai/` (the kind
  directories of `basedb.workspace.model.KIND_DIRS`) and `src/`,

except, at any depth:

- the directories `.git`, `.hg`, `.svn`, `node_modules`, `__pycache__` and
  `.base-database-cli`;
- OS junk: `.DS_Store`, `Icon\\r`, `Thumbs.db`, `desktop.ini`, AppleDouble files (`._*`);
- editor leftovers: vim swap files (`*.swp`, `*.swo`, `.<name>.swa`…`.swp`), backups
  ending in `~`, emacs lock and autosave files (`.#*`, `#*#`);
- compiled Python (`*.pyc`, `*.pyo`);
- environment files `.env` and `.env.*`: they usually hold secrets, and a site's files
  are uploaded to the platform and served from it.

Refused with an InputError that names the path:

- a symlink that is dangling, part of a loop, or points outside the workspace or into
  `.git/` or `.base-database-cli/`. A symlink within the workspace is followed and ships
  as the file (or directory) it points to, at the link's own path;
- FIFOs, sockets, devices, and files that cannot be read;
- names that `basedb pull` could not restore safely on every system: backslashes,
  colons, control characters, bytes that are not UTF-8 (see `path_problem`), and paths
  that differ only in letter case or Unicode normalization (`collision_key`);
- more than MAX_INPUT_FILES files, or more than MAX_INPUT_BYTES in total.

Fingerprint
-----------
`fingerprint(inputs)` identifies exactly these paths and contents; its definition, and
the path rules above, belong to the site.zip format (`basedb.core.site_zip.manifest`).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections import Counter
from pathlib import Path

from basedb.core.errors import InputError, WorkspaceNotFound
from basedb.core.site_zip.manifest import (
    MAX_INPUT_BYTES,
    MAX_INPUT_FILES,
    InputFile,
    collision_key,
    path_problem,
)
from basedb.workspace import files
from basedb.workspace.config import CONFIG_FILE
from basedb.workspace.model import IGNORED_DIRS, KIND_DIRS

ROOT_FILES: tuple[str, ...] = (CONFIG_FILE, "catalog.json", "agent-tools.json", "README.md")
ROOT_DIRS: tuple[str, ...] = (*sorted(KIND_DIRS.values()), "src")

EXCLUDED_DIRS = IGNORED_DIRS
_JUNK_NAMES = frozenset({".DS_Store", "Icon\r", "Thumbs.db", "desktop.ini", ".env"})
_JUNK_RE = re.compile(
    r"""^(?:
        \._.*                  # AppleDouble resource forks
      | \..+\.sw[a-p]          # vim swap files of hidden-named buffers
      | .*\.sw[po]             # vim swap files
      | .*~                    # editor backups
      | \.\#.*                 # emacs lock files (often dangling symlinks)
      | \#.*\#                 # emacs autosave files
      | .*\.py[co]             # compiled Python
      | \.env\..*              # .env.local, .env.production, …
    )\Z""",
    re.VERBOSE | re.DOTALL,
)
# Directories a symlink must never lead into, even from inside the workspace.
_PRIVATE_ROOT_DIRS = (".git", ".base-database-cli")
# Stop walking well past the limit so the message can say how far over it is, without
# letting a runaway tree (or a fan of directory symlinks) take forever.
_COUNT_STOP = 10 * MAX_INPUT_FILES
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows would translate line ends without it
_CHUNK = 1024 * 1024  # the most a read of a file that grew asks for at once



def is_excluded_name(name: str) -> bool:
    """True for a file or directory name that never ships (see the module docstring)."""
    return name in EXCLUDED_DIRS or name in _JUNK_NAMES or _JUNK_RE.match(name) is not None


# ----------------------------------------------------------------------------- collect


def collect_inputs(ws_root: Path) -> list[InputFile]:
    """Every input file of the workspace at `ws_root`, sorted by path."""
    root = _resolve_root(ws_root)
    found = _listed(root)

    inputs: list[InputFile] = []
    budget = MAX_INPUT_BYTES
    for rel, source, size in found:
        data = _read(rel, source, budget, size)
        budget -= len(data)
        inputs.append(InputFile.of(rel, data))
    if budget < 0:  # files grew between listing and reading
        _check_limits([(item.path, item.size) for item in inputs])
    return inputs


def check_inputs(ws_root: Path) -> None:
    """Raise what `collect_inputs` would about the workspace's files as a whole (names,
    count, total size, symlinks, collisions), without reading them: `basedb check` runs
    the rules a deploy runs, so that what passes check can be deployed."""
    _listed(_resolve_root(ws_root))


def _listed(root: Path) -> list[tuple[str, str, int]]:
    """The input files as (relative path, real source, size), sorted, within the limits."""
    walk = _Walk(root)
    for name in ROOT_FILES:
        walk.visit_root(name, want_dir=False)
    for name in ROOT_DIRS:
        walk.visit_root(name, want_dir=True)
    if not any(rel == CONFIG_FILE for rel, _, _ in walk.found):
        raise WorkspaceNotFound(str(root))
    found = sorted(walk.found)
    _check_limits([(rel, size) for rel, _, size in found])
    _check_collisions([rel for rel, _, _ in found])
    return found


def _resolve_root(ws_root: Path) -> Path:
    try:
        root = ws_root.resolve(strict=True)
    except (OSError, RuntimeError):
        raise WorkspaceNotFound(str(ws_root)) from None
    if not root.is_dir():
        raise WorkspaceNotFound(str(ws_root))
    return root


class _Walk:
    """Depth-first listing of input files: (relative path, real source, size). Paths are
    plain strings (a workspace has thousands of files, and `pathlib` would make an object
    of each); a directory is listed once, with the type of each entry it reports."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.private = tuple(root / name for name in _PRIVATE_ROOT_DIRS)
        self.found: list[tuple[str, str, int]] = []

    def visit_root(self, name: str, *, want_dir: bool) -> None:
        path = self.root / name
        if not os.path.lexists(path):
            return
        try:
            real, st = self._target(name, path)
        except FileNotFoundError:  # removed while we were looking
            return
        if want_dir and not stat.S_ISDIR(st.st_mode):
            raise InputError(f"{name} is not a directory.", code="INPUT_INVALID",
                             hint=f"{name}/ holds workspace files; rename or remove the "
                                  f"file called {name}.", detail={"path": name})
        if not want_dir and stat.S_ISDIR(st.st_mode):
            raise InputError(f"{name} is a directory, not a file.", code="INPUT_INVALID",
                             hint=f"Replace the directory {name} with the file.",
                             detail={"path": name})
        self._visit(name, real, st, ancestors=frozenset({str(self.root)}))

    def _visit(self, rel: str, real: str, st: os.stat_result,
               ancestors: frozenset[str]) -> None:
        if stat.S_ISDIR(st.st_mode):
            self._enter(rel, real, ancestors)
        elif stat.S_ISREG(st.st_mode):
            self.found.append((rel, real, st.st_size))
            if len(self.found) > _COUNT_STOP:
                _check_limits([(r, size) for r, _, size in self.found], stopped=True)
        else:
            raise InputError(
                f"{rel} is a FIFO, socket or device, not a regular file.",
                code="INPUT_INVALID",
                hint=f"Remove {rel} from the workspace; only regular files can be deployed.",
                detail={"path": rel},
            )

    def _enter(self, rel: str, real: str, ancestors: frozenset[str], *,
               listed: bool = False) -> None:
        """Walk the directory `rel` (at `real`). A directory `listed` as one, and not
        looked at since, is looked at only if it has gone or changed before it is read."""
        if real in ancestors:
            raise _loop_error(rel)
        try:
            with os.scandir(real) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            if listed and isinstance(exc, FileNotFoundError | NotADirectoryError):
                self._look_again(rel, real, ancestors)  # it went or changed since
                return
            raise _read_error(rel, exc) from None
        self._walk_entries(rel, entries, ancestors | {real})

    def _look_again(self, rel: str, real: str, ancestors: frozenset[str]) -> None:
        """What a directory listed as one is now: nothing (skipped, as an entry removed
        while its directory is listed), or whatever took its place."""
        try:
            st = os.lstat(real)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise _read_error(rel, exc) from None
        self._visit(rel, real, st, ancestors)

    def _walk_entries(self, rel: str, entries: list[os.DirEntry[str]],
                      ancestors: frozenset[str]) -> None:
        for entry in entries:
            name = entry.name
            if is_excluded_name(name):
                continue
            child = f"{rel}/{name}"
            problem = path_problem(child)
            if problem is not None:
                # The name as its bytes, each one that is not UTF-8 shown once as \xNN
                # (a repr() would double the backslash).
                shown = os.fsencode(child).decode("utf-8", "backslashreplace")
                raise InputError(f'"{shown}" {problem}; it could not be restored by '
                                 "`basedb pull` on every system.", code="INPUT_INVALID",
                                 hint="Rename the file or directory.",
                                 detail={"path": shown})
            try:
                if entry.is_symlink():
                    child_real, st = self._target(child, Path(entry.path))
                elif entry.is_dir(follow_symlinks=False):
                    # A directory is only entered: the type the listing gives is all it
                    # needs (a stat of each would be thousands of system calls).
                    child_real, st = entry.path, None
                else:
                    child_real, st = entry.path, entry.stat(follow_symlinks=False)
            except FileNotFoundError:  # removed while we were listing
                continue
            except OSError as exc:
                raise _read_error(child, exc) from None
            if st is None:
                self._enter(child, child_real, ancestors, listed=True)
            else:
                self._visit(child, child_real, st, ancestors)

    def _target(self, rel: str, path: Path) -> tuple[str, os.stat_result]:
        """The real path and stat of `path`, following a symlink only within the root."""
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise _read_error(rel, exc) from None
        if not stat.S_ISLNK(st.st_mode):
            return str(path), st
        link = os.readlink(path)
        try:
            real = path.resolve(strict=True)
        except FileNotFoundError:
            raise InputError(f"{rel} is a symlink to {link}, which does not exist.",
                             code="INPUT_SYMLINK", hint=f"Fix or remove the symlink {rel}.",
                             detail={"path": rel}) from None
        except RuntimeError:  # Python before 3.13 reports loops this way
            raise _loop_error(rel) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _loop_error(rel) from None
            raise _read_error(rel, exc) from None
        if not real.is_relative_to(self.root):
            raise InputError(
                f"{rel} is a symlink to {link}, outside the workspace.",
                code="INPUT_SYMLINK",
                hint=f"Copy the file into the workspace in place of the symlink {rel}; "
                     "a deployment only ships files from inside the workspace.",
                detail={"path": rel},
            )
        if any(real == p or real.is_relative_to(p) for p in self.private):
            raise InputError(
                f"{rel} is a symlink into {real.relative_to(self.root).as_posix()}, "
                "which holds version control or local state and is never deployed.",
                code="INPUT_SYMLINK", hint=f"Remove the symlink {rel}.", detail={"path": rel},
            )
        try:
            return str(real), os.stat(real)
        except OSError as exc:
            raise _read_error(rel, exc) from None


def _loop_error(rel: str) -> InputError:
    return InputError(f"{rel} is a symlink loop (it leads back to itself).",
                      code="INPUT_SYMLINK", hint=f"Remove or fix the symlink {rel}.",
                      detail={"path": rel})


def _read_error(rel: str, exc: OSError) -> InputError:
    problem = files.os_problem(exc, rel)
    return InputError(problem.message, code="INPUT_UNREADABLE", hint=problem.fix,
                      detail={"path": rel})


def _read(rel: str, source: str, budget: int, listed_size: int) -> bytes:
    # Read at most one byte past the budget: enough to know the limit is broken. Asking
    # for the size listed (plus one byte, to see growth) rather than the whole budget
    # spares allocating a budget-sized buffer for every small file. A plain descriptor,
    # not a buffered file object: a workspace has thousands of small files, and the
    # object's own set-up (a stat, a terminal check, a seek) cost more than the read.
    limit = max(budget, 0) + 1
    try:
        handle = os.open(source, os.O_RDONLY | _O_BINARY)
        try:
            data = _read_up_to(handle, min(listed_size + 1, limit))
            if listed_size < len(data) < limit:  # it grew since it was listed
                data += _read_up_to(handle, limit - len(data))
            return data
        finally:
            os.close(handle)
    except OSError as exc:
        raise _read_error(rel, exc) from None


def _read_up_to(handle: int, size: int) -> bytes:
    """`size` bytes from the descriptor, or fewer at its end."""
    data = os.read(handle, size)
    if len(data) in (0, size):
        return data
    chunks = [data]
    size -= len(data)
    while size > 0:
        chunk = os.read(handle, min(size, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _check_collisions(paths: list[str]) -> None:
    seen: dict[str, str] = {}
    for path in paths:
        other = seen.setdefault(collision_key(path), path)
        if other != path:
            raise InputError(
                f"{other} and {path} differ only in letter case or Unicode form; pulled "
                "onto macOS or Windows, one would overwrite the other.",
                code="INPUT_INVALID", hint="Rename one of them.", detail={"path": path})


def _check_limits(sized: list[tuple[str, int]], *, stopped: bool = False) -> None:
    count = len(sized)
    if count > MAX_INPUT_FILES:
        by_dir = Counter(rel.rpartition("/")[0] or "." for rel, _ in sized)
        busiest = ", ".join(f"{d}/ ({n:,})" for d, n in by_dir.most_common(3))
        counted = f"more than {count - 1:,}" if stopped else f"{count:,}"
        raise InputError(
            f"The workspace has {counted} input files; at most {MAX_INPUT_FILES:,} can be "
            "deployed.",
            code="INPUT_TOO_MANY_FILES",
            hint=f"The most files are in {busiest}. Remove what the site does not need "
                 "(build output, downloaded dependencies, bulk assets) or move it out of "
                 "the workspace.",
            detail={"files": count, "limit": MAX_INPUT_FILES},
        )
    total = sum(size for _, size in sized)
    if total > MAX_INPUT_BYTES:
        largest = sorted(sized, key=lambda item: (-item[1], item[0]))[:3]
        named = ", ".join(f"{rel} ({files.human_size(size)})" for rel, size in largest)
        raise InputError(
            f"The workspace's input files total {files.human_size(total)}; at most "
            f"{files.human_size(MAX_INPUT_BYTES)} can be deployed.",
            code="INPUT_TOO_LARGE",
            hint=f"The largest are {named}. Host large media elsewhere and link to it, "
                 "or remove files the site does not need.",
            detail={"bytes": total, "limit": MAX_INPUT_BYTES},
        )
