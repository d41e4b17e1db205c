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
from collections.abc import Sequence
from dataclasses import dataclass

from basedb.platform.domain.drafts import DraftFunction
from basedb.platform.domain.snapshots import FunctionSnapshot, Snapshot, make_snapshot
from basedb.platform.storage import ids
from basedb.workspace.files import MIB

DEV_ENV = "dev"
SITES_KEPT = 32
# A dev draft is held in memory: its declarations, queries and handlers together stay
# below this (each part also has the limits of PUT draft/functions).
MAX_DRAFT_BYTES = 16 * MIB


@dataclass(frozen=True, slots=True)
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
