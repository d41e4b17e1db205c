"""Site drafts: functions, AI Functions and the agent-tools policy (full overwrites,
owners and admins only).

Every answer carries the drafts' `draftRevision`; a write sent with `?draftRevision=N`
is refused (800004020) unless the drafts are still at N, which is how a deploy keeps
another deploy's writes from mixing into its own.

PUT draft/functions takes each function in full or, when the site's draft already holds
it, as `{functionId, contentHash}` (`basedb.platform.domain.draft_content`); GET
draft/hashes says what the site holds."""

from __future__ import annotations

from typing import Any

from basedb.platform.domain import draft_results, drafts, sites
from basedb.platform.domain.access import require_site
from basedb.platform.web.http import MIB, Call, Endpoint, QueryParam
from basedb.platform.web.routes.schemas import INTEGER, STRING, STRINGS, Schema, array, obj
from basedb.workspace.model import FUNCTION_ID_PATTERN

MAX_REVISION = 2**62


def expected_revision(call: Call) -> int | None:
    """?draftRevision=N: the revision the caller's previous write left, if sent."""
    if call.query.get("draftRevision") is None:
        return None
    return call.query_int("draftRevision", default=0, minimum=0, maximum=MAX_REVISION)


def _manage(call: Call) -> sites.SiteRow:
    with call.store.read() as conn:
        site, _ = require_site(conn, call.caller, call.path["app_token"],
                               roles=sites.MANAGER_ROLES)
    return site


# ------------------------------------------------------------------ functions


def put_draft_functions(call: Call) -> dict[str, Any]:
    judged = draft_results.judge_functions(call.store, call.caches, call.caller,
                                           call.path["app_token"], call.body)
    expected = expected_revision(call)
    with call.store.write() as conn:
        saved = draft_results.save_functions(conn, call.caller, judged, expected)
    return saved.to_dict()


def get_draft_functions(call: Call) -> dict[str, Any]:
    site = _manage(call)
    with call.store.read() as conn:
        return draft_results.functions_listing(conn, site.app_token).to_dict()


def get_draft_hashes(call: Call) -> dict[str, Any]:
    site = _manage(call)
    with call.store.read() as conn:
        return draft_results.held_content(conn, site.app_token).to_dict()


# --------------------------------------------------------------- AI Functions


def put_draft_ai_functions(call: Call) -> dict[str, Any]:
    site = _manage(call)
    functions = draft_results.judge_ai_functions(call.body)
    expected = expected_revision(call)
    with call.store.write() as conn:
        saved = draft_results.save_ai_functions(conn, call.caller, site.app_token, functions,
                                                expected)
    return saved.to_dict()


def get_draft_ai_functions(call: Call) -> dict[str, Any]:
    site = _manage(call)
    with call.store.read() as conn:
        return draft_results.ai_functions_listing(conn, site.app_token).to_dict()


# ----------------------------------------------------------------- agent tools


def put_draft_agent_tools(call: Call) -> dict[str, Any]:
    site = _manage(call)
    expected = expected_revision(call)
    with call.store.write() as conn:
        saved = draft_results.save_agent_tools(conn, call.caller, site.app_token, call.body,
                                               expected)
    return saved.to_dict()


def get_draft_agent_tools(call: Call) -> dict[str, Any]:
    site = _manage(call)
    with call.store.read() as conn:
        return draft_results.agent_tools_policy(conn, site.app_token).to_dict()


# ------------------------------------------------------------------- schemas

FUNCTION_ID: Schema = {"type": "string", "pattern": FUNCTION_ID_PATTERN}

_DOC: Schema = {"type": "object", "description": "The function.json document."}
_NON_BLANK: Schema = {"type": "string", "pattern": r"\S"}
_DATABASE_FUNCTION = obj({"functionId": FUNCTION_ID, "declaration": _DOC,
                          "sql": {**_NON_BLANK, "description": "main.sql"}},
                         ("functionId", "declaration", "sql"))
_MUTATION = obj({"functionId": FUNCTION_ID, "declaration": _DOC}, ("functionId", "declaration"))
_FAAS = obj({"functionId": FUNCTION_ID, "declaration": _DOC,
             "handler": {**STRING, "description": "index.mjs"}},
            ("functionId", "declaration", "handler"))
CONTENT_HASH: Schema = {"type": "string", "pattern": "^[0-9a-f]{64}$",
                        "description": "SHA-256 (hex) of the canonical JSON of [kind, "
                        "functionId, declaration, sql, handler]: keys sorted, no spaces, "
                        "non-ASCII as is; kind is database_function, mutation or faas, and "
                        "sql / handler are null for the kinds without them."}
_REFERENCE = obj({"functionId": FUNCTION_ID, "contentHash": CONTENT_HASH},
                 ("functionId", "contentHash"),
                 description="A function the site's draft already holds with this content "
                 "hash (GET draft/hashes), named instead of sent.")


def _or_reference(item: Schema) -> Schema:
    return {"oneOf": [item, _REFERENCE]}


FUNCTIONS_BODY = obj({"databaseFunctions": array(_or_reference(_DATABASE_FUNCTION)),
                      "mutations": array(_or_reference(_MUTATION)),
                      "faas": array(_or_reference(_FAAS)),
                  "timezone": {"type": ["string", "null"], "description": "The IANA time "
                               "zone name the functions run in (base-database.jsonc "
                               "`timezone`; UTC when absent or null; 400 for any other name): "
                               "now(), CURRENT_DATE and datetime values in SQL, datetime "
                               "params, and the datetimes Mutations and FaaS write."}},
                 description="Every Database Function, Mutation and FaaS of the site; a list "
                 "left out counts as empty. An item is the function in full, or "
                 "{functionId, contentHash} for a function the site's draft already holds "
                 "with that content hash.")
FULL_FUNCTIONS_BODY = obj({"databaseFunctions": array(_DATABASE_FUNCTION),
                            "mutations": array(_MUTATION), "faas": array(_FAAS),
                            "timezone": FUNCTIONS_BODY["properties"]["timezone"]})
_HASHES = obj({}, additional=CONTENT_HASH, description="Content hashes by functionId.")
HELD_CONTENT = obj({"databaseFunctions": _HASHES, "mutations": _HASHES, "faas": _HASHES,
                    "timezone": STRING,
                    "fingerprints": array({**STRING, "pattern": "^sha256:[0-9a-f]{64}$"},
                                          description="Fingerprints of the site's newest "
                                          "deployments (newest first): a deployment with one "
                                          "of them may leave site.zip out."),
                    "draftRevision": INTEGER},
                   ("databaseFunctions", "mutations", "faas", "timezone", "fingerprints",
                    "draftRevision"))
FUNCTION_HINTS = array({"type": "object", "description": "A functionHints entry, as `basedb check "
                "--json` reports it."})
_AI_DECLARATION = obj({"name": _NON_BLANK, "description": {"type": ["string", "null"]},
                       "capability": _NON_BLANK, "prompt": _NON_BLANK,
                       "inputSchema": {"type": ["object", "null"]}},
                      ("capability", "prompt"), additional=True,
                      description="The AI Function's declaration (ai/<key>.json).")
AI_FUNCTIONS_BODY = obj({"aiFunctions": array(obj({"key": FUNCTION_ID,
                                                   "declaration": _AI_DECLARATION},
                                                  ("key", "declaration")))})
_EXCLUDE = obj({"exclude": STRINGS}, ("exclude",))
_REVISION: Schema = {**INTEGER, "description": "The drafts' revision (after this write)."}
_EXPECTED = QueryParam("draftRevision", {"type": "integer", "minimum": 0,
                                          "maximum": MAX_REVISION},
                       "Refuse the write (800004020) unless the drafts are still at this "
                       "revision: the one the caller's previous write answered.")


def _with_revision(schema: Schema) -> Schema:
    properties = {**schema["properties"], "draftRevision": _REVISION}
    return {**schema, "properties": properties,
            "required": [*schema.get("required", ()), "draftRevision"]}
_FAILURES = ("Errors answer 9499 with data.errors (the findings of `basedb check`); the msg "
             "names the first and where it is in the request body.")

_DRAFT = "/sites/{app_token}/draft"

ENDPOINTS = [
    Endpoint("PUT", _DRAFT + "/functions", put_draft_functions,
             "Replace the draft Database Functions, Mutations and FaaS.", "drafts",
             description="Judged against the live catalog of the site's bound tables by the "
             "validators of `basedb check`; a draft already judged at this catalog revision "
             "is not judged again. " + _FAILURES + " An item sent as {functionId, "
             "contentHash} that the site's draft does not hold is refused (9499) with "
             "data.resend, the JSON Pointers of the items to send in full.",
             body=FUNCTIONS_BODY, body_limit=32 * MIB, query=(_EXPECTED,), errors=(409,),
             response=obj({"functionHints": FUNCTION_HINTS,
                           "counts": obj({kind: INTEGER for kind in drafts.CODE_KINDS}),
                           "draftRevision": _REVISION},
                          ("functionHints", "counts", "draftRevision"))),
    Endpoint("GET", _DRAFT + "/functions", get_draft_functions,
             "The draft Database Functions, Mutations and FaaS.", "drafts",
             response=_with_revision(FULL_FUNCTIONS_BODY)),
    Endpoint("GET", _DRAFT + "/hashes", get_draft_hashes,
             "What the site holds: content hashes of its draft functions, fingerprints of "
             "its newest deployments.", "drafts",
             description="A deploy reads this first, then names the unchanged functions "
             "by contentHash in PUT draft/functions and leaves out site.zip when its "
             "fingerprint is listed.", response=HELD_CONTENT),
    Endpoint("PUT", _DRAFT + "/ai-functions", put_draft_ai_functions,
             "Replace the draft AI Functions.", "drafts",
             description="Judged by the validators of `basedb check`; stored even when no "
             "AI endpoint is configured. " + _FAILURES,
             body=AI_FUNCTIONS_BODY, body_limit=8 * MIB, query=(_EXPECTED,), errors=(409,),
             response=obj({"keys": STRINGS, "draftRevision": _REVISION},
                          ("keys", "draftRevision"))),
    Endpoint("GET", _DRAFT + "/ai-functions", get_draft_ai_functions,
             "The draft AI Functions.", "drafts", response=_with_revision(AI_FUNCTIONS_BODY)),
    Endpoint("PUT", _DRAFT + "/agent-tools", put_draft_agent_tools,
             "Replace the draft agent-tools policy.", "drafts",
             description="Every id in exclude must be a draft function or AI Function; "
             "otherwise 800004030 with data.errors.",
             body=_EXCLUDE, query=(_EXPECTED,), errors=(409,), response=_with_revision(_EXCLUDE)),
    Endpoint("GET", _DRAFT + "/agent-tools", get_draft_agent_tools,
             "The draft agent-tools policy.", "drafts", response=_with_revision(_EXCLUDE)),
]
