"""The OpenAPI document of the platform, served at /openapi.json (no token needed)."""

from __future__ import annotations

import functools
import json

from starlette.responses import Response

from basedb.platform.web import origins
from basedb.platform.web.http import Call, Endpoint
from basedb.platform.web.openapi import build_document
from basedb.platform.web.responses import JSON
from basedb.platform.web.routes import all_endpoints


@functools.lru_cache(maxsize=4)
def _document_bytes(server_url: str) -> bytes:
    return json.dumps(build_document(all_endpoints(), server_url),
                      ensure_ascii=False).encode("utf-8")


def get_openapi(call: Call) -> Response:
    """The document, its API server where this request came ($BASEDB_PUBLIC_URL when set,
    else the loopback address and port of the server actually serving)."""
    return Response(_document_bytes(origins.request_base(call.request).origin()),
                    media_type=JSON)


ENDPOINTS = [
    Endpoint("GET", "/openapi.json", get_openapi, "This OpenAPI document.", "meta",
             auth=False, absolute=True, response_media_type=JSON),
]
