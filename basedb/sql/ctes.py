"""WITH clauses as PostgreSQL scopes them, walked once for the resolver and the typer.

Each CTE of a WITH clause sees the CTEs before it and those of the queries around it; in
WITH RECURSIVE it also sees itself, so its recursive term can read what its
non-recursive term produced. A column list (`WITH t(a, b) AS …`) names the body's first
columns. The resolver binds a CTE's name to columns that remember their fields, the typer
to columns with their PostgreSQL types: both walk a clause with `bind_ctes`, and each says
only how one definition becomes its entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from basedb.core.frozen import frozen_dataclass

Entry = TypeVar("Entry")


@frozen_dataclass
class CteDefinition:
    """One `name (columns…) AS (body)` of a WITH clause."""

    name: str
    column_names: tuple[str, ...]  # the column list, () when there is none
    body: Any  # the defining query (a sqlglot node)
    recursive: bool  # the clause is WITH RECURSIVE: the body may read `name` itself


def cte_definitions(with_: Any) -> Iterator[CteDefinition]:
    """The CTEs of a WITH clause, in the order they are written."""
    recursive = bool(with_.args.get("recursive"))
    for cte in with_.expressions:
        alias = cte.args.get("alias")
        names = tuple(c.name for c in alias.columns) if alias is not None else ()
        yield CteDefinition(cte.alias, names, cte.this, recursive)


def bind_ctes(with_: Any, ctes: dict[str, Entry],
              define: Callable[[CteDefinition, dict[str, Entry]], Entry]) -> dict[str, Entry]:
    """The CTEs visible below a WITH clause (`ctes` itself when there is none): those of
    the enclosing queries, then each definition's entry, made by `define` from the
    definition and the CTEs it sees (a copy; `define` adds the CTE itself to it when the
    clause is recursive and the body reads a provisional entry)."""
    if with_ is None:
        return ctes
    env = dict(ctes)
    for definition in cte_definitions(with_):
        env[definition.name] = define(definition, dict(env))
    return env
