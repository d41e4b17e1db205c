"""The OpenAPI document, generated from the route groups' `Endpoint` metadata.

The routes are the single source: the app serves this document at /openapi.json, and
docs/openapi.yaml is the same document written out for readers (and reviewed in diffs):

    python -m basedb.platform.web.openapi --write   # regenerate docs/openapi.yaml (and
                                                    # the route index, routes/index.py)
    python -m basedb.platform.web.openapi --check   # exit 1 when docs/openapi.yaml is stale

New routes document themselves through their `Endpoint` (summary, tag, query parameters,
request and response bodies); see `basedb.platform.web.routes` for adding a group. A body
declared as a wire model (`basedb.protocol.wire`) is generated from that model, under
`components/schemas` by its class name (docs/architecture.md, "A wire shape").
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from basedb import __version__
from basedb.core.paths import API_PREFIX
from basedb.platform.web.http import Endpoint
from basedb.platform.web.origins import DEFAULT_PUBLIC_URL, page_origin, parse_public_url
from basedb.platform.web.responses import JSON
from basedb.platform.web.routes import INDEX_PATH, all_endpoints, render_route_index, route_index
from basedb.protocol.envelope import ERROR_SCHEMA, SUCCESS_SCHEMA
from basedb.protocol.wire import WireModel, schema_components
from basedb.workspace.faas_access import SECRET_NAME_PATTERN
from basedb.workspace.model import FUNCTION_ID_PATTERN

DOCUMENT_PATH = Path(__file__).resolve().parents[3] / "docs" / "openapi.yaml"

PATH_PARAMETERS = {
    "base_token": "The Base (bas…).",
    "table_id": "A table of the Base (tbl…).",
    "field_id": "A field of the table (fld…).",
    "record_id": "A record of the table (rec…).",
    "app_token": "The site (Prj…), the appToken of base-database.jsonc.",
    "deployment_id": "A deployment of the site (dpl…).",
    "function_id": "A function of the deployment: its functionId (the directory name).",
    "secret_name": "A secret's name, as FaaS declarations list it (such as STRIPE_API_KEY).",
    "path": "A file below the site root (src/ of site.zip); empty or ending in / means "
            "index.html.",
}
PATH_SCHEMAS = {
    "function_id": {"type": "string", "pattern": FUNCTION_ID_PATTERN},
    "secret_name": {"type": "string", "pattern": SECRET_NAME_PATTERN},
}
# Starlette writes `{path:path}` for a parameter that spans slashes; OpenAPI `{path}`.
_CONVERTER_RE = re.compile(r"\{(\w+):\w+\}")

_LOG_ID_HEADER = {"X-Tt-Logid": {"$ref": "#/components/headers/LogId"}}
_API_SERVER = {"url": DEFAULT_PUBLIC_URL, "description": "An API host: 127.0.0.1, localhost, "
               "or the host of $BASEDB_PUBLIC_URL."}
_PAGE_SERVER_DESCRIPTION = (
    "A site's page host: its own browser origin (on a public URL, {site}.<public host>). "
    "It serves only that site's pages, the page runtime, the page session and that "
    "site's invoke endpoint.")
_SITE_VARIABLE = {"site": {"default": "prjexample",
                           "description": "The site's appToken in lower case."}}


def _servers(server_url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The API server and the page server of a document served at `server_url`: page
    hosts are on the same port (`{site}.localhost` for a loopback or IP address,
    `{site}.<host>` for a public name)."""
    base = parse_public_url(server_url)
    page = page_origin("{site}", base=base)
    return ({**_API_SERVER, "url": server_url},
            {"url": page, "description": _PAGE_SERVER_DESCRIPTION,
             "variables": _SITE_VARIABLE})


def build_document(endpoints: Iterable[Endpoint],
                   server_url: str = DEFAULT_PUBLIC_URL) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    operation_ids: set[str] = set()
    servers = _servers(server_url)
    endpoints = list(endpoints)
    refs, components = wire_schemas(endpoints)
    for endpoint in endpoints:
        operation = _operation(endpoint, servers, refs)
        if operation["operationId"] in operation_ids:
            raise ValueError(f"two endpoints share the handler name {operation['operationId']!r}")
        operation_ids.add(operation["operationId"])
        methods = paths.setdefault(openapi_path(endpoint.full_path), {})
        if endpoint.method.lower() in methods:
            raise ValueError(f"{endpoint.method} {endpoint.full_path} is defined twice")
        methods[endpoint.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "basedb local platform",
            "version": __version__,
            "description": "The Base Database Open API served by `basedb serve` (and "
                           f"in-process by the CLI). Business routes live under {API_PREFIX}; "
                           "every response is the Lark envelope {code, msg, data} and carries "
                           "the header X-Tt-Logid.",
        },
        "servers": [servers[0]],
        "security": [{"bearer": []}],
        "paths": {path: paths[path] for path in sorted(paths)},
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer",
                           "description": "A platform token (bdb_…)."},
                # The Lark stand-in's credentials (routes/lark.py): what its token
                # endpoints mint, documented so that readers and tools know they do.
                "larkTenant": {"type": "oauth2", "description": "A tenant access token "
                               "(t-…) for an app's id and secret.",
                               "flows": {"clientCredentials": {
                                   "tokenUrl": "/open-apis/auth/v3/tenant_access_token/internal",
                                   "scopes": {}}}},
                "larkUser": {"type": "oauth2", "description": "A user access token from the "
                             "OAuth device flow (RFC 8628): POST /oauth/v1/device_authorization, "
                             "the user approves at /oauth/v1/device/verify, the app polls the "
                             "token URL.",
                             "flows": {"authorizationCode": {
                                 "authorizationUrl": "/oauth/v1/device/verify",
                                 "tokenUrl": "/open-apis/authen/v2/oauth/token",
                                 "refreshUrl": "/open-apis/authen/v2/oauth/token",
                                 "scopes": {}}}},
                "pageSession": {"type": "apiKey", "in": "cookie", "name": "basedb_session",
                                "description": "The page sign-in session (opened by GET "
                                "/_basedb/session/callback); accepted only with the "
                                "header X-Basedb-Page: 1."},
            },
            "headers": {"LogId": {"description": "The request's log id.",
                                  "schema": {"type": "string"}}},
            "schemas": {"Envelope": SUCCESS_SCHEMA, "ErrorEnvelope": ERROR_SCHEMA,
                        **{name: components[name] for name in sorted(components)}},
        },
    }


Refs = dict[type[WireModel], dict[str, Any]]


def wire_schemas(endpoints: Iterable[Endpoint]) -> tuple[Refs, dict[str, Any]]:
    """The bodies declared as wire models: each model's `$ref`, and the components they
    point to (msgspec's JSON Schema of each model and of the models it holds)."""
    models = list(dict.fromkeys(
        shape for endpoint in endpoints for shape in (endpoint.body, endpoint.response)
        if isinstance(shape, type) and issubclass(shape, WireModel)))
    found, components = schema_components(models)
    return dict(zip(models, found, strict=True)), components


def body_schema(shape: type[WireModel] | Mapping[str, Any], refs: Refs) -> dict[str, Any]:
    """A body's schema in the document: a model's `$ref`, or the JSON Schema given."""
    return dict(refs[shape]) if isinstance(shape, type) else dict(shape)


def _operation(endpoint: Endpoint, servers: tuple[dict[str, Any], dict[str, Any]],
               refs: Refs) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": getattr(endpoint.handler, "__name__", endpoint.summary),
        "tags": [endpoint.tag],
        "summary": endpoint.summary,
    }
    if endpoint.description:
        operation["description"] = endpoint.description
    if endpoint.hosts != "api":
        api_server, page_server = servers
        operation["servers"] = ([page_server] if endpoint.hosts == "page"
                                else [api_server, page_server])
    if not endpoint.auth:
        operation["security"] = []
    elif endpoint.page_session:
        operation["security"] = [{"bearer": []}, {"pageSession": []}]
    parameters = [
        {"name": name, "in": "path", "required": True,
         "schema": dict(PATH_SCHEMAS.get(name, {"type": "string"})),
         "description": PATH_PARAMETERS.get(name, "Path parameter.")}
        for name in re.findall(r"\{(\w+)\}", openapi_path(endpoint.path))
    ]
    parameters += [
        {"name": q.name, "in": "query", "required": q.required, "schema": dict(q.schema),
         "description": q.description}
        for q in endpoint.query
    ]
    parameters += [
        {"name": h.name, "in": "header", "required": h.required, "schema": dict(h.schema),
         "description": h.description}
        for h in endpoint.headers
    ]
    if parameters:
        operation["parameters"] = parameters
    if endpoint.body is not None:
        operation["requestBody"] = {
            "description": _size(endpoint.body_limit),
            "required": endpoint.body_required,
            "content": {endpoint.body_media_type: {"schema": body_schema(endpoint.body,
                                                                         refs)}},
        }
    if endpoint.response_media_type is not None:
        success: dict[str, Any] = {"content": {endpoint.response_media_type: {"schema": {}}}}
    else:
        data = (body_schema(endpoint.response, refs) if endpoint.response is not None
                else {})
        success = {"content": {JSON: {"schema": {"allOf": [
            {"$ref": "#/components/schemas/Envelope"},
            {"type": "object", "properties": {"data": data}},
        ]}}}}
    failure: dict[str, Any] = {
        "description": "An error envelope.", "headers": _LOG_ID_HEADER,
        "content": {JSON: {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}}
    if endpoint.error_schema is not None:
        failure["description"] = ("The endpoint's own error body (as Lark answers it), or an "
                                  "error envelope (e.g. a body that is not JSON).")
        failure["content"][JSON] = {"schema": {"anyOf": [
            {"$ref": "#/components/schemas/ErrorEnvelope"}, dict(endpoint.error_schema)]}}
    if endpoint.error_page_media_type is not None:
        failure["description"] = ("An error page for a browser (sign-in, no access, not "
                                  "found), or an error envelope (e.g. an invalid token).")
        failure["content"][endpoint.error_page_media_type] = {"schema": {"type": "string"}}
    responses: dict[str, Any] = {
        "200": {"description": "Success.", "headers": _LOG_ID_HEADER, **success}}
    if endpoint.redirect is not None:
        responses["3XX"] = {
            "description": endpoint.redirect,
            "headers": {**_LOG_ID_HEADER, "Location": {"schema": {"type": "string"}}}}
    for status in error_statuses(endpoint):
        responses[status] = {**copy.deepcopy(failure),
                             "description": f"{ERROR_STATUSES[status]} {failure['description']}"}
    operation["responses"] = responses
    return operation


ERROR_STATUSES = {
    "400": "The request is malformed or breaks a rule (nothing executed).",
    "401": "The token (or page session) is missing, unknown or expired.",
    "403": "The caller may not do this (not a member, or the role is too low).",
    "404": "Something the path (or body) names does not exist, or the caller cannot see it.",
    "408": "The request body stopped arriving.",
    "409": "The request conflicts with the current state.",
    "413": "The request body is too large.",
    "421": "The request's Host is not a name this platform is reached by.",
    "422": "The function's declaration or query cannot run as written.",
    "429": "Too many failed attempts; retry later.",
    "502": "An upstream service (the model provider) failed.",
    "504": "The function ran out of time.",
    "5XX": "An internal error (500; the log id finds it in the platform log) or a busy "
           "database (503; retry).",
}


def error_statuses(endpoint: Endpoint) -> list[str]:
    """The error statuses an endpoint answers: those its shape implies (request input can
    be invalid, a token can be refused, a path can name nothing, a body can be too large,
    any call can fail inside) and its own `errors`."""
    statuses = {str(status) for status in endpoint.errors}
    if endpoint.body is not None or endpoint.query or endpoint.headers:
        statuses |= {"400", "408", "413"} if endpoint.body is not None else {"400"}
    if endpoint.auth:
        statuses.add("401")
    # A path can name nothing; a route served on one kind of host only (the API's or a
    # site's page host) is not found on the other.
    if "{" in endpoint.path or endpoint.hosts != "any":
        statuses.add("404")
    if endpoint.auth and ("{app_token}" in endpoint.path or "{base_token}" in endpoint.path):
        statuses.add("403")  # basedb.platform.domain.access: members and roles
    statuses |= {"421", "5XX"}  # any request: basedb.platform.web.http's host check
    unknown = statuses - ERROR_STATUSES.keys()
    if unknown:
        raise ValueError(f"{endpoint.method} {endpoint.path}: undescribed statuses {unknown}")
    return sorted(statuses)


def _size(limit: int) -> str:
    shown = f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit // 1024} KiB"
    return (f"At most {shown}; a larger body is refused (413) as it arrives, and a body "
            "that stops arriving (408). It is read only once the caller is authenticated.")


def openapi_path(path: str) -> str:
    """A route path in OpenAPI's template syntax."""
    return _CONVERTER_RE.sub(r"{\1}", path)


def render_yaml(document: dict[str, Any]) -> str:
    # Lazy: PyYAML loads only to write docs/openapi.yaml.
    import yaml  # noqa: PLC0415

    # A JSON round trip unshares repeated schema objects, which YAML would turn into
    # anchors and aliases that few readers follow.
    plain = json.loads(json.dumps(document))
    header = "# Generated by `python -m basedb.platform.web.openapi --write`; do not edit.\n"
    return header + yaml.safe_dump(plain, sort_keys=False, allow_unicode=True, width=100)


def current_document() -> dict[str, Any]:
    return build_document(all_endpoints())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m basedb.platform.web.openapi",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="rewrite the document file")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    parser.add_argument("--path", type=Path, default=DOCUMENT_PATH)
    args = parser.parse_args(argv)
    text = render_yaml(current_document())
    if args.write:
        args.path.parent.mkdir(parents=True, exist_ok=True)
        args.path.write_text(text, encoding="utf-8")
        INDEX_PATH.write_text(render_route_index(route_index()), encoding="utf-8")
        print(f"wrote {args.path} and {INDEX_PATH}", file=sys.stderr)
        return 0
    if args.check:
        stale = [path for path, wanted in ((args.path, text), (INDEX_PATH, render_route_index(
                     route_index()))) if _read(path) != wanted]
        for path in stale:
            print(f"{path} is stale; run python -m basedb.platform.web.openapi --write",
                  file=sys.stderr)
        return 1 if stale else 0
    sys.stdout.write(text)
    return 0


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


if __name__ == "__main__":
    sys.exit(main())
