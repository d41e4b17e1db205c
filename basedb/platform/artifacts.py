"""Uploaded site.zip artifacts: verified on upload, then read by the page server.

An upload is trusted only after every check passes: it is a zip archive within the size
limits; it carries `.basedb/manifest.json` = {"fingerprint", "files": [{path, sha256,
size}]}; the manifest's fingerprint equals the form field *and* the SHA-256 of its
canonical file list (so the fingerprint really identifies the files); and the archive
holds exactly the listed files, each with the listed size and digest, under safe
relative paths. Pages can then take a file's ETag from the manifest.

The fingerprint is "sha256:" + SHA-256 of the canonical JSON `{"files": [...]}` (files
sorted by path, keys sorted, no whitespace, UTF-8), as `basedb deploy` computes it.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NoReturn

from basedb.platform.errors import bad_request
from basedb.workspace.files import MIB

MANIFEST_PATH = ".basedb/manifest.json"
FINGERPRINT_RE = re.compile(r"^sha256:[0-9a-f]{64}$")
MAX_ENTRIES = 5_001  # a workspace at basedb's input-file limit, plus the manifest
MAX_UNCOMPRESSED_BYTES = 100 * MIB
MAX_MANIFEST_BYTES = 8 * MIB
MAX_COMPRESSION_RATIO = 500  # beyond deflate's real-world range: a zip bomb
RATIO_CHECK_FROM = 1 * MIB

_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_UNSAFE_CHARS_RE = re.compile(r'[\x00-\x1f\x7f\\:]')
_FIELD = "/artifact"


@dataclass(frozen=True, slots=True)
class ArtifactFile:
    path: str
    sha256: str
    size: int


@dataclass(frozen=True, slots=True)
class VerifiedArtifact:
    content: bytes  # the site.zip as uploaded
    sha256: str  # of the zip bytes
    fingerprint: str
    files: Mapping[str, ArtifactFile]  # by path


def fingerprint_of(files: list[dict[str, Any]]) -> str:
    """The fingerprint of a manifest `files` list (sorted by path)."""
    canonical = json.dumps({"files": files}, ensure_ascii=False, sort_keys=True,
                           separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def check_fingerprint_field(value: str | None) -> str:
    if value is None or not FINGERPRINT_RE.match(value.strip()):
        raise bad_request("The fingerprint form field must be \"sha256:\" followed by 64 "
                          "lowercase hex digits", parameter="/fingerprint",
                          received=value,
                          fix="send the fingerprint `basedb deploy` computed for site.zip")
    return value.strip()


def verify_artifact(content: bytes, fingerprint: str) -> VerifiedArtifact:
    """The upload, once every check of the module docstring passes; else a 9499."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
    except (zipfile.BadZipFile, ValueError, OSError):
        _refuse("The artifact is not a zip archive",
                "upload the site.zip that `basedb deploy` builds")
    with archive:
        infos = _checked_entries(archive)
        manifest = _manifest(archive, infos)
        if manifest["fingerprint"] != fingerprint:
            raise bad_request(
                f"The artifact's {MANIFEST_PATH} has fingerprint {manifest['fingerprint']}, "
                "not the one in the fingerprint form field", parameter="/fingerprint",
                received=fingerprint, fix="send the fingerprint of this site.zip (deploy "
                "again to rebuild both from the same files)")
        listed: dict[str, ArtifactFile] = {
            entry["path"]: ArtifactFile(entry["path"], entry["sha256"], entry["size"])
            for entry in manifest["files"]}
        present = {name for name in infos if name != MANIFEST_PATH}
        for name in sorted(present - listed.keys())[:1]:
            _refuse(f"The artifact holds {name}, which its manifest does not list",
                    "rebuild site.zip with `basedb deploy`")
        for name in sorted(listed.keys() - present)[:1]:
            _refuse(f"The artifact's manifest lists {name}, which the archive lacks",
                    "rebuild site.zip with `basedb deploy`")
        for name, expected in listed.items():
            data = _read(archive, infos[name])
            if len(data) != expected.size or hashlib.sha256(data).hexdigest() != expected.sha256:
                _refuse(f"The artifact's {name} does not match its manifest entry (size or "
                        "SHA-256 differs)", "rebuild site.zip with `basedb deploy`")
    return VerifiedArtifact(content=content, sha256=hashlib.sha256(content).hexdigest(),
                            fingerprint=fingerprint, files=MappingProxyType(listed))


def _checked_entries(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        _refuse(f"The artifact has {len(infos)} entries; at most {MAX_ENTRIES} are allowed",
                "ship fewer files")
    total = 0
    files: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = info.filename
        is_dir = name.endswith("/")
        problem = path_problem(name[:-1] if is_dir else name)
        if problem:
            _refuse(f"The artifact has the entry {name[:80]!r}, which {problem}",
                    "rebuild site.zip with `basedb deploy`")
        if info.flag_bits & 0x1:
            _refuse(f"The artifact's entry {name} is encrypted", "upload an unencrypted zip")
        if is_dir:
            continue
        if name in files:
            _refuse(f"The artifact has the entry {name} twice", "rebuild site.zip")
        total += info.file_size
        if total > MAX_UNCOMPRESSED_BYTES:
            _refuse(f"The artifact unpacks to more than {MAX_UNCOMPRESSED_BYTES // MIB} MB",
                    "ship fewer or smaller files")
        if info.file_size >= RATIO_CHECK_FROM and \
                info.file_size > MAX_COMPRESSION_RATIO * max(info.compress_size, 1):
            _refuse(f"The artifact's entry {name} is compressed more than "
                    f"{MAX_COMPRESSION_RATIO}:1, like a zip bomb", "ship the file as it is")
        files[name] = info
    return files


def path_problem(path: str) -> str | None:
    """Why an archive path is not a safe relative POSIX path (None when it is)."""
    if not path:
        return "is empty"
    if path.startswith("/"):
        return "is absolute"
    if _UNSAFE_CHARS_RE.search(path):
        return "contains a backslash, colon or control character"
    if any(segment in ("", ".", "..") for segment in path.split("/")):
        return "has an empty, '.' or '..' segment"
    return None


def _manifest(archive: zipfile.ZipFile, infos: Mapping[str, zipfile.ZipInfo],
              ) -> dict[str, Any]:
    info = infos.get(MANIFEST_PATH)
    if info is None:
        _refuse(f"The artifact has no {MANIFEST_PATH}", "upload the site.zip that "
                "`basedb deploy` builds")
    if info.file_size > MAX_MANIFEST_BYTES:
        _refuse(f"The artifact's {MANIFEST_PATH} is larger than "
                f"{MAX_MANIFEST_BYTES // MIB} MB", "rebuild site.zip")
    try:
        doc = json.loads(_read(archive, info).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        _refuse(f"The artifact's {MANIFEST_PATH} is not UTF-8 JSON", "rebuild site.zip")
    fingerprint = doc.get("fingerprint") if isinstance(doc, dict) else None
    listed = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(fingerprint, str) or not FINGERPRINT_RE.match(fingerprint) \
            or not isinstance(listed, list):
        _refuse(f"The artifact's {MANIFEST_PATH} must be {{\"fingerprint\": \"sha256:…\", "
                "\"files\": [...]}", "rebuild site.zip")
    entries: list[dict[str, Any]] = []
    for index, item in enumerate(listed):
        path = item.get("path") if isinstance(item, dict) else None
        digest = item.get("sha256") if isinstance(item, dict) else None
        size = item.get("size") if isinstance(item, dict) else None
        if not isinstance(path, str) or path_problem(path) or path == MANIFEST_PATH \
                or not isinstance(digest, str) or not _SHA256_RE.match(digest) \
                or isinstance(size, bool) or not isinstance(size, int) or size < 0:
            _refuse(f"Entry {index} of the artifact's {MANIFEST_PATH} is not "
                    "{\"path\", \"sha256\", \"size\"} with a safe path", "rebuild site.zip")
        entries.append({"path": path, "sha256": digest, "size": size})
    entries.sort(key=lambda entry: entry["path"])
    if len({entry["path"] for entry in entries}) != len(entries):
        _refuse(f"The artifact's {MANIFEST_PATH} lists a path twice", "rebuild site.zip")
    if fingerprint_of(entries) != fingerprint:
        _refuse(f"The fingerprint in the artifact's {MANIFEST_PATH} is not the fingerprint "
                "of its file list", "rebuild site.zip with `basedb deploy`")
    return {"fingerprint": fingerprint, "files": entries}


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    try:
        with archive.open(info) as handle:
            data = handle.read(info.file_size + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError,
            EOFError, ValueError) as exc:
        _refuse(f"The artifact's entry {info.filename} cannot be read ({exc})",
                "rebuild site.zip")
    if len(data) != info.file_size:
        _refuse(f"The artifact's entry {info.filename} is not the size its header says",
                "rebuild site.zip")
    return data


def _refuse(reason: str, fix: str) -> NoReturn:
    raise bad_request(reason, parameter=_FIELD, fix=fix)
