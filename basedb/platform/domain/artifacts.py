"""Uploaded site.zip artifacts: verified on upload, then read by the page server.

An upload is trusted only after `basedb.core.site_zip.read_site_zip` accepts it, the
same reader `basedb pull` restores with: every entry safe and within the size limits,
`.basedb/manifest.json` present with the fingerprint of its file list, and the archive
holding exactly the listed files with the listed sizes and digests. On top of that, the
manifest's fingerprint must equal the upload's fingerprint form field. So every
deployment the platform stores can be pulled back. Refusals become 9499 errors.
"""

from __future__ import annotations

import hashlib

from basedb.core.errors import BasedbError, ConflictError
from basedb.core.frozen import frozen_dataclass
from basedb.core.site_zip import FINGERPRINT_RE, MANIFEST_PATH, read_site_zip
from basedb.protocol import ApiFailure, bad_request

_REBUILD = "rebuild site.zip with `basedb deploy`"
_FIXES = {"ARTIFACT_TOO_LARGE": "ship fewer or smaller files"}


@frozen_dataclass
class VerifiedArtifact:
    content: bytes  # the site.zip as uploaded
    sha256: str  # of the zip bytes
    fingerprint: str


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
        read_site_zip(content, expected_fingerprint=fingerprint, require_manifest=True)
    except BasedbError as exc:
        raise _refusal(exc, fingerprint) from None
    return VerifiedArtifact(content=content, sha256=hashlib.sha256(content).hexdigest(),
                            fingerprint=fingerprint)


def _refusal(exc: BasedbError, fingerprint: str) -> ApiFailure:
    if isinstance(exc, ConflictError) and exc.detail and "actual" in exc.detail:
        return bad_request(
            f"The artifact's {MANIFEST_PATH} has fingerprint {exc.detail['actual']}, not the "
            "one in the fingerprint form field", parameter="/fingerprint",
            received=fingerprint, fix="send the fingerprint of this site.zip (deploy again "
            "to rebuild both from the same files)")
    return bad_request(exc.message, parameter="/artifact",
                       fix=_FIXES.get(str(exc.code), _REBUILD))
