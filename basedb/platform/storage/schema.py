"""The platform database's meta tables, as an ordered list of migrations.

`schema_migrations` records which versions are applied. To change the schema, append a
`Migration` with the next version number to `MIGRATIONS` (never edit an applied one);
`Store` applies the missing ones at start-up inside one `BEGIN IMMEDIATE` transaction,
so several processes opening the same data dir at once stay consistent.

Base records do not live here: each Base table is its own SQLite table, laid out as
`basedb.platform.storage.physical` describes, created and altered by `basedb.platform.domain.bases`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from basedb.core.content_hash import function_content_hash
from basedb.core.errors import ConflictError
from basedb.core.frozen import frozen_dataclass
from basedb.platform.storage import physical


@frozen_dataclass
class Migration:
    version: int
    description: str
    apply: str | Callable[[sqlite3.Connection], None]


_CORE = """
CREATE TABLE users (
    user_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    is_platform_owner INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE TABLE tokens (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
    created_at TEXT NOT NULL
);
CREATE INDEX tokens_by_user ON tokens(user_id);
CREATE TABLE bases (
    base_token TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    owner_id TEXT NOT NULL REFERENCES users(user_id),
    created_at TEXT NOT NULL
);
CREATE TABLE base_tables (
    table_id TEXT PRIMARY KEY,
    base_token TEXT NOT NULL REFERENCES bases(base_token) ON DELETE CASCADE,
    name TEXT NOT NULL,
    position INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (base_token, name)
);
CREATE TABLE fields (
    field_id TEXT PRIMARY KEY,
    table_id TEXT NOT NULL REFERENCES base_tables(table_id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    multiple INTEGER NOT NULL DEFAULT 0,
    options TEXT,                  -- JSON array of option names (select)
    link_table TEXT REFERENCES base_tables(table_id),
    description TEXT NOT NULL DEFAULT '',
    position INTEGER NOT NULL,
    next_number INTEGER,           -- the next value of an auto_number field
    UNIQUE (table_id, name)
);
CREATE INDEX fields_by_link_table ON fields(link_table);
CREATE TABLE sites (
    app_token TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    owner_id TEXT NOT NULL REFERENCES users(user_id),
    base_token TEXT REFERENCES bases(base_token),
    created_at TEXT NOT NULL
);
CREATE INDEX sites_by_base ON sites(base_token);
CREATE TABLE site_tables (
    app_token TEXT NOT NULL REFERENCES sites(app_token) ON DELETE CASCADE,
    table_id TEXT NOT NULL REFERENCES base_tables(table_id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    PRIMARY KEY (app_token, table_id)
);
CREATE TABLE site_members (
    app_token TEXT NOT NULL REFERENCES sites(app_token) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    PRIMARY KEY (app_token, user_id)
);
CREATE INDEX site_members_by_user ON site_members(user_id);
"""


def _catalog_revision(conn: sqlite3.Connection) -> None:
    """One counter that every change to a site's catalog bumps (tables, fields, bindings),
    kept by triggers so that no write path can forget it; caches of compiled functions
    key on it (`basedb.platform.domain.revision`). Trigger bodies contain `;`, hence a callable."""
    conn.execute("CREATE TABLE catalog_revision (id INTEGER PRIMARY KEY CHECK (id = 1), "
                 "revision INTEGER NOT NULL)")
    conn.execute("INSERT INTO catalog_revision (id, revision) VALUES (1, 1)")
    events = {
        "base_tables": ("INSERT", "DELETE", "UPDATE OF name"),
        # not next_number: every record insert with an auto number updates it
        "fields": ("INSERT", "DELETE", "UPDATE OF table_id, name, type, multiple, options, "
                   "link_table, description, position"),
        "site_tables": ("INSERT", "DELETE", "UPDATE"),
        "sites": ("UPDATE OF base_token",),
    }
    for table, table_events in events.items():
        for number, event in enumerate(table_events, start=1):
            conn.execute(f"CREATE TRIGGER catalog_revision_{table}_{number} AFTER {event} "
                         f"ON {table} BEGIN UPDATE catalog_revision SET revision = "
                         "revision + 1 WHERE id = 1; END")


_RELEASES = """
CREATE TABLE site_drafts (
    app_token TEXT PRIMARY KEY REFERENCES sites(app_token) ON DELETE CASCADE,
    exclude TEXT NOT NULL DEFAULT '[]',  -- the agent-tools policy: JSON array of ids
    revision INTEGER NOT NULL DEFAULT 0, -- bumped by every draft write
    updated_at TEXT NOT NULL
);
CREATE TABLE draft_functions (
    app_token TEXT NOT NULL REFERENCES sites(app_token) ON DELETE CASCADE,
    kind TEXT NOT NULL
        CHECK (kind IN ('database_function', 'mutation', 'faas', 'ai_function')),
    function_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    declaration TEXT NOT NULL,     -- function.json, as JSON
    sql TEXT,                      -- main.sql of a Database Function
    handler TEXT,                  -- index.mjs of a FaaS
    PRIMARY KEY (app_token, kind, function_id)
);
CREATE TABLE deployments (
    deployment_id TEXT PRIMARY KEY,
    app_token TEXT NOT NULL REFERENCES sites(app_token) ON DELETE CASCADE,
    seq INTEGER NOT NULL,          -- 1, 2, ... per site, in creation order
    fingerprint TEXT NOT NULL,
    exclude TEXT NOT NULL,         -- JSON array of excluded ids
    catalog TEXT NOT NULL,         -- catalog.json of the bound tables at deploy time
    function_hints TEXT NOT NULL,  -- JSON array
    artifact_sha256 TEXT NOT NULL,
    artifact_size INTEGER NOT NULL,
    created_by TEXT NOT NULL REFERENCES users(user_id),
    created_at TEXT NOT NULL,
    UNIQUE (app_token, seq)
);
CREATE TABLE deployment_functions (
    deployment_id TEXT NOT NULL REFERENCES deployments(deployment_id) ON DELETE CASCADE,
    function_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    declaration TEXT NOT NULL,
    sql TEXT,
    handler TEXT,
    PRIMARY KEY (deployment_id, function_id)
);
CREATE TABLE deployment_artifacts (
    deployment_id TEXT PRIMARY KEY REFERENCES deployments(deployment_id) ON DELETE CASCADE,
    content BLOB NOT NULL          -- the uploaded site.zip
);
CREATE TABLE promotions (          -- prod history; a site's newest row is its prod pointer
    promotion_id INTEGER PRIMARY KEY AUTOINCREMENT,
    app_token TEXT NOT NULL REFERENCES sites(app_token) ON DELETE CASCADE,
    deployment_id TEXT NOT NULL REFERENCES deployments(deployment_id) ON DELETE CASCADE,
    action TEXT NOT NULL CHECK (action IN ('promote', 'rollback')),
    promoted_by TEXT NOT NULL REFERENCES users(user_id),
    promoted_at TEXT NOT NULL
);
CREATE INDEX promotions_by_site ON promotions(app_token, promotion_id);
CREATE TABLE page_sessions (
    session_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at INTEGER NOT NULL    -- unix seconds
);
CREATE INDEX page_sessions_by_expiry ON page_sessions(expires_at);
"""

# A deployment is a snapshot: nothing may change it once written.
_IMMUTABLE_TABLES = ("deployments", "deployment_functions", "deployment_artifacts")


def _releases(conn: sqlite3.Connection) -> None:
    for statement in _statements(_RELEASES):
        conn.execute(statement)
    for table in _IMMUTABLE_TABLES:
        # Trigger bodies contain `;`, which _statements would split on.
        conn.execute(f"CREATE TRIGGER {table}_immutable BEFORE UPDATE ON {table} "
                     "BEGIN SELECT RAISE(ABORT, 'deployments are immutable'); END")


_LARK_STAND_IN = """
ALTER TABLE tokens ADD COLUMN kind TEXT NOT NULL DEFAULT 'platform';
ALTER TABLE tokens ADD COLUMN expires_at INTEGER;
ALTER TABLE tokens ADD COLUMN app_id TEXT;
ALTER TABLE tokens ADD COLUMN scope TEXT;
ALTER TABLE tokens ADD COLUMN family TEXT;
CREATE INDEX tokens_by_family ON tokens(family);
CREATE TABLE lark_apps (
    app_id TEXT PRIMARY KEY,
    secret_hash TEXT NOT NULL,
    name TEXT NOT NULL,
    bot_user_id TEXT NOT NULL REFERENCES users(user_id),
    created_at TEXT NOT NULL
);
CREATE TABLE lark_refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    family TEXT NOT NULL,          -- every token refreshed from one sign-in
    user_id TEXT NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
    app_id TEXT NOT NULL REFERENCES lark_apps(app_id) ON DELETE CASCADE,
    scope TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER                -- set once: a refresh token is good for one refresh
);
CREATE INDEX lark_refresh_by_family ON lark_refresh_tokens(family);
CREATE TABLE lark_device_grants (
    device_code_hash TEXT PRIMARY KEY,
    user_code TEXT NOT NULL UNIQUE,
    app_id TEXT NOT NULL REFERENCES lark_apps(app_id) ON DELETE CASCADE,
    scope TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'used')),
    user_id TEXT REFERENCES users(user_id) ON DELETE CASCADE,
    interval INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    last_poll INTEGER
);
CREATE TABLE lark_throttle (
    key TEXT PRIMARY KEY,          -- what is being guessed, and by whom
    failures INTEGER NOT NULL,
    window_start INTEGER NOT NULL
);
"""

# Values a site's FaaS handlers read as environment variables (`secrets` in function.json);
# set by the site's owner or admins, never returned by the API.
_SECRETS = """
CREATE TABLE site_secrets (
    app_token TEXT NOT NULL REFERENCES sites(app_token) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    updated_by TEXT NOT NULL REFERENCES users(user_id),
    updated_at TEXT NOT NULL,
    PRIMARY KEY (app_token, name)
);
"""

_PAGE_ORIGINS = """
DELETE FROM page_sessions;
ALTER TABLE page_sessions ADD COLUMN app_token TEXT
    REFERENCES sites(app_token) ON DELETE CASCADE;
CREATE INDEX page_sessions_by_site_user ON page_sessions(app_token, user_id);
CREATE UNIQUE INDEX sites_by_page_host ON sites(lower(app_token));
"""
# Sessions were platform-wide; each now belongs to one site (its page origin), so the
# old ones end. Page hosts are case-insensitive: no two sites may share one.


_BASE_GRANTS = """
CREATE TABLE base_grants (
    base_token TEXT NOT NULL REFERENCES bases(base_token) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
    via TEXT NOT NULL DEFAULT '',  -- '': given by the Base's owner; else the app token of
                                   -- the site (bound to the Base) the user manages
    granted_by TEXT NOT NULL REFERENCES users(user_id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (base_token, user_id, via)
);
CREATE INDEX base_grants_by_user ON base_grants(user_id);
ALTER TABLE sites ADD COLUMN bound_by TEXT REFERENCES users(user_id);
ALTER TABLE sites ADD COLUMN bound_via TEXT;  -- 'owner', 'grant' or an app token
UPDATE sites SET bound_by = owner_id, bound_via = CASE WHEN owner_id =
    (SELECT b.owner_id FROM bases b WHERE b.base_token = sites.base_token)
    THEN 'owner' ELSE 'grant' END WHERE base_token IS NOT NULL;
INSERT OR IGNORE INTO base_grants (base_token, user_id, via, granted_by, created_at)
    SELECT s.base_token, s.owner_id, '', b.owner_id, datetime('now', 'localtime')
    FROM sites s JOIN bases b ON b.base_token = s.base_token WHERE s.bound_via = 'grant';
INSERT OR IGNORE INTO base_grants (base_token, user_id, via, granted_by, created_at)
    SELECT s.base_token, m.user_id, s.app_token, s.bound_by, datetime('now', 'localtime')
    FROM sites s JOIN site_members m ON m.app_token = s.app_token
    JOIN bases b ON b.base_token = s.base_token
    WHERE m.role IN ('owner', 'admin') AND m.user_id != b.owner_id
"""
# Base access was "owns or administers a site bound to the Base", which outlived the
# role that gave it. It is now held as grants (basedb.platform.domain.grants). Existing
# bindings keep working: a site owner who bound someone else's Base gets a direct grant
# from that Base's owner, who can take it back (DELETE /bases/:b/grants).


_DEPLOYMENT_REVISION = """
ALTER TABLE deployments ADD COLUMN draft_revision INTEGER
"""
# The draft revision a deployment was built from (NULL for older deployments).


_PLATFORM_LOG = """
CREATE TABLE platform_log (        -- what `basedb logs` reads (see storage.platform_log)
    entry_id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    log_id TEXT NOT NULL,
    app_token TEXT REFERENCES sites(app_token) ON DELETE CASCADE,
    user_id TEXT,                  -- who made the request
    kind TEXT NOT NULL CHECK (kind IN ('call', 'detail')),
    level TEXT NOT NULL CHECK (level IN ('info', 'error')),
    env TEXT,
    function_id TEXT,
    code INTEGER,
    ms REAL,
    message TEXT NOT NULL
);
CREATE INDEX platform_log_by_site ON platform_log(app_token, entry_id);
CREATE INDEX platform_log_by_log_id ON platform_log(log_id)
"""
# The platform log becomes readable through the API, per site (`basedb logs`).


# The IANA time zone datetime cells are written in: a Base's for the Base API, a site's
# (sent with its draft, frozen into each deployment) for everything its functions do.
_TIME_ZONES = """
ALTER TABLE bases ADD COLUMN timezone TEXT NOT NULL DEFAULT 'UTC';
ALTER TABLE site_drafts ADD COLUMN timezone TEXT NOT NULL DEFAULT 'UTC';
ALTER TABLE deployments ADD COLUMN timezone TEXT NOT NULL DEFAULT 'UTC';
"""


_DRAFT_JUDGEMENTS = """
CREATE TABLE draft_judgements (
    app_token TEXT NOT NULL REFERENCES sites(app_token) ON DELETE CASCADE,
    digest TEXT NOT NULL,              -- content digest of the judged draft functions
    catalog_revision INTEGER NOT NULL, -- the catalog they were judged against
    hints TEXT NOT NULL,               -- the functionHints found, as JSON
    PRIMARY KEY (app_token, digest)
);
CREATE TABLE indexed_functions (
    app_token TEXT NOT NULL REFERENCES sites(app_token) ON DELETE CASCADE,
    content_hash TEXT NOT NULL,        -- one Database Function (and its time zone)
    catalog_revision INTEGER NOT NULL, -- the catalog its indexes were chosen against
    PRIMARY KEY (app_token, content_hash, catalog_revision)
) WITHOUT ROWID
"""
# A draft that passed `check` against a catalog revision passes it again, with the same
# hints, as long as neither changed: a redeploy of unchanged functions is not judged
# again. Likewise a Database Function whose indexes were ensured at a catalog revision
# needs no new plan to choose them.


_SIGN_IN_CODES = """
DELETE FROM page_sessions;
CREATE TABLE sign_in_codes (
    code_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(user_id) ON DELETE CASCADE,
    app_token TEXT NOT NULL REFERENCES sites(app_token) ON DELETE CASCADE,
    state_hash TEXT NOT NULL,      -- the browser's sign-in state cookie, hashed
    expires_at INTEGER NOT NULL    -- unix seconds
);
CREATE INDEX sign_in_codes_by_expiry ON sign_in_codes(expires_at);
"""
# A browser signs in on the platform's own origin and carries a one-time code to the
# site's page origin (basedb.platform.web.sign_in). Sessions opened by the sign-in form
# that page origins used to serve end: a service worker of the site may have seen the
# token typed there.


_LOG_SIZES = """
ALTER TABLE platform_log ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
UPDATE platform_log SET bytes = length(CAST(message AS BLOB)) + 128;
DROP INDEX platform_log_by_site;
CREATE INDEX platform_log_by_site ON platform_log(app_token, entry_id, bytes);
CREATE INDEX platform_log_sizes ON platform_log(entry_id, bytes);
CREATE TABLE platform_log_usage (  -- bytes of each site's entries ('': the platform's own)
    site TEXT PRIMARY KEY,
    bytes INTEGER NOT NULL
);
INSERT INTO platform_log_usage (site, bytes)
    SELECT coalesce(app_token, ''), sum(bytes) FROM platform_log GROUP BY app_token
"""
_LOG_USAGE_TRIGGERS = (
    "CREATE TRIGGER platform_log_usage_add AFTER INSERT ON platform_log BEGIN "
    "INSERT INTO platform_log_usage (site, bytes) VALUES (coalesce(NEW.app_token, ''), "
    "NEW.bytes) ON CONFLICT (site) DO UPDATE SET bytes = bytes + excluded.bytes; END",
    "CREATE TRIGGER platform_log_usage_remove AFTER DELETE ON platform_log BEGIN "
    "UPDATE platform_log_usage SET bytes = bytes - OLD.bytes "
    "WHERE site = coalesce(OLD.app_token, ''); END",
)
# The platform log is capped in bytes per owner and in all (storage.platform_log): each
# entry records its size, and the triggers keep each site's total.


def _log_sizes(conn: sqlite3.Connection) -> None:
    for statement in _statements(_LOG_SIZES):
        conn.execute(statement)
    for trigger in _LOG_USAGE_TRIGGERS:  # their bodies hold `;`, which _statements splits
        conn.execute(trigger)


def _record_counts(conn: sqlite3.Connection) -> None:
    """Each record table's number of records, counted once here and kept since by the
    triggers of `physical.record_count_ddl`."""
    conn.execute("CREATE TABLE record_counts (table_id TEXT PRIMARY KEY, "
                 "records INTEGER NOT NULL)")
    for (table_id,) in conn.execute("SELECT table_id FROM base_tables").fetchall():
        tname = physical.table_name(table_id)
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (tname,)).fetchone() is None:
            continue
        conn.execute("INSERT INTO record_counts (table_id, records) VALUES (?, "
                     f"(SELECT COUNT(*) FROM {tname}))", (table_id,))
        for trigger in physical.record_count_ddl(table_id):
            conn.execute(trigger)


def _draft_content_hashes(conn: sqlite3.Connection) -> None:
    """Each draft function keeps its content hash (basedb.core.content_hash), so that a
    redeploy can name the functions the site already holds instead of sending them."""
    conn.execute("ALTER TABLE draft_functions ADD COLUMN content_hash TEXT NOT NULL "
                 "DEFAULT ''")
    rows = conn.execute("SELECT rowid, kind, function_id, declaration, sql, handler "
                        "FROM draft_functions").fetchall()
    conn.executemany("UPDATE draft_functions SET content_hash = ? WHERE rowid = ?",
                     [(function_content_hash(kind, function_id, json.loads(declaration),
                                             sql, handler), rowid)
                      for rowid, kind, function_id, declaration, sql, handler in rows])


MIGRATIONS: list[Migration] = [
    Migration(1, "users, tokens, bases, tables, fields, sites, site members", _CORE),
    Migration(2, "catalog revision counter", _catalog_revision),
    Migration(3, "drafts, deployments, promotions, page sessions", _releases),
    Migration(4, "the Lark stand-in: app credentials, token kinds and expiry, device "
                 "grants, refresh tokens, throttling", _LARK_STAND_IN),
    Migration(5, "site secrets for FaaS handlers", _SECRETS),
    Migration(6, "page sessions belong to one site; one page host per site", _PAGE_ORIGINS),
    Migration(7, "Base access as grants; bindings record their basis", _BASE_GRANTS),
    Migration(8, "deployments record their draft revision", _DEPLOYMENT_REVISION),
    Migration(9, "the platform log as a table", _PLATFORM_LOG),
    Migration(10, "time zones of Bases, site drafts and deployments", _TIME_ZONES),
    Migration(11, "judged drafts and indexed functions, by content", _DRAFT_JUDGEMENTS),
    Migration(13, "draft functions keep their content hash", _draft_content_hashes),
    Migration(14, "one-time sign-in codes from the platform origin to page origins",
              _SIGN_IN_CODES),
    Migration(15, "platform log entries keep their size; each site's total", _log_sizes),
    Migration(16, "each record table's number of records, kept by triggers", _record_counts),
]


def apply_migrations(conn: sqlite3.Connection, migrations: list[Migration]) -> list[int]:
    """Apply the migrations not yet recorded; the caller holds a write transaction."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    newest = max((m.version for m in migrations), default=0)
    unknown = [v for v in applied if v > newest]
    if unknown:
        raise ConflictError(
            f"The platform database has schema version {max(unknown)}, newer than this "
            f"basedb understands ({newest}).",
            code="PLATFORM_SCHEMA_NEWER",
            hint="Upgrade basedb, or point $BASEDB_DATA_DIR (or --data) at another directory.",
        )
    done: list[int] = []
    for migration in sorted(migrations, key=lambda m: m.version):
        if migration.version in applied:
            continue
        if isinstance(migration.apply, str):
            for statement in _statements(migration.apply):
                conn.execute(statement)
        else:
            migration.apply(conn)
        conn.execute(
            "INSERT INTO schema_migrations (version, description, applied_at) "
            "VALUES (?, ?, datetime('now'))",
            (migration.version, migration.description),
        )
        done.append(migration.version)
    return done


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (executescript would commit)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
