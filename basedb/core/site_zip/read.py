"""Reading a site.zip without trusting it: the half of site.zip that `basedb pull` and
the platform share.

An archive may come from anywhere (a platform, a download, an upload), so
`read_site_zip` checks every entry, and reads and verifies every file, before it returns
anything:

- it is a zip file within the size limits (entries, uncompressed bytes, compression
  ratio: no zip bombs), with no encrypted, linked, special or oddly compressed entries,
  and nothing before its first entry (no self-extracting or concatenated archives);
- every name is a safe relative path (`basedb.core.site_zip.manifest.path_problem`), outside
  version control and basedb's local state, unique even on case-insensitive systems;
- `.basedb/manifest.json` = {"fingerprint", "files": [{"path", "sha256", "size"}]} is
  well formed, its fingerprint is that of its file list, and the archive holds exactly the
  listed files with the listed sizes and digests.

Every refusal is an InputError (or a ConflictError for an unexpected fingerprint) whose
message names the entry; callers (pull, the platform's upload route) add their own hint.
"""

from __future__ import annotations

import binascii
import hashlib
import io
import json
import re
import stat
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, NoReturn

from basedb.core.errors import ConflictError, InputError
from basedb.core.frozen import frozen_dataclass
from basedb.core.site_zip.manifest import (
    FINGERPRINT_RE,
    MANIFEST_PATH,
    MAX_INPUT_BYTES,
    MAX_INPUT_FILES,
    MIB,
    collision_key,
    fingerprint_hex,
    fingerprint_of_files,
    path_problem,
)

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
FORBIDDEN_SEGMENTS = frozenset({".git", ".hg", ".svn", ".base-database-cli"})
_SHA256_RE = re.compile(r"^[0-9a-f]{64}\Z")
_LOCAL_HEADER = b"PK\x03\x04"  # what a zip file's first entry starts with
_EMPTY_ARCHIVE = b"PK\x05\x06"  # an archive without entries: its end record alone


@frozen_dataclass
class SiteZip:
    """An archive whose every entry passed the checks of the module docstring."""

    fingerprint: str | None  # None for an archive without a manifest
    files: tuple[dict[str, Any], ...]  # the manifest's {path, sha256, size}, by path
    contents: Mapping[str, bytes]  # every file but the manifest, by workspace path


def read_site_zip(zip_bytes: bytes, *, expected_fingerprint: str | None = None,
                  require_manifest: bool = False) -> SiteZip:
    """The verified files of a site.zip.

    InputError for an unsafe or malformed archive, or (with `require_manifest`) one with
    no manifest; ConflictError (code ARTIFACT_FINGERPRINT_MISMATCH, detail {expected,
    actual}) when the manifest's fingerprint is not `expected_fingerprint`.
    """
    if expected_fingerprint is not None:
        fingerprint_hex(expected_fingerprint)
    with _open_zip(zip_bytes) as archive:
        members = _checked_members(archive)
        manifest = _manifest_of(archive)
        if manifest is None and require_manifest:
            raise _no_manifest()
        _check_expected(manifest, expected_fingerprint)
        contents = {info.filename: _read_member(archive, info) for info in members}
    if manifest is None:
        return SiteZip(None, (), MappingProxyType(contents))
    _verify_against_manifest(contents, manifest)
    return SiteZip(manifest["fingerprint"], tuple(manifest["files"]),
                   MappingProxyType(contents))


def bomb_like(info: zipfile.ZipInfo) -> bool:
    """True for an entry compressed more than any real source file is."""
    return (info.file_size > RATIO_CHECK_FROM
            and info.file_size > MAX_COMPRESSION_RATIO * max(info.compress_size, 1))


def compression_ratio(info: zipfile.ZipInfo) -> int:
    return info.file_size // max(info.compress_size, 1)


# ---------------------------------------------------------------------------- manifest


def read_manifest(zip_bytes: bytes) -> dict[str, Any]:
    """The archive's manifest {"fingerprint", "files"}, after checking its shape and that
    the fingerprint matches the file list. InputError when it is absent or malformed."""
    with _open_zip(zip_bytes) as archive:
        manifest = _manifest_of(archive)
    if manifest is None:
        raise _no_manifest()
    return manifest


def _no_manifest() -> InputError:
    return InputError(f"The archive has no {MANIFEST_PATH}.", code="ARTIFACT_INVALID",
                      hint="Use a site.zip built by `basedb deploy`.")


def _manifest_of(archive: zipfile.ZipFile) -> dict[str, Any] | None:
    infos = [info for info in archive.infolist() if info.filename == MANIFEST_PATH]
    if not infos:
        return None
    if len(infos) > 1:
        reject_entry(MANIFEST_PATH, "appears more than once")
    if infos[0].file_size > MAX_MANIFEST_BYTES:
        reject_entry(MANIFEST_PATH, f"is larger than {MAX_MANIFEST_BYTES // MIB} MB")
    data = _read_member(archive, infos[0])
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        reject_entry(MANIFEST_PATH, "is not valid UTF-8 JSON")
    return _checked_manifest(doc)


def _checked_manifest(doc: Any) -> dict[str, Any]:
    if not isinstance(doc, dict):
        reject_entry(MANIFEST_PATH, "is not a JSON object")
    fingerprint = doc.get("fingerprint")
    if not isinstance(fingerprint, str) or not FINGERPRINT_RE.match(fingerprint):
        reject_entry(MANIFEST_PATH, 'has no valid "fingerprint"')
    listed = doc.get("files")
    if not isinstance(listed, list):
        reject_entry(MANIFEST_PATH, 'has no "files" list')
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, item in enumerate(listed):
        where = f"files[{index}]"
        if not isinstance(item, dict):
            reject_entry(MANIFEST_PATH, f"{where} is not an object")
        path, digest, size = item.get("path"), item.get("sha256"), item.get("size")
        if not isinstance(path, str) or path_problem(path) is not None:
            reject_entry(MANIFEST_PATH, f"{where}.path is not a safe relative path")
        if path in seen:
            reject_entry(MANIFEST_PATH, f"lists {path} twice")
        if not isinstance(digest, str) or not _SHA256_RE.match(digest):
            reject_entry(MANIFEST_PATH, f"{where}.sha256 is not a SHA-256 hex digest")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            reject_entry(MANIFEST_PATH, f"{where}.size is not a non-negative integer")
        seen.add(path)
        entries.append({"path": path, "sha256": digest, "size": size})
    entries.sort(key=lambda entry: entry["path"])
    if fingerprint_of_files(entries) != fingerprint:
        reject_entry(MANIFEST_PATH, "has a fingerprint that does not match its file list")
    return {"fingerprint": fingerprint, "files": entries}


# ----------------------------------------------------------------------------- entries


def _open_zip(zip_bytes: bytes) -> zipfile.ZipFile:
    if len(zip_bytes) > MAX_ZIP_SIZE:
        raise InputError(f"The archive is {len(zip_bytes) // MIB} MB; at most "
                         f"{MAX_ZIP_SIZE // MIB} MB is accepted.", code="ARTIFACT_TOO_LARGE",
                         hint="Restore from a site.zip built by `basedb deploy`.")
    try:
        archive = zipfile.ZipFile(io.BytesIO(zip_bytes))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
        raise InputError(f"The archive is not a readable zip file ({exc}).",
                         code="ARTIFACT_INVALID",
                         hint="Download the artifact again; it may be truncated.") from None
    _check_starts_with_an_entry(archive, zip_bytes)
    return archive


def _check_starts_with_an_entry(archive: zipfile.ZipFile, zip_bytes: bytes) -> None:
    """Refuse bytes before the first entry. zipfile reads past them (a self-extracting
    archive is a program with a zip appended), so such a file is two things at once: a
    zip here, and whatever its prefix makes it to the next program that opens it."""
    infos = archive.infolist()
    first = min((info.header_offset for info in infos), default=0)
    signature = _LOCAL_HEADER if infos else _EMPTY_ARCHIVE
    if first != 0 or not zip_bytes.startswith(signature):
        archive.close()
        start = zip_bytes.find(signature)
        found = (f"{start:,} bytes of other data come before its first entry"
                 if start > 0 else "it does not start with a zip entry")
        raise InputError(f"The archive is not a plain zip file: {found}.",
                         code="ARTIFACT_INVALID",
                         hint="Use the site.zip `basedb deploy` builds, as it was written "
                              "(not a self-extracting or concatenated archive).")


def reject_entry(name: str, problem: str, *, code: str = "ARTIFACT_INVALID") -> NoReturn:
    """Refuse the archive because of its entry `name` (checks run before any write)."""
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
            reject_entry(name, "appears more than once" if same else
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
            reject_entry(name, "is stored uncompressed but its two sizes differ")
        if bomb_like(info):
            reject_entry(name, f"expands from {info.compress_size:,} to {info.file_size:,} bytes "
                               f"({compression_ratio(info)}:1), a ratio only a zip bomb reaches",
                         code="ARTIFACT_TOO_LARGE")
        members.append(info)
    _check_file_dir_clashes(seen.values(), {info.filename for info in members})
    return members


def _checked_name(info: zipfile.ZipInfo, is_dir: bool) -> str:
    name = info.filename
    if info.orig_filename != name:  # zipfile cut the name at a NUL byte
        reject_entry(info.orig_filename, "contains a NUL byte", code="ARTIFACT_UNSAFE_PATH")
    path = name[:-1] if is_dir else name
    if len(path) >= 2 and path[1] == ":" and path[0].isalpha():
        reject_entry(name, "starts with a drive letter", code="ARTIFACT_UNSAFE_PATH")
    problem = path_problem(path)
    if problem is not None:
        reject_entry(name, problem, code="ARTIFACT_UNSAFE_PATH")
    segments = path.split("/")
    forbidden = FORBIDDEN_SEGMENTS.intersection(segments)
    if forbidden:
        reject_entry(name, f"would write into {sorted(forbidden)[0]}/, which a restore never "
                           "touches", code="ARTIFACT_UNSAFE_PATH")
    if segments[0] == ".basedb" and path != MANIFEST_PATH:
        reject_entry(name, "is under .basedb/, which holds only the manifest",
                     code="ARTIFACT_UNSAFE_PATH")
    return path


def _check_type(info: zipfile.ZipInfo, is_dir: bool) -> None:
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        reject_entry(info.filename, "is a symbolic link", code="ARTIFACT_UNSAFE_PATH")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        reject_entry(info.filename, "is a device, FIFO or other special file",
                     code="ARTIFACT_UNSAFE_PATH")
    if kind == stat.S_IFDIR and not is_dir:
        reject_entry(info.filename, "is marked as a directory but named like a file",
                     code="ARTIFACT_UNSAFE_PATH")
    if info.flag_bits & 0x1:
        reject_entry(info.filename, "is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        reject_entry(info.filename, f"uses compression method {info.compress_type}; only stored "
                                    "and deflated entries are accepted")


def _check_file_dir_clashes(paths: Iterable[str], files: set[str]) -> None:
    for path in paths:
        segments = path.split("/")
        for depth in range(1, len(segments)):
            parent = "/".join(segments[:depth])
            if parent in files:
                reject_entry(path, f"needs {parent!r} to be a directory, but the archive also "
                                   "has it as a file")


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    try:
        with archive.open(info) as handle:
            data = handle.read(info.file_size + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError,
            NotImplementedError, binascii.Error) as exc:
        reject_entry(info.filename, f"is corrupt ({exc})")
    if len(data) != info.file_size:
        reject_entry(info.filename, f"holds {len(data):,} bytes where its header says "
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
        reject_entry(path, f"is not listed in {MANIFEST_PATH}")
    for path in sorted(set(listed) - set(contents)):
        reject_entry(path, f"is listed in {MANIFEST_PATH} but missing from the archive")
    for path, data in contents.items():
        entry = listed[path]
        if len(data) != entry["size"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
            reject_entry(path, f"does not match the size and SHA-256 recorded in {MANIFEST_PATH}",
                         code="ARTIFACT_HASH_MISMATCH")
