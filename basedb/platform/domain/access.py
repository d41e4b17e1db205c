"""Who may touch what.

A Base is open to its owner (creator) and to the owners and admins of any site bound to
it. A site is open to its members; changing it needs the owner or admin role.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from typing import TYPE_CHECKING

from basedb.core.protocol import not_found, permission_denied
from basedb.platform.domain import bases, sites
from basedb.platform.domain.identity import User

if TYPE_CHECKING:
    from basedb.workspace.model import Table


def can_access_base(conn: sqlite3.Connection, user: User, base: bases.BaseRow) -> bool:
    if base.owner_id == user.user_id:
        return True
    return conn.execute(
        "SELECT 1 FROM sites s JOIN site_members m ON m.app_token = s.app_token "
        "WHERE s.base_token = ? AND m.user_id = ? AND m.role IN ('owner', 'admin') LIMIT 1",
        (base.base_token, user.user_id)).fetchone() is not None


def require_base(conn: sqlite3.Connection, user: User, base_token: str) -> bases.BaseRow:
    """The Base, if it exists and the user may use it."""
    base = bases.get_base(conn, base_token)
    if base is None:
        raise not_found(f"Base {base_token}", "/path/base_token", base_token,
                        "use the base_token returned by POST /bases")
    if not can_access_base(conn, user, base):
        raise permission_denied(
            f"User {user.user_id} has no access to Base {base_token}",
            "ask its owner, or an owner or admin of a site bound to it, to grant access")
    return base


def require_table(conn: sqlite3.Connection, user: User, base_token: str,
                  table_id: str) -> Table:
    """A table of a Base, if the user may use the Base."""
    require_base(conn, user, base_token)
    return bases.require_table(conn, base_token, table_id)


def require_site(conn: sqlite3.Connection, user: User, app_token: str, *,
                 roles: Collection[str] = sites.ROLES) -> tuple[sites.SiteRow, str]:
    """The site and the user's role in it, if the role is one of `roles`."""
    site = sites.get_site(conn, app_token)
    if site is None:
        raise not_found(f"Site {app_token}", "/path/app_token", app_token,
                        "use an appToken from GET /sites/list")
    role = sites.role_of(conn, app_token, user.user_id)
    if role is None or role not in roles:
        needed = " or ".join(r for r in sites.ROLES if r in roles)
        held = {"owner": "the owner", "admin": "an admin", "member": "a member"}.get(
            role or "", "not a member")
        raise permission_denied(
            f"User {user.user_id} is {held} of site {app_token}; this needs the {needed} role",
            f"ask the site's owner to grant it (POST /sites/{app_token}/members)")
    return site, role
