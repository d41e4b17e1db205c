"""Development drafts: the functions `basedb dev` is editing, callable without a deploy.

A site's functions run in three environments: prod and preview are deployments (stored,
immutable), `dev` is the development draft a `basedb dev` session sends after every
saved change:

    drafts = DevDrafts()
    snapshot = drafts.put(app_token, functions)   # replaces the site's whole dev draft
    drafts.get(app_token)                          # what env=dev calls run, or None
    drafts.discard(app_token)                      # the session ended

It is judged exactly as PUT draft/functions judges a draft (`basedb.platform.domain.drafts`)
and held as a `Snapshot`, so listing, describing and invoking with env=dev go through the
same code as a deployment. It lives in the platform's memory and nowhere else: it never
touches the site's draft, its deployments or what prod and preview serve, and a
restarted platform simply has none until the session sends its files again.

Each put gets a snapshot id of its own (`dev:<app>:<n>`), so the function plans memoised
by deployment id (`basedb.platform.domain.function_plans`) never mix two versions.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain import dev_authors, drafts
from basedb.platform.domain.drafts import DraftFunction
from basedb.platform.domain.identity import User
from basedb.platform.domain.snapshots import FunctionSnapshot, Snapshot, make_snapshot
from basedb.platform.storage import ids
from basedb.protocol import bad_request
from basedb.workspace.files import MIB
from basedb.workspace.model import Catalog, FunctionKind

DEV_ENV = "dev"
SITES_KEPT = 32
# A dev draft is held in memory: its declarations, queries and handlers together stay
# below this (each part also has the limits of PUT draft/functions).
MAX_DRAFT_BYTES = 16 * MIB
# The body lists of PUT dev/functions: PUT draft/functions' and the AI Functions.
DEV_LISTS: dict[str, FunctionKind] = {**drafts.FUNCTION_LISTS, "aiFunctions": "ai_function"}


@frozen_dataclass
class DevDraft:
    snapshot: Snapshot
    revision: int  # counts the site's puts since the platform started
    size: int


class DevDrafts:
    """The development drafts of one platform, by app token (the least recently sent
    are dropped beyond `sites_kept`)."""

    def __init__(self, sites_kept: int = SITES_KEPT) -> None:
        self.sites_kept = sites_kept
        self._drafts: OrderedDict[str, DevDraft] = OrderedDict()
        self._revisions: dict[str, int] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    def put(self, app_token: str, functions: Sequence[DraftFunction], *,
            timezone: str = "UTC") -> DevDraft:
        """Replace the site's dev draft by `functions` (already validated), to run in
        `timezone` (the site's)."""
        size = draft_size(functions)
        if size > MAX_DRAFT_BYTES:
            raise ValueError(f"a dev draft of {size} bytes exceeds {MAX_DRAFT_BYTES}")
        with self._lock:
            number = next(self._ids)
            revision = self._revisions.get(app_token, 0) + 1
            self._revisions[app_token] = revision
        snapshot = make_snapshot(
            deployment_id=f"{DEV_ENV}:{app_token}:{number}", app_token=app_token,
            fingerprint="", exclude=frozenset(), created_at=ids.now_text(), timezone=timezone,
            functions={item.function_id: FunctionSnapshot(
                function_id=item.function_id, kind=item.kind, declaration=item.declaration,
                sql=item.sql, handler=item.handler) for item in functions})
        draft = DevDraft(snapshot=snapshot, revision=revision, size=size)
        with self._lock:
            self._drafts[app_token] = draft
            self._drafts.move_to_end(app_token)
            while len(self._drafts) > self.sites_kept:
                self._drafts.popitem(last=False)
        return draft

    def get(self, app_token: str) -> DevDraft | None:
        with self._lock:
            return self._drafts.get(app_token)

    def discard(self, app_token: str) -> bool:
        """Forget the site's dev draft; whether there was one."""
        with self._lock:
            return self._drafts.pop(app_token, None) is not None


def draft_size(functions: Sequence[DraftFunction]) -> int:
    """About how many bytes the draft holds (its texts; declarations by their JSON)."""
    total = 0
    for item in functions:
        total += len(repr(item.declaration)) + len(item.sql or "") + len(item.handler or "")
    return total


# ------------------------------------------------------------------------- results


@frozen_dataclass
class DevDraftSaved:
    """The answer to PUT dev/functions: the draft's hints, its functions by kind, and the
    revision env=dev calls now run."""

    function_hints: Sequence[Mapping[str, Any]]
    counts: Mapping[str, int]
    revision: int

    def to_dict(self) -> dict[str, Any]:
        return {"functionHints": list(self.function_hints), "counts": dict(self.counts),
                "revision": self.revision}


@frozen_dataclass
class DevDraftState:
    """Whether the site has a development draft: its revision (None: none) and ids."""

    revision: int | None
    function_ids: Sequence[str]

    def to_dict(self) -> dict[str, Any]:
        return {"revision": self.revision, "functionIds": list(self.function_ids)}


@frozen_dataclass
class DevDraftDiscarded:
    discarded: bool  # whether there was one

    def to_dict(self) -> dict[str, Any]:
        return {"discarded": self.discarded}


def replace(memory: DevDrafts, app_token: str, body: Any, catalog: Catalog, *,
            by: User, role: str) -> DevDraftSaved:
    """Judge a PUT dev/functions body against the site's live `catalog` as PUT
    draft/functions judges a draft (9499 with data.errors) and make it the site's
    development draft, if `by` (with `role` on the site) may put it (`dev_authors`);
    the put is written to the site's platform log."""
    functions = drafts.parse_lists(body, DEV_LISTS, drafts.MAX_FUNCTIONS,
                                   extra=(drafts.TIMEZONE_KEY,))
    timezone = drafts.parse_timezone(body)
    size = draft_size(functions)
    if size > MAX_DRAFT_BYTES:
        raise bad_request(f"The development draft holds {size} bytes; at most "
                          f"{MAX_DRAFT_BYTES} are allowed", parameter="/",
                          fix="remove functions the site no longer needs")
    result = drafts.validate(functions, catalog)
    if result.errors:
        raise drafts.findings_failure(result, functions, what="The development draft")
    dev_authors.check_author(by, role, app_token, functions)
    draft = memory.put(app_token, functions, timezone=timezone)
    dev_authors.record_put(by, role, app_token, functions, draft.revision)
    counts: dict[str, int] = {kind: sum(1 for f in functions if f.kind == kind)
                              for kind in DEV_LISTS.values()}
    return DevDraftSaved(tuple(hint.to_dict() for hint in result.hints), counts,
                         draft.revision)


def state(memory: DevDrafts, app_token: str) -> DevDraftState:
    draft = memory.get(app_token)
    if draft is None:
        return DevDraftState(None, ())
    return DevDraftState(draft.revision, tuple(sorted(draft.snapshot.functions)))


def discard(memory: DevDrafts, app_token: str, *, by: User, role: str) -> DevDraftDiscarded:
    discarded = memory.discard(app_token)
    dev_authors.record_discard(by, role, app_token, discarded)
    return DevDraftDiscarded(discarded)
