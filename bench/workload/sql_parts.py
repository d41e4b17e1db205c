"""Pieces every Database Function pattern uses: the draft, select lists, paging."""

from __future__ import annotations

from bench.workload.catalog import GenTable
from bench.workload.common import Draft, Naming, Params, column_alias, q


def draft(ident: str, description: str, sql: str, params: Params) -> Draft:
    declaration = {"name": ident, "description": description,
                   "meta": {"params": params.items}}
    return Draft("database_function", ident, declaration, sql.strip() + "\n")


def columns(n: Naming, t: GenTable, a: str, roles: tuple[str, ...]) -> list[str]:
    """The select list: the record id, then the fields of these roles, by output name."""
    out = [f"{a}.record_id AS {n.id_column(t)}"]
    for role in roles:
        f = t.role(role)
        name = n.owner_column(t) if role == "owner" else column_alias(f)
        out.append(f"{a}.{q(f.name)} AS {name}")
    return out


def select(items: list[str]) -> str:
    return "SELECT " + ",\n       ".join(items)


def paging(params: Params, page: int = 200) -> str:
    """LIMIT/OFFSET with a new `offset` param (pages of `page` rows)."""
    offset = params.add("offset", "INT", f"Rows to skip: 0 for the first page; each page has "
                        f"{page} rows, so pass 200, 400, … for the next ones")
    return f"LIMIT {page} OFFSET {offset}"


def limit(params: Params) -> str:
    return "LIMIT " + params.add("limit", "INT", "Maximum number of rows to return, from 1 "
                                 "to 200; 50 is a good first page")


def camel(text: str) -> str:
    """snake_case (or kebab-case) to CamelCase: `weekly_hours` → `WeeklyHours`."""
    return "".join(word[:1].upper() + word[1:] for word in text.replace("-", "_").split("_"))
