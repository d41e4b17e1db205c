"""Who may touch what.

A Base is open to its owner (creator) and to the users holding a grant on it
(`basedb.platform.domain.grants`: given by its owner, or held while managing a site
bound to it). A site is open to its members; changing it needs the owner or admin role.

To anyone without access, a Base or a site is not there: the answer is the same 404 as
for one that does not exist, so a token cannot learn which ids are in use.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from typing import TYPE_CHECKING

from basedb.platform.domain import bases, grants, sites
from basedb.platform.domain.identity import User
from basedb.protocol import not_found, permission_denied

if TYPE_CHECKING:
    from basedb.workspace.model import Table


def can_access_base(conn: sqlite3.Connection, user: User, base: bases.BaseRow) -> bool:
    return base.owner_id == user.user_id or grants.has_grant(conn, base.base_token,
                                                             user.user_id)


def require_base(conn: sqlite3.Connection, user: User, base_token: str, *,
                 owner: bool = False) -> bases.BaseRow:
    """The Base, if it exists and the user may use it (`owner`: only its owner may do
    this; a user with a grant is told so, anyone else hears it does not exist)."""
    base = bases.get_base(conn, base_token)
    if base is None or not can_access_base(conn, user, base):
        raise not_found(f"Base {base_token}", "/path/base_token", base_token,
                        "use the base_token of a Base you own or were granted (POST "
                        "/bases returns it; its owner grants access)")
    if owner and base.owner_id != user.user_id:
        raise permission_denied(f"Only the owner of Base {base_token} manages who may use it",
                                "ask the Base's owner")
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
    role = sites.role_of(conn, app_token, user.user_id) if site is not None else None
    if site is None or role is None:
        raise not_found(f"Site {app_token}", "/path/app_token", app_token,
                        "use an appToken from GET /sites/list (the sites you belong to)")
    if role not in roles:
        needed = " or ".join(r for r in sites.ROLES if r in roles)
        held = {"owner": "the owner", "admin": "an admin", "member": "a member"}[role]
        raise permission_denied(
            f"User {user.user_id} is {held} of site {app_token}; this needs the {needed} role",
            f"ask the site's owner to grant it (POST /sites/{app_token}/members)")
    return site, role
