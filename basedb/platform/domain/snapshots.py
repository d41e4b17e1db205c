"""Deployment snapshots: what a preview or prod release runs, read back for invoking.

A deployment is written once (`basedb.platform.domain.deployments`) and never changed
(triggers refuse UPDATEs on its tables), so a snapshot read for one deployment id stays
right for as long as the process lives: the platform keeps snapshots, with the
declarations built from them, in a memo keyed by deployment id
(`basedb.platform.domain.caches`). Only *which* deployment an environment points at
needs a query on every call:

    snapshot = load_snapshot(conn, app_token, "prod", memo)   # None: nothing deployed
    snapshot.declarations                                       # functionId -> declaration

Snapshots are shared between requests: treat them (and the declaration documents
inside) as read-only.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Any, cast

from basedb.core.frozen import frozen_dataclass
from basedb.core.memo import Memo, require_builds
from basedb.workspace.catalog import build_catalog
from basedb.workspace.declarations import build_declaration
from basedb.workspace.model import FUNCTION_KINDS, AnyDeclaration, Catalog, FunctionKind

ENVIRONMENTS = ("prod", "preview")

SnapshotMemo = Memo[str, "Snapshot"]
"""Snapshots by deployment id."""


@frozen_dataclass
class FunctionSnapshot:
    function_id: str
    kind: FunctionKind
    declaration: Mapping[str, Any]  # the function.json document
    sql: str | None = None  # Database Functions: main.sql
    handler: str | None = None  # FaaS: index.mjs source


@frozen_dataclass
class Snapshot:
    deployment_id: str
    app_token: str
    fingerprint: str
    functions: Mapping[str, FunctionSnapshot]  # all four kinds, AI Functions included
    exclude: frozenset[str]
    created_at: str
    timezone: str  # the IANA zone its functions run in (frozen with the deployment)
    # Every function as a declaration object (built with `build_declaration`, as `basedb
    # check` and the draft validation build them); only drafts that passed validation
    # are deployed, so every function has one.
    declarations: Mapping[str, AnyDeclaration]
    # Function ids in order: all of them, and those agent-tools.json does not exclude.
    all_ids: tuple[str, ...] = field(init=False)
    published_ids: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        ids = tuple(sorted(self.functions))
        object.__setattr__(self, "all_ids", ids)
        object.__setattr__(self, "published_ids",
                           tuple(f for f in ids if f not in self.exclude))


# ----------------------------------------------------------------------- pointers


def prod_deployment_id(conn: sqlite3.Connection, app_token: str) -> str | None:
    """The deployment prod points at: the site's newest promotion or rollback."""
    row = conn.execute("SELECT deployment_id FROM promotions WHERE app_token = ? "
                       "ORDER BY promotion_id DESC LIMIT 1", (app_token,)).fetchone()
    return str(row[0]) if row else None


def preview_deployment_id(conn: sqlite3.Connection, app_token: str) -> str | None:
    """The latest preview: the site's newest deployment (every deployment starts as one)."""
    row = conn.execute("SELECT deployment_id FROM deployments WHERE app_token = ? "
                       "ORDER BY seq DESC LIMIT 1", (app_token,)).fetchone()
    return str(row[0]) if row else None


def deployment_id_for(conn: sqlite3.Connection, app_token: str, env: str) -> str | None:
    if env == "prod":
        return prod_deployment_id(conn, app_token)
    if env == "preview":
        return preview_deployment_id(conn, app_token)
    raise ValueError(f"env must be one of {ENVIRONMENTS}, not {env!r}")


# ---------------------------------------------------------------------- snapshots


def load_snapshot(conn: sqlite3.Connection, app_token: str, env: str,
                  memo: SnapshotMemo) -> Snapshot | None:
    """The snapshot `env` ("prod" or "preview") of the site runs, or None when there is
    none yet (no promotion for prod, no deployment for preview)."""
    deployment_id = deployment_id_for(conn, app_token, env)
    if deployment_id is None:
        return None
    return load_deployment_snapshot(conn, deployment_id, memo)


def load_deployment_snapshot(conn: sqlite3.Connection, deployment_id: str,
                             memo: SnapshotMemo) -> Snapshot | None:
    """The snapshot of one deployment (any site), or None when the id is unknown."""
    found = memo.get(deployment_id)
    if found is not None:
        return found
    require_builds()
    snapshot = _read_snapshot(conn, deployment_id)
    if snapshot is None:
        return None
    return memo.get_or_build(deployment_id, lambda: snapshot)


def _read_snapshot(conn: sqlite3.Connection, deployment_id: str) -> Snapshot | None:
    row = conn.execute("SELECT app_token, fingerprint, exclude, created_at, timezone "
                       "FROM deployments WHERE deployment_id = ?", (deployment_id,)).fetchone()
    if row is None:
        return None
    functions: dict[str, FunctionSnapshot] = {}
    for function_id, kind, declaration, sql, handler in conn.execute(
            "SELECT function_id, kind, declaration, sql, handler FROM deployment_functions "
            "WHERE deployment_id = ? ORDER BY function_id", (deployment_id,)):
        if kind not in FUNCTION_KINDS:
            raise ValueError(f"deployment {deployment_id} stores unknown kind {kind!r}")
        functions[function_id] = FunctionSnapshot(
            function_id=function_id, kind=cast(FunctionKind, kind),
            declaration=json.loads(declaration), sql=sql, handler=handler)
    return make_snapshot(deployment_id=deployment_id, app_token=row[0], fingerprint=row[1],
                         functions=functions, exclude=frozenset(json.loads(row[2])),
                         created_at=row[3], timezone=row[4])


def make_snapshot(*, deployment_id: str, app_token: str, fingerprint: str,
                  functions: Mapping[str, FunctionSnapshot], exclude: frozenset[str],
                  created_at: str, timezone: str = "UTC") -> Snapshot:
    """A snapshot of these functions, with their declarations built."""
    return Snapshot(deployment_id=deployment_id, app_token=app_token, fingerprint=fingerprint,
                    functions=MappingProxyType(dict(functions)), exclude=exclude,
                    created_at=created_at, timezone=timezone,
                    declarations=_build_declarations(functions))


def _build_declarations(functions: Mapping[str, FunctionSnapshot],
                        ) -> Mapping[str, AnyDeclaration]:
    out: dict[str, AnyDeclaration] = {}
    for function_id, item in functions.items():
        decl, _ = build_declaration(item.kind, function_id, item.declaration, sql=item.sql,
                                    has_handler=item.handler is not None)
        if decl is not None:
            out[function_id] = decl
    return MappingProxyType(out)


def snapshot_catalog(conn: sqlite3.Connection, deployment_id: str) -> Catalog | None:
    """The catalog of the site's bound tables as it was when the deployment was made."""
    row = conn.execute("SELECT catalog FROM deployments WHERE deployment_id = ?",
                       (deployment_id,)).fetchone()
    if row is None:
        return None
    catalog, _ = build_catalog(json.loads(row[0]))
    return catalog
