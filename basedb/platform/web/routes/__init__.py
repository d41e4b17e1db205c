"""The platform's route groups, one module each.

Every module named in `ROUTE_MODULES` defines `ENDPOINTS: list[Endpoint]`
(`basedb.platform.web.http.Endpoint`). The app and the OpenAPI document are both built from
these lists, so a route cannot exist without being documented. To add a group (drafts,
deployments, functions, invoke, skill, pages):

1. write `basedb/platform/web/routes/<group>.py` with handlers `def handler(call: Call)
   -> data` (return the envelope's `data`, raise `basedb.core.protocol.ApiFailure` or
   `bad_request`; open `call.store.read()` / `call.store.write()` around database work,
   and call the domain for the rest) and its `ENDPOINTS`,
   giving each endpoint a summary, a tag, query parameters and JSON Schemas for the
   request body and the response `data` (shared pieces are in `routes.schemas`);
2. add the module's name to `ROUTE_MODULES`;
3. refresh the document: `python -m basedb.platform.web.openapi --write` (docs/openapi.yaml).

tests/platform/test_openapi.py fails while the routes and docs/openapi.yaml disagree.
"""

from __future__ import annotations

import importlib

from basedb.platform.web.http import Endpoint

ROUTE_MODULES: tuple[str, ...] = (
    "users", "lark", "bases", "records", "sites", "secrets", "drafts", "dev", "deployments",
    "functions", "logs", "skill", "docs", "pages",
)


def all_endpoints() -> list[Endpoint]:
    endpoints: list[Endpoint] = []
    for name in ROUTE_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        endpoints.extend(module.ENDPOINTS)
    return endpoints
