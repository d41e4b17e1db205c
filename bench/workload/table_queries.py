"""Database Function patterns over one table: listers, enum-bound filters, `= ANY($n)`,
aggregates, windows, optional filters, CURRENT_USER_ID(), date ranges, searches.
"""

from __future__ import annotations

from bench.workload.catalog import GenTable
from bench.workload.common import (
    Draft,
    Naming,
    Params,
    alias_of,
    column_alias,
    flag_value,
    literal,
    plural_noun,
    q,
)
from bench.workload.sql_parts import camel, columns, draft, limit, paging, select


def lister(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    cols = columns(n, t, a, ("title", "status", "category", "owner", "due"))
    sql = f"""
-- Every {t.spec.noun} that is in use, newest first; the ids feed other functions.
{select(cols)}
FROM {q(t.name)} AS {a}
WHERE {a}.{q(t.role('flag').name)} = {flag_value(t)}
ORDER BY {a}.{q(t.role('number').name)} DESC
{paging(p)}"""
    words = plural_noun(t)
    return draft(n.lister(t), f"Lists {words} (newest first, 200 per page) with their "
                 f"{n.id_column(t)}. Use it to pick one {t.spec.noun} and to get the id that "
                 f"other functions ask for; to filter by status use {t.spec.plural[0].lower()}"
                 f"{t.spec.plural[1:]}ByStatus when it exists (read-only).", sql, p)


def by_status(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    status = t.role("status")
    values = n.subset(status.options)
    s = p.add("status", "TEXT", f"Status of the {plural_noun(t)} to list: "
              f"{', '.join(values)}", enum=values)
    due = t.role("due")
    sql = f"""
{select(columns(n, t, a, ("title", "status", "owner", "amount", "due")))}
FROM {q(t.name)} AS {a}
WHERE {a}.{q(status.name)} = {s}
ORDER BY {a}.{q(due.name)} NULLS LAST, {a}.record_id
{limit(p)}"""
    ident = t.spec.plural[0].lower() + t.spec.plural[1:] + "ByStatus"
    return draft(ident, f"Lists {plural_noun(t)} in one status, earliest {due.name.lower()} "
                 f"first. Use it for questions like 'which {plural_noun(t)} are "
                 f"{values[0]}'; to browse everything use {n.lister(t)} (read-only).", sql, p)


def by_statuses_and_category(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    status, category = t.role("status"), t.role("category")
    statuses = n.subset(status.options)
    categories = n.subset(category.options, low=1)
    s = p.add("statuses", "TEXT[]", f"One or more statuses to include, e.g. "
              f"[{', '.join(statuses[:2])}]", enum=statuses)
    c = p.add(column_alias(category), "TEXT", f"The {category.name.lower()} to match, "
              f"exactly one of {', '.join(categories)}", enum=categories)
    sql = f"""
{select(columns(n, t, a, ("title", "status", "category", "amount")))}
FROM {q(t.name)} AS {a}
WHERE {a}.{q(status.name)} = ANY({s})
  AND {a}.{q(category.name)} = {c}
ORDER BY {a}.{q(t.role('amount').name)} DESC NULLS LAST
LIMIT 100"""
    return draft(f"find{t.spec.plural}By{camel(category.role)}",
                 f"Finds {plural_noun(t)} of one {category.name.lower()} among several "
                 f"statuses, largest {t.role('amount').name.lower()} first (at most 100). "
                 f"Use it for triage views; for a single status use {n.lister(t)} and "
                 "filter, or the ByStatus function (read-only).", sql, p)


def stats_by_status(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    status, amount, due = t.role("status"), t.role("amount"), t.role("due")
    since = p.add("createdSince", "DATETIME", "Count only records created at or after this "
                  "time, 'YYYY-MM-DD HH:mm:ss' in the site time zone")
    least = p.add("minCount", "INT", "Hide statuses with fewer records than this; pass 1 to "
                  "see every status that has records")
    sql = f"""
SELECT {a}.{q(status.name)} AS status,
       COUNT(*) AS total,
       SUM({a}.{q(amount.name)}) AS {column_alias(amount)}_sum,
       ROUND(AVG({a}.{q(amount.name)})::numeric, 2) AS {column_alias(amount)}_avg,
       MIN({a}.{q(due.name)}) AS first_due,
       MAX({a}.{q(due.name)}) AS last_due
FROM {q(t.name)} AS {a}
WHERE {a}.{q(t.role('created').name)} >= {since}
GROUP BY {a}.{q(status.name)}
HAVING COUNT(*) >= {least}
ORDER BY total DESC"""
    return draft(f"{t.spec.ident[0].lower()}{t.spec.ident[1:]}StatsByStatus",
                 f"Counts {plural_noun(t)} per status with the sum and average "
                 f"{amount.name.lower()} and the {due.name.lower()} range. Use it for "
                 f"dashboards; for the records themselves use {n.lister(t)} (read-only).",
                 sql, p)


def optional_filters(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    amount, title, due = t.role("amount"), t.role("title"), t.role("due")
    low = p.add(f"min{camel(column_alias(amount))}", "NUMBER",
                f"Smallest {amount.name.lower()} to include; missing or null skips this "
                "filter", required=False)
    words = p.add("search", "TEXT", f"Words to look for in the {title.name.lower()}; "
                  "missing or null skips this filter", required=False)
    before = p.add("dueBefore", "DATETIME", f"Latest {due.name.lower()} to include, "
                   "'YYYY-MM-DD HH:mm:ss'; missing or null skips this filter", required=False)
    sql = f"""
{select(columns(n, t, a, ("title", "status", "amount", "due")))}
FROM {q(t.name)} AS {a}
WHERE ({low} IS NULL OR {a}.{q(amount.name)} >= {low})
  AND ({words} IS NULL OR {a}.{q(title.name)} LIKE '%' || {words} || '%')
  AND ({before} IS NULL OR {a}.{q(due.name)} <= {before})
ORDER BY {a}.{q(due.name)}, {a}.record_id
{paging(p)}"""
    return draft(f"search{t.spec.plural}",
                 f"Searches {plural_noun(t)} with optional filters on "
                 f"{amount.name.lower()}, {title.name.lower()} words and "
                 f"{due.name.lower()}; every filter left out matches all. Use it for ad-hoc "
                 f"searches; for one status use the ByStatus function (read-only).", sql, p)


def assigned_to_me(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    status = t.role("status")
    sql = f"""
{select(columns(n, t, a, ("title", "status", "category", "due")))}
FROM {q(t.name)} AS {a}
WHERE {a}.{q(t.role('owner').name)} = CURRENT_USER_ID()
  AND {a}.{q(status.name)} <> {literal(status.options[-1])}
ORDER BY {a}.{q(t.role('due').name)} NULLS LAST
{limit(p)}"""
    return draft(f"my{t.spec.plural}",
                 f"Lists the current user's {plural_noun(t)} that are not "
                 f"{status.options[-1]}, most urgent first. Use it for a personal to-do "
                 f"view; for someone else's use {n.lister(t)} (read-only).", sql, p)


def due_between(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    due = t.role("due")
    start = p.add("from", "DATE", f"First day of the range (YYYY-MM-DD), compared with the "
                  f"{due.name.lower()}")
    end = p.add("to", "DATE", "Day after the last day of the range (YYYY-MM-DD); the range "
                "excludes it")
    sql = f"""
{select(columns(n, t, a, ("title", "status", "owner", "due")))}
FROM {q(t.name)} AS {a}
WHERE {a}.{q(due.name)} >= {start}
  AND {a}.{q(due.name)} < {end}
ORDER BY {a}.{q(due.name)}
LIMIT 500"""
    return draft(f"{t.spec.plural[0].lower()}{t.spec.plural[1:]}InRange",
                 f"Lists {plural_noun(t)} whose {due.name.lower()} falls in a date range (at "
                 f"most 500). Use it for calendars and weekly plans; for undated ones use "
                 f"{n.lister(t)} (read-only).", sql, p)


def top_per_owner(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    status, amount, owner = t.role("status"), t.role("amount"), t.role("owner")
    values = n.subset(status.options)
    s = p.add("status", "TEXT", f"Status of the {plural_noun(t)} to rank: "
              f"{', '.join(values)}", enum=values)
    top = p.add("perOwner", "INT", "How many records to keep for each owner, from 1 to 20")
    sql = f"""
SELECT ranked.{n.id_column(t)}, ranked.{n.owner_column(t)}, ranked.amount, ranked.position
FROM (
  SELECT {a}.record_id AS {n.id_column(t)},
         {a}.{q(owner.name)} AS {n.owner_column(t)},
         {a}.{q(amount.name)} AS amount,
         ROW_NUMBER() OVER (PARTITION BY {a}.{q(owner.name)}
                            ORDER BY {a}.{q(amount.name)} DESC) AS position
  FROM {q(t.name)} AS {a}
  WHERE {a}.{q(status.name)} = {s}
) AS ranked
WHERE ranked.position <= {top}
ORDER BY ranked.{n.owner_column(t)}, ranked.position"""
    return draft(f"top{t.spec.plural}PerOwner",
                 f"Ranks each owner's {plural_noun(t)} by {amount.name.lower()} and keeps "
                 f"the top ones. Use it to compare workloads; for a single owner use "
                 f"{t.spec.plural[0].lower()}{t.spec.plural[1:]}OfOwner when it exists "
                 "(read-only).", sql, p)


def by_tag(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    tags = t.role("tags")
    values = n.subset(tags.options, low=3)
    tag = p.add("tag", "TEXT", f"Tag the {plural_noun(t)} must carry (any of their tags may "
                f"match): {', '.join(values[:6])}{', …' if len(values) > 6 else ''}",
                enum=values)
    sql = f"""
{select(columns(n, t, a, ("title", "status", "tags")))}
FROM {q(t.name)} AS {a}
WHERE {a}.{q(tags.name)} = {tag}
  AND {a}.{q(t.role('flag').name)} = {flag_value(t)}
ORDER BY {a}.{q(t.role('updated').name)} DESC
{paging(p)}"""
    return draft(f"{t.spec.plural[0].lower()}{t.spec.plural[1:]}Tagged",
                 f"Lists {plural_noun(t)} carrying one tag, recently updated first. Use it "
                 f"for tag pages; to search by words use search{t.spec.plural} (read-only).",
                 sql, p)


def of_owner(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    who = p.add("ownerId", "TEXT", n.user_id_hint(f"User id of the {t.spec.noun}'s owner"))
    sql = f"""
{select(columns(n, t, a, ("title", "status", "amount", "due")))}
FROM {q(t.name)} AS {a}
WHERE {a}.{q(t.role('owner').name)} = {who}
ORDER BY {a}.{q(t.role('due').name)} NULLS LAST
{paging(p)}"""
    return draft(f"{t.spec.plural[0].lower()}{t.spec.plural[1:]}OfOwner",
                 f"Lists the {plural_noun(t)} one person owns. Use it when asked about a "
                 f"colleague's {plural_noun(t)}; for your own use my{t.spec.plural} "
                 "(read-only).", sql, p)


def size_bands(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    amount = t.role("amount")
    large = p.add("largeFrom", "NUMBER", f"{amount.name} at or above which a record counts "
                  "as large")
    medium = p.add("mediumFrom", "NUMBER", f"{amount.name} at or above which a record counts "
                   "as medium; below it is small")
    sql = f"""
SELECT CASE
         WHEN {a}.{q(amount.name)} >= {large} THEN 'large'
         WHEN {a}.{q(amount.name)} >= {medium} THEN 'medium'
         ELSE 'small'
       END AS size_band,
       COUNT(*) AS total,
       SUM({a}.{q(amount.name)}) AS amount
FROM {q(t.name)} AS {a}
WHERE {a}.{q(amount.name)} IS NOT NULL
GROUP BY size_band
ORDER BY total DESC"""
    return draft(f"{t.spec.ident[0].lower()}{t.spec.ident[1:]}SizeBands",
                 f"Groups {plural_noun(t)} into small, medium and large by "
                 f"{amount.name.lower()}, with counts and sums. Use it for distribution "
                 f"charts; for the records use {n.lister(t)} (read-only).", sql, p)


def search_title(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    title = t.role("title")
    words = p.add("query", "TEXT", f"Part of the {title.name.lower()} to look for; case does "
                  "not matter")
    sql = f"""
{select(columns(n, t, a, ("title", "status", "updated")))}
FROM {q(t.name)} AS {a}
WHERE LOWER({a}.{q(title.name)}) LIKE '%' || LOWER({words}) || '%'
ORDER BY {a}.{q(t.role('updated').name)} DESC
LIMIT 50"""
    return draft(f"find{t.spec.plural}ByTitle",
                 f"Finds {plural_noun(t)} whose {title.name.lower()} contains some words "
                 f"(case-insensitive, at most 50). Use it when the user names a "
                 f"{t.spec.noun}; with more filters use search{t.spec.plural} (read-only).",
                 sql, p)


def by_flag(n: Naming, t: GenTable) -> Draft:
    a, p = alias_of(t), Params()
    flag, status = t.role("flag"), t.role("status")
    value = p.add(f"is{camel(column_alias(flag))}", "BOOL",
                  f"true lists {plural_noun(t)} with '{flag.name}' checked, false the others")
    open_states = ", ".join(literal(o) for o in status.options[:-1])
    sql = f"""
{select(columns(n, t, a, ("title", "status", "flag")))}
FROM {q(t.name)} AS {a}
WHERE {a}.{q(flag.name)} = {value}
  AND {a}.{q(status.name)} IN ({open_states})
ORDER BY {a}.{q(t.role('title').name)}
{paging(p)}"""
    return draft(f"{t.spec.plural[0].lower()}{t.spec.plural[1:]}By{camel(column_alias(flag))}",
                 f"Lists open {plural_noun(t)} by whether '{flag.name}' is checked. Use it "
                 f"for clean-up lists; for closed ones use the ByStatus function "
                 "(read-only).", sql, p)


def watching(n: Naming, t: GenTable) -> Draft | None:
    if not t.has_role("watchers"):
        return None
    a, p = alias_of(t), Params()
    sql = f"""
{select(columns(n, t, a, ("title", "status", "owner", "updated")))}
FROM {q(t.name)} AS {a}
WHERE {a}.{q(t.role('watchers').name)} = CURRENT_USER_ID()
ORDER BY {a}.{q(t.role('updated').name)} DESC
{limit(p)}"""
    return draft(f"{t.spec.plural[0].lower()}{t.spec.plural[1:]}IWatch",
                 f"Lists {plural_noun(t)} the current user watches, recently updated first. "
                 f"Use it for a follow-up feed; for owned ones use my{t.spec.plural} "
                 "(read-only).", sql, p)


def optional_status_filter(n: Naming, t: GenTable) -> Draft:
    """An optional select filter: realistic, and it earns `enum_unchecked` (a hint)."""
    a, p = alias_of(t), Params()
    status = t.role("status")
    s = p.add("status", "TEXT", "Status to filter by; missing or null lists every status",
              enum=list(status.options), required=False)
    sql = f"""
{select(columns(n, t, a, ("title", "status", "due")))}
FROM {q(t.name)} AS {a}
WHERE ({s} IS NULL OR {a}.{q(status.name)} = {s})
ORDER BY {a}.{q(t.role('due').name)}
{paging(p)}"""
    return draft(f"browse{t.spec.plural}",
                 f"Browses {plural_noun(t)}, optionally in one status (200 per page). Use it "
                 f"for a filterable table view; for ids only use {n.lister(t)} (read-only).",
                 sql, p)
