"""Who may use a Base: its owner, and the users holding a grant on it.

A grant is a row of `base_grants`, one of two kinds:

- direct (`via` = ''): given by the Base's owner (POST /bases/:b/grants), until the
  owner takes it back;
- through a site (`via` = its app token): held by each owner and admin of a site bound
  to the Base, for as long as they hold that role and the site stays bound.

A binding (a site's `base_token`) records who made it and on which access
(`bound_by`, `bound_via`: 'owner', 'grant', or the app token of the site the binder's
access came through). A binding is only as good as that access: `reconcile` keeps the
Base so that every binding rests, in a chain that ends at the Base's owner or a direct
grant, on access its binder still holds, and the site grants are exactly those of the
bindings that do. So when a member or admin leaves a site (or an admin becomes a member),
or a direct grant is taken back, everything held through it ends with it:

- their grants through that site;
- the bindings they made with that access, unless they still have access to the Base
  another way (then the binding rests on that); otherwise the binding goes (the site is
  unbound from the Base), and with it every grant held through that site, and so on.

Nothing moves to anyone: a binding that lost its footing is removed, and its site's
owner can bind again if they have access of their own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from basedb.core.frozen import frozen_dataclass
from basedb.platform.storage import ids

OWNER_BASIS = "owner"
GRANT_BASIS = "grant"


@frozen_dataclass
class Grant:
    user_id: str
    name: str
    via: str | None  # None: a direct grant; else the site it is held through
    granted_by: str
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "name": self.name, "via_app_token": self.via,
                "granted_by": self.granted_by, "created_at": self.created_at}


@frozen_dataclass
class GrantListing:
    """Who may use a Base besides its owner."""

    owner_id: str
    grants: Sequence[Grant]

    def to_dict(self) -> dict[str, Any]:
        return {"owner_id": self.owner_id, "grants": [g.to_dict() for g in self.grants],
                "total": len(self.grants)}


@frozen_dataclass
class GrantGiven:
    user_id: str
    granted: Literal[True] = True

    def to_dict(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "granted": self.granted}


@frozen_dataclass
class GrantRevoked:
    """A direct grant taken back, and the sites that unbound from the Base (bound on that
    access and resting on no other access of the user's)."""

    user_id: str
    unbound_app_tokens: Sequence[str]
    revoked: Literal[True] = True

    def to_dict(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "revoked": self.revoked,
                "unbound_app_tokens": list(self.unbound_app_tokens)}


@dataclass(slots=True)
class Reconciled:
    """What one reconcile changed."""

    unbound: list[str] = field(default_factory=list)  # sites unbound from the Base
    rebased: list[str] = field(default_factory=list)  # bindings now resting on other access
    revoked: list[tuple[str, str]] = field(default_factory=list)  # (user, via site)
    granted: list[tuple[str, str]] = field(default_factory=list)


def has_grant(conn: sqlite3.Connection, base_token: str, user_id: str) -> bool:
    return conn.execute("SELECT 1 FROM base_grants WHERE base_token = ? AND user_id = ? "
                        "LIMIT 1", (base_token, user_id)).fetchone() is not None


def list_grants(conn: sqlite3.Connection, base_token: str) -> list[Grant]:
    """Every grant on the Base: direct ones first, then by site, then by user."""
    return [Grant(row[0], row[1], row[2] or None, row[3], row[4]) for row in conn.execute(
        "SELECT g.user_id, u.name, g.via, g.granted_by, g.created_at FROM base_grants g "
        "JOIN users u ON u.user_id = g.user_id WHERE g.base_token = ? "
        "ORDER BY g.via != '', g.via, u.name, g.user_id", (base_token,))]


def grant_directly(conn: sqlite3.Connection, base_token: str, user_id: str,
                   granted_by: str) -> bool:
    """Give `user_id` a direct grant; False when they already had one."""
    cursor = conn.execute(
        "INSERT OR IGNORE INTO base_grants (base_token, user_id, via, granted_by, created_at) "
        "VALUES (?, ?, '', ?, ?)", (base_token, user_id, granted_by, ids.now_text()))
    return cursor.rowcount > 0


def revoke_direct(conn: sqlite3.Connection, base_token: str, user_id: str) -> bool:
    """Take a direct grant back (then `reconcile`); False when there was none."""
    cursor = conn.execute("DELETE FROM base_grants WHERE base_token = ? AND user_id = ? "
                          "AND via = ''", (base_token, user_id))
    return cursor.rowcount > 0


def binding_basis(conn: sqlite3.Connection, base_token: str, owner_id: str, user_id: str,
                  *, excluding: str | None = None) -> str | None:
    """The firmest access `user_id` has to the Base, as a binding's `bound_via`: the
    owner, a direct grant, else a site they manage that is bound to it (not
    `excluding`, the site being bound)."""
    if user_id == owner_id:
        return OWNER_BASIS
    rows = conn.execute("SELECT via FROM base_grants WHERE base_token = ? AND user_id = ? "
                        "ORDER BY via", (base_token, user_id)).fetchall()
    vias = [row[0] for row in rows]
    if "" in vias:
        return GRANT_BASIS
    for via in vias:
        if via != excluding:
            return str(via)
    return None


def record_binding(conn: sqlite3.Connection, app_token: str, user_id: str, basis: str) -> None:
    conn.execute("UPDATE sites SET bound_by = ?, bound_via = ? WHERE app_token = ?",
                 (user_id, basis, app_token))


# ------------------------------------------------------------------------ reconcile


@frozen_dataclass
class _Binding:
    app_token: str
    bound_by: str | None
    bound_via: str | None


def reconcile(conn: sqlite3.Connection, base_token: str | None) -> Reconciled:
    """Make the Base's bindings and site grants agree with who holds what now (inside a
    write; see the module docstring). Call after any change to a site's members or
    roles, a binding, or a direct grant."""
    done = Reconciled()
    if base_token is None:
        return done
    row = conn.execute("SELECT owner_id FROM bases WHERE base_token = ?",
                       (base_token,)).fetchone()
    if row is None:
        return done
    owner_id = str(row[0])
    bindings = {b.app_token: b for b in (_Binding(*r) for r in conn.execute(
        "SELECT app_token, bound_by, bound_via FROM sites WHERE base_token = ?",
        (base_token,)))}
    managers = _managers(conn, bindings)
    direct = {str(r[0]) for r in conn.execute(
        "SELECT user_id FROM base_grants WHERE base_token = ? AND via = ''", (base_token,))}

    def holds(binding: _Binding, valid: set[str]) -> bool:
        by, via = binding.bound_by, binding.bound_via
        if by is None or via is None:
            return False
        if via == OWNER_BASIS:
            return by == owner_id
        if via == GRANT_BASIS:
            return by in direct
        return via in valid and via != binding.app_token and by in managers.get(via, set())

    valid: set[str] = set()
    while True:
        # The least fixed point: bindings resting, link by link, on the owner or a
        # direct grant (two bindings resting on each other hold nothing).
        grown = {app for app, b in bindings.items() if app not in valid and holds(b, valid)}
        if grown:
            valid |= grown
            continue
        moved = _rebase_one(conn, bindings, valid, owner_id, direct, managers)
        if moved is None:
            break
        done.rebased.append(moved)
        valid.add(moved)
    for app_token in sorted(set(bindings) - valid):
        conn.execute("DELETE FROM site_tables WHERE app_token = ?", (app_token,))
        conn.execute("UPDATE sites SET base_token = NULL, bound_by = NULL, bound_via = NULL "
                     "WHERE app_token = ?", (app_token,))
        done.unbound.append(app_token)
    _sync_site_grants(conn, base_token, owner_id, valid, managers, bindings, done)
    return done


def _managers(conn: sqlite3.Connection, apps: Iterable[str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {app: set() for app in apps}
    for app_token in found:
        for (user_id,) in conn.execute(
                "SELECT user_id FROM site_members WHERE app_token = ? AND role IN "
                "('owner', 'admin')", (app_token,)):
            found[app_token].add(str(user_id))
    return found


def _rebase_one(conn: sqlite3.Connection, bindings: dict[str, _Binding], valid: set[str],
                owner_id: str, direct: set[str], managers: dict[str, set[str]]) -> str | None:
    """Move one binding whose access is gone onto other access its binder still holds;
    the site moved, or None when none can move."""
    for app_token in sorted(set(bindings) - valid):
        by = bindings[app_token].bound_by
        if by is None:
            continue
        basis: str | None = None
        if by == owner_id:
            basis = OWNER_BASIS
        elif by in direct:
            basis = GRANT_BASIS
        else:
            basis = next((v for v in sorted(valid) if v != app_token
                          and by in managers.get(v, set())), None)
        if basis is not None:
            record_binding(conn, app_token, by, basis)
            bindings[app_token] = _Binding(app_token, by, basis)
            return app_token
    return None


def _sync_site_grants(conn: sqlite3.Connection, base_token: str, owner_id: str,
                      valid: set[str], managers: dict[str, set[str]],
                      bindings: dict[str, _Binding], done: Reconciled) -> None:
    wanted = {(user, app) for app in valid for user in managers.get(app, set())
              if user != owner_id}
    held = {(str(r[0]), str(r[1])) for r in conn.execute(
        "SELECT user_id, via FROM base_grants WHERE base_token = ? AND via != ''",
        (base_token,))}
    for user, app in sorted(held - wanted):
        conn.execute("DELETE FROM base_grants WHERE base_token = ? AND user_id = ? AND via = ?",
                     (base_token, user, app))
        done.revoked.append((user, app))
    now = ids.now_text()
    for user, app in sorted(wanted - held):
        conn.execute("INSERT INTO base_grants (base_token, user_id, via, granted_by, "
                     "created_at) VALUES (?, ?, ?, ?, ?)",
                     (base_token, user, app, bindings[app].bound_by, now))
        done.granted.append((user, app))
