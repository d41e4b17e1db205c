"""Site secrets: the values FaaS handlers read as environment variables.

    site_secrets.put(conn, caller, app_token, "STRIPE_API_KEY", value)
    site_secrets.listing(conn, caller, app_token)     # names and dates, never values
    values = site_secrets.values_for(conn, app_token, ("STRIPE_API_KEY",), …)

A function declares the names it reads (`"secrets": [...]` in function.json, checked by
`basedb check`); the site's owner or admins set the values on the platform (`basedb
secrets set NAME`, which reads the value from stdin or another variable), so they are
never in the workspace, its git history or site.zip. No route returns a value: a handler
gets exactly the secrets its declaration names, as `process.env.NAME`, and a call of a
function whose declared secret is not set is refused before anything runs.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain import sites
from basedb.platform.domain.access import require_site
from basedb.platform.domain.identity import User
from basedb.platform.storage.ids import now_text
from basedb.protocol import ApiFailure, Code, bad_request, quote, unexecuted_message
from basedb.workspace.faas_access import secret_name_problem

MAX_SECRETS_PER_SITE = 100
MAX_VALUE_BYTES = 32 * 1024


@frozen_dataclass
class SecretInfo:
    """A secret's name and when and by whom it was last set; never its value."""

    name: str
    updated_at: str
    updated_by: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "updatedAt": self.updated_at, "updatedBy": self.updated_by}


@frozen_dataclass
class SecretListing:
    """The site's secrets, by name."""

    secrets: Sequence[SecretInfo]

    def to_dict(self) -> dict[str, Any]:
        return {"secrets": [secret.to_dict() for secret in self.secrets]}


@frozen_dataclass
class SecretDeleted:
    name: str
    deleted: Literal[True] = True

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "deleted": self.deleted}


def _check_name(name: str) -> None:
    problem = secret_name_problem(name)
    if problem:
        raise bad_request(problem, parameter="/path/secret_name", received=name,
                          fix="use a name like STRIPE_API_KEY, as the function's \"secrets\" "
                              "declares it")


def listing(conn: sqlite3.Connection, caller: User, app_token: str) -> SecretListing:
    require_site(conn, caller, app_token, roles=sites.MANAGER_ROLES)
    rows = conn.execute("SELECT name, updated_at, updated_by FROM site_secrets "
                        "WHERE app_token = ? ORDER BY name", (app_token,)).fetchall()
    return SecretListing(tuple(SecretInfo(*row) for row in rows))


def put(conn: sqlite3.Connection, caller: User, app_token: str, name: str,
        value: Any) -> SecretInfo:
    """Set one secret (inside a write)."""
    require_site(conn, caller, app_token, roles=sites.MANAGER_ROLES)
    _check_name(name)
    if not isinstance(value, str) or not value:
        raise bad_request("The secret's value must be a non-empty string", parameter="/value",
                          fix="send {\"value\": \"…\"}")
    if len(value.encode("utf-8")) > MAX_VALUE_BYTES or "\0" in value:
        raise bad_request(f"The secret's value must be at most {MAX_VALUE_BYTES} bytes, "
                          "without NUL characters", parameter="/value",
                          fix="store a shorter value (a key or token, not a file)")
    exists = conn.execute("SELECT 1 FROM site_secrets WHERE app_token = ? AND name = ?",
                          (app_token, name)).fetchone()
    count = conn.execute("SELECT COUNT(*) FROM site_secrets WHERE app_token = ?",
                         (app_token,)).fetchone()[0]
    if not exists and count >= MAX_SECRETS_PER_SITE:
        raise bad_request(f"Site {app_token} already has {MAX_SECRETS_PER_SITE} secrets",
                          parameter="/path/secret_name", received=name,
                          fix="delete secrets no function declares any more")
    at = now_text()
    conn.execute("INSERT INTO site_secrets (app_token, name, value, updated_by, updated_at) "
                 "VALUES (?, ?, ?, ?, ?) ON CONFLICT (app_token, name) DO UPDATE SET "
                 "value = excluded.value, updated_by = excluded.updated_by, "
                 "updated_at = excluded.updated_at",
                 (app_token, name, value, caller.user_id, at))
    return SecretInfo(name, at, caller.user_id)


def delete(conn: sqlite3.Connection, caller: User, app_token: str, name: str) -> SecretDeleted:
    require_site(conn, caller, app_token, roles=sites.MANAGER_ROLES)
    _check_name(name)
    removed = conn.execute("DELETE FROM site_secrets WHERE app_token = ? AND name = ?",
                           (app_token, name)).rowcount
    if not removed:
        raise ApiFailure(Code.BAD_REQUEST, unexecuted_message(
            f"Site {app_token} has no secret {quote(name)}", parameter="/path/secret_name",
            received=name, fix="list the site's secrets with `basedb secrets list`"),
            status=404)
    return SecretDeleted(name)


def values_for(conn: sqlite3.Connection, app_token: str, names: Iterable[str], *,
               function_id: str, log_id: str) -> dict[str, str]:
    """The values of the secrets a function declares; refused when one is not set."""
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return {}
    rows = dict(conn.execute(
        "SELECT name, value FROM site_secrets WHERE app_token = ? AND name IN "
        "(SELECT value FROM json_each(?))", (app_token, json.dumps(wanted))).fetchall())
    missing = [name for name in wanted if name not in rows]
    if missing:
        raise ApiFailure(Code.EXECUTION_FAILED, (
            f"FaaS function {quote(function_id)} declares the secret {quote(missing[0])}, "
            f"which site {app_token} has not set. Fix: the site's owner or an admin sets it "
            f"with `basedb secrets set {missing[0]}` (the value is read from stdin). "
            f"Executed: no. Retry: retry after fixing. LogID: {log_id}"), status=500)
    return {name: rows[name] for name in wanted}
