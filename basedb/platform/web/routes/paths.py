"""Resolving what a request path names, with the caller's access checked."""

from __future__ import annotations

import sqlite3

from basedb.platform.domain import bases
from basedb.platform.domain.access import require_base, require_table
from basedb.platform.web.http import Call
from basedb.workspace.model import Table


def path_table(conn: sqlite3.Connection, call: Call) -> Table:
    """The table named by the path (`base_token`, `table_id`), if the caller may use its
    Base."""
    return require_table(conn, call.caller, call.path["base_token"], call.path["table_id"])


def path_table_and_zone(conn: sqlite3.Connection, call: Call) -> tuple[Table, str]:
    """The table named by the path and the time zone its Base writes datetimes in."""
    base = require_base(conn, call.caller, call.path["base_token"])
    return bases.require_table(conn, base.base_token, call.path["table_id"]), base.timezone
