"""Mutations of the generated workspace: fixed creates, updates and deletes.

They cover what upstream's Mutation spec offers: `set` from params, literals and
"@current_user"; `recordId` from a RECORD_ID param, as a list for batches; `precondition`;
`clear` through a BOOL param; optional params that skip a field; enums bound to select
fields and to multi-select fields through TEXT[] params. Every id param names the lister
that supplies it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.workload.catalog import GenTable
from bench.workload.common import Draft, Naming, Params, a_noun, column_alias, plural_noun

Pattern = Callable[[Naming, GenTable], "Draft | None"]


def draft(ident: str, description: str, table: GenTable, action: str, params: Params,
          **spec: Any) -> Draft:
    body: dict[str, Any] = {"table": table.name, "action": action}
    if "recordId" in spec:
        body["recordId"] = spec.pop("recordId")
    body["params"] = params.items
    body.update({key: value for key, value in spec.items() if value})
    return Draft("mutation", ident, {"name": ident, "description": description, "spec": body})


def _record_param(n: Naming, p: Params, t: GenTable, *, batch: bool = False) -> str:
    if batch:
        p.add("recordIds", "RECORD_ID", n.record_id_hint(
            t, f"Record ids of the {plural_noun(t)}, 1 to 200 of them"), is_list=True)
        return "$recordIds"
    p.add("recordId", "RECORD_ID", n.record_id_hint(t))
    return "$recordId"


def _flag_literal(t: GenTable, *, usual: bool = True) -> bool:
    return t.spec.flag_active if usual else not t.spec.flag_active


def create(n: Naming, t: GenTable) -> Draft:
    p, fields = Params(), dict[str, Any]()
    title, status, category = t.role("title"), t.role("status"), t.role("category")
    p.add("title", "TEXT", f"{title.name} of the new {t.spec.noun}, as the user wrote it")
    fields[title.name] = "$title"
    categories = n.subset(category.options, low=len(category.options))
    p.add(column_alias(category), "TEXT", f"{category.name} of the new {t.spec.noun}; ask "
          "the user when unclear", enum=categories)
    fields[category.name] = f"${column_alias(category)}"
    fields[status.name] = status.options[0]
    fields[t.role("owner").name] = "@current_user"
    fields[t.role("flag").name] = _flag_literal(t)
    amount, due = t.role("amount"), t.role("due")
    p.add("amount", "NUMBER", f"{amount.name}; missing or null leaves it empty",
          required=False)
    fields[amount.name] = "$amount"
    p.add("due", "DATE", f"{due.name} as YYYY-MM-DD in the site time zone; missing or null "
          "leaves it empty", required=False)
    fields[due.name] = "$due"
    for link, parent in n.active_parents(t)[:1]:
        p.add("parentId", "RECORD_ID", n.record_id_hint(parent, f"The {parent.spec.noun} it "
              "belongs to"))
        fields[link.name] = "$parentId"
    tags = t.role("tags")
    values = n.subset(tags.options, low=3)
    p.add("tags", "TEXT[]", f"Tags to attach, any of: {', '.join(values[:5])}"
          f"{', …' if len(values) > 5 else ''}; missing or null attaches none", enum=values,
          required=False)
    fields[tags.name] = "$tags"
    return draft(f"create{t.spec.ident}",
                 f"Creates {a_noun(t)} owned by the current user, in status "
                 f"{status.options[0]} (write). Use it when the user asks to add a "
                 f"{t.spec.noun}; to change one use update{t.spec.ident}Status or "
                 f"edit{t.spec.ident}.", t, "create", p, set=fields)


def update_status(n: Naming, t: GenTable) -> Draft:
    p = Params()
    record = _record_param(n, p, t)
    status = t.role("status")
    values = list(status.options[1:])
    p.add("status", "TEXT", f"The new status: {', '.join(values)}", enum=values)
    flag = t.role("flag")
    return draft(f"update{t.spec.ident}Status",
                 f"Moves one {t.spec.noun} to a new status (write); refused when the "
                 f"{t.spec.noun} is {'inactive' if t.spec.flag_active else 'archived'}. Use "
                 f"it for workflow steps; for several at once use "
                 f"batchUpdate{t.spec.ident}Status.", t, "update", p, recordId=record,
                 set={status.name: "$status"}, precondition={flag.name: _flag_literal(t)})


def batch_update_status(n: Naming, t: GenTable) -> Draft:
    p = Params()
    record = _record_param(n, p, t, batch=True)
    status = t.role("status")
    values = list(status.options[1:])
    p.add("status", "TEXT", f"The status every listed record moves to: {', '.join(values)}",
          enum=values)
    return draft(f"batchUpdate{t.spec.ident}Status",
                 f"Moves several {plural_noun(t)} that are still {status.options[0]} to one "
                 f"new status in a single batch (write). Use it for bulk triage; for one "
                 f"record use update{t.spec.ident}Status.", t, "update", p, recordId=record,
                 set={status.name: "$status"},
                 precondition={status.name: status.options[0]})


def edit_details(n: Naming, t: GenTable) -> Draft:
    p = Params()
    record = _record_param(n, p, t)
    amount, due, notes = t.role("amount"), t.role("due"), t.role("notes")
    p.add("amount", "NUMBER", f"New {amount.name.lower()}; missing or null keeps the old "
          "value", required=False)
    p.add("due", "DATETIME", f"New {due.name.lower()}, 'YYYY-MM-DD HH:mm:ss'; missing or "
          "null keeps the old value", required=False)
    p.add("notes", "TEXT", "New notes; missing or null keeps the old notes (use clearNotes "
          "to empty them)", required=False)
    p.add("clearNotes", "BOOL", "true empties the notes; do not pass notes at the same time",
          required=False)
    return draft(f"edit{t.spec.ident}",
                 f"Edits the {amount.name.lower()}, {due.name.lower()} and notes of one "
                 f"{t.spec.noun} (write); fields left out keep their values. Use it for "
                 f"corrections; to change the status use update{t.spec.ident}Status.",
                 t, "update", p, recordId=record,
                 set={amount.name: "$amount", due.name: "$due", notes.name: "$notes"},
                 clear={notes.name: "$clearNotes"})


def assign(n: Naming, t: GenTable) -> Draft:
    p = Params()
    record = _record_param(n, p, t)
    p.add("ownerId", "USER_ID", n.user_id_hint(f"The new owner of the {t.spec.noun}"))
    return draft(f"assign{t.spec.ident}",
                 f"Hands one {t.spec.noun} over to another owner (write). Use it when the "
                 f"user reassigns work; to take it yourself pass your own user id from "
                 f"{n.lister(n.members)}.", t, "update", p, recordId=record,
                 set={t.role("owner").name: "$ownerId"})


def archive(n: Naming, t: GenTable) -> Draft:
    p = Params()
    record = _record_param(n, p, t, batch=True)
    status, flag = t.role("status"), t.role("flag")
    verb = "Deactivates" if t.spec.flag_active else "Archives"
    return draft(f"archive{t.spec.plural}",
                 f"{verb} {plural_noun(t)} that are {status.options[-1]}, in one batch "
                 f"(write); records in other states are refused. Use it for clean-up; to "
                 f"remove records for good use delete{t.spec.plural}.", t, "update", p,
                 recordId=record, set={flag.name: _flag_literal(t, usual=False)},
                 precondition={status.name: status.options[-1]})


def delete_one(n: Naming, t: GenTable) -> Draft:
    p = Params()
    record = _record_param(n, p, t)
    return draft(f"delete{t.spec.ident}",
                 f"Deletes one {t.spec.noun} for good (write, cannot be undone). Use it only "
                 f"when the user asks to delete; to hide it use archive{t.spec.plural}.",
                 t, "delete", p, recordId=record)


def delete_many(n: Naming, t: GenTable) -> Draft:
    p = Params()
    record = _record_param(n, p, t, batch=True)
    flag = t.role("flag")
    return draft(f"delete{t.spec.plural}",
                 f"Deletes several {'inactive' if t.spec.flag_active else 'archived'} "
                 f"{plural_noun(t)} in one batch (write, cannot be undone). Use it to purge "
                 f"old records; for one record use delete{t.spec.ident}.", t, "delete", p,
                 recordId=record, precondition={flag.name: _flag_literal(t, usual=False)})


def move_to_parent(n: Naming, t: GenTable) -> Draft | None:
    parents = n.active_parents(t)
    if not parents:
        return None
    link, parent = parents[-1]
    p = Params()
    record = _record_param(n, p, t)
    p.add("targetId", "RECORD_ID", n.record_id_hint(parent, f"The {parent.spec.noun} to "
          "move it to"))
    return draft(f"move{t.spec.ident}To{parent.spec.ident}",
                 f"Moves one {t.spec.noun} to another {parent.spec.noun} (write). Use it "
                 f"when work is reorganised; to edit other fields use edit{t.spec.ident}.",
                 t, "update", p, recordId=record, set={link.name: "$targetId"})


def set_tags(n: Naming, t: GenTable) -> Draft:
    p = Params()
    record = _record_param(n, p, t)
    tags = t.role("tags")
    values = list(tags.options)
    p.add("tags", "TEXT[]", f"The complete new list of tags (replaces the old one), each one "
          f"of: {', '.join(values[:5])}{', …' if len(values) > 5 else ''}", enum=values)
    return draft(f"set{t.spec.ident}Tags",
                 f"Replaces the tags of one {t.spec.noun} (write). Use it to re-tag; to "
                 f"find records by tag use the Tagged list function.", t, "update", p,
                 recordId=record, set={tags.name: "$tags"})


PATTERNS: tuple[Pattern, ...] = (create, update_status, edit_details, delete_one, assign,
                                 batch_update_status, archive, move_to_parent, set_tags,
                                 delete_many)


def generate_mutations(n: Naming, count: int) -> list[Draft]:
    """The patterns in turn, each on the next active table where it makes a new function."""
    drafts: list[Draft] = []
    for index in range(count):
        pattern = PATTERNS[index % len(PATTERNS)]
        offset = index + index // len(PATTERNS)
        fallback: Draft | None = None
        for shift in range(len(n.active)):
            made = pattern(n, n.active[(offset + shift) % len(n.active)])
            if made is not None and made.ident not in n.made:
                n.made.add(made.ident)
                break
            fallback = fallback or made
        else:
            made = fallback or update_status(n, n.active[offset % len(n.active)])
        drafts.append(made)
    return drafts
