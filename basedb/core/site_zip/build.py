"""Building a site.zip byte-for-byte reproducibly.

`build_site_zip` makes the same bytes from the same inputs on every run and machine
(given the same zlib): the manifest first, then files sorted by path, every entry dated
1980-01-01 00:00:00, marked as a Unix 0644 regular file, deflated at level 6, with no
directory entries, comments or extra fields. It refuses what `read_site_zip` would
refuse, so every archive it builds can be read back.
"""

from __future__ import annotations

import io
import json
import stat
import zipfile
from collections.abc import Iterable

from basedb.core.errors import InputError, InternalError
from basedb.core.site_zip.manifest import (
    MANIFEST_PATH,
    InputFile,
    fingerprint_of_files,
    manifest_files,
    path_problem,
)
from basedb.core.site_zip.read import bomb_like, compression_ratio

ZIP_DATE_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o644
COMPRESS_LEVEL = 6

_UNIX = 3


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
            if bomb_like(info):
                raise InputError(
                    f"{info.filename} compresses {compression_ratio(info)}:1, which `basedb pull` "
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


def _top(path: str) -> str:
    return path.split("/", 1)[0]
