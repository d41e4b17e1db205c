"""The local platform: the Base Database Open API over SQLite, as an ASGI app.

    platform = open_platform()           # data dir: $BASEDB_DATA_DIR or the user data dir
    platform.app                         # the Starlette app (serve it, or call in-process)
    platform.owner_token                 # the platform owner's bearer token
    platform.store                       # the storage (basedb.platform.storage.store.Store)

Layout of the package, each layer importing only those below it (docs/architecture.md):

    web/        the request layer and app (`http`, `app`), one module per route group
                (`routes/`), pages and sign-in sessions, the OpenAPI document
    domain/     Bases, records, sites and access, identity, drafts, artifacts,
                deployments and their snapshots, function plans, describe, invoke, and
                the runtimes (SQL, Mutation, FaaS, AI)
    storage/    the SQLite store and migrations, the physical layout of Base tables,
                cells, indexes, ids, the platform log, and the compiler of analysed SQL

The platform may import basedb.check, basedb.sql, basedb.workspace and basedb.core,
never the client, deploy, agent_tools or the command line. `LocalPlatform` and
`open_platform` live in `basedb.platform.local`; this package names them without
importing it, so that importing a submodule (say `basedb.platform.storage.ids`) never
builds the whole app.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from basedb.platform.local import LocalPlatform, open_platform

__all__ = ["LocalPlatform", "open_platform"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("basedb.platform.local"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
