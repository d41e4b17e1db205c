"""Draft functions by content hash: what lets a redeploy name the functions the platform
already holds instead of sending them again.

A PUT draft/functions item may be `{"functionId", "contentHash"}` (a `HashReference`)
in place of the full function. The platform accepts it only when the site's own stored
draft has that function (same kind and functionId) with exactly that content hash
(`basedb.core.content_hash`); otherwise it refuses the request with 9499 and
`data.resend`, the pointers of the items to send in full. Hashes are never looked up
across sites, so a hash names nothing a caller has not uploaded to this site itself.

A draft that passed `check` is remembered by its digest (the content hashes of its
functions in order, and the rules that judged it) with the catalog revision it was
judged at, so the same draft is not judged again (`judged_hints`).

`GET draft/hashes` answers what the site holds (`HeldContent`): the content hash of
every stored draft function, and the fingerprints of its recent deployments, whose
site.zip a deployment may reuse instead of uploading it again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import basedb.check
import basedb.workspace
from basedb.core.content_hash import CONTENT_HASH_RE, RESEND_KEY
from basedb.core.frozen import frozen_dataclass
from basedb.protocol import ApiFailure, Code, bad_request, unexecuted_message
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


@frozen_dataclass
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


@frozen_dataclass
class DraftEntry:
    """One stored draft function without its content: kind, id, order and hash."""

    kind: FunctionKind
    function_id: str
    position: int
    content_hash: str


REFERENCE_KEY = "contentHash"


def parse_reference(kind: FunctionKind, id_key: str, key: str, position: int,
                    item: dict[str, Any]) -> HashReference:
    """A `{functionId, contentHash}` item of list `key` (9499 when malformed)."""
    at = f"/{key}/{position}"
    for name in item:
        if name not in (id_key, REFERENCE_KEY):
            raise bad_request(f"An item with {REFERENCE_KEY} carries only {id_key} and "
                              f"{REFERENCE_KEY}, not {json.dumps(name)}",
                              parameter=f"{at}/{name}", received=item[name],
                              fix=f"send either {{{id_key}, {REFERENCE_KEY}}} or the "
                                  "function in full without contentHash")
    function_id = item.get(id_key)
    if not isinstance(function_id, str) or not function_id:
        raise bad_request(f"{id_key} must be a non-empty string", parameter=f"{at}/{id_key}",
                          received=function_id, fix="send the function's directory name, "
                          "e.g. listTasks")
    content_hash = item[REFERENCE_KEY]
    if not isinstance(content_hash, str) or not CONTENT_HASH_RE.match(content_hash):
        raise bad_request(f"{REFERENCE_KEY} must be 64 lowercase hex digits",
                          parameter=f"{at}/{REFERENCE_KEY}", received=content_hash,
                          fix="send the hash GET draft/hashes answered for this function, "
                              "or the function in full")
    return HashReference(kind, function_id, content_hash, position, key)


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


# ------------------------------------------------------------------ judgements


@functools.cache
def _rules_digest() -> str:
    """A digest of the code this platform judges drafts with (the check rules and the
    declaration loader): a judgement made by another basedb is not reused."""
    digest = hashlib.sha256()
    for package in (basedb.check, basedb.workspace):
        for path in sorted(Path(package.__file__ or "").parent.rglob("*.py")):
            digest.update(path.read_bytes())
    return digest.hexdigest()


def draft_digest(functions: Iterable[Hashed]) -> str:
    """The digest of a draft as a whole (its functions, in order, and the rules that
    judge it): what a stored judgement is looked up by."""
    digest = hashlib.sha256(_rules_digest().encode())
    for item in functions:
        digest.update(f"{item.position}:{item.content_hash}\n".encode())
    return digest.hexdigest()


def judged_hints(conn: sqlite3.Connection, app_token: str, digest: str,
                 catalog_revision: int) -> list[dict[str, Any]] | None:
    """The hints of a draft with this digest that passed `check` against this catalog
    revision, or None when it has not been judged there."""
    stored = stored_hints(conn, app_token, digest, catalog_revision)
    return None if stored is None else parse_hints(stored)


def stored_hints(conn: sqlite3.Connection, app_token: str, digest: str,
                 catalog_revision: int) -> str | None:
    """`judged_hints` as stored: the JSON text of the list (as `save_judgement` wrote it),
    for a caller that may need only to copy it."""
    row = conn.execute("SELECT hints FROM draft_judgements WHERE app_token = ? AND "
                       "digest = ? AND catalog_revision = ?",
                       (app_token, digest, catalog_revision)).fetchone()
    return str(row[0]) if row else None


def parse_hints(stored: str) -> list[dict[str, Any]]:
    return list(json.loads(stored))


def hints_json(hints: Sequence[Mapping[str, Any]]) -> str:
    """Hints as `draft_judgements` and `deployments` store them."""
    return json.dumps(list(hints), ensure_ascii=False)


JUDGEMENTS_KEPT = 4


def save_judgement(conn: sqlite3.Connection, app_token: str, digest: str,
                   catalog_revision: int, hints: str) -> None:
    """Remember that the draft with `digest` passed `check` at `catalog_revision` with
    `hints` (`hints_json`) (inside a write); the site keeps its few newest judgements."""
    conn.execute("INSERT OR REPLACE INTO draft_judgements (app_token, digest, "
                 "catalog_revision, hints) VALUES (?, ?, ?, ?)",
                 (app_token, digest, catalog_revision, hints))
    _keep_newest(conn, app_token)


def renew_judgement(conn: sqlite3.Connection, app_token: str, digest: str,
                    catalog_revision: int) -> bool:
    """Make the stored judgement of `digest` at `catalog_revision` the site's newest, as
    saving it again would, without encoding its hints again (inside a write): a redeploy
    of unchanged functions finds its judgement, and at thousands of functions their hints
    are megabytes of JSON. False when no such judgement is stored (save it instead)."""
    renewed = conn.execute(
        "INSERT OR REPLACE INTO draft_judgements (app_token, digest, catalog_revision, "
        "hints) SELECT app_token, digest, catalog_revision, hints FROM draft_judgements "
        "WHERE app_token = ? AND digest = ? AND catalog_revision = ?",
        (app_token, digest, catalog_revision)).rowcount
    if renewed:
        _keep_newest(conn, app_token)
    return renewed > 0


def _keep_newest(conn: sqlite3.Connection, app_token: str) -> None:
    conn.execute("DELETE FROM draft_judgements WHERE app_token = ? AND rowid NOT IN "
                 "(SELECT rowid FROM draft_judgements WHERE app_token = ? "
                 "ORDER BY rowid DESC LIMIT ?)", (app_token, app_token, JUDGEMENTS_KEPT))


@frozen_dataclass
class DraftFunctionsSaved:
    """The answer to PUT draft/functions."""

    function_hints: Sequence[Mapping[str, Any]]
    counts: Mapping[str, int]
    draft_revision: int

    def to_dict(self) -> dict[str, Any]:
        return {"functionHints": list(self.function_hints), "counts": dict(self.counts),
                "draftRevision": self.draft_revision}


# ---------------------------------------------------------------- held content


@frozen_dataclass
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


@frozen_dataclass
class HeldArtifact:
    """A deployment's site.zip named by fingerprint instead of uploaded: the artifact of
    the site's newest deployment with that fingerprint."""

    fingerprint: str


@frozen_dataclass
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
