"""The site.zip format, shared by `basedb deploy`, `basedb pull` and the platform.

    manifest.py   the manifest, the fingerprint, and which paths an archive may hold
    build.py      `build_site_zip`: a reproducible archive of a workspace's input files
    read.py       `read_site_zip`: an archive read and verified without trusting it

Imports nothing of basedb but `basedb.core.errors`.
"""

from __future__ import annotations

from basedb.core.site_zip.build import FILE_MODE, build_site_zip
from basedb.core.site_zip.manifest import (
    FINGERPRINT_RE,
    MANIFEST_PATH,
    MAX_INPUT_BYTES,
    MAX_INPUT_FILES,
    InputFile,
    collision_key,
    fingerprint,
    fingerprint_hex,
    fingerprint_of_files,
    manifest_files,
    path_problem,
)
from basedb.core.site_zip.read import (
    FORBIDDEN_SEGMENTS,
    MAX_ARCHIVE_ENTRIES,
    RATIO_CHECK_FROM,
    SiteZip,
    bomb_like,
    compression_ratio,
    read_manifest,
    read_site_zip,
    reject_entry,
)

__all__ = [
    "FILE_MODE",
    "FINGERPRINT_RE",
    "FORBIDDEN_SEGMENTS",
    "MANIFEST_PATH",
    "MAX_ARCHIVE_ENTRIES",
    "MAX_INPUT_BYTES",
    "MAX_INPUT_FILES",
    "RATIO_CHECK_FROM",
    "InputFile",
    "SiteZip",
    "bomb_like",
    "build_site_zip",
    "collision_key",
    "compression_ratio",
    "fingerprint",
    "fingerprint_hex",
    "fingerprint_of_files",
    "manifest_files",
    "path_problem",
    "read_manifest",
    "read_site_zip",
    "reject_entry",
]
