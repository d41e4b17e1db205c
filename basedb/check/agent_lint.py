"""Hints about how functions read to an AI agent choosing among many of them.

An agent picks a function by its id and description, often from a search over
hundreds. Four things mislead it, and none is an error:

    description_near_duplicate   two functions of one table described in nearly the same
                                 words: the agent cannot tell which one it wants
    description_names_closed     a description sends the agent to a function it cannot
                                 call (excluded by agent-tools.json, or none of that id)
    description_vague_pointer    "use X when it exists": the agent cannot know whether
                                 it does, and guesses
    name_contradicts_description the id's verb says one thing (list…, delete…) and the
                                 kind, the Mutation's action or the description's
                                 first verb another

A function's table is the one a Mutation declares or the catalog table its id (else
its description) names (`basedb.core.text_search.named_table`), as the platform's
search and the site Skill group them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from basedb.check.context import CheckContext
from basedb.check.messages import did_you_mean
from basedb.core.text_search import name_tokens, named_table, tokens, words
from basedb.protocol.findings import Hint
from basedb.workspace.model import AnyDeclaration, Mutation

NEAR_DUPLICATE = 0.9  # Jaccard similarity of two descriptions' word sets
MIN_WORDS = 6  # shorter descriptions are too short to compare
_IDENT_RE = re.compile(r"(?<![\w./$-])([a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+)(?![\w(-])")
_VAGUE_RE = re.compile(
    r"\b(?:when|if|where|in case)\s+(?:it|one|that|this|such a function|available)?\s*"
    r"(?:exists|is available|is published|is present|available)\b|如果存在|若存在|如有",
    re.IGNORECASE)
READ_VERBS = frozenset({"list", "get", "find", "search", "count", "show", "fetch", "query",
                        "lookup", "read", "view", "summarize", "summarise", "rank",
                        "export", "browse"})
CREATE_VERBS = frozenset({"create", "add", "insert", "register", "submit", "new"})
DELETE_VERBS = frozenset({"delete", "remove", "purge", "drop", "destroy", "erase"})
UPDATE_VERBS = frozenset({"update", "set", "edit", "change", "rename", "move", "assign",
                          "archive", "close", "approve", "reject", "mark", "reopen"})
_CLASSES = {"read": READ_VERBS, "create": CREATE_VERBS, "delete": DELETE_VERBS,
            "update": UPDATE_VERBS}


def check_agent_lint(ctx: CheckContext) -> None:
    ws = ctx.workspace
    declarations = [d for d in ws.declarations.values() if d.description_str]
    excluded = set(ws.agent_tools.exclude) if ws.agent_tools.present else set()
    all_ids = set(ws.ids)
    param_names = {p.name for d in ws.declarations.values() for p in d.params
                   if isinstance(p.name, str)}
    tables = ws.catalog.table_names if ws.catalog is not None else []
    for decl in declarations:
        if decl.function_id in excluded:
            continue  # agents never see it
        ctx.extend(_pointer_hints(decl, excluded, all_ids, param_names))
        ctx.extend(_name_hints(decl, tables))
    open_ones = [d for d in declarations if d.function_id not in excluded]
    ctx.extend(_near_duplicates(open_ones, tables))


def _verb_class(word: str) -> str | None:
    base = word.lower()
    for candidate in (base, base[:-1] if base.endswith("s") else base,
                      base[:-2] if base.endswith("es") else base):
        for name, verbs in _CLASSES.items():
            if candidate in verbs:
                return name
    return None


# ---------------------------------------------------------------- pointers


def _pointer_hints(decl: AnyDeclaration, excluded: set[str], all_ids: set[str],
                   param_names: set[str]) -> Iterator[Hint]:
    text = decl.description_str
    named: list[str] = []
    for match in _IDENT_RE.finditer(text):
        ident = match.group(1)
        if ident == decl.function_id or ident in param_names or ident in named:
            continue
        if ident in excluded or (ident not in all_ids and _verb_class(words(ident)[0])):
            named.append(ident)
    for ident in named:
        if ident in excluded:
            why = "is excluded from agents by agent-tools.json"
            fix = (f"Fix: name an open function instead, or remove {ident!r} from exclude "
                   "if agents should use it.")
        else:
            why = "is not a function of this site"
            fix = f"Fix: name a function that exists.{did_you_mean(ident, all_ids)}"
        yield Hint("description_names_closed", decl.function_id,
                   f"The description of {decl.function_id!r} sends agents to {ident!r}, which "
                   f"{why}: an agent following it fails. {fix}",
                   decl.file, "/description")
    vague = _VAGUE_RE.search(text)
    if vague:
        yield Hint("description_vague_pointer", decl.function_id,
                   f"The description of {decl.function_id!r} says {vague.group(0)!r}: an agent "
                   "cannot know whether it does, and guesses. Fix: name the function "
                   "plainly if it is open to agents, or leave the pointer out.",
                   decl.file, "/description")


# ---------------------------------------------------------------- names


def _name_hints(decl: AnyDeclaration, tables: Sequence[str]) -> Iterator[Hint]:
    id_words = words(decl.function_id)
    id_class = _verb_class(id_words[0]) if id_words else None
    if id_class is None or named_table(decl.function_id, tables) in _tables_at_start(
            decl.function_id, tables):
        return  # no verb first, or the first word is a table's (changeRequestsByStatus)
    problem = None
    if decl.kind == "database_function" and id_class != "read":
        problem = (f"its id starts with {id_words[0]!r}, but a Database Function only "
                   "reads")
    elif isinstance(decl, Mutation):
        spec = decl.spec or decl.spec_as_written
        action = spec.action if spec is not None and isinstance(spec.action, str) else None
        if id_class == "read" or (action in ("create", "delete") and id_class != action
                                  and id_class in ("create", "delete")):
            problem = (f"its id starts with {id_words[0]!r}, but the Mutation's action is "
                       f"{action!r}")
    if problem is None:
        first = words(decl.description_str)[:1]
        text_class = _verb_class(first[0]) if first else None
        if text_class is not None and (
                (text_class == "read") != (id_class == "read")
                or {text_class, id_class} == {"create", "delete"}):
            problem = (f"its id starts with {id_words[0]!r}, but its description starts "
                       f"with {first[0]!r}")
    if problem:
        yield Hint("name_contradicts_description", decl.function_id,
                   f"The name of {decl.function_id!r} disagrees with what it does: {problem}. "
                   "Agents read the id first and may call the wrong function. Fix: rename "
                   "the function, or correct its description, so that both say the same.",
                   decl.file, "/name")


def _tables_at_start(function_id: str, tables: Sequence[str]) -> set[str]:
    found = tuple(tokens(function_id))
    return {t for t in tables
            if (wanted := name_tokens(t)) and found[:len(wanted)] == wanted}


# ---------------------------------------------------------------- near twins


def _near_duplicates(declarations: Sequence[AnyDeclaration], tables: Sequence[str]
                     ) -> Iterator[Hint]:
    entity_words = {term for table in tables for term in tokens(table)}
    by_table: dict[str, list[tuple[AnyDeclaration, frozenset[str]]]] = {}
    for decl in declarations:
        terms = frozenset(tokens(decl.description_str))
        if len(terms) >= MIN_WORDS:
            for table in _tables_of(decl, tables):
                by_table.setdefault(table, []).append((decl, terms))
    reported: set[tuple[str, str]] = set()
    for table, members in by_table.items():
        for i, (first, a) in enumerate(members):
            for second, b in members[i + 1:]:
                # The overlap of two sets is at most the smaller's size over the larger's:
                # most pairs are told apart by their sizes alone, without a set made.
                if min(len(a), len(b)) < NEAR_DUPLICATE * max(len(a), len(b)):
                    continue
                pair = (first.function_id, second.function_id)
                # Descriptions that differ in the records they name (articles, surveys)
                # are told apart by those words; near twins differ in none of them.
                if pair in reported or len(a & b) / len(a | b) < NEAR_DUPLICATE \
                        or (a ^ b) & entity_words:
                    continue
                reported.add(pair)
                yield Hint(
                    "description_near_duplicate", second.function_id,
                    f"The descriptions of {first.function_id!r} and {second.function_id!r} "
                    f"(both on table {table!r}) use nearly the same words: an agent cannot "
                    "tell which one it wants. Fix: say in each what sets it apart (its "
                    "filter, order or result) and when to use the other, or merge the two.",
                    second.file, "/description", extra={"similarTo": first.function_id})


def _tables_of(decl: AnyDeclaration, tables: Sequence[str]) -> list[str]:
    """The tables a Mutation declares, or every table its id names (else the first its
    description names)."""
    if isinstance(decl, Mutation):
        spec = decl.spec or decl.spec_as_written
        if spec is not None and isinstance(spec.table, str):
            return [spec.table]
    found = tuple(tokens(decl.function_id))
    named = [t for t in tables if (wanted := name_tokens(t)) and any(
        found[i:i + len(wanted)] == wanted for i in range(len(found)))]
    if named:
        return named
    table = named_table(decl.description_str, tables)
    return [table] if table else []
