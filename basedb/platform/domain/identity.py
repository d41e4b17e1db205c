"""Users, bearer tokens and the platform owner.

Tokens are stored only as SHA-256 hashes. On first start the platform creates its owner
user and writes the owner's token to `<data dir>/owner.token` (file 0600 in a 0700
directory, replaced atomically); the `local` profile reads it from there. If that file
is lost, the next start issues a new owner token and rewrites it.
"""

from __future__ import annotations

import getpass
import sqlite3
import time
from pathlib import Path
from typing import Any

from basedb.core.atomic import PRIVATE_FILE_MODE, write_file_atomically
from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain.resolved import ResolvedMemo, data_version
from basedb.platform.storage import ids
from basedb.platform.storage.store import Store
from basedb.protocol import ApiFailure, Code

OWNER_TOKEN_FILE = "owner.token"


@frozen_dataclass
class User:
    user_id: str
    name: str
    is_platform_owner: bool = False
    is_bot: bool = False  # signed in with a tenant access token (an app's bot)

    def to_dict(self) -> dict[str, Any]:
        """GET /users/me."""
        return {"user_id": self.user_id, "name": self.name,
                "is_platform_owner": self.is_platform_owner}

    def lark_user_info(self) -> dict[str, Any]:
        """Lark's user_info answer: the fields lark-cli reads (`open_id`, `name`) and
        their kin."""
        return {"open_id": self.user_id, "union_id": self.user_id, "user_id": self.user_id,
                "name": self.name, "en_name": self.name, "tenant_key": "basedb-local"}


@frozen_dataclass
class NewUser:
    """A user just created, with its first token (shown this once)."""

    user: User
    token: str

    def to_dict(self) -> dict[str, Any]:
        return {"user_id": self.user.user_id, "name": self.user.name, "token": self.token}


def create_user(conn: sqlite3.Connection, name: str, *,
                platform_owner: bool = False) -> NewUser:
    """A new user and its first token (returned once, never stored in clear)."""
    user = User(ids.new_id(ids.USER_ID), name, platform_owner)
    conn.execute(
        "INSERT INTO users (user_id, name, is_platform_owner, created_at) VALUES (?, ?, ?, ?)",
        (user.user_id, name, int(platform_owner), ids.now_text()),
    )
    return NewUser(user, issue_token(conn, user.user_id))


def issue_token(conn: sqlite3.Connection, user_id: str) -> str:
    token = ids.new_token()
    conn.execute("INSERT INTO tokens (token_hash, user_id, created_at) VALUES (?, ?, ?)",
                 (ids.hash_token(token), user_id, ids.now_text()))
    return token


def get_user(conn: sqlite3.Connection, user_id: str) -> User | None:
    row = conn.execute("SELECT user_id, name, is_platform_owner FROM users WHERE user_id = ?",
                       (user_id,)).fetchone()
    return User(row[0], row[1], bool(row[2])) if row else None


def user_for_token(conn: sqlite3.Connection, token: str) -> User | None:
    """The user of an unexpired token, or None."""
    row = conn.execute(
        "SELECT u.user_id, u.name, u.is_platform_owner, t.kind FROM tokens t "
        "JOIN users u ON u.user_id = t.user_id WHERE t.token_hash = ? "
        "AND (t.expires_at IS NULL OR t.expires_at > ?)",
        (ids.hash_token(token), int(time.time())),
    ).fetchone()
    return User(row[0], row[1], bool(row[2]), row[3] == "tenant") if row else None


def authenticate(conn: sqlite3.Connection, authorization: str | None, *,
                 now: int | None = None, memo: ResolvedMemo[Any] | None = None) -> User:
    """The user behind an `Authorization: Bearer <token>` header, or an auth failure.

    Tokens the Lark stand-in issued (`tenant`, `user`) expire; an expired one is answered
    as Lark answers it: 99991677 for a user access token, 99991663 for a tenant's.

    With a `memo`, `conn` must be a read-only connection (one that never writes): a
    known token's row is then looked up again only once the database has changed
    (`basedb.platform.domain.resolved`); its expiry is judged on every call."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ApiFailure(
            Code.TOKEN_MISSING,
            "Missing access token. Send the header `Authorization: Bearer <token>`; the "
            "local platform owner's token is in owner.token in the data dir (print it with "
            "`basedb auth token`). Executed: no. Retry: retry after fixing.",
            status=401,
        )
    token_hash = ids.hash_token(token)
    if memo is None:
        row = _token_row(conn, token_hash)
    else:
        version = data_version(conn)
        row = memo.get(conn, version, token_hash)
        if row is None:
            row = _token_row(conn, token_hash)
            if row is not None:  # unknown tokens are not kept: anyone can send many
                memo.put(conn, version, token_hash, row)
    if row is not None and row[4] is not None and row[4] <= (now or int(time.time())):
        if row[3] == "user":
            raise ApiFailure(Code.USER_TOKEN_EXPIRED, "The user access token has expired. "
                             "Fix: refresh it with the refresh token, or sign in again. "
                             "Executed: no. Retry: retry after fixing.", status=401)
        raise ApiFailure(Code.TOKEN_INVALID, "Invalid access token: the tenant access token "
                         "has expired. Fix: request a new one. Executed: no. Retry: retry "
                         "after fixing.", status=401)
    user = User(row[0], row[1], bool(row[2]), row[3] == "tenant") if row else None
    if user is None:
        raise ApiFailure(
            Code.TOKEN_INVALID,
            "Invalid access token: it is unknown to this platform. Use a token issued by "
            "this platform (`basedb auth token` for the local owner, or POST /users). "
            "Executed: no. Retry: retry after fixing.",
            status=401,
        )
    return user


def _token_row(conn: sqlite3.Connection, token_hash: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT u.user_id, u.name, u.is_platform_owner, t.kind, t.expires_at FROM tokens t "
        "JOIN users u ON u.user_id = t.user_id WHERE t.token_hash = ?",
        (token_hash,)).fetchone()
    return row


# ------------------------------------------------------------------------- the owner


def ensure_owner_token(store: Store, data_dir: Path) -> str:
    """The platform owner's token, creating the owner (or a new token) when needed."""
    token_path = data_dir / OWNER_TOKEN_FILE
    existing = _read_token(token_path)
    if existing:
        with store.read() as conn:
            user = user_for_token(conn, existing)
        if user is not None and user.is_platform_owner:
            return existing
    with store.write() as conn:
        # Another process may have fixed things while we waited for the write lock.
        existing = _read_token(token_path)
        if existing:
            user = user_for_token(conn, existing)
            if user is not None and user.is_platform_owner:
                return existing
        row = conn.execute("SELECT user_id FROM users WHERE is_platform_owner = 1 "
                           "ORDER BY created_at LIMIT 1").fetchone()
        if row is None:
            token = create_user(conn, _owner_name(), platform_owner=True).token
        else:
            token = issue_token(conn, row[0])
        # Written inside the transaction: if the file cannot be written, no token exists.
        write_secret_file(token_path, token + "\n")
        return token


def _read_token(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def _owner_name() -> str:
    try:
        return getpass.getuser() or "owner"
    except (OSError, KeyError, ImportError):
        return "owner"


def write_secret_file(path: Path, text: str) -> None:
    """Write `text` to `path` with mode 0600, atomically (a reader never sees half)."""
    write_file_atomically(path, text, mode=PRIVATE_FILE_MODE)
