"""Sites: their Base binding and their members.

A site binds at most one Base and an ordered list of its tables; binding only ever
appends (and dedupes) table ids, unbinding removes them, and a site left with no tables
is unbound from its Base. Members have a role: `owner` (the creator, exactly one),
`admin` or `member`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any, Literal

from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain import bases
from basedb.platform.storage import ids
from basedb.workspace.model import Catalog

ROLES = ("owner", "admin", "member")
MANAGER_ROLES = frozenset({"owner", "admin"})


@frozen_dataclass
class SiteRow:
    app_token: str
    title: str
    owner_id: str
    base_token: str | None


def create_site(conn: sqlite3.Connection, title: str, owner_id: str) -> SiteRow:
    while True:
        site = SiteRow(ids.new_id(ids.APP_TOKEN), title, owner_id, None)
        # A site's page host is its token in lower case, which must be its own.
        if conn.execute("SELECT 1 FROM sites WHERE lower(app_token) = lower(?)",
                        (site.app_token,)).fetchone() is None:
            break
    conn.execute("INSERT INTO sites (app_token, title, owner_id, base_token, created_at) "
                 "VALUES (?, ?, ?, NULL, ?)", (site.app_token, title, owner_id, ids.now_text()))
    conn.execute("INSERT INTO site_members (app_token, user_id, role) VALUES (?, ?, 'owner')",
                 (site.app_token, owner_id))
    return site


def delete_site(conn: sqlite3.Connection, app_token: str) -> None:
    """Delete the site with its members, drafts, deployments and log entries (all
    `ON DELETE CASCADE`). Its Base stays: it holds data that other sites may bind."""
    conn.execute("DELETE FROM sites WHERE app_token = ?", (app_token,))


def get_site(conn: sqlite3.Connection, app_token: str) -> SiteRow | None:
    row = conn.execute("SELECT app_token, title, owner_id, base_token FROM sites "
                       "WHERE app_token = ?", (app_token,)).fetchone()
    return SiteRow(*row) if row else None


def site_for_label(conn: sqlite3.Connection, label: str) -> SiteRow | None:
    """The site whose page host label (its token in lower case) is `label`."""
    row = conn.execute("SELECT app_token, title, owner_id, base_token FROM sites "
                       "WHERE lower(app_token) = lower(?)", (label,)).fetchone()
    return SiteRow(*row) if row else None


def role_of(conn: sqlite3.Connection, app_token: str, user_id: str) -> str | None:
    row = conn.execute("SELECT role FROM site_members WHERE app_token = ? AND user_id = ?",
                       (app_token, user_id)).fetchone()
    return row[0] if row else None


def sites_of_user(conn: sqlite3.Connection, user_id: str) -> list[tuple[SiteRow, str]]:
    rows = conn.execute(
        "SELECT s.app_token, s.title, s.owner_id, s.base_token, m.role FROM site_members m "
        "JOIN sites s ON s.app_token = m.app_token WHERE m.user_id = ? "
        "ORDER BY s.created_at, s.app_token", (user_id,))
    return [(SiteRow(*row[:4]), row[4]) for row in rows]


def bound_table_ids(conn: sqlite3.Connection, app_token: str) -> list[str]:
    return [row[0] for row in conn.execute(
        "SELECT table_id FROM site_tables WHERE app_token = ? ORDER BY position", (app_token,))]


def bind_tables(conn: sqlite3.Connection, site: SiteRow, base_token: str,
                table_ids: list[str]) -> list[str]:
    """Append tables (already checked to belong to `base_token`); returns the binding."""
    current = bound_table_ids(conn, site.app_token)
    position = len(current)
    for table_id in table_ids:
        if table_id not in current:
            position += 1
            current.append(table_id)
            conn.execute("INSERT INTO site_tables (app_token, table_id, position) "
                         "VALUES (?, ?, ?)", (site.app_token, table_id, position))
    conn.execute("UPDATE sites SET base_token = ? WHERE app_token = ?",
                 (base_token, site.app_token))
    return current


def unbind_tables(conn: sqlite3.Connection, site: SiteRow,
                  table_ids: list[str] | None) -> list[str]:
    """Remove the given tables (all when None); returns what stays bound."""
    if table_ids is None:
        conn.execute("DELETE FROM site_tables WHERE app_token = ?", (site.app_token,))
    else:
        conn.execute("DELETE FROM site_tables WHERE app_token = ? AND table_id IN "
                     "(SELECT value FROM json_each(?))", (site.app_token, json.dumps(table_ids)))
    remaining = bound_table_ids(conn, site.app_token)
    if not remaining:
        conn.execute("UPDATE sites SET base_token = NULL, bound_by = NULL, bound_via = NULL "
                     "WHERE app_token = ?", (site.app_token,))
    return remaining


def site_catalog(conn: sqlite3.Connection, site: SiteRow) -> Catalog:
    """The live Catalog of the site's bound tables (what catalog.json mirrors)."""
    if site.base_token is None:
        return Catalog(base_token="", tables=())
    tables = bases.load_tables(conn, site.base_token, bound_table_ids(conn, site.app_token))
    return Catalog(base_token=site.base_token, tables=tuple(tables))


def list_members(conn: sqlite3.Connection, app_token: str) -> MemberListing:
    """The owner first, then admins, then members, each by name."""
    return MemberListing(tuple(Member(r[0], r[1], r[2]) for r in conn.execute(
        "SELECT m.user_id, u.name, m.role FROM site_members m JOIN users u "
        "ON u.user_id = m.user_id WHERE m.app_token = ? ORDER BY CASE m.role "
        "WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, u.name, m.user_id",
        (app_token,))))


def set_member(conn: sqlite3.Connection, app_token: str, user_id: str, role: str) -> None:
    conn.execute("INSERT INTO site_members (app_token, user_id, role) VALUES (?, ?, ?) "
                 "ON CONFLICT (app_token, user_id) DO UPDATE SET role = excluded.role",
                 (app_token, user_id, role))


def remove_member(conn: sqlite3.Connection, app_token: str, user_id: str) -> bool:
    cursor = conn.execute("DELETE FROM site_members WHERE app_token = ? AND user_id = ?",
                          (app_token, user_id))
    return cursor.rowcount > 0


# ------------------------------------------------------------------------- results
# What the sites routes answer (camelCase like upstream).


@frozen_dataclass
class Binding:
    """The Base a site binds and its tables in binding order; no Base without tables."""

    base_token: str | None
    table_ids: tuple[str, ...]

    @classmethod
    def of(cls, site: SiteRow, table_ids: Sequence[str]) -> Binding:
        return cls(site.base_token if table_ids else None, tuple(table_ids))

    def to_dict(self) -> dict[str, Any]:
        return {"baseToken": self.base_token, "tableIds": list(self.table_ids)}


@frozen_dataclass
class SiteBinding:
    """A site's binding after it changed."""

    app_token: str
    binding: Binding

    def to_dict(self) -> dict[str, Any]:
        return {"appToken": self.app_token, **self.binding.to_dict()}


@frozen_dataclass
class SiteView:
    """A site as one of its members sees it: their role and the site's binding."""

    site: SiteRow
    role: str
    binding: Binding

    def to_dict(self) -> dict[str, Any]:
        return {"appToken": self.site.app_token, "title": self.site.title,
                "ownerId": self.site.owner_id, "role": self.role,
                "binding": self.binding.to_dict()}


@frozen_dataclass
class SiteCreated:
    site: SiteRow

    def to_dict(self) -> dict[str, Any]:
        return {"appToken": self.site.app_token, "title": self.site.title}


@frozen_dataclass
class SiteDeleted:
    """A deleted site, and the Base it was bound to (which stays)."""

    site: SiteRow
    deleted: Literal[True] = True

    def to_dict(self) -> dict[str, Any]:
        return {"appToken": self.site.app_token, "deleted": self.deleted,
                "baseToken": self.site.base_token}


@frozen_dataclass
class Membership:
    """A site the caller belongs to, with their role."""

    site: SiteRow
    role: str

    def to_dict(self) -> dict[str, Any]:
        return {"appToken": self.site.app_token, "title": self.site.title, "role": self.role,
                "baseToken": self.site.base_token}


@frozen_dataclass
class SitePage:
    """A page of the caller's sites; `page_token` reads on (None on the last page)."""

    sites: Sequence[Membership]
    page_token: str | None = None

    @property
    def has_more(self) -> bool:
        return self.page_token is not None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sites": [s.to_dict() for s in self.sites],
                               "hasMore": self.has_more}
        if self.page_token is not None:
            out["pageToken"] = self.page_token
        return out


@frozen_dataclass
class Member:
    user_id: str
    name: str
    role: str

    def to_dict(self) -> dict[str, Any]:
        return {"userId": self.user_id, "name": self.name, "role": self.role}


@frozen_dataclass
class MemberListing:
    members: Sequence[Member]

    def to_dict(self) -> dict[str, Any]:
        return {"members": [m.to_dict() for m in self.members], "total": len(self.members)}


@frozen_dataclass
class MemberRole:
    """A member added, or their role changed."""

    user_id: str
    role: str

    def to_dict(self) -> dict[str, Any]:
        return {"userId": self.user_id, "role": self.role}


@frozen_dataclass
class MemberRemoved:
    user_id: str
    removed: Literal[True] = True

    def to_dict(self) -> dict[str, Any]:
        return {"userId": self.user_id, "removed": self.removed}
