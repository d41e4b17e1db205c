"""What the drafts routes answer: the stored drafts read back, and the writes of the
functions, the AI Functions and the agent-tools policy, each with the drafts' revision.

    prepared = draft_results.judge_functions(store, caches, caller, app_token, body)
    with store.write() as conn:
        saved = draft_results.save_functions(conn, caller, prepared, expected)
    draft_results.functions_listing(conn, app_token)     # GET draft/functions
    draft_results.held_content(conn, app_token)          # GET draft/hashes

A write is judged first (on a read snapshot: parsing, references, `check`) and saved in
a write transaction after; `expected` is the `?draftRevision=N` the caller sent, if any
(`drafts.require_revision`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from basedb.check.agent_tools import validate_exclude
from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain import draft_content, drafts, sites
from basedb.platform.domain.access import require_site
from basedb.platform.domain.caches import DomainCaches
from basedb.platform.domain.draft_content import (
    DraftFunctionsSaved,
    HeldContent,
    recent_fingerprints,
)
from basedb.platform.domain.drafts import LIST_OF_KIND, DraftFunction, DraftItem
from basedb.platform.domain.identity import User
from basedb.platform.domain.revision import live_catalog
from basedb.platform.storage.store import Store
from basedb.protocol import Code, bad_request
from basedb.workspace.model import EMPTY_CATALOG, FUNCTION_KINDS, FunctionKind

AI_LISTS: dict[str, FunctionKind] = {"aiFunctions": "ai_function"}


@frozen_dataclass
class DraftListing:
    """Stored drafts as the PUT body carries them, by body list (in `lists` order), with
    the site's time zone (the Database Functions, Mutations and FaaS run in it; the AI
    Functions' listing has none) and the drafts' revision."""

    lists: Mapping[str, FunctionKind]
    functions: Sequence[DraftFunction]
    draft_revision: int
    timezone: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {key: [] for key in self.lists}
        for item in self.functions:
            out[LIST_OF_KIND[item.kind]].append(item.to_item())
        if self.timezone is not None:
            out["timezone"] = self.timezone
        out["draftRevision"] = self.draft_revision
        return out


@frozen_dataclass
class AIFunctionsSaved:
    """The answer to PUT draft/ai-functions: the keys now drafted, sorted."""

    keys: Sequence[str]
    draft_revision: int

    def to_dict(self) -> dict[str, Any]:
        return {"keys": list(self.keys), "draftRevision": self.draft_revision}


@frozen_dataclass
class AgentToolsPolicy:
    """The draft agent-tools policy: the functionIds hidden from external agents."""

    exclude: Sequence[str]
    draft_revision: int

    def to_dict(self) -> dict[str, Any]:
        return {"exclude": list(self.exclude), "draftRevision": self.draft_revision}


# --------------------------------------------------------------------- functions


@frozen_dataclass
class JudgedFunctions:
    """A PUT draft/functions body that passed `check`, ready to be saved."""

    site: sites.SiteRow
    items: Sequence[DraftItem]
    timezone: str
    digest: str
    catalog_revision: int
    hints: Sequence[Mapping[str, Any]]
    # Whether the hints are a judgement the platform had stored (so nothing new to save).
    found: bool = False


def judge_functions(store: Store, caches: DomainCaches, caller: User, app_token: str,
                    body: Any) -> JudgedFunctions:
    """Parse a PUT draft/functions body and judge it against the site's live catalog
    (9499 with data.errors, or data.resend for references the site does not hold). The
    same functions judged at this catalog revision before pass again unjudged."""
    with store.read() as conn:
        site, _ = require_site(conn, caller, app_token, roles=sites.MANAGER_ROLES)
        live = live_catalog(conn, site, caches.catalogs)
    items = drafts.parse_functions_body(body)
    timezone = drafts.parse_timezone(body)
    digest = draft_content.draft_digest(items)
    with store.read() as conn:
        hints = draft_content.judged_hints(conn, site.app_token, digest, live.revision)
        functions = (drafts.resolve_items(conn, site.app_token, items)
                     if hints is None else None)
    found = hints is not None
    if functions is not None:
        result = drafts.validate(functions, live.catalog)
        if result.errors:
            raise drafts.findings_failure(result, functions, what="The draft")
        hints = [hint.to_dict() for hint in result.hints]
    assert hints is not None
    return JudgedFunctions(site, tuple(items), timezone, digest, live.revision, tuple(hints),
                           found=found)


def save_functions(conn: sqlite3.Connection, caller: User, judged: JudgedFunctions,
                   expected: int | None) -> DraftFunctionsSaved:
    """Make the judged functions and time zone the site's draft (inside a write)."""
    app_token = judged.site.app_token
    require_site(conn, caller, app_token, roles=sites.MANAGER_ROLES)
    drafts.require_revision(conn, app_token, expected)
    drafts.apply_functions(conn, app_token, judged.items)
    drafts.save_timezone(conn, app_token, judged.timezone)
    if not (judged.found and draft_content.renew_judgement(
            conn, app_token, judged.digest, judged.catalog_revision)):
        draft_content.save_judgement(conn, app_token, judged.digest, judged.catalog_revision,
                                     draft_content.hints_json(judged.hints))
    counts: dict[str, int] = {kind: sum(1 for f in judged.items if f.kind == kind)
                              for kind in drafts.CODE_KINDS}
    return DraftFunctionsSaved(judged.hints, counts, drafts.draft_revision(conn, app_token))


def functions_listing(conn: sqlite3.Connection, app_token: str) -> DraftListing:
    """The site's draft Database Functions, Mutations and FaaS, and their time zone."""
    return DraftListing(drafts.FUNCTION_LISTS,
                        tuple(drafts.load_functions(conn, app_token, drafts.CODE_KINDS)),
                        drafts.draft_revision(conn, app_token),
                        timezone=drafts.load_timezone(conn, app_token))


def held_content(conn: sqlite3.Connection, app_token: str) -> HeldContent:
    """What the site holds: its draft functions' content hashes and the fingerprints of
    its newest deployments."""
    hashes: dict[str, dict[str, str]] = {key: {} for key in drafts.FUNCTION_LISTS}
    for entry in drafts.held_hashes(conn, app_token, drafts.CODE_KINDS).values():
        hashes[LIST_OF_KIND[entry.kind]][entry.function_id] = entry.content_hash
    return HeldContent(hashes=hashes, timezone=drafts.load_timezone(conn, app_token),
                       fingerprints=recent_fingerprints(conn, app_token),
                       draft_revision=drafts.draft_revision(conn, app_token))


# ------------------------------------------------------------------ AI Functions


def judge_ai_functions(body: Any) -> list[DraftFunction]:
    """The AI Functions of a PUT draft/ai-functions body, judged by `check` (9499 with
    data.errors). They are judged whether or not an AI endpoint is configured: invoking
    them is what needs one."""
    functions = drafts.parse_ai_body(body)
    result = drafts.validate(functions, EMPTY_CATALOG)
    if result.errors:
        raise drafts.findings_failure(result, functions, what="The AI Function draft")
    return functions


def save_ai_functions(conn: sqlite3.Connection, caller: User, app_token: str,
                      functions: Sequence[DraftFunction],
                      expected: int | None) -> AIFunctionsSaved:
    """Make `functions` (judged) the site's AI Function drafts (inside a write)."""
    require_site(conn, caller, app_token, roles=sites.MANAGER_ROLES)
    drafts.require_revision(conn, app_token, expected)
    drafts.replace_functions(conn, app_token, drafts.AI_KINDS, functions)
    return AIFunctionsSaved(tuple(sorted(f.function_id for f in functions)),
                            drafts.draft_revision(conn, app_token))


def ai_functions_listing(conn: sqlite3.Connection, app_token: str) -> DraftListing:
    return DraftListing(AI_LISTS, tuple(drafts.load_functions(conn, app_token,
                                                              drafts.AI_KINDS)),
                        drafts.draft_revision(conn, app_token))


# ------------------------------------------------------------------- agent tools


def save_agent_tools(conn: sqlite3.Connection, caller: User, app_token: str, body: Any,
                     expected: int | None) -> AgentToolsPolicy:
    """Replace the site's agent-tools policy by `body` (inside a write): every id it
    excludes must be a draft function or AI Function (800004030 otherwise)."""
    require_site(conn, caller, app_token, roles=sites.MANAGER_ROLES)
    drafts.require_revision(conn, app_token, expected)
    legal = drafts.held_function_ids(conn, app_token, FUNCTION_KINDS)
    findings = validate_exclude(body, legal, file="agent-tools.json")
    if findings:
        raise drafts.policy_failure(findings, legal, Code.AGENT_TOOLS_POLICY_INVALID)
    assert isinstance(body, dict), "validate_exclude refuses anything but an object"
    # The file may leave exclude out; the request replaces the whole policy and says so.
    if "exclude" not in body:
        raise bad_request("exclude is missing", parameter="/exclude", received=body,
                          fix='send {"exclude": [functionId, …]}, or [] to open every '
                          "function to external agents")
    exclude = tuple(body["exclude"])
    drafts.save_exclude(conn, app_token, exclude)
    return AgentToolsPolicy(exclude, drafts.draft_revision(conn, app_token))


def agent_tools_policy(conn: sqlite3.Connection, app_token: str) -> AgentToolsPolicy:
    return AgentToolsPolicy(tuple(drafts.load_exclude(conn, app_token)),
                            drafts.draft_revision(conn, app_token))
