"""What one platform keeps in memory: objects derived from rows that never change under
their key, so that listing, describing and invoking do not rebuild them.

    catalogs   a site's Catalog, by (app token, catalog revision)
    snapshots  a deployment's snapshot with its declarations, by deployment id
    plans      a deployed function judged against the live catalog, by (deployment id,
               function id, catalog revision)
    dev        the development drafts of `basedb dev` sessions, by app token (held only
               here: see basedb.platform.domain.dev_drafts)
    targets    what an invoke resolved, while the database is unchanged (see
               basedb.platform.domain.resolved)
    tokens     the rows of bearer tokens in use, likewise
    tables     a Base's table with its fields, by (base token, table id, catalog revision)
    ai_tasks   the media AI tasks started on this platform (held only here)

Deployments are immutable and every change to tables, fields or bindings moves the
catalog revision, so no entry ever goes stale; the memos only drop what was least
recently used. Each platform app has its own (`basedb.platform.web.context.AppContext`).
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any

from basedb.core.frozen import frozen_dataclass
from basedb.core.memo import Memo
from basedb.platform.domain.dev_drafts import DevDrafts
from basedb.platform.domain.records import TableMemo
from basedb.platform.domain.resolved import ResolvedMemo
from basedb.platform.domain.revision import CatalogMemo
from basedb.platform.domain.runtimes.ai_media import MediaTasks
from basedb.platform.domain.snapshots import SnapshotMemo

if TYPE_CHECKING:
    # Only the memo's type: a platform that never invokes (one embedded in `basedb
    # deploy`) does not load the planner and the runtimes behind it.
    from basedb.platform.domain.function_plans import PlanMemo

CATALOGS_KEPT = 256
SNAPSHOTS_KEPT = 64
PLANS_KEPT = 4096
TABLES_KEPT = 1024


@frozen_dataclass
class DomainCaches:
    catalogs: CatalogMemo = field(default_factory=lambda: CatalogMemo(CATALOGS_KEPT))
    snapshots: SnapshotMemo = field(default_factory=lambda: SnapshotMemo(SNAPSHOTS_KEPT))
    plans: PlanMemo = field(default_factory=lambda: Memo(PLANS_KEPT))
    dev: DevDrafts = field(default_factory=DevDrafts)
    # Invoke targets (basedb.platform.domain.invoke.Target), typed loosely to keep this
    # module below invoke's.
    targets: ResolvedMemo[Any] = field(default_factory=ResolvedMemo)
    tokens: ResolvedMemo[Any] = field(default_factory=ResolvedMemo)
    tables: TableMemo = field(default_factory=lambda: TableMemo(TABLES_KEPT))
    # Media AI tasks (held only here: see basedb.platform.domain.runtimes.ai_media).
    ai_tasks: MediaTasks = field(default_factory=MediaTasks)
