"""Draft functions by content hash: what lets a redeploy name the functions the platform
already holds instead of sending them again.

A PUT draft/functions item may be `{"functionId", "contentHash"}` (a `HashReference`)
in place of the full function. The platform accepts it only when the site's own stored
draft has that function (same kind and functionId) with exactly that content hash
(`basedb.core.content_hash`); otherwise it refuses the request with 9499 and
`data.resend`, the pointers of the items to send in full. Hashes are never looked up
across sites, so a hash names nothing a caller has not uploaded to this site itself.

`GET draft/hashes` answers what the site holds (`HeldContent`): the content hash of
every stored draft function, and the fingerprints of its recent deployments, whose
site.zip a deployment may reuse instead of uploading it again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from basedb.core.content_hash import RESEND_KEY
from basedb.core.protocol import ApiFailure, Code, unexecuted_message
from basedb.workspace.model import FunctionKind

RECENT_FINGERPRINTS = 8


class Hashed(Protocol):
    """A draft item whose content hash is known (sent, computed or stored)."""

    @property
    def kind(self) -> FunctionKind: ...
    @property
    def function_id(self) -> str: ...
    @property
    def position(self) -> int: ...
    @property
    def content_hash(self) -> str: ...


@dataclass(frozen=True, slots=True)
class HashReference:
    """A function sent by its content hash: the site's draft must already hold it."""

    kind: FunctionKind
    function_id: str
    content_hash: str
    position: int
    list_key: str  # the body's list it came in

    @property
    def request_pointer(self) -> str:
        return f"/{self.list_key}/{self.position}"


@dataclass(frozen=True, slots=True)
class DraftEntry:
    """One stored draft function without its content: kind, id, order and hash."""

    kind: FunctionKind
    function_id: str
    position: int
    content_hash: str


def draft_entries(conn: sqlite3.Connection, app_token: str, kinds: Collection[FunctionKind],
                  order: Sequence[FunctionKind]) -> list[DraftEntry]:
    """The site's stored drafts of `kinds`, by kind (in `order`) then position."""
    rank = {kind: i for i, kind in enumerate(order)}
    out = [DraftEntry(kind, function_id, position, content_hash)
           for kind, function_id, position, content_hash in conn.execute(
               "SELECT kind, function_id, position, content_hash FROM draft_functions "
               "WHERE app_token = ?", (app_token,)) if kind in kinds]
    out.sort(key=lambda entry: (rank[entry.kind], entry.position))
    return out


def unknown_references(references: Iterable[HashReference],
                       held: Mapping[tuple[str, str], str]) -> list[HashReference]:
    """The references whose function the site does not hold with that hash."""
    return [ref for ref in references
            if held.get((ref.kind, ref.function_id)) != ref.content_hash]


def resend_failure(missing: Sequence[HashReference]) -> ApiFailure:
    """The refusal of references the site does not hold: send those functions in full."""
    first = missing[0]
    count = len(missing)
    reason = (f"The site's draft holds no {first.function_id} with this contentHash"
              + (f" (nor {count - 1} more of the referenced functions)" if count > 1 else "")
              + ": a contentHash may only name a function this site's draft already has")
    msg = unexecuted_message(reason, parameter=f"{first.request_pointer}/contentHash",
                             received=first.content_hash,
                             fix="send these functions in full (declaration, and sql or "
                                 "handler); `basedb deploy` does so by itself")
    return ApiFailure(Code.BAD_REQUEST, msg,
                      data={RESEND_KEY: [ref.request_pointer for ref in missing]})


@dataclass(frozen=True, slots=True)
class HeldContent:
    """What the site holds: its draft functions' content hashes, by body list and
    functionId, and the fingerprints of its recent deployments (newest first)."""

    hashes: Mapping[str, Mapping[str, str]]
    timezone: str
    fingerprints: tuple[str, ...]
    draft_revision: int

    def to_dict(self) -> dict[str, Any]:
        return {**{key: dict(items) for key, items in self.hashes.items()},
                "timezone": self.timezone, "fingerprints": list(self.fingerprints),
                "draftRevision": self.draft_revision}


def recent_fingerprints(conn: sqlite3.Connection, app_token: str) -> tuple[str, ...]:
    """The distinct fingerprints of the site's newest deployments, newest first."""
    rows = conn.execute("SELECT fingerprint, MAX(seq) AS newest FROM deployments "
                        "WHERE app_token = ? GROUP BY fingerprint ORDER BY newest DESC "
                        "LIMIT ?", (app_token, RECENT_FINGERPRINTS))
    return tuple(str(row[0]) for row in rows)


@dataclass(frozen=True, slots=True)
class HeldArtifact:
    """A deployment's site.zip named by fingerprint instead of uploaded: the artifact of
    the site's newest deployment with that fingerprint."""

    fingerprint: str


@dataclass(frozen=True, slots=True)
class StoredArtifact:
    deployment_id: str
    sha256: str
    size: int


def find_artifact(conn: sqlite3.Connection, app_token: str,
                  fingerprint: str) -> StoredArtifact | None:
    row = conn.execute("SELECT deployment_id, artifact_sha256, artifact_size FROM "
                       "deployments WHERE app_token = ? AND fingerprint = ? "
                       "ORDER BY seq DESC LIMIT 1", (app_token, fingerprint)).fetchone()
    return StoredArtifact(row[0], row[1], row[2]) if row else None


def artifact_resend_failure(fingerprint: str) -> ApiFailure:
    msg = unexecuted_message(
        "The artifact file is missing, and no deployment of the site has this "
        "fingerprint, so its site.zip cannot be reused", parameter="/artifact",
        received=fingerprint,
        fix="send site.zip as the file field \"artifact\"; `basedb deploy` does so by "
            "itself")
    return ApiFailure(Code.BAD_REQUEST, msg, data={RESEND_KEY: ["/artifact"]})
