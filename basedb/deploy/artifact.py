"""site.zip: built byte-for-byte reproducibly, and restored without trusting it.

Layout: the workspace inputs at their workspace-relative POSIX paths, plus
`.basedb/manifest.json` = {"fingerprint", "files": [{"path", "sha256", "size"}]}.

`build_site_zip` makes the same bytes from the same inputs on every run and machine
(given the same zlib): the manifest first, then files sorted by path, every entry dated
1980-01-01 00:00:00, marked as a Unix 0644 regular file, deflated at level 6, with no
directory entries, comments or extra fields.

`safe_extract` is the restore half of `basedb pull`. An archive may come from anywhere,
so every entry is checked, and every file read and verified, before the first byte is
written: a refused archive changes nothing on disk. Directories are created as files
need them; directory entries are checked but otherwise ignored.
"""

from __future__ import annotations

import binascii
import hashlib
import io
import json
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from basedb.atomic import write_file_atomically
from basedb.deploy.manifest import (
    FINGERPRINT_RE,
    MAX_INPUT_BYTES,
    MAX_INPUT_FILES,
    InputFile,
    collision_key,
    fingerprint_hex,
    fingerprint_of_files,
    manifest_files,
    path_problem,
)
from basedb.errors import ConflictError, InputError, InternalError
from basedb.workspace.files import MIB

MANIFEST_PATH = ".basedb/manifest.json"
ZIP_DATE_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o644
COMPRESS_LEVEL = 6

# A workspace at the input-file limit, plus its manifest.
MAX_ARCHIVE_ENTRIES = MAX_INPUT_FILES + 1
MAX_ARCHIVE_BYTES = MAX_INPUT_BYTES  # uncompressed, over all entries
MAX_ZIP_SIZE = MAX_INPUT_BYTES + 16 * MIB  # compressed, with room for headers
MAX_MANIFEST_BYTES = 8 * MIB
# Deflate tops out near 1032:1, reached by long runs of one byte, which is what bombs are
# made of; real sources stay far below (repetitive generated JSON reaches about 300:1).
MAX_COMPRESSION_RATIO = 500
RATIO_CHECK_FROM = 1 * MIB

# Never written by a restore, at any depth: version control (hooks run code) and
# basedb's own local state.
_FORBIDDEN_SEGMENTS = frozenset({".git", ".hg", ".svn", ".base-database-cli"})
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_UNIX = 3
_LISTED = 20


# ------------------------------------------------------------------------------- build


def build_site_zip(inputs: Iterable[InputFile], fingerprint: str) -> bytes:
    """The deterministic site.zip of `inputs`, whose fingerprint must be `fingerprint`."""
    ordered = sorted(inputs, key=lambda item: item.path)
    entries = manifest_files(ordered)
    if fingerprint_of_files(entries) != fingerprint:
        raise InternalError("The fingerprint does not match the files being packaged.",
                            code="FINGERPRINT_MISMATCH",
                            detail={"fingerprint": fingerprint})
    for item in ordered:
        problem = path_problem(item.path)
        if problem is None and _top(item.path) == ".basedb":
            problem = "is reserved for the artifact's manifest"
        if problem is not None:
            raise InternalError(f"The input path {item.path!r} {problem}.",
                                code="INPUT_INVALID")
    manifest = {"fingerprint": fingerprint, "files": entries}
    manifest_bytes = (json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True)
                      + "\n").encode("utf-8")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        _add_entry(archive, MANIFEST_PATH, manifest_bytes)
        for item in ordered:
            _add_entry(archive, item.path, item.data)
        # Refuse here what `safe_extract` would refuse, so every deployment can be pulled.
        for info in archive.infolist():
            if _bomb_like(info):
                raise InputError(
                    f"{info.filename} compresses {_ratio(info)}:1, which `basedb pull` "
                    "refuses as a likely zip bomb.", code="INPUT_TOO_COMPRESSIBLE",
                    hint=f"Remove {info.filename} or produce its contents at run time.",
                )
    return buffer.getvalue()


def _add_entry(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE_TIME)
    info.create_system = _UNIX
    info.external_attr = (stat.S_IFREG | FILE_MODE) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data, compresslevel=COMPRESS_LEVEL)


def _bomb_like(info: zipfile.ZipInfo) -> bool:
    return (info.file_size > RATIO_CHECK_FROM
            and info.file_size > MAX_COMPRESSION_RATIO * max(info.compress_size, 1))


def _ratio(info: zipfile.ZipInfo) -> int:
    return info.file_size // max(info.compress_size, 1)


def _top(path: str) -> str:
    return path.split("/", 1)[0]


# ---------------------------------------------------------------------------- manifest


def read_manifest(zip_bytes: bytes) -> dict[str, Any]:
    """The archive's manifest {"fingerprint", "files"}, after checking its shape and that
    the fingerprint matches the file list. InputError when it is absent or malformed."""
    with _open_zip(zip_bytes) as archive:
        manifest = _manifest_of(archive)
    if manifest is None:
        raise InputError(f"The archive has no {MANIFEST_PATH}.", code="ARTIFACT_INVALID",
                         hint="Use a site.zip built by `basedb deploy`.")
    return manifest


def _manifest_of(archive: zipfile.ZipFile) -> dict[str, Any] | None:
    infos = [info for info in archive.infolist() if info.filename == MANIFEST_PATH]
    if not infos:
        return None
    if len(infos) > 1:
        _reject(MANIFEST_PATH, "appears more than once")
    if infos[0].file_size > MAX_MANIFEST_BYTES:
        _reject(MANIFEST_PATH, f"is larger than {MAX_MANIFEST_BYTES // MIB} MB")
    data = _read_member(archive, infos[0])
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        _reject(MANIFEST_PATH, "is not valid UTF-8 JSON")
    return _checked_manifest(doc)


def _checked_manifest(doc: Any) -> dict[str, Any]:
    if not isinstance(doc, dict):
        _reject(MANIFEST_PATH, "is not a JSON object")
    fingerprint = doc.get("fingerprint")
    if not isinstance(fingerprint, str) or not FINGERPRINT_RE.match(fingerprint):
        _reject(MANIFEST_PATH, 'has no valid "fingerprint"')
    listed = doc.get("files")
    if not isinstance(listed, list):
        _reject(MANIFEST_PATH, 'has no "files" list')
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, item in enumerate(listed):
        where = f"files[{index}]"
        if not isinstance(item, dict):
            _reject(MANIFEST_PATH, f"{where} is not an object")
        path, digest, size = item.get("path"), item.get("sha256"), item.get("size")
        if not isinstance(path, str) or path_problem(path) is not None:
            _reject(MANIFEST_PATH, f"{where}.path is not a safe relative path")
        if path in seen:
            _reject(MANIFEST_PATH, f"lists {path} twice")
        if not isinstance(digest, str) or not _SHA256_RE.match(digest):
            _reject(MANIFEST_PATH, f"{where}.sha256 is not a SHA-256 hex digest")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            _reject(MANIFEST_PATH, f"{where}.size is not a non-negative integer")
        seen.add(path)
        entries.append({"path": path, "sha256": digest, "size": size})
    entries.sort(key=lambda entry: entry["path"])
    if fingerprint_of_files(entries) != fingerprint:
        _reject(MANIFEST_PATH, "has a fingerprint that does not match its file list")
    return {"fingerprint": fingerprint, "files": entries}


# ----------------------------------------------------------------------------- extract


@dataclass(frozen=True, slots=True)
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
    if expected_fingerprint is not None:
        fingerprint_hex(expected_fingerprint)
    with _open_zip(zip_bytes) as archive:
        members = _checked_members(archive)
        manifest = _manifest_of(archive)
        _check_expected(manifest, expected_fingerprint)
        contents = {info.filename: _read_member(archive, info) for info in members}
    if manifest is not None:
        _verify_against_manifest(contents, manifest)

    root = _prepare_target(target)
    created, changed, unchanged = _compare_with_disk(root, contents)
    if changed and not force:
        listed = ", ".join(changed[:_LISTED]) + (
            f" and {len(changed) - _LISTED} more" if len(changed) > _LISTED else "")
        raise ConflictError(
            f"{len(changed)} local file(s) in {root} differ from the archive and would be "
            f"overwritten: {listed}.",
            code="PULL_LOCAL_CHANGES",
            hint="Commit or move these files first, or pass --force to overwrite them.",
            detail={"files": changed},
        )
    for path in sorted(created + changed):
        _write(root, path, contents[path])
    return ExtractReport(target=root, fingerprint=manifest["fingerprint"] if manifest else None,
                         created=tuple(created), overwritten=tuple(changed),
                         unchanged=tuple(unchanged))


def _open_zip(zip_bytes: bytes) -> zipfile.ZipFile:
    if len(zip_bytes) > MAX_ZIP_SIZE:
        raise InputError(f"The archive is {len(zip_bytes) // MIB} MB; at most "
                         f"{MAX_ZIP_SIZE // MIB} MB is accepted.", code="ARTIFACT_TOO_LARGE",
                         hint="Restore from a site.zip built by `basedb deploy`.")
    try:
        return zipfile.ZipFile(io.BytesIO(zip_bytes))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
        raise InputError(f"The archive is not a readable zip file ({exc}).",
                         code="ARTIFACT_INVALID",
                         hint="Download the artifact again; it may be truncated.") from None


def _reject(name: str, problem: str, *, code: str = "ARTIFACT_INVALID") -> NoReturn:
    raise InputError(f"The archive entry {name!r} {problem}.", code=code,
                     hint="Nothing was written. Restore only from a site.zip built by "
                          "`basedb deploy`.",
                     detail={"entry": name})


def _checked_members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The regular-file entries to restore, after checking every entry of the archive."""
    infos = archive.infolist()
    if len(infos) > MAX_ARCHIVE_ENTRIES:
        raise InputError(f"The archive has {len(infos):,} entries; at most "
                         f"{MAX_ARCHIVE_ENTRIES:,} are accepted.", code="ARTIFACT_TOO_LARGE",
                         hint="Nothing was written. A site has at most "
                              f"{MAX_INPUT_FILES:,} files.")
    members: list[zipfile.ZipInfo] = []
    seen: dict[str, str] = {}
    total = 0
    for info in infos:
        name = info.filename
        is_dir = name.endswith("/")
        path = _checked_name(info, is_dir)
        folded = collision_key(path)
        if folded in seen:
            same = seen[folded] == path
            _reject(name, "appears more than once" if same else
                    f"differs from {seen[folded]!r} only in case or Unicode form, so the "
                    "two would overwrite each other on some systems")
        seen[folded] = path
        _check_type(info, is_dir)
        if is_dir or name == MANIFEST_PATH:
            continue
        total += info.file_size
        if total > MAX_ARCHIVE_BYTES:
            raise InputError(f"The archive unpacks to more than {MAX_ARCHIVE_BYTES // MIB} "
                             f"MB (reached at {name!r}).", code="ARTIFACT_TOO_LARGE",
                             hint="Nothing was written. A site has at most "
                                  f"{MAX_INPUT_BYTES // MIB} MB of files.",
                             detail={"entry": name})
        if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
            _reject(name, "is stored uncompressed but its two sizes differ")
        if _bomb_like(info):
            _reject(name, f"expands from {info.compress_size:,} to {info.file_size:,} bytes "
                          f"({_ratio(info)}:1), a ratio only a zip bomb reaches",
                    code="ARTIFACT_TOO_LARGE")
        members.append(info)
    _check_file_dir_clashes(seen.values(), {info.filename for info in members})
    return members


def _checked_name(info: zipfile.ZipInfo, is_dir: bool) -> str:
    name = info.filename
    if info.orig_filename != name:  # zipfile cut the name at a NUL byte
        _reject(info.orig_filename, "contains a NUL byte", code="ARTIFACT_UNSAFE_PATH")
    path = name[:-1] if is_dir else name
    if len(path) >= 2 and path[1] == ":" and path[0].isalpha():
        _reject(name, "starts with a drive letter", code="ARTIFACT_UNSAFE_PATH")
    problem = path_problem(path)
    if problem is not None:
        _reject(name, problem, code="ARTIFACT_UNSAFE_PATH")
    segments = path.split("/")
    forbidden = _FORBIDDEN_SEGMENTS.intersection(segments)
    if forbidden:
        _reject(name, f"would write into {sorted(forbidden)[0]}/, which a restore never "
                      "touches", code="ARTIFACT_UNSAFE_PATH")
    if segments[0] == ".basedb" and path != MANIFEST_PATH:
        _reject(name, "is under .basedb/, which holds only the manifest",
                code="ARTIFACT_UNSAFE_PATH")
    return path


def _check_type(info: zipfile.ZipInfo, is_dir: bool) -> None:
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        _reject(info.filename, "is a symbolic link", code="ARTIFACT_UNSAFE_PATH")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        _reject(info.filename, "is a device, FIFO or other special file",
                code="ARTIFACT_UNSAFE_PATH")
    if kind == stat.S_IFDIR and not is_dir:
        _reject(info.filename, "is marked as a directory but named like a file",
                code="ARTIFACT_UNSAFE_PATH")
    if info.flag_bits & 0x1:
        _reject(info.filename, "is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        _reject(info.filename, f"uses compression method {info.compress_type}; only stored "
                               "and deflated entries are accepted")


def _check_file_dir_clashes(paths: Iterable[str], files: set[str]) -> None:
    for path in paths:
        segments = path.split("/")
        for depth in range(1, len(segments)):
            parent = "/".join(segments[:depth])
            if parent in files:
                _reject(path, f"needs {parent!r} to be a directory, but the archive also "
                              "has it as a file")


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    try:
        with archive.open(info) as handle:
            data = handle.read(info.file_size + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError,
            NotImplementedError, binascii.Error) as exc:
        _reject(info.filename, f"is corrupt ({exc})")
    if len(data) != info.file_size:
        _reject(info.filename, f"holds {len(data):,} bytes where its header says "
                               f"{info.file_size:,}")
    return data


def _check_expected(manifest: dict[str, Any] | None, expected: str | None) -> None:
    if expected is None:
        return
    if manifest is None:
        raise ConflictError(f"The archive has no {MANIFEST_PATH}, so it cannot be checked "
                            f"against the expected fingerprint {expected}.",
                            code="ARTIFACT_FINGERPRINT_MISMATCH",
                            hint="Nothing was written. Download the deployment's artifact "
                                 "again.")
    if manifest["fingerprint"] != expected:
        raise ConflictError(f"The archive's fingerprint is {manifest['fingerprint']}, not "
                            f"the expected {expected}.",
                            code="ARTIFACT_FINGERPRINT_MISMATCH",
                            hint="Nothing was written. The artifact belongs to another "
                                 "deployment; download the intended one again.",
                            detail={"expected": expected,
                                    "actual": manifest["fingerprint"]})


def _verify_against_manifest(contents: dict[str, bytes], manifest: dict[str, Any]) -> None:
    listed = {entry["path"]: entry for entry in manifest["files"]}
    for path in sorted(set(contents) - set(listed)):
        _reject(path, f"is not listed in {MANIFEST_PATH}")
    for path in sorted(set(listed) - set(contents)):
        _reject(path, f"is listed in {MANIFEST_PATH} but missing from the archive")
    for path, data in contents.items():
        entry = listed[path]
        if len(data) != entry["size"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
            _reject(path, f"does not match the size and SHA-256 recorded in {MANIFEST_PATH}",
                    code="ARTIFACT_HASH_MISMATCH")


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


def _compare_with_disk(root: Path, contents: dict[str, bytes],
                       ) -> tuple[list[str], list[str], list[str]]:
    """Split archive files into (created, changed, unchanged) against what is on disk."""
    created: list[str] = []
    changed: list[str] = []
    unchanged: list[str] = []
    private = [root / name for name in _FORBIDDEN_SEGMENTS]
    for path in sorted(contents):
        dest = root / path
        _check_parents(root, path)
        try:
            resolved = dest.resolve()
        except (OSError, RuntimeError):
            _reject(path, "leads through a symlink loop in the target directory",
                    code="ARTIFACT_UNSAFE_PATH")
        if not resolved.is_relative_to(root) or any(
                resolved == p or resolved.is_relative_to(p) for p in private):
            _reject(path, f"would be written to {resolved} through a symlink in the target "
                          "directory", code="ARTIFACT_UNSAFE_PATH")
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
            _reject(path, "would be written outside the target through a symlink",
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
