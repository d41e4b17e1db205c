"""The site Skill of a large site: an index by table instead of a list of functions.

A site with more functions than SKILL.md can list (`site_skill.MAX_LISTED`) gets, in
SKILL.md, a table of its tables (how many functions read and write each, and the
reference file that describes them) and the ways to find a function: `grep -n -i` over
references/, or the search API. Each table's functions go to a reference file of
their own, `references/table-<slug>.md`, small enough to read whole (a table has tens
of functions, not hundreds); functions that work on no known table go to
`references/other.md`. An agent reads SKILL.md, picks the table its task is about,
reads that one file, and has every candidate's full description: a few thousand
tokens at any site size, where one file of every function grows without bound.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from basedb.core.frozen import frozen_dataclass
from basedb.core.skill_spec import one_line, slugify

OTHER_FILE = "other.md"
OTHER_LABEL = "(no table)"
_SLUG_CHARS = 48
F = TypeVar("F")


@frozen_dataclass
class TableGroup(Generic[F]):
    """The functions of one table, and the reference file that lists them."""

    table: str | None
    file: str
    functions: tuple[F, ...]
    reads: int
    writes: int

    @property
    def label(self) -> str:
        return one_line(self.table) if self.table else OTHER_LABEL


def group_by_table(functions: Sequence[F], table_of: Callable[[F], str | None],
                   access_of: Callable[[F], str]) -> list[TableGroup[F]]:
    """Groups by table (most functions first, then by name), the functions of no known
    table last, each with a distinct file name."""
    by_table: dict[str | None, list[F]] = {}
    for function in functions:
        by_table.setdefault(table_of(function), []).append(function)
    named = sorted((t for t in by_table if t is not None),
                   key=lambda t: (-len(by_table[t]), t.lower()))
    used: set[str] = {OTHER_FILE}
    groups = []
    for index, table in enumerate([*named, *([None] if None in by_table else [])], start=1):
        members = by_table[table]
        reads = sum(1 for f in members if access_of(f) == "read")
        groups.append(TableGroup(table, _file_name(table, index, used), tuple(members),
                                 reads, len(members) - reads))
    return groups


def _file_name(table: str | None, index: int, used: set[str]) -> str:
    if table is None:
        return OTHER_FILE
    slug = slugify(table, _SLUG_CHARS) or f"{index}"
    name = f"table-{slug}.md"
    if name in used:
        name = f"table-{slug}-{index}.md"
    used.add(name)
    return name


def table_index(groups: Sequence[TableGroup[F]], *, site: str, env: str) -> list[str]:
    """The SKILL.md lines of a large site: how to find a function, then the tables."""
    total = sum(len(g.functions) for g in groups)
    lines = [
        "## Finding a function", "",
        f"This site has {total} functions, too many to list here. Find the one for the "
        "task in one of three ways, then read its full entry:", "",
        "1. By table: pick the table the task is about below and read its reference file "
        "whole; it describes every function of that table.",
        "2. By word: `grep -n -i '<word>' references/*.md` (a word of the task, e.g. an "
        "entity or an action such as `overdue`, `archive`, `export`) finds the entries "
        "that mention it; read the lines around each hit.",
        "3. By search: the site ranks its functions for a few words of the task, best "
        "first (add `\"table\":\"<table>\"` or `\"access\":\"read\"` to narrow):", "",
        f"   `basedb api GET {site} --params '{{\"env\":\"{env}\",\"query\":\"<words>\"}}' "
        "--as user`", "",
        "Read functions only read data and are safe to call; write functions change data "
        "or run code or a model: confirm with the user before each call (see \"Before a "
        "write\").", "",
        "## Tables", "",
        "| Table | Reads | Writes | Reference |",
        "| --- | ---: | ---: | --- |",
    ]
    lines += [f"| {g.label.replace('|', '/')} | {g.reads} | {g.writes} | "
              f"references/{g.file} |" for g in groups]
    return [*lines, ""]
