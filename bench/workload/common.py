"""What the function generators share: drafts, parameter lists, SQL naming helpers."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from bench.workload.catalog import Catalog, GenField, GenTable

_ASCII_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9 _-]*$")


@dataclass(slots=True)
class Draft:
    """One function before it gets its final (unique) functionId."""

    kind: str  # "database_function" | "mutation" | "faas"
    ident: str  # the preferred functionId
    declaration: dict[str, Any]
    companion: str = ""  # main.sql or index.mjs text


@dataclass(slots=True)
class Params:
    """Declared params in order; `add` returns the SQL placeholder (`$n`) of the new one."""

    items: list[dict[str, Any]] = field(default_factory=list)

    def add(self, name: str, kind: str, description: str, *, enum: Any = None,
            required: bool = True, is_list: bool = False) -> str:
        item: dict[str, Any] = {"name": name, "kind": kind, "description": description}
        if enum is not None:
            item["enum"] = list(enum)
        if not required:
            item["required"] = False
        if is_list:
            item["list"] = True
        self.items.append(item)
        return f"${len(self.items)}"


class Naming:
    """Names every generator agrees on: listers (reference suppliers) and aliases."""

    def __init__(self, catalog: Catalog, active: list[GenTable], rng: random.Random) -> None:
        self.catalog = catalog
        self.active = active
        self.active_names = {t.name for t in active}
        self.rng = rng
        self.members = catalog.by_name["Members"]
        self.made: set[str] = set()  # idents already generated (to spread patterns)

    @staticmethod
    def lister(table: GenTable) -> str:
        """The Database Function that lists a table's records with their ids."""
        return f"list{table.spec.plural}"

    @staticmethod
    def id_column(table: GenTable) -> str:
        return f"{snake(table.spec.ident)}_id"

    def owner_column(self, table: GenTable) -> str:
        return "user_id" if table is self.members else "owner_id"

    def record_id_hint(self, table: GenTable, what: str = "") -> str:
        """A description that says where a record id of `table` comes from."""
        what = what or f"Record id of the {table.spec.noun}"
        return (f"{what}; call {self.lister(table)} first and pass rows[]."
                f"{self.id_column(table)}, not the {table.spec.noun}'s title")

    def user_id_hint(self, what: str) -> str:
        return (f"{what}; call {self.lister(self.members)} first and pass rows[].user_id "
                "(a user id, not a display name)")

    def active_parents(self, table: GenTable) -> list[tuple[GenField, GenTable]]:
        out = []
        for link in table.links:
            assert link.link_target is not None
            if link.link_target in self.active_names:
                out.append((link, self.catalog.by_name[link.link_target]))
        return out

    def active_children(self, table: GenTable) -> list[tuple[GenTable, GenField]]:
        return [(self.catalog.by_name[name], link) for name, link in table.children
                if name in self.active_names]

    def subset(self, options: tuple[str, ...], low: int = 2) -> list[str]:
        """A non-empty subset of options, in option order (how authors copy them)."""
        k = self.rng.randint(min(low, len(options)), len(options))
        chosen = set(self.rng.sample(options, k))
        return [o for o in options if o in chosen]


def q(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def snake(name: str) -> str:
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", name)
    return "_".join(w.lower() for w in words) or "value"


def column_alias(f: GenField) -> str:
    """The output name of a field: its snake_case name, or its role for CJK names."""
    if _ASCII_NAME_RE.match(f.name):
        return snake(f.name)
    return f.role


def alias_of(table: GenTable, taken: set[str] | None = None) -> str:
    """A short table alias from the table's ident (Tasks → t, OrderItems → oi)."""
    base = "".join(c for c in table.spec.ident if c.isupper()).lower() or "x"
    taken = taken if taken is not None else set()
    alias, n = base, 2
    while alias in taken or alias in _SQL_WORDS:
        alias, n = f"{base}{n}", n + 1
    taken.add(alias)
    return alias


# Short aliases that are SQL keywords in PostgreSQL and must not be used bare.
_SQL_WORDS = frozenset({"as", "at", "by", "do", "if", "in", "is", "of", "on", "or", "to",
                        "all", "and", "any", "asc", "end", "for", "not", "set"})


def flag_value(table: GenTable, *, usual: bool = True) -> str:
    """`TRUE`/`FALSE` for the checkbox, as the usual filter (active, not archived) has it."""
    value = table.spec.flag_active if usual else not table.spec.flag_active
    return "TRUE" if value else "FALSE"


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def a_noun(table: GenTable) -> str:
    """The noun of one record with its article: "a task", "an order"."""
    noun = table.spec.noun
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def plural_noun(table: GenTable) -> str:
    noun = table.spec.noun
    if noun.endswith("y") and not noun.endswith(("ay", "ey", "oy")):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"
