"""Deployments: immutable preview snapshots, and the prod pointer with its history.

`create` snapshots the site's drafts (functions, AI Functions, agent-tools policy), the
live catalog and the verified site.zip in one transaction, after judging the drafts
again against the catalog as it is *now* (it may have changed since the drafts were
saved). The judging runs on a read snapshot so that the write lock is held only for the
inserts; if the drafts or the catalog moved in between (their revision counters say so),
it is redone inside the write transaction.

A redeploy of unchanged drafts costs little more than its bookkeeping: the drafts'
judgement and index plans are found by content hash, their rows are copied inside
SQLite without being parsed, and a site.zip the site already has (same fingerprint) may
be named instead of uploaded (`HeldArtifact`).

Prod is never a rebuild: promoting points prod at the exact snapshot, and every
promotion or rollback is a row of `promotions`, whose newest row per site is prod. Only
the latest preview may be promoted (an older one is stale: 800004020), and rollback
only returns to a deployment that was prod before.
"""

from __future__ import annotations

import gc
import hashlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from basedb.check.agent_tools import validate_exclude
from basedb.check.sql.rules import declared_param_count, declared_param_kinds
from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain import draft_content, drafts, sites
from basedb.platform.domain.access import require_site
from basedb.platform.domain.artifacts import VerifiedArtifact
from basedb.platform.domain.caches import DomainCaches
from basedb.platform.domain.draft_content import (
    DraftEntry,
    HeldArtifact,
    artifact_resend_failure,
    draft_entries,
    find_artifact,
)
from basedb.platform.domain.identity import User
from basedb.platform.domain.revision import LiveCatalog, catalog_revision, live_catalog
from basedb.platform.domain.snapshots import (
    load_deployment_snapshot,
    preview_deployment_id,
    prod_deployment_id,
)
from basedb.platform.storage import ids, indexes
from basedb.platform.storage.store import Store
from basedb.protocol import ApiFailure, Code, unexecuted_message
from basedb.sql.sqlite.query import CompileError
from basedb.workspace.catalog import catalog_to_dict
from basedb.workspace.model import FUNCTION_KINDS, Catalog, DatabaseFunction

DEPLOYMENT_ID = ("dpl", 16)


@frozen_dataclass
class Deployment:
    deployment_id: str
    app_token: str
    seq: int
    fingerprint: str
    exclude: list[str]
    function_hints: list[dict[str, Any]]
    artifact_sha256: str
    artifact_size: int
    created_by: str
    created_at: str
    timezone: str  # the site's time zone, frozen with the functions
    draft_revision: int | None  # the draft revision it was built from


@frozen_dataclass
class DeploymentHeader:
    """What a listing shows of a deployment: everything but its agent-tools policy and
    function hints, which a site with thousands of hinted functions and many
    deployments would otherwise decode for every one of them."""

    deployment_id: str
    app_token: str
    seq: int
    fingerprint: str
    created_by: str
    created_at: str
    timezone: str
    draft_revision: int | None


_COLUMNS = ("deployment_id, app_token, seq, fingerprint, exclude, function_hints, "
            "artifact_sha256, artifact_size, created_by, created_at, timezone, "
            "draft_revision")


def _row(row: Sequence[Any]) -> Deployment:
    return Deployment(row[0], row[1], row[2], row[3], json.loads(row[4]), json.loads(row[5]),
                      row[6], row[7], row[8], row[9], row[10], row[11])


# ------------------------------------------------------------------------- create


@frozen_dataclass
class _DraftState:
    site: sites.SiteRow
    entries: list[DraftEntry]
    functions: list[drafts.DraftFunction] | None  # in full, only when they must be judged
    exclude: list[str]
    timezone: str
    catalog: Catalog
    revisions: tuple[int, int]  # (drafts, catalog)
    digest: str  # of the functions (draft_content.draft_digest)
    # Their hints as stored (draft_content.stored_hints), when judged at this catalog before.
    judged: str | None


def _draft_state(conn: sqlite3.Connection, caches: DomainCaches, user: User,
                 app_token: str) -> _DraftState:
    site, _ = require_site(conn, user, app_token, roles=sites.MANAGER_ROLES)
    entries = draft_entries(conn, app_token, FUNCTION_KINDS, list(drafts.LIST_OF_KIND))
    revision = catalog_revision(conn)
    digest = draft_content.draft_digest(entries)
    judged = draft_content.stored_hints(conn, app_token, digest, revision)
    return _DraftState(
        site=site,
        entries=entries,
        functions=(drafts.load_functions(conn, app_token, FUNCTION_KINDS)
                   if judged is None else None),
        exclude=drafts.load_exclude(conn, app_token),
        timezone=drafts.load_timezone(conn, app_token),
        catalog=live_catalog(conn, site, caches.catalogs).catalog,
        revisions=(drafts.draft_revision(conn, app_token), revision),
        digest=digest,
        judged=judged,
    )


def _still(conn: sqlite3.Connection, seen: _DraftState, user: User) -> _DraftState | None:
    """`seen` (read before the write began) when the site's drafts and the catalog are
    still at its revisions: every change to a draft function, the time zone, the policy,
    or the tables and bindings moves one of them. The caller's access is checked again."""
    site, _ = require_site(conn, user, seen.site.app_token, roles=sites.MANAGER_ROLES)
    now = (drafts.draft_revision(conn, site.app_token), catalog_revision(conn))
    return replace(seen, site=site) if now == seen.revisions else None


def _judge(state: _DraftState) -> list[dict[str, Any]]:
    """The function hints of the drafts, or the refusal: 9499 when a draft no longer
    passes `check` against the live catalog, 800004030 when the policy names an id the
    drafts no longer have. Drafts already judged at this catalog revision (by the draft
    upload, or an earlier deployment) are not judged again."""
    if state.judged is not None:
        hints = draft_content.parse_hints(state.judged)
    else:
        assert state.functions is not None, "drafts not judged before are loaded in full"
        result = drafts.validate(state.functions, state.catalog)
        if result.errors:
            raise drafts.findings_failure(
                result, state.functions,
                what="The saved draft, judged against the site's live catalog at deploy time,")
        hints = [hint.to_dict() for hint in result.hints]
    legal = {item.function_id for item in state.entries}
    findings = validate_exclude({"exclude": state.exclude}, legal, file="agent-tools.json")
    if findings:
        raise drafts.policy_failure(findings, legal, Code.AGENT_TOOLS_POLICY_INVALID)
    return hints


def create(store: Store, caches: DomainCaches, user: User, app_token: str,
           artifact: VerifiedArtifact | HeldArtifact, *,
           draft_revision: int | None = None) -> Deployment:
    """A new preview deployment of the site's current drafts and `artifact` (uploaded, or
    the site.zip of the site's deployment with that fingerprint); refused (800004020)
    when `draft_revision` is given and the drafts are no longer at it, and (9499 with
    data.resend) when a held artifact is not the site's."""
    with store.read() as conn:
        seen = _draft_state(conn, caches, user, app_token)
        drafts.require_revision(conn, app_token, draft_revision)
    hints = _judge(seen)
    with store.write() as conn:
        state = _still(conn, seen, user) or _draft_state(conn, caches, user, app_token)
        drafts.require_revision(conn, app_token, draft_revision)
        if state.revisions != seen.revisions:
            hints = _judge(state)
        # A judgement found is renewed in place; only new hints are encoded (once, for
        # the judgement and the deployment both).
        if state.judged is not None and draft_content.renew_judgement(
                conn, app_token, state.digest, state.revisions[1]):
            stored = state.judged
        else:
            stored = draft_content.hints_json(hints)
            draft_content.save_judgement(conn, app_token, state.digest, state.revisions[1],
                                         stored)
        deployment = _insert(conn, user, state, artifact, hints, stored)
        _ensure_indexes(conn, caches, deployment.deployment_id, state,
                        LiveCatalog(state.catalog, state.revisions[1]))
        return deployment


def _ensure_indexes(conn: sqlite3.Connection, caches: DomainCaches, deployment_id: str,
                    state: _DraftState, live: LiveCatalog) -> list[str]:
    """The indexes for the Database Functions of a deployment, compiled against `live`
    as invoke compiles them (inside the write that creates the deployment). A function
    whose indexes were ensured at this catalog revision before (same content, same time
    zone) is not planned again: the platform only adds indexes, and a catalog change
    that drops one moves the revision."""
    keys = {item.function_id: _index_key(item.content_hash, state.timezone)
            for item in state.entries if item.kind == "database_function"}
    done = _indexed(conn, state.site.app_token, live.revision)
    todo = [function_id for function_id, key in keys.items() if key not in done]
    if not todo:
        return []
    snapshot = load_deployment_snapshot(conn, deployment_id, caches.snapshots)
    if snapshot is None:
        raise ValueError(f"deployment {deployment_id} is not in the database")
    specs: list[indexes.IndexSpec] = []
    # As in `basedb check`: the trees made here are garbage at once, and a collector
    # running during the batch would traverse everything the process holds, again and
    # again, making a large first deploy superlinear.
    paused = gc.isenabled()
    gc.disable()
    try:
        for function_id in todo:
            decl = snapshot.declarations.get(function_id)
            if isinstance(decl, DatabaseFunction):
                specs.extend(_index_specs(decl, live.catalog, state.timezone))
    finally:
        if paused:
            gc.enable()
    created = indexes.ensure_indexes(conn, specs)
    conn.execute("DELETE FROM indexed_functions WHERE app_token = ? AND "
                 "catalog_revision != ?", (state.site.app_token, live.revision))
    conn.executemany("INSERT OR IGNORE INTO indexed_functions (app_token, content_hash, "
                     "catalog_revision) VALUES (?, ?, ?)",
                     [(state.site.app_token, keys[function_id], live.revision)
                      for function_id in todo])
    return created


def _index_specs(decl: DatabaseFunction, catalog: Catalog,
                 timezone: str) -> list[indexes.IndexSpec]:
    """The indexes one Database Function's query would use, compiled as invoke compiles
    it. Its draft passed `check` against this very catalog (the deployment was judged
    just now, or its judgement found by content), so it is compiled without judging it
    again; a query that does not compile gets no index."""
    # Lazy: sqlglot loads with the first deployment that plans indexes, not with the app.
    from basedb.platform.storage.sql_compile import compile_for_sqlite  # noqa: PLC0415
    from basedb.sql.analysis import analyze_sql  # noqa: PLC0415

    if decl.sql is None:
        return []
    count = declared_param_count(decl)
    analysis = analyze_sql(decl.sql, catalog, count,
                           param_kinds=declared_param_kinds(decl, count))
    try:
        compiled = compile_for_sqlite(analysis, catalog, timezone=timezone)
    except CompileError:
        return []
    return indexes.plan_indexes(compiled)


def _index_key(content_hash: str, timezone: str) -> str:
    return hashlib.sha256(f"{content_hash}:{timezone}".encode()).hexdigest()


def _indexed(conn: sqlite3.Connection, app_token: str, revision: int) -> set[str]:
    return {row[0] for row in conn.execute(
        "SELECT content_hash FROM indexed_functions WHERE app_token = ? AND "
        "catalog_revision = ?", (app_token, revision))}


def _insert(conn: sqlite3.Connection, user: User, state: _DraftState,
            artifact: VerifiedArtifact | HeldArtifact, hints: list[dict[str, Any]],
            stored_hints: str) -> Deployment:
    """Insert the deployment (inside a write); `stored_hints` is `hints` as stored JSON."""
    app_token = state.site.app_token
    if isinstance(artifact, HeldArtifact):
        held = find_artifact(conn, app_token, artifact.fingerprint)
        if held is None:
            raise artifact_resend_failure(artifact.fingerprint)
        sha256, size = held.sha256, held.size
    else:
        sha256, size = artifact.sha256, len(artifact.content)
    seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM deployments WHERE app_token = ?",
                       (app_token,)).fetchone()[0]
    deployment = Deployment(
        deployment_id=ids.new_id(DEPLOYMENT_ID), app_token=app_token, seq=seq,
        fingerprint=artifact.fingerprint, exclude=list(state.exclude), function_hints=hints,
        artifact_sha256=sha256, artifact_size=size,
        created_by=user.user_id, created_at=ids.now_text(), timezone=state.timezone,
        draft_revision=state.revisions[0])
    conn.execute(
        f"INSERT INTO deployments ({_COLUMNS}, catalog) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (deployment.deployment_id, app_token, seq, deployment.fingerprint,
         json.dumps(deployment.exclude, ensure_ascii=False),
         stored_hints, deployment.artifact_sha256,
         deployment.artifact_size, deployment.created_by, deployment.created_at,
         deployment.timezone, deployment.draft_revision,
         json.dumps(catalog_to_dict(state.catalog), ensure_ascii=False)))
    # The drafts read in this transaction, copied as stored (never parsed again).
    conn.execute(
        "INSERT INTO deployment_functions (deployment_id, function_id, kind, declaration, "
        "sql, handler) SELECT ?, function_id, kind, declaration, sql, handler "
        "FROM draft_functions WHERE app_token = ?", (deployment.deployment_id, app_token))
    if isinstance(artifact, HeldArtifact):
        assert held is not None
        conn.execute("INSERT INTO deployment_artifacts (deployment_id, content) SELECT ?, "
                     "content FROM deployment_artifacts WHERE deployment_id = ?",
                     (deployment.deployment_id, held.deployment_id))
    else:
        conn.execute("INSERT INTO deployment_artifacts (deployment_id, content) "
                     "VALUES (?, ?)", (deployment.deployment_id, artifact.content))
    return deployment


# --------------------------------------------------------------------------- read


def list_deployments(conn: sqlite3.Connection, app_token: str) -> list[Deployment]:
    """Every deployment of the site, newest first."""
    return [_row(row) for row in conn.execute(
        f"SELECT {_COLUMNS} FROM deployments WHERE app_token = ? ORDER BY seq DESC",
        (app_token,))]


def list_headers(conn: sqlite3.Connection, app_token: str) -> list[DeploymentHeader]:
    """Every deployment of the site, newest first, without its policy and hints."""
    return [DeploymentHeader(*row) for row in conn.execute(
        "SELECT deployment_id, app_token, seq, fingerprint, created_by, created_at, "
        "timezone, draft_revision FROM deployments WHERE app_token = ? ORDER BY seq DESC",
        (app_token,))]


def get_deployment(conn: sqlite3.Connection, app_token: str, deployment_id: str) -> Deployment:
    """The site's deployment, or 800004020 when the id is not one of its deployments."""
    row = conn.execute(f"SELECT {_COLUMNS} FROM deployments WHERE deployment_id = ? "
                       "AND app_token = ?", (deployment_id, app_token)).fetchone()
    if row is None:
        raise conflict(f"Deployment {deployment_id} is not a deployment of site {app_token}",
                       deployment_id, f"use a deploymentId from GET /sites/{app_token}/"
                       "deployments, or deploy a preview first")
    return _row(row)


def last_promotions(conn: sqlite3.Connection, app_token: str) -> dict[str, str]:
    """When each deployment of the site last became prod, by deployment id."""
    return {row[0]: row[1] for row in conn.execute(
        "SELECT deployment_id, MAX(promoted_at) FROM promotions WHERE app_token = ? "
        "GROUP BY deployment_id", (app_token,))}


def function_ids_by_kind(conn: sqlite3.Connection, deployment_id: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {kind: [] for kind in FUNCTION_KINDS}
    for function_id, kind in conn.execute(
            "SELECT function_id, kind FROM deployment_functions WHERE deployment_id = ? "
            "ORDER BY function_id", (deployment_id,)):
        found[kind].append(function_id)
    return found


def artifact_content(conn: sqlite3.Connection, deployment_id: str) -> bytes | None:
    row = conn.execute("SELECT content FROM deployment_artifacts WHERE deployment_id = ?",
                       (deployment_id,)).fetchone()
    return bytes(row[0]) if row else None


# ------------------------------------------------------------------------- prod


def promote(conn: sqlite3.Connection, user: User, app_token: str,
            deployment_id: str) -> Deployment:
    """Point prod at the site's latest preview `deployment_id` (inside a write)."""
    deployment = get_deployment(conn, app_token, deployment_id)
    latest = preview_deployment_id(conn, app_token)
    if latest != deployment_id:
        raise conflict(
            f"Deployment {deployment_id} is a stale preview: {latest} is the latest preview "
            f"of site {app_token}", deployment_id,
            "deploy the preview again and promote that one; to return prod to an earlier "
            "release, use rollback")
    _point_prod(conn, user, app_token, deployment_id, "promote")
    return deployment


def rollback(conn: sqlite3.Connection, user: User, app_token: str,
             deployment_id: str) -> Deployment:
    """Point prod back at `deployment_id`, which must have been prod before."""
    deployment = get_deployment(conn, app_token, deployment_id)
    was_prod = conn.execute("SELECT 1 FROM promotions WHERE app_token = ? AND "
                            "deployment_id = ? LIMIT 1", (app_token, deployment_id)).fetchone()
    if was_prod is None:
        raise conflict(f"Deployment {deployment_id} was never in production, so prod cannot "
                       "roll back to it", deployment_id,
                       "roll back to a deployment whose promotedAt is set (GET "
                       f"/sites/{app_token}/deployments), or promote the latest preview")
    _point_prod(conn, user, app_token, deployment_id, "rollback")
    return deployment


def _point_prod(conn: sqlite3.Connection, user: User, app_token: str, deployment_id: str,
                action: str) -> None:
    if prod_deployment_id(conn, app_token) == deployment_id:
        return  # already prod: promoting or rolling back again changes nothing
    conn.execute("INSERT INTO promotions (app_token, deployment_id, action, promoted_by, "
                 "promoted_at) VALUES (?, ?, ?, ?, ?)",
                 (app_token, deployment_id, action, user.user_id, ids.now_text()))


def conflict(reason: str, deployment_id: str, fix: str) -> ApiFailure:
    return ApiFailure(Code.DEPLOYMENT_CONFLICT,
                      unexecuted_message(reason, parameter="/path/deployment_id",
                                         received=deployment_id, fix=fix),
                      status=409)
