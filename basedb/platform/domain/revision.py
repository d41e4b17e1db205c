"""The catalog revision: a counter bumped by every change to tables, fields or bindings.

Triggers keep it (see the "catalog revision counter" migration in `schema`), so it moves
whoever writes. Work derived from a site's live catalog (the Catalog itself, function
plans with their compiled queries and schema statuses) is kept in memos keyed by the
revision it was built at (`basedb.platform.domain.caches`), and is built again once the
revision moves.
"""

from __future__ import annotations

import sqlite3

from basedb.core.frozen import frozen_dataclass
from basedb.core.memo import Memo
from basedb.platform.domain import sites
from basedb.workspace.model import Catalog

CatalogMemo = Memo[tuple[str, int], Catalog]
"""Site catalogs by (app token, catalog revision)."""


@frozen_dataclass
class LiveCatalog:
    """A site's catalog as of `revision`."""

    catalog: Catalog
    revision: int


def catalog_revision(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT revision FROM catalog_revision WHERE id = 1").fetchone()
    return int(row[0]) if row else 0


def live_catalog(conn: sqlite3.Connection, site: sites.SiteRow,
                 memo: CatalogMemo) -> LiveCatalog:
    """The site's catalog now; call inside one read (or write) transaction so that the
    revision and the catalog agree."""
    revision = catalog_revision(conn)
    catalog = memo.get_or_build((site.app_token, revision),
                                lambda: sites.site_catalog(conn, site))
    return LiveCatalog(catalog, revision)
