"""The development draft of `basedb dev` (owners and admins): the functions a dev
session is editing, which env=dev calls run (`basedb.platform.domain.dev_drafts`).

    PUT    /sites/{app}/dev/functions   {databaseFunctions, mutations, faas, aiFunctions}
    GET    /sites/{app}/dev/functions   → {revision, functionIds} (revision null: none)
    DELETE /sites/{app}/dev/functions   → {discarded}

The body is PUT draft/functions' (with the AI Functions in the same set), judged the same
way; the site's draft, deployments, preview and prod are never touched.
"""

from __future__ import annotations

from typing import Any

from basedb.core.protocol import bad_request
from basedb.platform.domain import drafts, sites
from basedb.platform.domain.access import require_site
from basedb.platform.domain.dev_drafts import MAX_DRAFT_BYTES, draft_size
from basedb.platform.domain.revision import live_catalog
from basedb.platform.web.http import MIB, Call, Endpoint
from basedb.platform.web.routes.drafts import (
    AI_FUNCTIONS_BODY,
    FULL_FUNCTIONS_BODY,
    FUNCTION_HINTS,
)
from basedb.platform.web.routes.schemas import BOOLEAN, INTEGER, STRINGS, obj
from basedb.workspace.model import FunctionKind

DEV_LISTS: dict[str, FunctionKind] = {**drafts.FUNCTION_LISTS, "aiFunctions": "ai_function"}


def put_dev_functions(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        site, _ = require_site(conn, call.caller, call.path["app_token"],
                               roles=sites.MANAGER_ROLES)
        catalog = live_catalog(conn, site, call.caches.catalogs).catalog
    functions = drafts.parse_lists(call.body, DEV_LISTS, drafts.MAX_FUNCTIONS,
                                   extra=(drafts.TIMEZONE_KEY,))
    timezone = drafts.parse_timezone(call.body)
    size = draft_size(functions)
    if size > MAX_DRAFT_BYTES:
        raise bad_request(f"The development draft holds {size} bytes; at most "
                          f"{MAX_DRAFT_BYTES} are allowed", parameter="/",
                          fix="remove functions the site no longer needs")
    result = drafts.validate(functions, catalog)
    if result.errors:
        raise drafts.findings_failure(result, functions, what="The development draft")
    draft = call.caches.dev.put(site.app_token, functions, timezone=timezone)
    counts = {kind: sum(1 for f in functions if f.kind == kind) for kind in DEV_LISTS.values()}
    return {"functionHints": [hint.to_dict() for hint in result.hints], "counts": counts,
            "revision": draft.revision}


def get_dev_functions(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        site, _ = require_site(conn, call.caller, call.path["app_token"],
                               roles=sites.MANAGER_ROLES)
    draft = call.caches.dev.get(site.app_token)
    if draft is None:
        return {"revision": None, "functionIds": []}
    return {"revision": draft.revision, "functionIds": sorted(draft.snapshot.functions)}


def delete_dev_functions(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        site, _ = require_site(conn, call.caller, call.path["app_token"],
                               roles=sites.MANAGER_ROLES)
    return {"discarded": call.caches.dev.discard(site.app_token)}


_DEV = "/sites/{app_token}/dev/functions"
_BODY = obj({**FULL_FUNCTIONS_BODY["properties"], **AI_FUNCTIONS_BODY["properties"]},
            description="Every Database Function, Mutation, FaaS and AI Function of the "
            "workspace; a list left out counts as empty.")

ENDPOINTS = [
    Endpoint("PUT", _DEV, put_dev_functions,
             "Replace the development draft (what env=dev calls run).", "dev",
             description="Judged as PUT draft/functions judges a draft. Held in the "
             "platform's memory only: the site's draft, deployments, preview and prod are "
             "unchanged. Errors answer 9499 with data.errors (the findings of `basedb "
             "check`).",
             body=_BODY, body_limit=32 * MIB,
             response=obj({"functionHints": FUNCTION_HINTS,
                           "counts": obj({kind: INTEGER for kind in DEV_LISTS.values()}),
                           "revision": INTEGER}, ("functionHints", "counts", "revision"))),
    Endpoint("GET", _DEV, get_dev_functions, "Whether the site has a development draft.",
             "dev",
             response=obj({"revision": {"type": ["integer", "null"]}, "functionIds": STRINGS},
                          ("revision", "functionIds"))),
    Endpoint("DELETE", _DEV, delete_dev_functions, "Discard the development draft.", "dev",
             response=obj({"discarded": BOOLEAN}, ("discarded",))),
]
