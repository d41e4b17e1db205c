"""The site Skill: how a local agent uses a published site's functions (upstream
agent-tools.md "安装到本地 Agent" and "调用站点函数").

`GET /sites/{app}/skill?env=prod` answers with an Agent Skills document rendered from
the production deployment: SKILL.md (frontmatter, the functions open to agents grouped
into read and write with what each is for, the calling protocol, the approval guard for
writes, how to read results and errors) and references/functions.md (every open function
with its full description). It lists functions but never their parameters: an agent
reads the live description before each call, so a Skill installed weeks ago cannot
send a stale shape.

SKILL.md lists every function (each description clipped) on a site of at most
MAX_LISTED; references/functions.md has them whole. A larger site gets an index by
table and a reference file per table instead (`basedb.platform.domain.skill_tables`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any, Literal

from basedb import __version__
from basedb.core.frozen import frozen_dataclass
from basedb.core.paths import API_PREFIX
from basedb.core.skill_spec import (
    DESCRIPTION_MAX,
    clip_text,
    one_line,
    render_frontmatter,
    site_skill_name,
)
from basedb.platform.domain.function_plans import FunctionPlan
from basedb.platform.domain.schemas import mutation_action
from basedb.platform.domain.skill_tables import TableGroup, group_by_table, table_index
from basedb.protocol import SchemaStatus

MAX_LISTED = 60
MAX_DESCRIBED = 8  # functions named as examples in the frontmatter description
LISTED_DESCRIPTION_CHARS = 240
REFERENCE_DESCRIPTION_CHARS = 2000
TITLE_CHARS = 80
ENDPOINT_KIND = "basedb-local"
REFERENCE_FILE = "functions.md"

Access = Literal["read", "write"]

TYPE_LABELS = {"database_function": "Database Function", "mutation": "Mutation",
               "faas": "FaaS", "ai_function": "AI Function"}
ACTION_LABELS = {"create": "creates records", "update": "updates records",
                 "delete": "deletes records; cannot be undone"}
_FIRST_CLAUSE = re.compile(r"(?<=[。；;！？!?])|(?<=\.)\s|\n")


@frozen_dataclass
class SkillFunction:
    """One function open to agents, as the Skill lists it."""

    function_id: str
    name: str
    description: str
    function_type: str
    schema_status: str
    status_hint: str | None = None
    action: str | None = None  # Mutations: create, update or delete
    table: str | None = None  # the main table it works on (FunctionPlan.tables)

    @property
    def access(self) -> Access:
        # Only a Database Function is known not to change anything: a FaaS may write
        # records and an AI Function runs a model, so both are treated as writes.
        return "read" if self.function_type == "database_function" else "write"

    def to_dict(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "functionId": self.function_id, "name": self.name,
            "description": self.description, "functionType": self.function_type,
            "access": self.access, "schemaStatus": self.schema_status,
            "statusHint": self.status_hint, "table": self.table}
        if self.action is not None:
            item["action"] = self.action
        return item


def skill_function(plan: FunctionPlan) -> SkillFunction:
    return SkillFunction(function_id=plan.function_id, name=plan.name,
                         description=plan.description, function_type=plan.kind,
                         schema_status=plan.status, status_hint=plan.status_hint,
                         action=mutation_action(plan.declaration),
                         table=plan.tables[0] if plan.tables else None)


# ------------------------------------------------------------------------- document


@frozen_dataclass
class SiteSkill:
    """The site Skill rendered from a production deployment: SKILL.md (`markdown`) and
    its reference files by name, with the functions it lists."""

    name: str
    description: str
    title: str
    app_token: str
    deployment_id: str
    functions: Sequence[SkillFunction]
    markdown: str
    references: Mapping[str, str]
    env: str = field(default="prod", init=False)

    def to_dict(self) -> dict[str, Any]:
        """The `data` of `GET /sites/{app}/skill`."""
        return {"name": self.name, "description": self.description, "title": self.title,
                "appToken": self.app_token, "env": self.env,
                "deploymentId": self.deployment_id,
                "functions": [f.to_dict() for f in self.functions],
                "markdown": self.markdown, "references": dict(self.references)}


def render_site_skill(*, title: str, app_token: str, deployment_id: str,
                      functions: Sequence[SkillFunction]) -> SiteSkill:
    ordered = sorted(functions, key=lambda f: (f.access != "read", f.function_id))
    name = site_skill_name(title, app_token)
    description = skill_description(title, ordered)
    front = {"name": name, "description": description,
             "metadata": {"appToken": app_token, "endpoint": ENDPOINT_KIND,
                          "deploymentId": deployment_id,
                          "generatedBy": f"basedb {__version__}"}}
    if len(ordered) <= MAX_LISTED:
        body = skill_body(title, app_token, ordered)
        references = {REFERENCE_FILE: functions_reference(title, deployment_id, ordered)}
    else:  # too many to list: an index by table, a reference file per table
        groups = group_by_table(ordered, lambda f: f.table, lambda f: f.access)
        body = skill_body(title, app_token, ordered, groups)
        references = {group.file: functions_reference(
            title, deployment_id, group.functions, table=group.label) for group in groups}
    markdown = render_frontmatter(front) + "\n" + body
    return SiteSkill(name=name, description=description, title=title, app_token=app_token,
                     deployment_id=deployment_id, functions=tuple(ordered), markdown=markdown,
                     references=references)



def first_clause(text: str) -> str:
    """The first sentence or clause of a description, without its closing mark."""
    head = _FIRST_CLAUSE.split(text.strip(), maxsplit=1)[0]
    return head.strip().rstrip("。；;！？!?.")


def skill_description(title: str, functions: Sequence[SkillFunction]) -> str:
    """What the Skill does and when to use it, within DESCRIPTION_MAX characters: the
    site's title, its function counts, then up to MAX_DESCRIBED "functionId (first
    clause)" examples, reads and writes in turn, each whole, and how many are left out.
    Agents keep every installed skill's description in context, so it stays short."""
    reads = sum(1 for f in functions if f.access == "read")
    writes = len(functions) - reads
    shown_title = clip_text(one_line(title), TITLE_CHARS)
    lead = (f'Look up and change the data of the Base Database site "{shown_title}" through '
            f"its published functions ({reads} read, {writes} write). Use it when the user "
            f'asks about, or wants to act on, what "{shown_title}" manages')
    tail = ". Describe a function before calling it; confirm with the user before any write."
    items = [_summary(f) for f in _alternate(functions)][:MAX_DESCRIBED]
    left_out = len(functions) - len(items)
    if not items:
        return lead + tail
    budget = DESCRIPTION_MAX - len(lead) - len(tail) - len(", for example: ")
    chosen: list[str] = []
    for index, item in enumerate(items):
        rest = len(items) - index - 1 + left_out
        more = f"; and {rest} more" if rest else ""
        if len("; ".join([*chosen, item])) + len(more) > budget:
            break
        chosen.append(item)
    left = len(functions) - len(chosen)
    if not chosen:
        return lead + tail
    listed = "; ".join(chosen) + (f"; and {left} more" if left else "")
    return f"{lead}, for example: {listed}{tail}"


def _alternate(functions: Sequence[SkillFunction]) -> list[SkillFunction]:
    """Reads and writes taken in turn, so that examples show both kinds, and on a site
    of many tables one from each of its largest tables in turn (not the alphabetically
    first functions, which would all be about one thing)."""
    reads = [f for f in functions if f.access == "read"]
    writes = [f for f in functions if f.access == "write"]
    if len(functions) > MAX_LISTED:
        reads, writes = _across_tables(reads), _across_tables(writes)
    out: list[SkillFunction] = []
    for index in range(max(len(reads), len(writes))):
        out += [group[index] for group in (reads, writes) if index < len(group)]
    return out


def _across_tables(functions: Sequence[SkillFunction]) -> list[SkillFunction]:
    """The functions in rounds: each table's first, largest table first, then each
    table's second, and so on."""
    by_table: dict[str, list[SkillFunction]] = {}
    for function in functions:
        by_table.setdefault(function.table or "", []).append(function)
    tables = sorted(by_table.values(), key=lambda group: -len(group))
    return [group[index] for index in range(max(map(len, tables), default=0))
            for group in tables if index < len(group)]


def _summary(function: SkillFunction) -> str:
    clause = clip_text(one_line(first_clause(function.description)), 60)
    return f"{function.function_id} ({clause})" if clause else function.function_id


def _label(function: SkillFunction) -> str:
    parts = [TYPE_LABELS.get(function.function_type, function.function_type)]
    if function.action is not None:
        parts.append(ACTION_LABELS[function.action])
    if function.schema_status == SchemaStatus.MISSING:
        parts.append("no input schema")
    elif function.schema_status != SchemaStatus.READY:
        parts.append(f"not callable now: {function.schema_status}")
    return ", ".join(parts)


def _bullet(function: SkillFunction) -> str:
    text = clip_text(one_line(function.description), LISTED_DESCRIPTION_CHARS)
    return f"- `{function.function_id}` ({_label(function)}) — {text or 'no description'}"


def skill_body(title: str, app_token: str, functions: Sequence[SkillFunction],
               groups: Sequence[TableGroup[SkillFunction]] | None = None) -> str:
    """SKILL.md's body: every function (read, then write) on a small site; on a large
    one (`groups`) the index by table and how to search (`skill_tables`)."""
    reads = [f for f in functions if f.access == "read"]
    writes = [f for f in functions if f.access == "write"]
    site = f"{API_PREFIX}/sites/{app_token}/functions"
    env = """--params '{"env":"prod"}'"""
    lines = [
        f"# {one_line(title)}: site functions", "",
        f'Use the published functions of the Base Database site "{one_line(title)}" (app token '
        f"`{app_token}`) to look up or change its data for the user. This file says what "
        "each function is for; it never holds parameters. The live description of a "
        "function is the only source for its parameters: read it before calling.", "",
    ]
    if groups is not None:
        lines += table_index(groups, site=site, env="prod")
    else:
        lines += [
            "## Read functions", "",
            "They only read data: safe to call.", "",
            *([_bullet(f) for f in reads] or ["- (none)"]), "",
            "## Write functions", "",
            "They change data, or run code or a model. Confirm with the user before each "
            'call (see "Before a write").', "",
            *([_bullet(f) for f in writes] or ["- (none)"]), "",
            f"references/{REFERENCE_FILE} has their full descriptions.", "",
        ]
    lines += [
        "## Calling a function", "",
        "1. Discover what is published:", "",
        f"   `basedb api GET {site} {env} --as user`", "",
        "   Read `functions[]` (`functionId`, `description`, `functionType`, `table`, "
        "`schemaStatus`, `statusHint`). While `hasMore` is true, call again adding the "
        'returned `"pageToken"` to `--params`. To search instead, add `"query":"<words>"` '
        '(best matches first), `"table":"<table>"` or `"access":"read"` to `--params`.',
        "2. Describe the function right before calling it:", "",
        f"   `basedb api GET {site}/<functionId> {env} --as user`", "",
        "   Build the input from `data.function.inputSchema` and `parameters[]`. "
        "`requestExample` is a shape, not data: the values at `replacePaths` are "
        "placeholders. A parameter with `reference` takes record or user ids: get them "
        "the way its `valueHint` says (usually by calling a read function first); never "
        "guess an id from a name, and ask the user when several records match. "
        "`optionSummary` shows some options, not necessarily all; `examples` are values "
        "of the right type and range (an id there is only its shape). `outputSchema` names "
        "the fields of `data` a call returns (for a Mutation, what it wrote and skipped).",
        '3. Invoke with parameters by name (an object, never a positional array): write '
        '`{"params": {"<name>": <value>}}` to body.json, then', "",
        f"   `basedb api POST {site}/<functionId>/invoke {env} --data @body.json --as user`",
        "",
        "   Use this command rather than a description's `callCommand`: the commands in "
        "this file carry the options this installation needs (such as its profile), and "
        "`callCommand` does not, so run verbatim it can reach another platform or act as "
        "another user.", "",
        "Describe again before every write call and after any failure; back-to-back read "
        "calls of one function may reuse the description just read. On Lark, `lark-cli api` "
        "takes the same method, path and flags.", "",
        "When `schemaStatus` is not `ready`:", "",
        "- `missing`: no input schema; decide the input from the description, and stop and "
        "ask when you cannot.",
        "- `needs_upgrade`: do not guess values or call it; its author must name and "
        "describe its parameters and republish. Retrying does not help.",
        "- `unavailable`: the site's tables changed under it; tell the user its author must "
        "fix it (see `statusHint`) and republish. Do not retry.", "",
        "## Before a write", "",
        "Before calling any write function, tell the user in plain words what will change "
        "(which records, which fields, the new values, or which records will be deleted) "
        "and wait for an explicit yes. A confirmation covers that one call; ask again if "
        "the parameters change. Deleted records cannot be restored.", "",
        "## Results and errors", "",
        "- On a non-zero code, `basedb api` exits non-zero and prints an error envelope on "
        "stderr. Its message gives the reason, `Parameter:` (a JSON Pointer into the body, "
        "e.g. `/params/periodId`) with the value received, `Fix:`, up to three "
        "`Candidates:`, `Executed: no` when nothing ran, and `Retry:`. Do what `Fix:` "
        "says. `Retry:` (`retry after fixing`, `do not retry`, `retry later`, `retry after "
        "publishing`, `retry after access is granted`) says when another attempt can "
        "succeed; it never means retry automatically.",
        "- `9499`: the request is malformed. Check that `--params` and `--data` are valid "
        "JSON and that values have the types of `inputSchema` (numbers unquoted, objects "
        "not JSON strings).",
        "- Code 0 does not mean everything was done: after a Mutation check "
        "`record_not_found`, `precondition_failed` and `ignored_fields`; for a task check "
        "`data.status` (`failed`, `cancelled`).",
        "- Never re-send a write or AI call that failed, timed out or has an unknown "
        "outcome: read the data back with a read function, tell the user what happened, "
        "and retry only with their consent.",
        "- Permission denied: tell the user; do not look for a way around it.",
    ]
    return "\n".join(lines) + "\n"


def functions_reference(title: str, deployment_id: str,
                        functions: Iterable[SkillFunction], *, table: str | None = None
                        ) -> str:
    """references/functions.md: every open function, reads first, with its description;
    with `table`, the reference file of that table's functions."""
    groups: dict[Access, list[SkillFunction]] = {"read": [], "write": []}
    for function in functions:
        groups[function.access].append(function)
    scope = f": table {table}" if table else ""
    lines = [f"# Functions of {one_line(title)}{scope}", "",
             f"Every function open to agents{' on this table' if table else ''} in "
             f"production deployment `{deployment_id}`. "
             "They carry no parameters: describe a function before calling it (SKILL.md, "
             '"Calling a function").', ""]
    for heading, group in (("Read functions", groups["read"]),
                           ("Write functions", groups["write"])):
        lines += [f"## {heading}", ""]
        if not group:
            lines += ["(none)", ""]
        for function in group:
            description = clip_text(one_line(function.description),
                                    REFERENCE_DESCRIPTION_CHARS) or "No description."
            on_table = f" Table: {one_line(function.table)}." if function.table else ""
            named = (f" Name: {one_line(function.name)}."
                     if function.name != function.function_id else "")
            lines += [f"### `{function.function_id}`", "",
                      f"{_label(function)}.{named}{on_table}", "",
                      description, ""]
            if function.status_hint:
                lines += [f"Status: {one_line(function.status_hint)}", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
