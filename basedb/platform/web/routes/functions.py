"""Agent OpenAPI: list, describe and invoke a site's deployed functions (upstream
agent-tools.md "调用站点函数").

    GET  /sites/{app}/functions?env=prod|preview&pageToken&pageSize&includeInternal
                               &query&table&access   (a search: function_search)
    GET  /sites/{app}/functions/{function_id}?env&includeInternal
    POST /sites/{app}/functions/{function_id}/invoke?env&includeInternal  {"params": {…}}

Prod is open to every member of the site, preview to its owner and admins
(`basedb.platform.domain.invoke`).
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from basedb.platform.domain import identity
from basedb.platform.domain.describe import describe_function, list_item
from basedb.platform.domain.function_plans import function_plan
from basedb.platform.domain.function_search import (
    ACCESS_VALUES,
    MAX_QUERY_CHARS,
    FunctionQuery,
    search_functions,
)
from basedb.platform.domain.identity import User
from basedb.platform.domain.invoke import (
    INVOKE_ENVIRONMENTS,
    InvokeCall,
    Pending,
    resolve_deployment,
    resolve_target,
    start_on_loop,
)
from basedb.platform.domain.revision import live_catalog
from basedb.platform.storage import platform_log
from basedb.platform.storage.ids import new_log_id
from basedb.platform.storage.read_only import read_only_pool
from basedb.platform.web.bodies import parsed_json_body, receive_body, refuse_declared_over
from basedb.platform.web.context import AppContext
from basedb.platform.web.gate import LOG_ID_KEY, USER_ID_KEY
from basedb.platform.web.http import (
    MIB,
    NO_QUERY,
    Call,
    DirectHandler,
    Endpoint,
    QueryParam,
    body_object,
)
from basedb.platform.web.origins import HOST_KEY, RequestHost
from basedb.platform.web.responses import (
    JSON,
    envelope_bytes,
    failure_response,
    send_json_200,
    unexpected_response,
)
from basedb.platform.web.routes.schemas import BOOLEAN, STRING, Schema, array, obj
from basedb.protocol import INTERNAL_ERROR_MSG, ApiFailure, Code, SchemaStatus, bad_request

_BODY_KEYS = frozenset({"params"})
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200


def parse_env(call: Call) -> str:
    return _env(call.query)


def _env(query: QueryParams) -> str:
    env = query.get("env", "prod")
    if env not in INVOKE_ENVIRONMENTS:
        raise bad_request("env must be prod, preview or dev", parameter="?env", received=env,
                          fix="send env=prod (the published release), env=preview, or "
                          "env=dev (the development draft of `basedb dev`)",
                          candidates=INVOKE_ENVIRONMENTS)
    return env


def parse_flag(call: Call, name: str) -> bool:
    """A boolean query parameter, spelt as the document's boolean reads on the wire:
    true or false (absent: false)."""
    return _flag(call.query, name)


def _flag(query: QueryParams, name: str) -> bool:
    raw = query.get(name, "false")
    if raw == "true":
        return True
    if raw == "false":
        return False
    raise bad_request(f"{name} must be true or false", parameter=f"?{name}",
                      received=query.get(name), fix=f"send {name}=true or leave it out")


def body_params(call: Call) -> dict[str, Any]:
    """`params` of the body {"params": {…}}; an absent body or params means none (but
    `"params": null` is refused, as the document's object type says)."""
    return _params(call.body, call.body_sent)


def _params(body: Any, body_sent: bool) -> dict[str, Any]:
    body = body_object(body, body_sent, _BODY_KEYS) if body_sent else {}
    if "params" not in body:
        return {}
    params = body["params"]
    if not isinstance(params, dict):
        raise bad_request("params must be a JSON object of named parameters",
                          parameter="/params", received=params,
                          fix='send {"params": {"name": value, …}} (by name, not an array)')
    return params


def _page_token(env: str, after: str | None = None, *, offset: int = 0,
                search: str | None = None) -> str:
    state: dict[str, Any] = {"env": env}
    if search is None:
        state["after"] = after
    else:
        state.update(offset=offset, search=search)
    raw = json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _read_page_token(call: Call, env: str, search: str | None = None) -> Any:
    """Where the previous page stopped: the last functionId of a plain listing, the
    offset into the results of a search (None: the first page)."""
    token = call.query.get("pageToken")
    if not token:
        return None
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError):
        decoded = None
    if not isinstance(decoded, dict) or decoded.get("env") != env:
        decoded = {}
    if search is None:
        position = decoded.get("after")
        usable = isinstance(position, str) and "search" not in decoded
    else:
        position = decoded.get("offset")
        usable = (isinstance(position, int) and not isinstance(position, bool)
                  and position >= 0 and decoded.get("search") == search)
    if not usable:
        raise bad_request("pageToken is not one this listing returned", parameter="?pageToken",
                          received=token, fix="send the pageToken of the previous page with "
                          "the same env, query, table and access, or leave it out to start "
                          "from the first page")
    return position


def parse_function_query(call: Call) -> FunctionQuery:
    """`query`, `table` and `access` of a listing (all optional)."""
    query = call.query.get("query", "")
    if len(query) > MAX_QUERY_CHARS:
        raise bad_request(f"query is longer than {MAX_QUERY_CHARS} characters",
                          parameter="?query", received=query[:80] + "…",
                          fix="send a few distinctive words of what the function does")
    access = call.query.get("access")  # an empty value is not a filter left out
    if access is not None and access not in ACCESS_VALUES:
        raise bad_request("access must be read or write", parameter="?access",
                          received=access, fix="send access=read (functions that only "
                          "read) or access=write (all others), or leave it out",
                          candidates=ACCESS_VALUES)
    return FunctionQuery(query=query, table=call.query.get("table", "").strip(),
                         access=access)


def list_functions(call: Call) -> dict[str, Any]:
    env, include_internal = parse_env(call), parse_flag(call, "includeInternal")
    page_size = call.query_int("pageSize", default=DEFAULT_PAGE_SIZE, minimum=1,
                               maximum=MAX_PAGE_SIZE)
    wanted = parse_function_query(call)
    search = wanted.key() if wanted.active else None
    position = _read_page_token(call, env, search)
    with call.store.read() as conn:
        deployed = resolve_deployment(conn, call.caches, call.caller, call.path["app_token"], env,
                                      include_internal)
        live = live_catalog(conn, deployed.site, call.caches.catalogs)
        if search is None:
            remaining = [f for f in deployed.visible if position is None or f > position]
            page_ids = remaining[:page_size]
            plans = [function_plan(deployed.snapshot, function_id, live, call.caches.plans)
                     for function_id in page_ids]
            has_more = len(remaining) > len(plans)
            token = _page_token(env, page_ids[-1]) if has_more else None
        else:
            found = search_functions(
                [function_plan(deployed.snapshot, function_id, live, call.caches.plans)
                 for function_id in deployed.visible], wanted)
            start = position or 0
            plans = found[start:start + page_size]
            has_more = len(found) > start + len(plans)
            token = (_page_token(env, offset=start + len(plans), search=search)
                     if has_more else None)
    return {
        "functions": [list_item(p, internal=deployed.is_internal(p.function_id)).to_dict()
                      for p in plans],
        "hasMore": has_more,
        "pageToken": token,
        "env": env,
        "deploymentId": deployed.snapshot.deployment_id,
    }


def describe(call: Call) -> dict[str, Any]:
    env, include_internal = parse_env(call), parse_flag(call, "includeInternal")
    with call.store.read() as conn:
        target = resolve_target(conn, call.caches, call.caller, call.path["app_token"], env,
                                call.path["function_id"], include_internal)
    return {"function": describe_function(
        target.plan, app_token=target.deployed.site.app_token, env=env,
        internal=target.deployed.is_internal(target.function_id)).to_dict()}


async def invoke(call: Call) -> Response:
    """Answered on the event loop when it can be at once (a cheap Database Function
    statement on what the platform holds in memory), else finished in a worker thread
    (`basedb.platform.domain.invoke.start_on_loop`)."""
    content = await _invoke(call.context, call.caller, call.path["app_token"],
                            call.path["function_id"], call.query, call.body, call.body_sent,
                            call.body_size, call.from_page, call.log_id)
    return Response(content, media_type=JSON)


async def _invoke(context: AppContext, caller: User, app_token: str, function_id: str,
                  query: QueryParams, body: Any, body_sent: bool, body_size: int,
                  from_page: bool, log_id: str) -> bytes:
    """The call's answer as the envelope's bytes. One made in a worker thread is encoded
    there too: its size is the statement's or the handler's (megabytes, at most the
    answer cap), and encoding it would hold the loop as long as fetching it did. What the
    loop answers itself is small by construction (`sql_inline.LOOP_ANSWER_BYTES`)."""
    env = _env(query)
    started = time.perf_counter()
    with call_logged(env, function_id, started):
        answer = start_on_loop(InvokeCall(
            context.store, context.caches, caller, app_token, function_id,
            _params(body, body_sent), env, _flag(query, "includeInternal"), from_page,
            log_id, context.faas, context.quotas), body_size)
        if isinstance(answer, Pending):
            return await run_in_threadpool(_finished_envelope, answer)
        return envelope_bytes(answer)


def _finished_envelope(pending: Pending) -> bytes:
    return envelope_bytes(pending.finish())


def direct_invoke(context: AppContext, endpoint: Endpoint) -> DirectHandler:
    """The invoke endpoint without the generic request layer, for a caller with a bearer
    token: the same steps as `asgi_handler` runs for it, in the same order (the host,
    the caller, the body within its limit, then the call), with the same answers; the
    tests compare the two byte for byte. A request without an Authorization header (a
    page's sign-in session, or none) is left to the generic handler."""
    limit = endpoint.body_limit
    tokens = context.caches.tokens
    pool = read_only_pool(context.store)

    async def handle(scope: Scope, receive: Receive, send: Send,
                     path: dict[str, str]) -> bool:
        authorization = declared = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization = value if authorization is None else authorization
            elif name == b"content-length":
                declared = value if declared is None else declared
        app_token = path["app_token"]
        host = scope.get(HOST_KEY)
        if not authorization or (isinstance(host, RequestHost) and host.kind != "api"
                                 and app_token.lower() != host.site):
            return False  # a page session, no caller, or another site's page host
        log_id = scope.get(LOG_ID_KEY) or new_log_id()
        log_scope = platform_log.current_scope()
        if log_scope is not None:
            log_scope.app_token = app_token
        try:
            caller = identity.authenticate(pool.connection(), authorization.decode("latin-1"),
                                           memo=tokens)
            scope[USER_ID_KEY] = caller.user_id
            if log_scope is not None:
                log_scope.user_id = caller.user_id
            refuse_declared_over("" if declared is None else declared.decode("latin-1"),
                                 limit)
            raw = await receive_body(receive, limit)
            query = QueryParams(scope["query_string"]) if scope["query_string"] else NO_QUERY
            content = await _invoke(context, caller, app_token, path["function_id"], query,
                                    await parsed_json_body(raw), bool(raw), len(raw), False,
                                    log_id)
        except ApiFailure as failure:
            await failure_response(failure, log_id)(scope, receive, send)
            return True
        except Exception as exc:
            response = unexpected_response(exc, log_id, scope["method"],
                                           Request(scope).url.path)
            await response(scope, receive, send)
            return True
        await send_json_200(send, content)
        return True

    return handle


@contextmanager
def call_logged(env: str, function_id: str, started: float) -> Iterator[None]:
    """One `call` entry in the platform log: what the caller was told, and how long it
    took (basedb.platform.storage.platform_log)."""
    scope = platform_log.current_scope()
    try:
        yield
    except ApiFailure as failure:
        if scope is not None:
            scope.add(platform_log.Entry("call", "error", failure.msg, env, function_id,
                                         int(failure.code), _ms(started)))
        raise
    except Exception:
        if scope is not None:
            scope.add(platform_log.Entry("call", "error", INTERNAL_ERROR_MSG, env, function_id,
                                         int(Code.INTERNAL_ERROR), _ms(started)))
        raise
    if scope is not None:
        scope.add(platform_log.Entry("call", "info", "ok", env, function_id, 0, _ms(started)))


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


# --------------------------------------------------------------------- documentation

_ENV = QueryParam("env", {"type": "string", "enum": ["prod", "preview", "dev"],
                         "default": "prod"},
                  "Which release: prod (every site member), preview (owners and admins), or "
                  "dev, the development draft a `basedb dev` session keeps current (owners "
                  "and admins).")
_INTERNAL = QueryParam("includeInternal", {"type": "boolean", "default": False},
                       "Owners and admins only: also show and allow functions that "
                       "agent-tools.json excludes. Ignored for members.")
_NULLABLE_STRING: Schema = {"type": ["string", "null"]}
_STATUS: Schema = {"type": "string", "enum": [status.value for status in SchemaStatus]}
_ITEM_PROPERTIES: dict[str, Schema] = {
    "functionId": STRING, "name": STRING, "description": STRING,
    "functionType": {"type": "string", "enum": ["database_function", "mutation", "faas",
                                                "ai_function"]},
    "schemaStatus": _STATUS,
    "statusHint": {**_NULLABLE_STRING, "description": "What to do when schemaStatus is not "
                   "ready; null when it is."},
    "table": {**_NULLABLE_STRING, "description": "The table it works on (a query's first "
              "table, a Mutation's table, the table a FaaS id names); null when none is "
              "known. The `table` filter takes these names."},
    "internal": {**BOOLEAN, "description": "Present (true) for an excluded function shown "
                 "because of includeInternal."},
}
_ITEM_REQUIRED = ("functionId", "name", "description", "functionType", "schemaStatus",
                  "statusHint")
_PARAMETER: Schema = obj({
    "name": STRING, "type": {**STRING, "description": "The declared kind (TEXT, INT, NUMBER, "
                             "BOOL, DATE, DATETIME, RECORD_ID, USER_ID; `[]` for arrays) or, "
                             "for FaaS, the JSON Schema type."},
    "required": BOOLEAN, "description": STRING, "enum": array({}),
    "reference": obj({"table": STRING, "field": STRING,
                      "value": {"type": "string", "enum": ["record", "user"]},
                      "recordTable": STRING}, ("table", "field", "value"),
                     description="The param takes ids: records of recordTable, or users."),
    "valueHint": {**STRING, "description": "The author's steps for obtaining the value."},
    "optionSummary": obj({"table": STRING, "field": STRING, "options": array(STRING,
                                                                             maxItems=20),
                          "truncated": BOOLEAN}, ("table", "field", "options", "truncated"),
                         description="A bounded hint of the bound option field's options, "
                         "not the complete set."),
    "examples": array({}, description="Values of the right type and shape to fill the "
                      "parameter with: its enum or the bound field's options, a value in the "
                      "range its description states, or the id or date shape it takes. Ids "
                      "are shapes: fetch real ones as valueHint says."),
}, ("name", "type", "required", "description"))
_FUNCTION: Schema = obj({
    **_ITEM_PROPERTIES,
    "deploymentId": STRING,
    "inputSchema": {"type": ["object", "null"], "description": "Validates `params`; null "
                    "when the function declares none or is not callable."},
    "parameters": array(_PARAMETER),
    "requestExample": {"type": ["object", "null"], "description": "{\"params\": {…}} with "
                       "placeholder values."},
    "replacePaths": array(STRING, description="JSON Pointers of the placeholders in "
                          "requestExample."),
    "callCommand": _NULLABLE_STRING,
    "outputSchema": {"type": "object", "description": "The shape of `data` on success "
                     "(Database Functions and Mutations)."},
    "action": {"type": "string", "enum": ["create", "update", "delete"],
               "description": "Mutations only: what the write does to records."},
}, (*_ITEM_REQUIRED, "deploymentId", "inputSchema", "parameters", "requestExample",
    "replacePaths", "callCommand"))

_SITE_FUNCTIONS = "/sites/{app_token}/functions"
_FUNCTION_PATH = _SITE_FUNCTIONS + "/{function_id}"

ENDPOINTS = [
    Endpoint("GET", _SITE_FUNCTIONS, list_functions, "The site's published functions.",
             "functions",
             description="Stable order (by functionId), pages of pageSize; pass the returned "
             "pageToken while hasMore is true. With query, the best matches come first "
             "(BM25 over functionId, name, description, table and parameter names; words "
             "split at camelCase, Chinese as character pairs) and functions matching no "
             "word are left out; table and access filter. Search with a few distinctive "
             "words of the task, e.g. query=overdue invoice&access=read. A site without a "
             "deployment for env answers 800004004.",
             query=(_ENV, QueryParam("pageToken", STRING, "From the previous page (of the "
                                     "same query, table and access)."),
                    QueryParam("pageSize", {"type": "integer", "minimum": 1,
                                            "maximum": MAX_PAGE_SIZE,
                                            "default": DEFAULT_PAGE_SIZE}, "Page size."),
                    _INTERNAL,
                    QueryParam("query", {"type": "string", "maxLength": MAX_QUERY_CHARS},
                               "Words describing the function wanted; results are ranked, "
                               "best first."),
                    QueryParam("table", STRING, "Only functions working on this table "
                               "(its name, case-insensitive; see `table` of an entry)."),
                    QueryParam("access", {"type": "string", "enum": list(ACCESS_VALUES)},
                               "read: only Database Functions (they never change data); "
                               "write: every other function.")),
             response=obj({"functions": array(obj(_ITEM_PROPERTIES, _ITEM_REQUIRED)),
                           "hasMore": BOOLEAN, "pageToken": _NULLABLE_STRING,
                           "env": STRING, "deploymentId": STRING},
                          ("functions", "hasMore", "pageToken", "env", "deploymentId")),
             errors=(409,)),
    Endpoint("GET", _FUNCTION_PATH, describe, "How to call one function.", "functions",
             description="Read before each write call: inputSchema, parameters, a request "
             "example whose replacePaths are placeholders, and the call command.",
             query=(_ENV, _INTERNAL), response=obj({"function": _FUNCTION}, ("function",)),
             errors=(409,)),
    Endpoint("POST", _FUNCTION_PATH + "/invoke", invoke, "Call a function.", "functions",
             description="params must match the function's inputSchema (GET …/functions/"
             "{function_id} gives it): 9499 names a parameter whose value has the wrong JSON "
             "type, 800004002 one that broke another rule (nothing ran either way); "
             "800004011 for an AI Function while the platform has no AI endpoint; "
             "800004004 when the function's schema is not ready; 800004005 when it "
             "failed while running or a Database Function hit a limit (5 s, 1 MiB per "
             "value, memory); 99991400 when its site already runs its share of slow "
             "queries (retry later). A Database Function answers at most 5,000 rows and "
             "8 MiB (truncated: true). Mutations: check record_not_found, "
             "precondition_failed and ignored_fields even when code is 0. A page calling "
             "through its sign-in session also reaches functions agent-tools.json excludes; "
             "the session is accepted only on that site's page host, from its own origin "
             "(Sec-Fetch-Site / Origin) and with the header X-Basedb-Page: 1.",
             query=(_ENV, _INTERNAL), hosts="any",
             body=obj({"params": {"type": "object", "description": "Named parameters, as "
                                  "the function's inputSchema describes."}}),
             body_required=False, page_session=True, body_limit=4 * MIB, direct=True,
             direct_handler=direct_invoke,
             response={"description": "The function's result: Database Functions {rows, "
                       "columns, rowCount, truncated}; Mutations {recordIds, affected, "
                       "record_not_found, ignored_fields, precondition_failed}; FaaS and AI "
                       "Functions their own data."},
             errors=(409, 422, 429, 502, 504)),
]
