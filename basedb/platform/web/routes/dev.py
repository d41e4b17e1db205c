"""The development draft of `basedb dev` (owners and admins; one whose FaaS functions
declare secrets, the owner only: `basedb.platform.domain.dev_authors`): the functions a
dev session is editing, which env=dev calls run (`basedb.platform.domain.dev_drafts`).
Every put and discard is written to the site's platform log.

    PUT    /sites/{app}/dev/functions   {databaseFunctions, mutations, faas, aiFunctions}
    GET    /sites/{app}/dev/functions   → {revision, functionIds} (revision null: none)
    DELETE /sites/{app}/dev/functions   → {discarded}

The body is PUT draft/functions' (with the AI Functions in the same set), judged the same
way; the site's draft, deployments, preview and prod are never touched.
"""

from __future__ import annotations

from typing import Any

from basedb.platform.domain import dev_drafts, sites
from basedb.platform.domain.access import require_site
from basedb.platform.domain.dev_drafts import DEV_LISTS
from basedb.platform.domain.revision import live_catalog
from basedb.platform.web.http import MIB, Call, Endpoint
from basedb.platform.web.routes.drafts import (
    AI_FUNCTIONS_BODY,
    FULL_FUNCTIONS_BODY,
    FUNCTION_HINTS,
)
from basedb.platform.web.routes.schemas import BOOLEAN, INTEGER, STRINGS, obj


def _manage(call: Call) -> tuple[sites.SiteRow, str]:
    with call.store.read() as conn:
        return require_site(conn, call.caller, call.path["app_token"],
                            roles=sites.MANAGER_ROLES)


def put_dev_functions(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        site, role = require_site(conn, call.caller, call.path["app_token"],
                                  roles=sites.MANAGER_ROLES)
        catalog = live_catalog(conn, site, call.caches.catalogs).catalog
    return dev_drafts.replace(call.caches.dev, site.app_token, call.body, catalog,
                              by=call.caller, role=role).to_dict()


def get_dev_functions(call: Call) -> dict[str, Any]:
    site, _ = _manage(call)
    return dev_drafts.state(call.caches.dev, site.app_token).to_dict()


def delete_dev_functions(call: Call) -> dict[str, Any]:
    site, role = _manage(call)
    return dev_drafts.discard(call.caches.dev, site.app_token, by=call.caller,
                              role=role).to_dict()


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
             "check`). A draft whose FaaS functions declare secrets is the owner's only "
             "(403 for an admin). Every put and discard is written to the site's platform "
             "log (`basedb logs`).",
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
