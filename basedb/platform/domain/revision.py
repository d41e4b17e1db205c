"""The catalog revision: a counter bumped by every change to tables, fields or bindings.

Triggers keep it (see the "catalog revision counter" migration in `schema`), so it moves
whoever writes. Work derived from a site's live catalog (the Catalog object itself, SQL
analyses and compilations, schema statuses) is cached under the revision it was built
at and is rebuilt once the revision moves; SQL analysis caches by Catalog identity, so
handing out one Catalog object per (site, revision) is also what makes those caches hit.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from dataclasses import dataclass

from basedb.platform.domain import sites
from basedb.workspace.model import Catalog

_CACHE_SIZE = 256


@dataclass(frozen=True, slots=True)
class LiveCatalog:
    """A site's catalog as of `revision`."""

    catalog: Catalog
    revision: int


_cache: OrderedDict[tuple[str, int], Catalog] = OrderedDict()
_lock = threading.Lock()


def catalog_revision(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT revision FROM catalog_revision WHERE id = 1").fetchone()
    return int(row[0]) if row else 0


def live_catalog(conn: sqlite3.Connection, site: sites.SiteRow) -> LiveCatalog:
    """The site's catalog now; call inside one read (or write) transaction so that the
    revision and the catalog agree."""
    revision = catalog_revision(conn)
    key = (site.app_token, revision)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return LiveCatalog(found, revision)
    catalog = sites.site_catalog(conn, site)
    with _lock:
        # Another thread may have built it meanwhile; keep the first so identity holds.
        catalog = _cache.setdefault(key, catalog)
        _cache.move_to_end(key)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return LiveCatalog(catalog, revision)
