"""Database Functions of the generated workspace: realistic read-only SQL over the catalog.

The first functions are one lister per active table (`listTasks`, …): they return record
ids, and every parameter that takes an id says which lister supplies it, as upstream's
agent-tool design asks. The rest cycle through query shapes people write: filters by an
enum-bound select field, `= ANY($n)` over array params, joins along links, CTEs, IN and
EXISTS subqueries, aggregates with HAVING, window functions, UNION ALL, optional filters
(`$n IS NULL OR …`), CURRENT_USER_ID(), date ranges, LIMIT/OFFSET paging.
"""

from __future__ import annotations

from collections.abc import Callable

from bench.workload.catalog import GenTable
from bench.workload.common import Draft, Naming
from bench.workload.related_queries import (
    detail,
    mine_via_children,
    my_agenda,
    of_parent,
    parent_rollup,
    parent_summary,
    with_child_in_status,
)
from bench.workload.table_queries import (
    assigned_to_me,
    by_flag,
    by_status,
    by_statuses_and_category,
    by_tag,
    due_between,
    lister,
    of_owner,
    optional_filters,
    optional_status_filter,
    search_title,
    size_bands,
    stats_by_status,
    top_per_owner,
    watching,
)

Pattern = Callable[[Naming, GenTable], "Draft | None"]

PATTERNS: tuple[Pattern, ...] = (
    by_status, of_parent, stats_by_status, by_statuses_and_category, parent_rollup,
    optional_filters, assigned_to_me, with_child_in_status, due_between, top_per_owner,
    by_tag, mine_via_children, of_owner, size_bands, search_title, detail, by_flag,
    parent_summary, my_agenda, watching,
)

# One function in this many is an optional select filter (a realistic source of hints).
OPTIONAL_SELECT_EVERY = 60


def generate_database_functions(n: Naming, count: int) -> list[Draft]:
    """`count` drafts: a lister per active table first, then the patterns in turn, each on
    the next table it applies to (so small workspaces still get every shape)."""
    drafts = [lister(n, t) for t in n.active[:count]]
    index = 0
    while len(drafts) < count:
        offset = index + index // len(PATTERNS)
        if index % OPTIONAL_SELECT_EVERY == OPTIONAL_SELECT_EVERY - 1:
            drafts.append(optional_status_filter(n, n.active[offset % len(n.active)]))
        else:
            drafts.append(first_applicable(n, PATTERNS[index % len(PATTERNS)], offset))
        index += 1
    return drafts


def first_applicable(n: Naming, pattern: Pattern, offset: int) -> Draft:
    """The pattern on the first active table (from `offset` on) it applies to, preferring
    one where it makes a function not made yet."""
    fallback: Draft | None = None
    for shift in range(len(n.active)):
        made = pattern(n, n.active[(offset + shift) % len(n.active)])
        if made is None:
            continue
        if made.ident not in n.made:
            n.made.add(made.ident)
            return made
        fallback = fallback or made
    return fallback or by_status(n, n.active[offset % len(n.active)])
