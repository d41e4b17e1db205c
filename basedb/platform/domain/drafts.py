"""Site drafts: the functions, AI Functions and agent-tools policy the next deployment
will snapshot.

Drafts are full overwrites (upstream: "Functions 更新为全量覆盖"): a PUT replaces every
function of the kinds it covers. They are judged exactly as `basedb check` judges a
workspace: the payload becomes an in-memory `Workspace` (declarations built with
`build_declaration`, the site's live Catalog, no agent-tools file) and goes through
`check_workspace` (without the contracts check: the platform has no generated files),
so an error or hint here is the one `check` reports for the same files, with the same
code, file and pointer.

The site's time zone travels with the functions: `PUT draft/functions` carries
`timezone` (an IANA name; UTC when absent), the zone its functions run in. A deployment
snapshots it with the functions, so a release keeps its zone until another is promoted.

Every draft write bumps the site's draft revision by one. A deploy sends each of its
writes, and then the deployment, with the revision its previous write left
(`require_revision`), so a deploy of the same site by someone else in between (whose
writes would mix into this one's drafts) is refused instead of deployed.

A redeploy need not send what the site's draft already holds: an item of PUT
draft/functions may name a stored function by its content hash
(`basedb.platform.domain.draft_content`). Unchanged functions are then neither sent,
parsed, judged (a draft already judged at this catalog revision passes again) nor
rewritten.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from basedb.check.result import CheckResult
from basedb.check.run import check_workspace
from basedb.core.content_hash import function_content_hash
from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain.draft_content import (
    REFERENCE_KEY,
    DraftEntry,
    HashReference,
    draft_entries,
    parse_reference,
    resend_failure,
    unknown_references,
)
from basedb.platform.storage import ids
from basedb.protocol import ApiFailure, Code, bad_request, unexecuted_message
from basedb.protocol.findings import Finding
from basedb.workspace.config import is_timezone
from basedb.workspace.declarations import (
    build_declaration,
    declaration_file,
    duplicate_id_findings,
    handler_file,
    sql_file,
)
from basedb.workspace.files import KIB, MIB
from basedb.workspace.model import (
    FUNCTION_ID_RE,
    KIND_DIRS,
    AgentToolsConfig,
    AnyDeclaration,
    Catalog,
    FunctionKind,
    Workspace,
)

MAX_FUNCTIONS = 10_000
MAX_AI_FUNCTIONS = 500
MAX_DECLARATION_BYTES = 1 * MIB
MAX_SQL_BYTES = 256 * KIB
MAX_HANDLER_BYTES = 1 * MIB

# Body key of each kind in PUT draft/functions, and the keys an item may carry.
FUNCTION_LISTS: dict[str, FunctionKind] = {
    "databaseFunctions": "database_function",
    "mutations": "mutation",
    "faas": "faas",
}
LIST_OF_KIND: dict[FunctionKind, str] = {kind: key for key, kind in FUNCTION_LISTS.items()}
LIST_OF_KIND["ai_function"] = "aiFunctions"
_ITEM_KEYS: dict[FunctionKind, tuple[str, ...]] = {
    "database_function": ("functionId", "declaration", "sql"),
    "mutation": ("functionId", "declaration"),
    "faas": ("functionId", "declaration", "handler"),
    "ai_function": ("key", "declaration"),
}
CODE_KINDS: tuple[FunctionKind, ...] = ("database_function", "mutation", "faas")
AI_KINDS: tuple[FunctionKind, ...] = ("ai_function",)


@frozen_dataclass(slots=False)
class DraftFunction:
    """One function of a draft, as sent (the declaration document is not judged yet)."""

    kind: FunctionKind
    function_id: str
    declaration: Any
    sql: str | None = None
    handler: str | None = None
    position: int = 0  # index in its list of the request body

    @property
    def request_pointer(self) -> str:
        return f"/{LIST_OF_KIND[self.kind]}/{self.position}"

    def to_item(self) -> dict[str, Any]:
        """The item as the PUT body carries it (and GET returns it)."""
        id_key = "key" if self.kind == "ai_function" else "functionId"
        item: dict[str, Any] = {id_key: self.function_id, "declaration": self.declaration}
        if self.kind == "database_function":
            item["sql"] = self.sql
        elif self.kind == "faas":
            item["handler"] = self.handler
        return item

    @functools.cached_property
    def content_hash(self) -> str:
        """SHA-256 of everything the function is: kind, id, declaration (canonical JSON),
        main.sql and index.mjs (`basedb.core.content_hash`). Equal hashes mean the same
        function."""
        return function_content_hash(self.kind, self.function_id, self.declaration,
                                     self.sql, self.handler)


DraftItem = DraftFunction | HashReference
"""An item of PUT draft/functions: a function in full, or one named by content hash."""


# ------------------------------------------------------------------------ parsing


TIMEZONE_KEY = "timezone"


def parse_functions_body(body: Any) -> list[DraftItem]:
    """The Database Functions, Mutations and FaaS of a PUT draft/functions body, each in
    full or named by content hash. A list left out of the body is empty: the PUT
    replaces all three kinds."""
    return _parse_lists(body, FUNCTION_LISTS, MAX_FUNCTIONS, (TIMEZONE_KEY,),
                        references=True)


def parse_timezone(body: Any) -> str:
    """The site's time zone of a PUT draft/functions body (UTC when absent)."""
    value = body.get(TIMEZONE_KEY) if isinstance(body, dict) else None
    if value is None:
        return ids.DEFAULT_TIMEZONE
    if not isinstance(value, str) or not is_timezone(value):
        raise bad_request("timezone must be an IANA time zone name", parameter="/timezone",
                          received=value, fix='send the workspace\'s "timezone" from '
                          'base-database.jsonc, e.g. "Asia/Shanghai", or leave it out for UTC')
    return value


def parse_ai_body(body: Any) -> list[DraftFunction]:
    """The AI Function drafts of a PUT draft/ai-functions body."""
    return parse_lists(body, {"aiFunctions": "ai_function"}, MAX_AI_FUNCTIONS)


def parse_lists(body: Any, lists: Mapping[str, FunctionKind], limit: int,
                extra: tuple[str, ...] = ()) -> list[DraftFunction]:
    """The functions of the `lists` of a request body (at most `limit` in all); `extra`
    names other keys the body may have. Every function is sent in full."""
    out = _parse_lists(body, lists, limit, extra, references=False)
    return [item for item in out if isinstance(item, DraftFunction)]


def _parse_lists(body: Any, lists: Mapping[str, FunctionKind], limit: int,
                 extra: tuple[str, ...], *, references: bool) -> list[DraftItem]:
    example = "{" + ", ".join(f'"{key}": [...]' for key in lists) + "}"
    if not isinstance(body, dict):
        raise bad_request("The request body must be a JSON object", parameter="/",
                          received=body, fix=f"send {example}")
    for key in body:
        if key not in lists and key not in extra:
            raise bad_request(f"Unknown property {json.dumps(key)}", parameter=f"/{key}",
                              received=body[key], fix="remove it",
                              candidates=[*lists, *extra])
    out: list[DraftItem] = []
    for key, kind in lists.items():
        items = body.get(key, [])
        if not isinstance(items, list):
            raise bad_request(f"{key} must be an array", parameter=f"/{key}", received=items,
                              fix=f"send {key} as an array of objects (or [] for none)")
        for position, item in enumerate(items):
            if references and isinstance(item, dict) and REFERENCE_KEY in item:
                out.append(parse_reference(kind, _ITEM_KEYS[kind][0], key, position, item))
            else:
                out.append(_parse_item(kind, f"/{key}/{position}", position, item))
    if len(out) > limit:
        raise bad_request(f"The draft has {len(out)} functions; at most {limit} are allowed",
                          parameter="/", fix="split the site, or remove functions it no "
                          "longer needs")
    return out


def _parse_item(kind: FunctionKind, at: str, position: int, item: Any) -> DraftFunction:
    keys = _ITEM_KEYS[kind]
    if not isinstance(item, dict):
        raise bad_request("Each function must be an object", parameter=at, received=item,
                          fix="send {" + ", ".join(f'"{k}": …' for k in keys) + "}")
    for key in item:
        if key not in keys:
            raise bad_request(f"Unknown property {json.dumps(key)}", parameter=f"{at}/{key}",
                              received=item[key], fix="remove it", candidates=keys)
    id_key = keys[0]
    function_id = item.get(id_key)
    if not isinstance(function_id, str) or not function_id:
        raise bad_request(f"{id_key} must be a non-empty string", parameter=f"{at}/{id_key}",
                          received=function_id, fix="send the function's directory name, "
                          "e.g. listTasks")
    if "declaration" not in item:
        raise bad_request("declaration is missing", parameter=f"{at}/declaration",
                          fix="send the function.json document as \"declaration\"")
    declaration = item["declaration"]
    size = len(json.dumps(declaration, ensure_ascii=False).encode("utf-8"))
    if size > MAX_DECLARATION_BYTES:
        raise bad_request(f"The declaration is {size} bytes; at most "
                          f"{MAX_DECLARATION_BYTES} are allowed",
                          parameter=f"{at}/declaration", fix="shorten function.json")
    sql = _text(item, "sql", at, MAX_SQL_BYTES, "main.sql")
    handler = _text(item, "handler", at, MAX_HANDLER_BYTES, "index.mjs")
    return DraftFunction(kind, function_id, declaration, sql, handler, position)


def _text(item: Mapping[str, Any], key: str, at: str, limit: int, file: str) -> str | None:
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise bad_request(f"{key} must be a string", parameter=f"{at}/{key}",
                          received=value, fix=f"send the text of {file}")
    size = len(value.encode("utf-8"))
    if size > limit:
        raise bad_request(f"{file} is {size} bytes; at most {limit} are allowed",
                          parameter=f"{at}/{key}", fix=f"shorten {file}")
    return value


# --------------------------------------------------------------------- validating


def build_workspace(functions: Sequence[DraftFunction], catalog: Catalog) -> Workspace:
    """The in-memory workspace `check` judges: what the loader would build from the same
    files, with its load findings (bad or repeated ids, missing main.sql or index.mjs,
    declarations of the wrong shape)."""
    findings: list[Finding] = []
    kinds_of: dict[str, list[FunctionKind]] = {}
    where_of: dict[str, list[str]] = {}
    declarations: dict[str, AnyDeclaration] = {}
    for item in functions:
        if not FUNCTION_ID_RE.match(item.function_id):
            findings.append(Finding(
                "FUNCTION_ID_INVALID",
                f"{item.request_pointer}/{_id_key(item)} {json.dumps(item.function_id)} is "
                "not a valid functionId: it must start with a letter and contain only "
                "letters, digits and _ (at most 64 characters).",
                f"{KIND_DIRS[item.kind]}/{item.function_id}/", "", item.function_id,
                "Rename the function, e.g. listTeamLeave or create_period."))
            continue
        kinds_of.setdefault(item.function_id, []).append(item.kind)
        where_of.setdefault(item.function_id, []).append(item.request_pointer)
        if item.kind == "database_function" and item.sql is None:
            findings.append(Finding(
                "DECLARATION_INVALID", f"{sql_file(item.function_id)} is missing: "
                f"{item.request_pointer} has no \"sql\".", sql_file(item.function_id), "",
                item.function_id, "Send the function's SELECT as \"sql\"."))
        decl, found = build_declaration(item.kind, item.function_id, item.declaration,
                                        sql=item.sql, has_handler=item.handler is not None)
        findings += found
        if decl is not None and item.function_id not in declarations:
            declarations[item.function_id] = decl
    findings += duplicate_id_findings(kinds_of, where_of, "Rename one of the functions.")
    return Workspace(root=Path("."), config=None, catalog=catalog, declarations=declarations,
                     ids=kinds_of, agent_tools=AgentToolsConfig(present=False),
                     load_findings=findings)


def validate(functions: Sequence[DraftFunction], catalog: Catalog) -> CheckResult:
    """`basedb check` over the drafts against `catalog` (contracts are not judged: the
    platform has no generated files)."""
    return check_workspace(build_workspace(functions, catalog))


def findings_failure(result: CheckResult, functions: Sequence[DraftFunction], *,
                     what: str, code: int = Code.BAD_REQUEST) -> ApiFailure:
    """The refusal of a draft with errors: `msg` names the first (code, functionId and
    where in the request body), `data.errors` lists them all as `check --json` does."""
    first = result.errors[0]
    count = len(result.errors)
    reason = (f"{what} has {count} error{'s' if count != 1 else ''}; the first is "
              f"{first.code}" + (f" in {first.function_id}" if first.function_id else "")
              + f": {first.message}")
    msg = unexecuted_message(reason, parameter=request_pointer(first, functions),
                             fix=first.fix or "fix it and send the whole draft again")
    return ApiFailure(code, msg, data={"errors": [f.to_dict() for f in result.errors]})


def request_pointer(finding: Finding, functions: Iterable[DraftFunction]) -> str:
    """Where in the request body a finding about a workspace file points."""
    for item in functions:
        if finding.function_id != item.function_id:
            continue
        if item.kind == "faas" and item.handler is None \
                and handler_file(item.function_id) in finding.message:
            return f"{item.request_pointer}/handler"
        if finding.file == declaration_file(item.kind, item.function_id):
            return f"{item.request_pointer}/declaration{finding.pointer}"
        if finding.file == sql_file(item.function_id) and item.kind == "database_function":
            return f"{item.request_pointer}/sql"
        if finding.code == "FUNCTION_ID_INVALID":
            return f"{item.request_pointer}/{_id_key(item)}"
    return "/"


def _id_key(item: DraftFunction) -> str:
    return "key" if item.kind == "ai_function" else "functionId"


def policy_failure(findings: Sequence[Finding], legal_ids: Collection[str],
                   code: int) -> ApiFailure:
    """The refusal of an agent-tools policy, with the first finding in the message."""
    first = findings[0]
    msg = unexecuted_message(first.message, parameter=first.pointer or "/",
                             fix=first.fix or "fix the policy",
                             candidates=sorted(legal_ids))
    return ApiFailure(code, msg, data={"errors": [f.to_dict() for f in findings]})


# ------------------------------------------------------------------------ storage


def load_functions(conn: sqlite3.Connection, app_token: str,
                   kinds: Collection[FunctionKind]) -> list[DraftFunction]:
    """The stored drafts of `kinds`, in the order they were sent (by kind, then position)."""
    order = {kind: i for i, kind in enumerate(LIST_OF_KIND)}
    out = [
        DraftFunction(kind, function_id, json.loads(declaration), sql, handler, position)
        for kind, function_id, declaration, sql, handler, position in conn.execute(
            "SELECT kind, function_id, declaration, sql, handler, position "
            "FROM draft_functions WHERE app_token = ?", (app_token,))
        if kind in kinds
    ]
    out.sort(key=lambda item: (order[item.kind], item.position))
    return out


def replace_functions(conn: sqlite3.Connection, app_token: str,
                      kinds: Collection[FunctionKind],
                      functions: Sequence[DraftFunction]) -> None:
    """Replace every stored draft of `kinds` by `functions` (inside a write)."""
    conn.execute("DELETE FROM draft_functions WHERE app_token = ? AND kind IN "
                 "(SELECT value FROM json_each(?))", (app_token, json.dumps(list(kinds))))
    _insert_rows(conn, app_token, functions)
    bump_revision(conn, app_token)


def _insert_rows(conn: sqlite3.Connection, app_token: str,
                 functions: Iterable[DraftFunction]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO draft_functions (app_token, kind, function_id, position, "
        "declaration, sql, handler, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(app_token, item.kind, item.function_id, item.position,
          json.dumps(item.declaration, ensure_ascii=False), item.sql, item.handler,
          item.content_hash) for item in functions])


def held_hashes(conn: sqlite3.Connection, app_token: str,
                kinds: Collection[FunctionKind]) -> dict[tuple[str, str], DraftEntry]:
    """The site's stored drafts of `kinds` by (kind, functionId)."""
    return {(entry.kind, entry.function_id): entry
            for entry in draft_entries(conn, app_token, kinds, list(LIST_OF_KIND))}


def held_function_ids(conn: sqlite3.Connection, app_token: str,
                      kinds: Collection[FunctionKind]) -> set[str]:
    """The functionIds of the site's stored drafts of `kinds`."""
    return {function_id for kind, function_id in conn.execute(
        "SELECT kind, function_id FROM draft_functions WHERE app_token = ?", (app_token,))
        if kind in kinds}


def _require_held(conn: sqlite3.Connection, app_token: str, items: Sequence[DraftItem],
                  kinds: Collection[FunctionKind]) -> dict[tuple[str, str], DraftEntry]:
    held = held_hashes(conn, app_token, kinds)
    missing = unknown_references(
        (item for item in items if isinstance(item, HashReference)),
        {key: entry.content_hash for key, entry in held.items()})
    if missing:
        raise resend_failure(missing)
    return held


def resolve_items(conn: sqlite3.Connection, app_token: str,
                  items: Sequence[DraftItem]) -> list[DraftFunction]:
    """Every item in full: a reference becomes the site's stored function it names (9499
    with data.resend when the site's draft does not hold it)."""
    if not any(isinstance(item, HashReference) for item in items):
        return [item for item in items if isinstance(item, DraftFunction)]
    _require_held(conn, app_token, items, CODE_KINDS)
    stored = {(item.kind, item.function_id): item
              for item in load_functions(conn, app_token, CODE_KINDS)}
    return [item if isinstance(item, DraftFunction)
            else DraftFunction(item.kind, item.function_id,
                               stored[(item.kind, item.function_id)].declaration,
                               stored[(item.kind, item.function_id)].sql,
                               stored[(item.kind, item.function_id)].handler, item.position)
            for item in items]


def apply_functions(conn: sqlite3.Connection, app_token: str,
                    items: Sequence[DraftItem]) -> None:
    """Make the site's Database Functions, Mutations and FaaS exactly `items` (inside a
    write), touching only the rows that change: an unchanged function keeps its row."""
    held = _require_held(conn, app_token, items, CODE_KINDS)
    wanted = {(item.kind, item.function_id) for item in items}
    conn.executemany("DELETE FROM draft_functions WHERE app_token = ? AND kind = ? AND "
                     "function_id = ?", [(app_token, kind, function_id)
                                         for kind, function_id in held
                                         if (kind, function_id) not in wanted])
    changed: list[DraftFunction] = []
    moved: list[tuple[int, str, str, str]] = []
    for item in items:
        entry = held.get((item.kind, item.function_id))
        if entry is None or entry.content_hash != item.content_hash:
            assert isinstance(item, DraftFunction), "references were checked above"
            changed.append(item)
        elif entry.position != item.position:
            moved.append((item.position, app_token, item.kind, item.function_id))
    _insert_rows(conn, app_token, changed)
    conn.executemany("UPDATE draft_functions SET position = ? WHERE app_token = ? AND "
                     "kind = ? AND function_id = ?", moved)
    bump_revision(conn, app_token)


def load_timezone(conn: sqlite3.Connection, app_token: str) -> str:
    row = conn.execute("SELECT timezone FROM site_drafts WHERE app_token = ?",
                       (app_token,)).fetchone()
    return str(row[0]) if row else ids.DEFAULT_TIMEZONE


def save_timezone(conn: sqlite3.Connection, app_token: str, timezone: str) -> None:
    bump_revision(conn, app_token)
    conn.execute("UPDATE site_drafts SET timezone = ? WHERE app_token = ?",
                 (timezone, app_token))


def load_exclude(conn: sqlite3.Connection, app_token: str) -> list[str]:
    row = conn.execute("SELECT exclude FROM site_drafts WHERE app_token = ?",
                       (app_token,)).fetchone()
    return list(json.loads(row[0])) if row else []


def save_exclude(conn: sqlite3.Connection, app_token: str, exclude: Sequence[str]) -> None:
    bump_revision(conn, app_token)
    conn.execute("UPDATE site_drafts SET exclude = ? WHERE app_token = ?",
                 (json.dumps(list(exclude), ensure_ascii=False), app_token))


def bump_revision(conn: sqlite3.Connection, app_token: str) -> None:
    conn.execute(
        "INSERT INTO site_drafts (app_token, revision, updated_at) VALUES (?, 1, ?) "
        "ON CONFLICT (app_token) DO UPDATE SET revision = revision + 1, "
        "updated_at = excluded.updated_at", (app_token, ids.now_text()))


def require_revision(conn: sqlite3.Connection, app_token: str, expected: int | None) -> int:
    """The site's draft revision, which must be `expected` when one is given (800004020
    otherwise: another writer changed the drafts since)."""
    current = draft_revision(conn, app_token)
    if expected is not None and expected != current:
        raise ApiFailure(Code.DEPLOYMENT_CONFLICT, unexecuted_message(
            f"The site's drafts changed since revision {expected} (they are at revision "
            f"{current} now): another deploy of this site ran at the same time",
            parameter="/draftRevision", received=expected,
            fix="run deploy again (it uploads the whole draft anew)"), status=409)
    return current


def draft_revision(conn: sqlite3.Connection, app_token: str) -> int:
    row = conn.execute("SELECT revision FROM site_drafts WHERE app_token = ?",
                       (app_token,)).fetchone()
    return int(row[0]) if row else 0

