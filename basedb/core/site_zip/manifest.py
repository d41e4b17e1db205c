"""The site.zip format: its manifest, its fingerprint, and the paths it may hold.

A site.zip holds a workspace's input files at their workspace-relative POSIX paths, plus
`.basedb/manifest.json` = {"fingerprint", "files": [{"path", "sha256", "size"}]}.

The fingerprint is "sha256:" + the SHA-256 of the canonical JSON of
`{"files": [{"path", "sha256", "size"}, …]}` (files sorted by path; keys sorted; no
whitespace; UTF-8). Only paths and contents count: mtimes, permissions and the order in
which a filesystem lists files do not, so anyone can recompute it from the archive.

A path must be one that every system can restore safely (`path_problem`), and no two
paths may be one file on a case-insensitive, normalizing filesystem (`collision_key`).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import field
from typing import Any

from basedb.core.errors import InputError, InternalError
from basedb.core.frozen import frozen_dataclass

KIB = 1024
MIB = 1024 * KIB
MANIFEST_PATH = ".basedb/manifest.json"
# What one deployment may ship.
MAX_INPUT_FILES = 25_000  # MAX_FUNCTIONS functions of two files each, and the site
MAX_INPUT_BYTES = 100 * MIB
FINGERPRINT_RE = re.compile(r"^sha256:[0-9a-f]{64}\Z")
_MAX_NAME_BYTES = 255
_MAX_PATH_BYTES = 1024
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_CONTROL_RE = re.compile("[\x00-\x1f\x7f]")
# Paths of ASCII letters, digits, "_", "-" and ".", with no empty, "." or ".." segment:
# what nearly every path is, and safe whenever it is short enough (see path_problem).
_PLAIN_PATH_RE = re.compile(r"(?!\.\.?(?:/|\Z))[A-Za-z0-9_.-]+"
                            r"(?:/(?!\.\.?(?:/|\Z))[A-Za-z0-9_.-]+)*")


@frozen_dataclass
class InputFile:
    """One file a deployment ships: its workspace-relative POSIX path and contents."""

    path: str
    sha256: str
    size: int
    data: bytes = field(repr=False)

    @classmethod
    def of(cls, path: str, data: bytes) -> InputFile:
        return cls(path=path, sha256=hashlib.sha256(data).hexdigest(), size=len(data),
                   data=data)


def path_problem(path: str) -> str | None:
    """Why a workspace-relative POSIX path cannot be shipped or restored, or None.

    The same rules guard both directions: a name `collect_inputs` accepts is one that
    `safe_extract` accepts, so every deployment can be pulled back.
    """
    if len(path) <= _MAX_NAME_BYTES and _PLAIN_PATH_RE.fullmatch(path):
        return None  # the rules below find nothing in such a path
    return _path_rule_broken(path)


def _path_rule_broken(path: str) -> str | None:
    if not path:
        return "is empty"
    if _SURROGATE_RE.search(path):
        return "is not valid UTF-8"
    if _CONTROL_RE.search(path):
        return "contains control characters"
    if "\\" in path:
        return "contains a backslash"
    if ":" in path:
        return "contains a colon (a drive letter or stream name on Windows)"
    if path.startswith("/"):
        return "is an absolute path"
    if len(path.encode("utf-8")) > _MAX_PATH_BYTES:
        return f"is longer than {_MAX_PATH_BYTES} bytes"
    for segment in path.split("/"):
        if segment == "":
            return "has an empty path segment"
        if segment in (".", ".."):
            return f"has a '{segment}' path segment"
        if len(segment.encode("utf-8")) > _MAX_NAME_BYTES:
            return f"has a name longer than {_MAX_NAME_BYTES} bytes"
    return None


def collision_key(path: str) -> str:
    """Paths with equal keys are one file on macOS and Windows (case-insensitive,
    normalizing) filesystems."""
    return unicodedata.normalize("NFC", path).casefold()


def manifest_files(inputs: Iterable[InputFile]) -> list[dict[str, Any]]:
    """The `files` list of the manifest: one {path, sha256, size} per file, by path."""
    ordered = sorted(inputs, key=lambda item: item.path)
    seen: set[str] = set()
    for item in ordered:
        if item.path in seen:
            raise InternalError(f"The input file {item.path} is listed twice.",
                                code="INPUT_DUPLICATE")
        seen.add(item.path)
    entries: list[dict[str, Any]] = [
        {"path": item.path, "sha256": item.sha256, "size": item.size} for item in ordered
    ]
    return entries


def fingerprint_of_files(entries: list[dict[str, Any]]) -> str:
    """The fingerprint of a manifest `files` list (as stored in site.zip)."""
    canonical = json.dumps({"files": entries}, ensure_ascii=False, sort_keys=True,
                           separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def fingerprint(inputs: Iterable[InputFile]) -> str:
    """The fingerprint ("sha256:<hex>") of exactly these paths and contents."""
    return fingerprint_of_files(manifest_files(inputs))


def fingerprint_hex(value: str) -> str:
    """The hex digest of a fingerprint, after checking its form."""
    if not isinstance(value, str) or not FINGERPRINT_RE.match(value):
        raise InputError(f"{value!r} is not a fingerprint.", code="FINGERPRINT_INVALID",
                         hint='A fingerprint is "sha256:" followed by 64 lowercase hex '
                              "digits.")
    return value.removeprefix("sha256:")
