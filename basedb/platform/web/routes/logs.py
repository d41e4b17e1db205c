"""The platform log through the API (`basedb logs`): a site's entries, or all of them for
the platform owner. Who reads what is `basedb.platform.domain.logs`.

    GET /sites/{app}/logs?logId&after&limit&tail&env&functionId&kind&wait
    GET /logs?…                                     (the platform owner)

`wait` (seconds, at most 25) holds the answer until an entry after `after` arrives:
`basedb logs --follow` and `basedb dev` ask again with the last cursor.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from basedb.platform.domain import logs
from basedb.platform.web.http import Call, Endpoint, QueryParam
from basedb.platform.web.routes.schemas import BOOLEAN, STRING, array, obj
from basedb.protocol import bad_request

MAX_WAIT_SECONDS = 25
_POLL_SECONDS = 0.1
_KINDS = ("call", "detail")
_ENVS = ("prod", "preview", "dev")


def _query(call: Call) -> logs.LogQuery:
    # A parameter sent empty is refused like any other value outside its schema (the
    # client leaves out what it does not mean).
    raw_after = call.query.get("after", "0")
    if not raw_after.isascii() or not raw_after.isdigit() or len(raw_after) > 18:
        raise bad_request("after must be the cursor of an entry", parameter="?after",
                          received=raw_after, fix="send the cursor of the last entry you "
                          "read, or leave it out to start at the beginning")
    kind = call.query.get("kind")
    if kind is not None and kind not in _KINDS:
        raise bad_request("kind must be call or detail", parameter="?kind", received=kind,
                          fix="send kind=call or kind=detail, or leave it out",
                          candidates=_KINDS)
    env = call.query.get("env")
    if env is not None and env not in _ENVS:
        raise bad_request("env must be prod, preview or dev", parameter="?env", received=env,
                          fix="send one of them, or leave env out for every environment",
                          candidates=_ENVS)
    tail = call.query.get("tail")
    return logs.LogQuery(
        log_id=call.query.get("logId") or None, after=int(raw_after),
        limit=call.query_int("limit", default=100, minimum=1, maximum=logs.MAX_ENTRIES),
        env=env, function_id=call.query.get("functionId") or None,
        kind=kind,
        tail=None if tail is None else call.query_int(
            "tail", default=20, minimum=1, maximum=logs.MAX_ENTRIES))


def _wait(call: Call) -> float:
    return float(call.query_int("wait", default=0, minimum=0, maximum=MAX_WAIT_SECONDS))


async def _answer(call: Call, read: Callable[[], logs.LogPage]) -> dict[str, Any]:
    """`read()` now, or as soon as it finds an entry within `wait` seconds."""
    deadline = time.monotonic() + _wait(call)
    while True:
        found = await run_in_threadpool(read)
        if found.entries or time.monotonic() >= deadline:
            return found.to_dict()
        if await call.request.is_disconnected():
            return found.to_dict()
        await asyncio.sleep(_POLL_SECONDS)


async def site_logs(call: Call) -> dict[str, Any]:
    query = _query(call)

    def read() -> logs.LogPage:
        call.context.log_writer.flush()
        with call.store.read() as conn:
            return logs.site_entries(conn, call.caller, call.path["app_token"], query)

    return await _answer(call, read)


async def platform_logs(call: Call) -> dict[str, Any]:
    query = _query(call)

    def read() -> logs.LogPage:
        call.context.log_writer.flush()
        with call.store.read() as conn:
            return logs.platform_entries(conn, call.caller, query)

    return await _answer(call, read)


# --------------------------------------------------------------------- documentation

_NULLABLE = {"type": ["string", "null"]}
_ENTRY = obj({
    "cursor": {**STRING, "description": "Pass as `after` to read what follows."},
    "time": STRING, "logId": STRING, "appToken": _NULLABLE, "userId": _NULLABLE,
    "kind": {"type": "string", "enum": list(_KINDS),
             "description": "call: one function call and what its caller was told; "
             "detail: what callers are never shown (handler output, stacks)."},
    "level": {"type": "string", "enum": ["info", "error"]},
    "env": {"type": "string", "enum": ["prod", "preview", "dev"]},
    "functionId": STRING, "code": {"type": "integer"}, "ms": {"type": "number"},
    "message": STRING,
}, ("cursor", "time", "logId", "appToken", "userId", "kind", "level", "message"))
_LISTING = obj({"entries": array(_ENTRY), "hasMore": BOOLEAN, "cursor": STRING},
               ("entries", "hasMore", "cursor"))
_QUERY = (
    QueryParam("logId", STRING, "Only the entries of this request (the LogID of an error)."),
    QueryParam("after", {"type": "string", "pattern": "^[0-9]{1,18}$"},
               "The cursor of the last entry read."),
    QueryParam("limit", {"type": "integer", "minimum": 1, "maximum": logs.MAX_ENTRIES,
                         "default": 100}, "Page size."),
    QueryParam("tail", {"type": "integer", "minimum": 1, "maximum": logs.MAX_ENTRIES},
               "Only the newest entries, this many."),
    QueryParam("env", {"type": "string", "enum": list(_ENVS)},
               "Only calls of this environment."),
    QueryParam("functionId", STRING, "Only entries of this function."),
    QueryParam("kind", {"type": "string", "enum": list(_KINDS)}, "Only this kind."),
    QueryParam("wait", {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_SECONDS,
                        "default": 0},
               "Seconds to hold the answer until an entry arrives (long poll)."),
)

ENDPOINTS = [
    Endpoint("GET", "/sites/{app_token}/logs", site_logs, "The site's platform log.", "logs",
             description="Owners and admins read every entry of the site; a member reads "
             "only the call entries of their own calls (never handler output or stacks).",
             query=_QUERY, response=_LISTING),
    Endpoint("GET", "/logs", platform_logs, "The whole platform log (platform owner).",
             "logs", description="Every entry, including those of requests that named no "
             "site.", query=_QUERY, response=_LISTING),
]
