"""Building blocks of name resolution: FROM items, CTEs, scopes, output names.

Also the small tree helpers that analysis, resolution and the compiler share (looking
through casts, reading `$n`, recognising `ALL(…)`).
"""

from __future__ import annotations

import difflib
from typing import Any

from sqlglot import exp

from basedb.sql.model import ColumnRef, OutputColumn
from basedb.workspace.model import Table


def strip_casts(node: Any) -> Any:
    """The expression under any parentheses and casts."""
    while isinstance(node, (exp.Paren, exp.Cast)):
        node = node.this
    return node


def parameter_number(node: Any) -> int | None:
    """n for `$n`, also under casts, parentheses, ANY(…) and ALL(…)."""
    node = strip_casts(node)
    if isinstance(node, exp.Any):
        node = strip_casts(node.this)
    elif is_all_call(node):
        node = strip_casts(node.expressions[0])
    if isinstance(node, exp.Parameter) and isinstance(node.this, exp.Literal):
        text = str(node.this.this)
        if text.isascii() and text.isdigit():
            return int(text)
    return None


def set_operation_parts(node: Any) -> tuple[list[Any], list[Any]]:
    """The set operations of the chain `node` heads (`a UNION b EXCEPT c`) and its
    branches, both in the order they are written. An operation nested without a WITH,
    ORDER BY, LIMIT or OFFSET of its own belongs to the chain; one with them is a branch.
    Walked with a stack, so that a chain of thousands of UNIONs does not recurse."""
    operations: list[Any] = []
    branches: list[Any] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, exp.SetOperation) and (
                current is node or not any(current.args.get(k) for k in
                                           ("with_", "order", "limit", "offset"))):
            operations.append(current)
            stack.append(current.expression)
            stack.append(current.this)
        else:
            branches.append(current)
    return operations, branches


def is_all_call(node: Any) -> bool:
    """`x <> ALL(…)` parses as a call of an anonymous function named ALL."""
    return (isinstance(node, exp.Anonymous) and str(node.this).upper() == "ALL"
            and len(node.expressions) == 1)


def output_name(node: Any, ref: ColumnRef | None = None) -> str:
    """The column name PostgreSQL gives a projection (unquoted names fold to lower case;
    a field matched case-insensitively keeps the field's own name)."""
    if isinstance(node, exp.Alias):
        alias = node.args.get("alias")
        return str(node.alias) if is_quoted(alias) else str(node.alias).lower()
    node = strip_casts(node)
    if isinstance(node, exp.Column):
        if is_quoted(node.this):
            return str(node.name)
        return ref.name if ref is not None else str(node.name).lower()
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    if isinstance(node, exp.Func):
        return _function_name(type(node), node)
    if isinstance(node, exp.Case):
        return "case"
    return "?column?"


_FUNCTION_NAMES: dict[type, str] = {}


def _function_name(kind: type, node: Any) -> str:
    # A typed function's PostgreSQL name is what the postgres generator writes for it
    # (date_trunc for TimestampTrunc, …); worked out once per class.
    name = _FUNCTION_NAMES.get(kind)
    if name is None:
        text = node.sql(dialect="postgres")
        head = text.split("(", 1)[0].strip()
        name = head.lower() if head.replace("_", "").isalnum() and "(" in text else str(
            node.sql_name()).lower()
        _FUNCTION_NAMES[kind] = name
    return name


def _closest(name: str, candidates: list[str]) -> list[str]:
    return difflib.get_close_matches(name, candidates, n=3, cutoff=0.5)


def did_you_mean(name: str, candidates: list[str]) -> str:
    close = _closest(name, candidates)
    return (" Did you mean " + " or ".join(f'"{c}"' for c in close) + "?") if close else ""


def is_quoted(identifier: Any) -> bool:
    return isinstance(identifier, exp.Identifier) and bool(identifier.quoted)


class Source:
    """A FROM item: a catalog table, a derived column list, or opaque (unknown columns)."""

    __slots__ = ("alias", "columns", "fields", "table")

    def __init__(self, alias: str, table: Table | None = None,
                 columns: list[OutputColumn] | None = None) -> None:
        self.alias = alias
        self.table = table
        self.columns = columns
        # A table's references found so far, by (name, quoted): a query names the same
        # field again and again, and each reference would be built anew.
        self.fields: dict[tuple[str, bool], ColumnRef | None] = {}

    @property
    def opaque(self) -> bool:
        return self.table is None and self.columns is None

    def names(self) -> list[str]:
        if self.table is not None:
            return [f.name for f in self.table.fields] + ["record_id"]
        return [c.name for c in self.columns or ()]

    def find(self, name: str, quoted: bool) -> ColumnRef | None:
        if self.table is not None:
            key = (name, quoted)
            if key in self.fields:
                return self.fields[key]
            found = self.table.field(name)
            if found is None and not quoted:
                folded = [f for f in self.table.fields if f.name.casefold() == name.casefold()]
                found = folded[0] if len(folded) == 1 else None
            ref = None if found is None else ColumnRef(
                "field", self.alias, found.name, self.table, found)
            self.fields[key] = ref
            return ref
        col = match_column(self.columns or [], name, quoted)
        return None if col is None else ColumnRef(
            "derived", self.alias or None, col.name, col.table, col.field)


def match_column(columns: list[OutputColumn], name: str, quoted: bool) -> OutputColumn | None:
    for col in columns:
        if col.name == name:
            return col
    if not quoted:
        folded = [c for c in columns if c.name.casefold() == name.casefold()]
        if len(folded) == 1:
            return folded[0]
    return None


class Cte:
    __slots__ = ("columns", "name")

    def __init__(self, name: str, columns: list[OutputColumn] | None) -> None:
        self.name = name
        self.columns = columns


class Scope:
    __slots__ = ("ctes", "parent", "sources", "using")

    def __init__(self, parent: Scope | None, ctes: dict[str, Cte]) -> None:
        self.parent = parent
        self.ctes = ctes
        self.sources: list[Source] = []
        self.using: set[str] = set()


def rename(columns: list[OutputColumn], names: list[str]) -> list[OutputColumn]:
    if not names:
        return list(columns)
    renamed = [OutputColumn(n, c.table, c.field) for n, c in zip(names, columns, strict=False)]
    return renamed + list(columns[len(names):])
