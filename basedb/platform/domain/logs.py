"""Reading the platform log (`basedb logs`): who may read which entries.

A log entry can hold what its request's caller was never shown: a FaaS handler's output
(which may print any record the handler read, or a secret the handler was given), a
stack, SQLite's own error text. So:

    owner, admin of a site      every entry of the site: calls and details, anyone's
    member of a site            their own `call` entries only: the function, env, code
                                and the message they were already given, never details
    platform owner              also the entries that belong to no site
    anyone else                 nothing: the site answers as if it did not exist

Entries are read in `entry_id` order; `after` is the cursor of the last entry seen, so
`--follow` never misses or repeats one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain import sites
from basedb.platform.domain.access import require_site
from basedb.platform.domain.identity import User
from basedb.protocol import permission_denied

MAX_ENTRIES = 500


@frozen_dataclass
class LogQuery:
    log_id: str | None = None
    after: int = 0
    limit: int = 100
    env: str | None = None
    function_id: str | None = None
    kind: str | None = None
    tail: int | None = None  # only the newest `tail` entries (after `after`)


@frozen_dataclass
class LogEntry:
    """One entry of the platform log, as a reader is shown it."""

    entry_id: int
    time: str
    log_id: str
    app_token: str | None
    user_id: str | None
    kind: str  # call or detail
    level: str
    message: str
    env: str | None = None
    function_id: str | None = None
    code: int | None = None
    ms: float | None = None

    @property
    def cursor(self) -> str:
        return str(self.entry_id)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cursor": self.cursor, "time": self.time, "logId": self.log_id,
                               "appToken": self.app_token, "userId": self.user_id,
                               "kind": self.kind, "level": self.level, "message": self.message}
        if self.env is not None:
            out["env"] = self.env
        if self.function_id is not None:
            out["functionId"] = self.function_id
        if self.code is not None:
            out["code"] = self.code
        if self.ms is not None:
            out["ms"] = round(self.ms, 1)
        return out


@frozen_dataclass
class LogPage:
    """Entries in cursor order, whether more follow, and the cursor to read on from (the
    last entry's, or the query's `after` when there was none)."""

    entries: Sequence[LogEntry]
    has_more: bool
    cursor: str

    def to_dict(self) -> dict[str, Any]:
        return {"entries": [entry.to_dict() for entry in self.entries],
                "hasMore": self.has_more, "cursor": self.cursor}


_COLUMNS = ("entry_id, created_at, log_id, app_token, user_id, kind, level, env, "
            "function_id, code, ms, message")


def site_entries(conn: sqlite3.Connection, user: User, app_token: str,
                 query: LogQuery) -> LogPage:
    """The entries of a site `user` may read."""
    _, role = require_site(conn, user, app_token)
    where = ["app_token = ?"]
    args: list[Any] = [app_token]
    if role not in sites.MANAGER_ROLES:
        where += ["kind = 'call'", "user_id = ?"]
        args.append(user.user_id)
    return _select(conn, where, args, query)


def platform_entries(conn: sqlite3.Connection, user: User,
                     query: LogQuery) -> LogPage:
    """Every entry, for the platform owner."""
    if not user.is_platform_owner:
        raise permission_denied(
            "The platform-wide log is open to the platform owner only",
            "read a site's log instead: GET /sites/APP_TOKEN/logs (`basedb logs` in the "
            "site's workspace)")
    return _select(conn, [], [], query)


def _select(conn: sqlite3.Connection, where: list[str], args: list[Any],
            query: LogQuery) -> LogPage:
    where = [*where, "entry_id > ?"]
    args = [*args, query.after]
    for column, value in (("log_id", query.log_id), ("env", query.env),
                          ("function_id", query.function_id), ("kind", query.kind)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    condition = " AND ".join(where)
    if query.tail is not None:
        sql = (f"SELECT {_COLUMNS} FROM platform_log WHERE {condition} "
               "ORDER BY entry_id DESC LIMIT ?")
        rows = conn.execute(sql, [*args, min(query.tail, query.limit)]).fetchall()
        return _page([_entry(row) for row in reversed(rows)], False, query)
    sql = f"SELECT {_COLUMNS} FROM platform_log WHERE {condition} ORDER BY entry_id LIMIT ?"
    rows = conn.execute(sql, [*args, query.limit + 1]).fetchall()
    more = len(rows) > query.limit
    return _page([_entry(row) for row in rows[:query.limit]], more, query)


def _page(entries: list[LogEntry], more: bool, query: LogQuery) -> LogPage:
    cursor = entries[-1].cursor if entries else str(query.after)
    return LogPage(tuple(entries), more, cursor)


def _entry(row: tuple[Any, ...]) -> LogEntry:
    entry_id, created, log_id, app_token, user_id, kind, level, env, function_id, code, ms, \
        message = row
    return LogEntry(entry_id=entry_id, time=created, log_id=log_id, app_token=app_token,
                    user_id=user_id, kind=kind, level=level, message=message, env=env,
                    function_id=function_id, code=code, ms=ms)


def newest_cursor(conn: sqlite3.Connection) -> int:
    """The cursor of the newest entry of the whole log (where `--follow` starts)."""
    row = conn.execute("SELECT max(entry_id) FROM platform_log").fetchone()
    return int(row[0] or 0)
