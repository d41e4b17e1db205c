"""Restoring a site.zip into a workspace without trusting it.

`safe_extract` is the restore half of `basedb pull`. The archive is read and verified
whole by `basedb.core.site_zip.read_site_zip` before the first byte is written, so a
refused archive changes nothing on disk. Directories are created as files need them;
directory entries are checked but otherwise ignored.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from basedb.core.atomic import write_file_atomically
from basedb.core.errors import ConflictError, InputError
from basedb.core.frozen import frozen_dataclass
from basedb.core.site_zip import (
    FILE_MODE,
    FORBIDDEN_SEGMENTS,
    read_site_zip,
    reject_entry,
)
from basedb.core.wording import plural

_LISTED = 20

# ----------------------------------------------------------------------------- extract


@frozen_dataclass
class ExtractReport:
    """What a restore did, by workspace-relative path."""

    target: Path
    fingerprint: str | None
    created: tuple[str, ...]
    overwritten: tuple[str, ...]
    unchanged: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"target": str(self.target), "fingerprint": self.fingerprint,
                "created": list(self.created), "overwritten": list(self.overwritten),
                "unchanged": list(self.unchanged)}


def safe_extract(zip_bytes: bytes, target: Path, *, force: bool,
                 expected_fingerprint: str | None = None) -> ExtractReport:
    """Restore the workspace files of a site.zip into `target`.

    Refuses (InputError) archives with unsafe or duplicate names, links, special files,
    too many entries, too much data, bomb-like compression, or contents that do not match
    the manifest; refuses (ConflictError) an archive whose fingerprint is not
    `expected_fingerprint`, and, unless `force`, any existing file that differs from the
    archive's version. Nothing is written unless every check passes.
    """
    archive = read_site_zip(zip_bytes, expected_fingerprint=expected_fingerprint)
    contents = archive.contents
    root = _prepare_target(target)
    created, changed, unchanged = _compare_with_disk(root, contents)
    if changed and not force:
        listed = ", ".join(changed[:_LISTED]) + (
            f" and {len(changed) - _LISTED} more" if len(changed) > _LISTED else "")
        raise ConflictError(
            f"{plural(len(changed), 'local file')} in {root} "
            f"{'differs' if len(changed) == 1 else 'differ'} from the archive and would be "
            f"overwritten: {listed}.",
            code="PULL_LOCAL_CHANGES",
            hint="Commit or move these files first, or pass --force to overwrite them.",
            detail={"files": changed},
        )
    for path in sorted(created + changed):
        _write(root, path, contents[path])
    return ExtractReport(target=root, fingerprint=archive.fingerprint,
                         created=tuple(created), overwritten=tuple(changed),
                         unchanged=tuple(unchanged))


# ------------------------------------------------------------------------ local files


def _prepare_target(target: Path) -> Path:
    try:
        root = target.resolve()
    except (OSError, RuntimeError) as exc:
        raise InputError(f"Cannot use {target} as the restore target: {exc}.",
                         code="PULL_TARGET_INVALID", hint="Pass another directory.") from None
    if root.exists() and not root.is_dir():
        raise InputError(f"{target} exists and is not a directory.", code="PULL_TARGET_INVALID",
                         hint="Pass a directory to restore into.")
    return root


def _compare_with_disk(root: Path, contents: Mapping[str, bytes],
                       ) -> tuple[list[str], list[str], list[str]]:
    """Split archive files into (created, changed, unchanged) against what is on disk."""
    created: list[str] = []
    changed: list[str] = []
    unchanged: list[str] = []
    private = [root / name for name in FORBIDDEN_SEGMENTS]
    for path in sorted(contents):
        dest = root / path
        _check_parents(root, path)
        try:
            resolved = dest.resolve()
        except (OSError, RuntimeError):
            reject_entry(path, "leads through a symlink loop in the target directory",
                         code="ARTIFACT_UNSAFE_PATH")
        if not resolved.is_relative_to(root) or any(
                resolved == p or resolved.is_relative_to(p) for p in private):
            reject_entry(path, f"would be written to {resolved} through a symlink in the "
                               "target directory", code="ARTIFACT_UNSAFE_PATH")
        if not os.path.lexists(dest):
            created.append(path)
            continue
        if dest.is_dir():
            raise ConflictError(f"{dest} is a directory, where the archive has a file.",
                                code="PULL_PATH_BLOCKED",
                                hint="Move the directory away and pull again; --force never "
                                     "replaces directories.", detail={"file": path})
        try:
            same = dest.read_bytes() == contents[path]
        except OSError:
            same = False  # unreadable: treat as a local change that --force may replace
        (unchanged if same else changed).append(path)
    return created, changed, unchanged


def _check_parents(root: Path, path: str) -> None:
    segments = path.split("/")
    for depth in range(1, len(segments)):
        parent = root.joinpath(*segments[:depth])
        if os.path.lexists(parent) and not parent.is_dir():
            raise ConflictError(
                f"{parent} is a file, where the archive needs a directory for {path}.",
                code="PULL_PATH_BLOCKED",
                hint="Move the file away and pull again; --force never replaces a file "
                     "with a directory.", detail={"file": path})


def _write(root: Path, path: str, data: bytes) -> None:
    dest = root / path
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        # The directory was checked before anything was written; check again in case it
        # was swapped for a symlink since.
        if not dest.parent.resolve().is_relative_to(root):
            reject_entry(path, "would be written outside the target through a symlink",
                         code="ARTIFACT_UNSAFE_PATH")
        try:
            mode = stat.S_IMODE(os.stat(dest).st_mode) if dest.is_file() else FILE_MODE
        except OSError:
            mode = FILE_MODE
        write_file_atomically(dest, data, mode=mode)
    except OSError as exc:
        raise InputError(f"Cannot write {dest}: {exc.strerror or exc}.",
                         code="PULL_WRITE_FAILED",
                         hint="Make the directory writable and pull again; files already "
                              "restored are complete and will show as unchanged.",
                         detail={"file": path}) from None
