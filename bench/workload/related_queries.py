"""Database Function patterns that read several tables: joins along links, CTEs, IN and
EXISTS subqueries, UNION ALL. They apply only where the related table is active (has a
lister), so every id parameter can name the function that supplies it.
"""

from __future__ import annotations

from bench.workload.catalog import GenField, GenTable
from bench.workload.common import (
    Draft,
    Naming,
    Params,
    a_noun,
    alias_of,
    column_alias,
    flag_value,
    literal,
    plural_noun,
    q,
    snake,
)
from bench.workload.sql_parts import columns, draft, limit, paging, select


def of_parent(n: Naming, t: GenTable) -> Draft | None:
    parents = n.active_parents(t)
    if not parents:
        return None
    link, parent = n.rng.choice(parents)
    taken: set[str] = set()
    a, pa, p = alias_of(t, taken), alias_of(parent, taken), Params()
    pid = p.add(f"{parent.spec.ident[0].lower()}{parent.spec.ident[1:]}Id", "TEXT",
                n.record_id_hint(parent))
    cols = columns(n, t, a, ("title", "status", "owner", "due"))
    cols.append(f"{pa}.{q(parent.role('title').name)} AS parent_title")
    sql = f"""
{select(cols)}
FROM {q(t.name)} AS {a}
JOIN {q(parent.name)} AS {pa} ON {a}.{q(link.name)} = {pa}.record_id
WHERE {pa}.record_id = {pid}
  AND {a}.{q(t.role('flag').name)} = {flag_value(t)}
ORDER BY {a}.{q(t.role('due').name)}, {a}.record_id
{paging(p)}"""
    return draft(f"{t.spec.plural[0].lower()}{t.spec.plural[1:]}Of{parent.spec.ident}",
                 f"Lists the {plural_noun(t)} of one {parent.spec.noun} (200 per page), with "
                 f"the {parent.spec.noun}'s title. Use it to show {a_noun(parent)}'s "
                 f"{plural_noun(t)}; across all {plural_noun(parent)} use {n.lister(t)} "
                 "(read-only).", sql, p)


def pick_child(n: Naming, t: GenTable, *, reserved: tuple[str, ...] = (),
               ) -> tuple[GenTable, GenField, str, str, Params] | None:
    """A random child table of `t` linking to it, with distinct aliases for both."""
    children = n.active_children(t)
    if not children:
        return None
    child, link = n.rng.choice(children)
    taken = set(reserved)
    return child, link, alias_of(t, taken), alias_of(child, taken), Params()


def parent_rollup(n: Naming, t: GenTable) -> Draft | None:
    picked = pick_child(n, t, reserved=("rc",))
    if picked is None:
        return None
    child, link, a, c, p = picked
    since = p.add("updatedSince", "DATETIME", f"Count only {plural_noun(child)} updated at "
                  "or after this time, 'YYYY-MM-DD HH:mm:ss'")
    status = t.role("status")
    values = n.subset(status.options)
    s = p.add("status", "TEXT", f"Status of the {plural_noun(t)} to include: "
              f"{', '.join(values)}", enum=values)
    title = t.role("title")
    counted = snake(child.spec.plural)
    sql = f"""
WITH recent AS (
  SELECT {c}.record_id AS child_id,
         {c}.{q(link.name)} AS parent_id,
         {c}.{q(child.role('amount').name)} AS amount
  FROM {q(child.name)} AS {c}
  WHERE {c}.{q(child.role('updated').name)} >= {since}
)
SELECT {a}.record_id AS {n.id_column(t)},
       {a}.{q(title.name)} AS title,
       COUNT(rc.child_id) AS recent_{counted},
       COALESCE(SUM(rc.amount), 0) AS recent_amount
FROM {q(t.name)} AS {a}
LEFT JOIN recent AS rc ON rc.parent_id = {a}.record_id
WHERE {a}.{q(status.name)} = {s}
GROUP BY {a}.record_id, {a}.{q(title.name)}
ORDER BY recent_{counted} DESC
LIMIT 50"""
    return draft(f"{t.spec.ident[0].lower()}{t.spec.ident[1:]}{child.spec.ident}Activity",
                 f"Ranks {plural_noun(t)} by how many of their {plural_noun(child)} changed "
                 f"recently, with the total {child.role('amount').name.lower()} (top 50). Use "
                 f"it to spot busy {plural_noun(t)}; for the {plural_noun(child)} themselves "
                 f"use {n.lister(child)} (read-only).", sql, p)


def mine_via_children(n: Naming, t: GenTable) -> Draft | None:
    picked = pick_child(n, t)
    if picked is None:
        return None
    child, link, a, c, p = picked
    sql = f"""
{select(columns(n, t, a, ("title", "status", "due")))}
FROM {q(t.name)} AS {a}
WHERE {a}.record_id IN (
  SELECT {c}.{q(link.name)}
  FROM {q(child.name)} AS {c}
  WHERE {c}.{q(child.role('creator').name)} = CURRENT_USER_ID()
)
  AND {a}.{q(t.role('flag').name)} = {flag_value(t)}
ORDER BY {a}.{q(t.role('due').name)} NULLS LAST
{limit(p)}"""
    return draft(f"{t.spec.plural[0].lower()}{t.spec.plural[1:]}WithMy{child.spec.plural}",
                 f"Lists the {plural_noun(t)} for which the current user created at least one "
                 f"{child.spec.noun}. Use it for 'what have I worked on'; for every "
                 f"{t.spec.noun} use {n.lister(t)} (read-only).", sql, p)


def with_child_in_status(n: Naming, t: GenTable) -> Draft | None:
    picked = pick_child(n, t)
    if picked is None:
        return None
    child, link, a, c, p = picked
    values = n.subset(child.role("status").options)
    s = p.add("childStatus", "TEXT", f"Status {a_noun(child)} must have: "
              f"{', '.join(values)}", enum=values)
    sql = f"""
{select(columns(n, t, a, ("title", "status", "owner")))}
FROM {q(t.name)} AS {a}
WHERE EXISTS (
  SELECT 1
  FROM {q(child.name)} AS {c}
  WHERE {c}.{q(link.name)} = {a}.record_id
    AND {c}.{q(child.role('status').name)} = {s}
)
ORDER BY {a}.{q(t.role('title').name)}
{paging(p)}"""
    return draft(f"{t.spec.plural[0].lower()}{t.spec.plural[1:]}Having{child.spec.plural}",
                 f"Lists {plural_noun(t)} that have at least one {child.spec.noun} in a given "
                 f"status. Use it to find {plural_noun(t)} with pending work; to list the "
                 f"{plural_noun(child)} use {n.lister(child)} (read-only).", sql, p)


def my_agenda(n: Naming, t: GenTable) -> Draft | None:
    others = [o for o in n.active if o is not t]
    if not others:
        return None
    other = n.rng.choice(others)
    taken: set[str] = set()
    a, b, p = alias_of(t, taken), alias_of(other, taken), Params()
    sql = f"""
SELECT {literal(t.spec.noun)} AS kind,
       {a}.record_id AS id,
       {a}.{q(t.role('title').name)} AS title,
       {a}.{q(t.role('due').name)} AS due
FROM {q(t.name)} AS {a}
WHERE {a}.{q(t.role('owner').name)} = CURRENT_USER_ID()
UNION ALL
SELECT {literal(other.spec.noun)} AS kind,
       {b}.record_id AS id,
       {b}.{q(other.role('title').name)} AS title,
       {b}.{q(other.role('due').name)} AS due
FROM {q(other.name)} AS {b}
WHERE {b}.{q(other.role('owner').name)} = CURRENT_USER_ID()
ORDER BY due
{limit(p)}"""
    return draft(f"myAgenda{t.spec.plural}And{other.spec.plural}",
                 f"The current user's {plural_noun(t)} and {plural_noun(other)} in one list, "
                 f"ordered by date. Use it for a personal agenda; for only {plural_noun(t)} "
                 f"use my{t.spec.plural} (read-only).", sql, p)


def parent_summary(n: Naming, t: GenTable) -> Draft | None:
    parents = n.active_parents(t)
    if not parents:
        return None
    link, parent = n.rng.choice(parents)
    a, p = alias_of(t), Params()
    pid = p.add("parentId", "TEXT", n.record_id_hint(parent))
    due = t.role("due")
    sql = f"""
SELECT COUNT(*) AS total,
       COUNT(DISTINCT {a}.{q(t.role('owner').name)}) AS owners,
       MIN({a}.{q(due.name)}) AS first_due,
       MAX({a}.{q(due.name)}) AS last_due,
       SUM(CASE WHEN {a}.{q(t.role('flag').name)} = TRUE THEN 1 ELSE 0 END) AS flagged
FROM {q(t.name)} AS {a}
WHERE {a}.{q(link.name)} = {pid}"""
    return draft(f"{t.spec.ident[0].lower()}{t.spec.ident[1:]}SummaryFor{parent.spec.ident}",
                 f"Summarises the {plural_noun(t)} of one {parent.spec.noun}: how many, how "
                 f"many owners and the {due.name.lower()} range. Use it for a "
                 f"{parent.spec.noun} header; for the list use {n.lister(t)} (read-only).",
                 sql, p)


def detail(n: Naming, t: GenTable) -> Draft:
    taken: set[str] = set()
    a, p = alias_of(t, taken), Params()
    rid = p.add("recordId", "TEXT", n.record_id_hint(t))
    cols = columns(n, t, a, ("title", "status", "category", "owner", "amount", "due",
                              "notes", "created", "creator"))
    joins = ""
    parents = n.active_parents(t)
    if parents:
        link, parent = parents[0]
        pa = alias_of(parent, taken)
        cols.append(f"{pa}.{q(parent.role('title').name)} AS "
                    f"{column_alias(parent.role('title'))}_of_{parent.spec.ident.lower()}")
        joins = f"\nLEFT JOIN {q(parent.name)} AS {pa} ON {a}.{q(link.name)} = {pa}.record_id"
    sql = f"""
{select(cols)}
FROM {q(t.name)} AS {a}{joins}
WHERE {a}.record_id = {rid}"""
    return draft(f"get{t.spec.ident}",
                 f"Returns one {t.spec.noun} with all its details (one row, or none when "
                 f"the id is unknown). Use it before editing {a_noun(t)}; to find one "
                 f"use {n.lister(t)} (read-only).", sql, p)
