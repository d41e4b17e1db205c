"""A site's functions as model-facing tools: names, descriptions, input schemas, hints
and result digests. `basedb.agent_tools.mcp_server` serves them over MCP; this module
does not import the MCP SDK, so its contract can be read and tested on its own.

Each function open to agents whose schema is usable becomes a tool named by its
functionId, with the function's own description, the live inputSchema from the
describe endpoint and hints from its kind:

    Database Function   readOnlyHint
    Mutation            destructiveHint and idempotentHint from its action (see
                        MUTATION_EFFECTS: only create is additive), closed world
    FaaS, AI Function   not read-only, open world (server code, a model)

A tool's input schema is the function's, with one change: `oneOf`, `anyOf` and
`allOf` at its top level (how FaaS schemas express conditional required fields) are
moved into the tool description as text, because model APIs (Anthropic, OpenAI,
Gemini) refuse tools whose input schema has them at the root, often failing the whole
session. The platform still validates every call against the full schema, and
describe_function returns it. Every tool that is not read-only carries the approval
guard: say what will change and wait for the user's yes. Three meta tools reach
functions published after the server started: discover_functions, describe_function,
invoke_function. Results are the invoke `data` as JSON, capped at MAX_RESULT_CHARS
with a note; failures are error results carrying the platform's message, whose Fix:
and Retry: say what to do next.
"""

from __future__ import annotations

import fnmatch
import json
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from basedb.client import endpoints
from basedb.core.errors import ApiError, BasedbError
from basedb.core.frozen import frozen_dataclass
from basedb.protocol.codes import CALLABLE_STATUSES

if TYPE_CHECKING:
    from basedb.client.client import Client

DISCOVER, DESCRIBE, INVOKE = "discover_functions", "describe_function", "invoke_function"
META_TOOLS = (DISCOVER, DESCRIBE, INVOKE)
MAX_RESULT_CHARS = 32 * 1024
MAX_DESCRIPTION_CHARS = 2000
_FUNCTION_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}\Z")
_SKIPPED_RECORDS = ("record_not_found", "precondition_failed")

APPROVAL_GUARD = ("Before calling, tell the user in plain words what will change and wait "
                  "for their explicit yes. If a call fails, times out or its outcome is "
                  "unknown, do not call it again: check with a read-only tool first.")
PARTIAL_NOTE = ("A result with code 0 may still be partial: check record_not_found, "
                "precondition_failed and ignored_fields.")
KIND_NOTES = {
    "database_function": "Read-only: queries the site's data and changes nothing.",
    "create": "Writes: creates records in the site's tables.",
    "update": "Writes: changes existing records of the site's tables.",
    "delete": "Writes: deletes records of the site's tables; they cannot be restored.",
    "faas": "Runs the site's server code, which may write data or call other services.",
    "ai_function": "Runs an AI model on the input; it may take a while and is not free.",
}
MISSING_SCHEMA_NOTE = ("It declares no input schema: decide the arguments from this "
                       "description, and stop and ask the user when you cannot.")
EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {},
                                "additionalProperties": False}
ANY_OBJECT: dict[str, Any] = {"type": "object"}
TOOL_THRESHOLD = 40  # above it, tools/list serves the meta tools only (see SiteTools)
TOOLS_PAGE_SIZE = 50  # tools per tools/list page
DISCOVER_PAGE_SIZE = 20
DISCOVER_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {
        "query": {"type": "string", "description": "Words describing the function wanted, "
                  "e.g. \"overdue invoices\"; ranked, best first."},
        "table": {"type": "string", "description": "Only functions working on this table "
                  "(its name, as discover_functions reports it)."},
        "access": {"type": "string", "enum": ["read", "write"],
                   "description": "read: functions that only read; write: all others."},
        "pageToken": {"type": "string", "description": "The pageToken of the previous "
                      "answer, with the same query, table and access, for more results."}},
    "additionalProperties": False}


@frozen_dataclass
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, bool]
    title: str | None = None


@frozen_dataclass
class ToolOutcome:
    text: str
    is_error: bool = False


def access_of(function_type: object) -> str:
    return "read" if function_type == "database_function" else "write"


@frozen_dataclass
class WriteEffect:
    """What a Mutation action does to the records already in the table.

    MCP's destructiveHint false promises an *additive* tool: it never changes or removes
    what exists. idempotentHint true promises that repeating a call with the same
    arguments changes nothing more.
    """

    destructive: bool
    idempotent: bool
    why: str


MUTATION_EFFECTS: dict[str, WriteEffect] = {
    # create adds a record per call and touches no existing one.
    "create": WriteEffect(False, False, "adds new records; each call adds more"),
    # update writes `set` (overwriting the value there) and empties `clear`: what was in
    # those fields is lost, and the same call again leaves the same values.
    "update": WriteEffect(True, True, "overwrites the fields it sets and empties the ones "
                          "it clears; repeating it writes the same values"),
    # delete removes records; a repeat finds them gone (record_not_found) and does nothing.
    "delete": WriteEffect(True, True, "removes records; repeating it removes nothing more"),
}


def function_annotations(function_type: str, action: str | None) -> dict[str, bool]:
    """MCP tool annotations (readOnlyHint, destructiveHint, idempotentHint,
    openWorldHint) of a function kind; unset hints keep MCP's cautious defaults (an
    unknown Mutation action is taken to be destructive)."""
    if function_type == "database_function":
        return {"readOnlyHint": True, "openWorldHint": False}
    if function_type == "mutation":
        effect = MUTATION_EFFECTS.get(action or "")
        if effect is None:
            return {"readOnlyHint": False, "openWorldHint": False}
        return {"readOnlyHint": False, "destructiveHint": effect.destructive,
                "idempotentHint": effect.idempotent, "openWorldHint": False}
    if function_type == "ai_function":
        return {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False,
                "openWorldHint": True}
    return {"readOnlyHint": False, "openWorldHint": True}


def function_tool_description(described: dict[str, Any], schema_note: str = "") -> str:
    """The function's own description, the cases its input schema had at the root (see
    `tool_input_schema`), then what kind of call it is; writes end with the approval
    guard."""
    function_type = str(described.get("functionType") or "")
    action = described.get("action")
    own = " ".join(str(described.get("description") or "").split()) or "No description."
    if len(own) > MAX_DESCRIPTION_CHARS:
        own = own[: MAX_DESCRIPTION_CHARS - 1] + "…"
    parts = [own, schema_note] if schema_note else [own]
    note_key = action if function_type == "mutation" and action in KIND_NOTES else function_type
    if note_key in KIND_NOTES:
        parts.append(KIND_NOTES[note_key])
    if described.get("schemaStatus") == "missing":
        parts.append(MISSING_SCHEMA_NOTE)
    if function_type == "mutation":
        parts.append(PARTIAL_NOTE)
    if access_of(function_type) == "write":
        parts.append(APPROVAL_GUARD)
    return "\n\n".join(parts)


def function_tool(described: dict[str, Any]) -> ToolSpec:
    """The tool of one function, from its describe answer (`data.function`)."""
    schema = described.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type") not in (None, "object"):
        schema = ANY_OBJECT  # no schema (status missing): the platform takes any object
    schema, note = tool_input_schema(schema)
    schema.setdefault("type", "object")
    name = str(described.get("name") or "")
    function_id = str(described["functionId"])
    return ToolSpec(
        name=function_id, description=function_tool_description(described, note),
        input_schema=schema,
        annotations=function_annotations(str(described.get("functionType") or ""),
                                         described.get("action")),
        title=name if name and name != function_id else None)


_ROOT_CASES = {"oneOf": "Exactly one of these cases applies",
               "anyOf": "At least one of these cases applies",
               "allOf": "All of these apply"}


def tool_input_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """`schema` without top-level oneOf/anyOf/allOf, and a sentence saying what they
    required ("" when it had none); type unions spelt portably (`portable_schema`)."""
    kept = portable_schema({key: value for key, value in schema.items()
                            if key not in _ROOT_CASES})
    notes = []
    for key, lead in _ROOT_CASES.items():
        cases = schema.get(key)
        if isinstance(cases, list) and cases:
            listed = "; ".join(f"({i}) {_case_summary(case)}"
                               for i, case in enumerate(cases, start=1))
            notes.append(f"{lead} (the platform checks them): {listed}.")
    if notes:
        notes.append(f"{DESCRIBE} returns the complete inputSchema.")
    return kept, " ".join(notes)


# Keywords whose value maps names to subschemas, and those that hold one or a list.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                          "dependentSchemas"})
_SCHEMA_ONES = frozenset({"items", "additionalProperties", "not", "contains",
                          "propertyNames", "if", "then", "else", "additionalItems",
                          "unevaluatedItems", "unevaluatedProperties"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
# Annotations describe the value as a whole: they stay beside the anyOf.
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment",
                          "deprecated", "readOnly", "writeOnly"})


def portable_schema(schema: Any) -> Any:
    """`schema` with every `"type": [T, "null"]` union written as `anyOf` branches of one
    type each, recursively. Both mean the same, but clients that map tool schemas onto a
    single-type dialect (Gemini's OpenAPI subset) reject or weaken a type array, and MCP
    Inspector's --strict flags it. An enum is split between the branches by type."""
    if isinstance(schema, list):
        return [portable_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    node: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            node[key] = {name: portable_schema(sub) for name, sub in value.items()}
        elif key in _SCHEMA_ONES or key in _SCHEMA_LISTS:
            node[key] = portable_schema(value)
        else:
            node[key] = value
    types_ = node.get("type")
    if not isinstance(types_, list):
        return node
    if len(types_) == 1:
        return {**node, "type": types_[0]}
    outer = {key: value for key, value in node.items() if key in _ANNOTATIONS}
    rest = {key: value for key, value in node.items()
            if key not in _ANNOTATIONS and key != "type"}
    branches = []
    for kind in types_:
        branch: dict[str, Any] = {"type": kind}
        if kind != "null":
            branch.update(rest)
            if isinstance(rest.get("enum"), list):
                branch["enum"] = [v for v in rest["enum"] if _json_kind_fits(v, kind)]
        branches.append(branch)
    return {**outer, "anyOf": branches}


def _json_kind_fits(value: Any, kind: str) -> bool:
    return {"null": value is None, "boolean": isinstance(value, bool),
            "string": isinstance(value, str), "array": isinstance(value, list),
            "object": isinstance(value, dict),
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
            }.get(kind, True)


def _case_summary(case: Any) -> str:
    """`when action is "close": periodId is required`, as far as the case says it."""
    if not isinstance(case, dict):
        return "see the complete inputSchema"
    properties = case.get("properties")
    if not isinstance(properties, dict):
        properties = {}
    condition = []
    for name, prop in properties.items():
        if isinstance(prop, dict) and "const" in prop:
            condition.append(f"{name} is {json.dumps(prop['const'], ensure_ascii=False)}")
        elif isinstance(prop, dict) and isinstance(prop.get("enum"), list):
            values = ", ".join(json.dumps(v, ensure_ascii=False) for v in prop["enum"])
            condition.append(f"{name} is {values}" if len(prop["enum"]) == 1
                             else f"{name} is one of {values}")
    required = [n for n in case.get("required") or [] if isinstance(n, str)]
    told = required and set(case) <= {"type", "properties", "required", "description",
                                      "title"}
    rule = (f"{', '.join(required)} {'is' if len(required) == 1 else 'are'} required"
            if required else "")
    if not told:
        rule = "; ".join(filter(None, [rule, "see the complete inputSchema"]))
    return f"when {' and '.join(condition)}: {rule}" if condition else rule


META_TOOL_SPECS = (
    ToolSpec(DISCOVER, "Find the site's published functions: functionId, description, "
             "table, read or write access, schemaStatus and the tool that calls each. Pass "
             "query (a few distinctive words of the task; results come best first), table "
             "or access to narrow; without them a large site answers with its tables and "
             "how many functions each has. Use it when no tool fits the task (a function "
             "may have been published after this server started) or to learn why a "
             "function is not callable.",
             DISCOVER_SCHEMA, {"readOnlyHint": True, "openWorldHint": False}),
    ToolSpec(DESCRIBE, "Read the live description of one function: inputSchema, "
             "parameters[] (reference: ids to fetch with a read function as valueHint "
             "says; optionSummary: some options, not all), a requestExample whose "
             "replacePaths are placeholders. Call it before invoke_function, and again "
             "before every write.",
             {"type": "object", "properties": {"functionId": {
                 "type": "string", "description": "A functionId from discover_functions."}},
              "required": ["functionId"], "additionalProperties": False},
             {"readOnlyHint": True, "openWorldHint": False}),
    ToolSpec(INVOKE, "Call a function by functionId with named params, as its "
             "describe_function inputSchema says. Prefer the function's own tool when you "
             f"have one. {PARTIAL_NOTE} For any function whose access is write: "
             f"{APPROVAL_GUARD}",
             {"type": "object", "properties": {
                 "functionId": {"type": "string",
                                "description": "A functionId from discover_functions."},
                 "params": {"type": "object", "description": "Named parameters (an object, "
                            "never an array); {} when the function takes none."}},
              "required": ["functionId"], "additionalProperties": False},
             {"readOnlyHint": False, "openWorldHint": True}),
)


# -------------------------------------------------------------------------- results


def digest(data: Any) -> str:
    """`data` as JSON text, at most MAX_RESULT_CHARS, saying so when cut. A Mutation
    result that did not do everything asked gets notes first, since code 0 then does
    not mean all done."""
    text = json.dumps(data, ensure_ascii=False)
    notes = []
    if isinstance(data, dict):
        skipped = [f"{name}: {json.dumps(data[name], ensure_ascii=False)}"
                   for name in _SKIPPED_RECORDS if data.get(name)]
        if skipped:
            notes.append("Note: not every record was written (" + "; ".join(skipped) + ").")
        if data.get("ignored_fields"):
            notes.append("Note: fields left unchanged because their optional parameter was "
                         "missing or null: "
                         f"{json.dumps(data['ignored_fields'], ensure_ascii=False)}.")
    tail = []
    if len(text) > MAX_RESULT_CHARS:
        tail.append(f"[Truncated: showing the first {MAX_RESULT_CHARS} of {len(text)} "
                    "characters of the JSON result. Narrow the parameters (filters, limit, "
                    "offset) to see the rest.]")
        text = text[:MAX_RESULT_CHARS]
    return "\n".join([*notes, text, *tail])


def error_outcome(error: BasedbError) -> ToolOutcome:
    """The platform's message as it is (its Fix: and Retry: intact), with the code and
    log id, and basedb's hint where it adds one (e.g. a write of unknown outcome)."""
    parts = [error.message]
    extra = []
    if error.code not in (None, ""):
        extra.append(f"code {error.code}")
    log_id = error.detail.get("log_id")
    if log_id and str(log_id) not in error.message:
        extra.append(f"LogID {log_id}")
    if extra:
        parts[0] += f" ({', '.join(extra)})"
    if error.hint and not isinstance(error, ApiError):
        parts.append(error.hint)
    return ToolOutcome("\n".join(parts), is_error=True)


# ------------------------------------------------------------------------ the site


@dataclass
class SiteTools:
    """The tools of one site and env, over a basedb client. Methods are synchronous
    and serialised (one request at a time); the MCP layer runs them in worker threads."""

    client: Client
    app_token: str
    env: str = "prod"
    title: str | None = None
    # Which functions get a tool of their own: "auto" (all of them up to TOOL_THRESHOLD
    # callable functions, none beyond: the meta tools reach every one), "all", or those
    # whose table matches one of `tables` (fnmatch globs, case-insensitive).
    serve: str = "auto"
    tables: tuple[str, ...] = ()
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # The functions served as tools at the last tools/list (None: not listed yet).
    _served_ids: frozenset[str] | None = field(default=None, repr=False)

    def functions(self) -> list[dict[str, Any]]:
        """Every function open to agents (all pages); raises when the site cannot be
        listed (no deployment for env, no access)."""
        with self._lock:
            envelope = self.client.paginate("GET", endpoints.functions(self.app_token),
                                            params={"env": self.env}, list_field="functions")
        items = (envelope.get("data") or {}).get("functions") or []
        return [item for item in items if isinstance(item, dict)
                and isinstance(item.get("functionId"), str)]

    def describe(self, function_id: str) -> dict[str, Any]:
        with self._lock:
            data = self.client.request("GET", endpoints.function(self.app_token, function_id),
                                       params={"env": self.env}).get("data") or {}
        described = data.get("function")
        return described if isinstance(described, dict) else {}

    def invoke(self, function_id: str, params: dict[str, Any]) -> Any:
        with self._lock:
            envelope = self.client.request("POST", endpoints.invoke(self.app_token, function_id),
                                           params={"env": self.env}, json={"params": params})
        return envelope.get("data")

    def load_title(self) -> str:
        """The site's title (the app token when it cannot be read)."""
        if self.title is None:
            try:
                with self._lock:
                    data = self.client.request("GET", endpoints.site(self.app_token)).get("data")
                title = data.get("title") if isinstance(data, dict) else None
            except BasedbError:
                title = None
            self.title = title if isinstance(title, str) and title else self.app_token
        return self.title

    def instructions(self) -> str:
        title = self.load_title()
        lead = (f'Tools for the Base Database site "{title}" (app token {self.app_token}, '
                f"{self.env} release). ")
        if self.served_functions():
            how = ("Each site function served as a tool is named by its functionId; tools "
                   "marked read-only only read, every other tool may change data or run "
                   f"code. For other functions, or ones published after this server "
                   f"started, use {DISCOVER}, {DESCRIBE} and {INVOKE}. ")
        else:
            how = (f"The site has many functions: find one with {DISCOVER} (query: a few "
                   f"words of the task; or table), read it with {DESCRIBE}, call it with "
                   f"{INVOKE}. Functions whose access is read only read; every other one "
                   "may change data or run code. ")
        return (lead + how + f"{APPROVAL_GUARD} {PARTIAL_NOTE} Error messages say what to "
                "fix (Fix:) and whether another attempt can succeed (Retry:); never retry "
                "automatically.")

    # --- tools -------------------------------------------------------------------

    def tools(self) -> list[ToolSpec]:
        """Every tools/list page, joined."""
        specs, cursor = self.tools_page(None)
        while cursor is not None:
            more, cursor = self.tools_page(cursor)
            specs += more
        return specs

    def served_functions(self) -> list[dict[str, Any]]:
        """The callable functions that get a tool of their own (see `serve`)."""
        callable_now = [item for item in self.functions()
                        if item.get("schemaStatus") in CALLABLE_STATUSES
                        and item["functionId"] not in META_TOOLS]
        if self.tables:
            return [item for item in callable_now if _table_matches(item, self.tables)]
        if self.serve == "all" or len(callable_now) <= TOOL_THRESHOLD:
            return callable_now
        return []

    def tools_page(self, cursor: str | None) -> tuple[list[ToolSpec], str | None]:
        """One tools/list page: up to TOOLS_PAGE_SIZE function tools (each read live:
        a describe per function), the meta tools on the first page, and the cursor of
        the next page (None on the last). Functions that cannot be called now are left
        to discover."""
        start = _cursor_offset(cursor)
        served = self.served_functions()
        self._served_ids = frozenset(item["functionId"] for item in served)
        page = served[start:start + TOOLS_PAGE_SIZE]
        specs: list[ToolSpec] = []
        for item in page:
            function_id = item["functionId"]
            try:
                described = self.describe(function_id)
            except BasedbError:
                continue  # unpublished or changed since the listing: discover shows it
            if described.get("functionId") == function_id:
                specs.append(function_tool(described))
        if start == 0:
            specs += META_TOOL_SPECS
        end = start + len(page)
        return specs, (str(end) if end < len(served) else None)

    def call(self, name: str, arguments: dict[str, Any] | None) -> ToolOutcome:
        arguments = arguments or {}
        try:
            if name == DISCOVER:
                return ToolOutcome(digest(self._discover(arguments)))
            if name == DESCRIBE:
                return ToolOutcome(digest(self.describe(_function_id(arguments))))
            if name == INVOKE:
                params = arguments.get("params", {})
                if params is None:
                    params = {}
                if not isinstance(params, dict):
                    raise _BadArguments("params must be an object of named parameters, "
                                        'e.g. {"status": "Open"}, not an array or a string.')
                return ToolOutcome(digest(self.invoke(_function_id(arguments), params)))
            if not _FUNCTION_ID_RE.match(name):
                raise _BadArguments(f"There is no tool {name!r}; call {DISCOVER} to see the "
                                    "site's functions.")
            return ToolOutcome(digest(self.invoke(name, arguments)))
        except _BadArguments as exc:
            return ToolOutcome(str(exc), is_error=True)
        except BasedbError as error:
            return error_outcome(error)

    def _discover(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """One page of a search when arguments narrow it; else every function of a
        small site, and the tables (with counts) of a large one."""
        params: dict[str, Any] = {"env": self.env}
        for key in ("query", "table", "access", "pageToken"):
            value = arguments.get(key)
            if value is not None and not isinstance(value, str):
                raise _BadArguments(f"{key} must be a string, not {value!r}.")
            if value:
                params[key] = value
        out: dict[str, Any] = {"appToken": self.app_token, "env": self.env}
        if self._served_ids is None:
            self._served_ids = frozenset(item["functionId"]
                                         for item in self.served_functions())
        if len(params) > 1:
            params["pageSize"] = DISCOVER_PAGE_SIZE
            with self._lock:
                data = self.client.request("GET", endpoints.functions(self.app_token),
                                           params=params).get("data") or {}
            items = [i for i in data.get("functions") or [] if isinstance(i, dict)]
            out["functions"] = [self._entry(item) for item in items]
            out["hasMore"] = bool(data.get("hasMore"))
            out["pageToken"] = data.get("pageToken")
            return out
        items = self.functions()
        if len(items) <= TOOL_THRESHOLD:
            out["functions"] = [self._entry(item) for item in items]
            return out
        tables: dict[str, dict[str, int]] = {}
        for item in items:
            counts = tables.setdefault(item.get("table") or "(no table)",
                                       {"read": 0, "write": 0})
            counts[access_of(item.get("functionType"))] += 1
        out["functionCount"] = len(items)
        out["tables"] = [{"table": name, "reads": c["read"], "writes": c["write"]}
                         for name, c in sorted(tables.items())]
        out["next"] = (f"Call {DISCOVER} again with query (words of the task) or table "
                       "(one of these) to list the functions.")
        return out

    def _entry(self, item: dict[str, Any]) -> dict[str, Any]:
        status = item.get("schemaStatus")
        callable_now = status in CALLABLE_STATUSES
        has_tool = item["functionId"] in (self._served_ids or ()) and callable_now
        return {
            "functionId": item["functionId"], "name": item.get("name"),
            "description": item.get("description"), "table": item.get("table"),
            "functionType": item.get("functionType"),
            "access": access_of(item.get("functionType")), "schemaStatus": status,
            "statusHint": item.get("statusHint"),
            "tool": item["functionId"] if has_tool else INVOKE if callable_now else None}


def _table_matches(item: dict[str, Any], globs: tuple[str, ...]) -> bool:
    table = str(item.get("table") or "").lower()
    return bool(table) and any(fnmatch.fnmatchcase(table, glob.lower()) for glob in globs)


def _cursor_offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise InvalidCursor("The tools/list cursor is not one this server returned; list "
                            "again from the start.")
    return int(cursor)


class InvalidCursor(ValueError):
    """A tools/list cursor this server did not return (an MCP invalid-params error)."""


class _BadArguments(Exception):
    """Arguments a meta tool cannot use; reported to the model as an error result."""


def _function_id(arguments: dict[str, Any]) -> str:
    function_id = arguments.get("functionId")
    if not isinstance(function_id, str) or not _FUNCTION_ID_RE.match(function_id):
        raise _BadArguments(f"functionId must be a functionId from {DISCOVER} (a letter, then "
                            f"letters, digits or _), not {function_id!r}.")
    return function_id
