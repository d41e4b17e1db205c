"""Analyse a Database Function's SQL: parse, read-only gate, names, parameters, bindings.

`analyze_sql` is pure (no I/O) and never raises on bad SQL: every problem becomes a
`SqlProblem` with a line and column. Parse it (`parse.py`: tokenized once, so PRAGMA or
ATTACH never reach the parser; PostgreSQL dialect), then walk the tree once: the
resolver (`resolve.py`) resolves names against the catalog while the read-only gate
below rides along, refusing writes, locks and unsafe functions and collecting `$n`
placeholders. sqlglot's optimizer is
deliberately not used: it costs several times a parse.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from basedb.sql import clauses, functions
from basedb.sql.model import (
    OutputColumn,
    SqlAnalysis,
    SqlProblem,
    line_column,
    node_offset,
)
from basedb.sql.parse import READ_ONLY_FIX, parse
from basedb.sql.pgtypes import field_type
from basedb.sql.resolve import Resolver
from basedb.sql.scope import is_all_call
from basedb.sql.typing import Typer
from basedb.workspace.files import LIMIT_SQL
from basedb.workspace.model import Catalog

PARAM_FIX = ("Declare one entry in meta.params per placeholder: $1 is the first entry, $2 the "
             "second, and so on.")


def _forbidden_classes() -> tuple[type, ...]:
    names = ("DML", "DDL", "Insert", "Update", "Delete", "Merge", "Copy", "Create", "Drop",
             "Alter", "TruncateTable", "Command", "Pragma", "Transaction", "Commit",
             "Rollback", "Set", "Use", "Describe", "Show", "Analyze", "Attach", "Detach",
             "Kill", "Grant", "Revoke", "Cache", "Uncache", "Refresh", "LoadData",
             "Summarize", "Execute", "Declare", "Comment", "Fetch", "Into", "Lock")
    return tuple(getattr(exp, n) for n in names if isinstance(getattr(exp, n, None), type))


_FORBIDDEN = _forbidden_classes()
_FORBIDDEN_WHAT = {"Into": "SELECT … INTO (it creates a table)",
                   "Lock": "FOR UPDATE / FOR SHARE (row locks)"}


def analyze_sql(sql: str, catalog: Catalog, param_count: int, *,
                resolve: bool = True, param_kinds: Sequence[str | None] = ()) -> SqlAnalysis:
    """Analyse one main.sql against the catalog, for a function declaring `param_count`
    params whose kinds (`TEXT`, `INT[]`, …; None when unknown) are `param_kinds`; a
    param without a kind takes the type its context gives it, as in PostgreSQL. With
    `resolve` False (no catalog loaded) names are not checked. The analysis (and its
    tree) may be shared by callers that keep it: treat it as read-only."""
    kinds = [param_kinds[i] if i < len(param_kinds) else None for i in range(param_count)]

    def failed(*problems: SqlProblem, tree: Any = None) -> SqlAnalysis:
        return SqlAnalysis(sql=sql, param_count=param_count, problems=problems, tree=tree)

    if not sql.strip():
        return failed(SqlProblem("SQL_PARSE_ERROR", "main.sql is empty.",
                                 "Write one SELECT statement that reads a bound table."))
    size = len(sql.encode("utf-8", "surrogatepass"))
    if size > LIMIT_SQL:
        return failed(SqlProblem(
            "SQL_PARSE_ERROR", f"main.sql is too large ({size} bytes; the limit is "
            f"{LIMIT_SQL} bytes).", "Simplify the query or split it into several functions."))
    try:
        tree, problem = parse(sql)
        if problem is not None:
            return failed(problem)
        gate = _Gate(sql, param_count)
        if not resolve:
            for node in tree.walk():
                gate.visit(node)
            gate.finish()
            if gate.read_only_problems:
                return failed(*gate.read_only_problems, tree=tree)
            typer = Typer(sql, None, kinds)
            typer.run(tree)
            return SqlAnalysis(sql=sql, param_count=param_count,
                               problems=_sorted(gate.problems + typer.problems),
                               tree=tree, params=frozenset(gate.params),
                               uses_current_user=gate.uses_current_user)
        # The gate rides along the resolver's walk; on a read-only violation the
        # resolver's findings are moot.
        resolver = Resolver(sql, catalog, param_count, visit=gate.visit, visit_skips=GATE_SKIPS)
        columns: list[OutputColumn] = resolver.run(tree)
        gate.finish()
        if gate.read_only_problems:
            return failed(*gate.read_only_problems, tree=tree)
        typer = Typer(sql, resolver.resolution, kinds)
        typing = typer.run(tree)
    except RecursionError:
        return failed(SqlProblem(
            "SQL_PARSE_ERROR", "main.sql is nested too deeply to analyse.",
            "Reduce the nesting of parentheses and subqueries (use WITH to name parts)."))
    if len(typing.columns) == len(columns):
        # A column that converts its field (x::text) is computed: it decodes by its type.
        columns = [OutputColumn(c.name, c.table, c.field, t) if c.field is None
                   or field_type(c.field) == t else OutputColumn(c.name, type=t)
                   for c, t in zip(columns, typing.columns, strict=True)]
    return SqlAnalysis(
        sql=sql, param_count=param_count,
        problems=_sorted(gate.problems + resolver.problems + typer.problems), tree=tree,
        tables=tuple(resolver.tables.values()), params=frozenset(gate.params),
        bindings=resolver.bindings, columns=tuple(columns),
        uses_current_user=gate.uses_current_user, resolved=True,
        resolution=resolver.resolution, typing=typing)


def _sorted(problems: list[SqlProblem]) -> tuple[SqlProblem, ...]:
    return tuple(sorted(problems, key=lambda p: (p.line or 0, p.column or 0, p.code)))


# --------------------------------------------------------------------------- gate


_G_FORBIDDEN, _G_PARAMETER, _G_PLACEHOLDER, _G_CURRENT_USER, _G_UNNEST, _G_FUNCTION, \
    _G_TABLE, _G_JOIN, _G_GROUP = range(1, 10)
_GATE_ROLES: dict[type, int] = {}
GATE_SKIPS: set[type] = set()  # classes the gate ignores (filled as they are met)


def _gate_role(kind: type) -> int:
    """What the gate does with nodes of one class (0: nothing), cached per class."""
    role = 0
    for base, value in ((_FORBIDDEN, _G_FORBIDDEN), (exp.Parameter, _G_PARAMETER),
                        (exp.Placeholder, _G_PLACEHOLDER), (exp.CurrentUserId, _G_CURRENT_USER),
                        (exp.Unnest, _G_UNNEST), (exp.Func, _G_FUNCTION),
                        (exp.Table, _G_TABLE), (exp.Join, _G_JOIN), (exp.Group, _G_GROUP)):
        if issubclass(kind, base):
            role = value
            break
    _GATE_ROLES[kind] = role
    if not role:
        GATE_SKIPS.add(kind)
    return role


class _Gate:
    """One walk over the tree: the read-only contract, placeholders, CURRENT_USER_ID(),
    and clauses sqlglot accepts but that would not run as written (`clauses`)."""

    def __init__(self, sql: str, param_count: int) -> None:
        self.sql = sql
        self.param_count = param_count
        self.read_only_problems: list[SqlProblem] = []
        self.problems: list[SqlProblem] = []
        self.params: set[int] = set()
        self.uses_current_user = False
        self._undeclared: set[str] = set()
        self._joins: list[Any] = []  # joins without ON/USING, comma joins included
        self._empty_groups: list[Any] = []

    def _at(self, node: Any) -> tuple[int | None, int | None]:
        offset = node_offset(node)
        if offset is None:
            return None, None
        if isinstance(node, exp.Parameter):
            offset = max(0, offset - 1)  # the position of "$"
        return line_column(self.sql, offset)

    def refuse(self, message: str, node: Any) -> None:
        self.read_only_problems.append(
            SqlProblem("SQL_NOT_READ_ONLY", message, READ_ONLY_FIX, *self._at(node)))

    def visit(self, node: Any) -> None:
        role = _GATE_ROLES.get(type(node))
        if role is None:
            role = _gate_role(type(node))
        if not role:
            return
        if role == _G_FORBIDDEN:
            if isinstance(node, exp.Fetch) and node.arg_key in ("limit", "offset"):
                return  # FETCH FIRST n ROWS ONLY: a LIMIT
            name = type(node).__name__
            self.refuse(f"{_FORBIDDEN_WHAT.get(name, name.upper())} is not allowed in a "
                        "Database Function: it must only read.", node)
        elif role == _G_PARAMETER:
            self.parameter(node)
        elif role == _G_PLACEHOLDER:
            text = _placeholder_text(node)
            self.undeclared(node, text, f"Placeholder {text} is not supported.")
        elif role == _G_CURRENT_USER:
            self.uses_current_user = True
        elif role == _G_UNNEST:
            # In FROM it only reads: the typer refuses it as SQL_UNSUPPORTED (a table
            # function), as it does generate_series.
            self.function(node)
        elif role == _G_FUNCTION:
            self.function(node)
        elif role == _G_JOIN:
            if clauses.join_without_condition(node):
                self._joins.append(node)
        elif role == _G_GROUP:
            if clauses.empty_group_by(node):
                self._empty_groups.append(node)
        elif (role == _G_TABLE and isinstance(node.this, exp.Identifier)
              and functions.is_schema_table(node.name)):
            self.refuse(f"Table {node.name!r} is SQLite's schema; a Database Function "
                            "may read only bound tables.", node)

    def finish(self) -> None:
        """After the walk: place the incomplete clauses it met (rare, so tokenized here)."""
        if self._joins or self._empty_groups:
            self.problems.extend(clauses.incomplete_clause_problems(
                self.sql, self._joins, self._empty_groups))

    def function(self, node: Any) -> None:
        if isinstance(node, exp.Anonymous):
            name = str(node.this)
            if is_all_call(node) and isinstance(node.parent, (exp.EQ, exp.NEQ, exp.GT, exp.GTE,
                                                              exp.LT, exp.LTE)):
                return
        else:
            name = str(node.sql_name())
        if functions.is_denied_function(name):
            self.refuse(f"Function {name}() is not allowed: it reaches outside the query's "
                        "data.", node)

    def parameter(self, node: Any) -> None:
        number: int | None = None
        if isinstance(node.this, exp.Literal) and _ascii_number(str(node.this.this)):
            number = int(str(node.this.this))
        text = f"${node.this.this}" if isinstance(node.this, exp.Literal) else node.sql(
            dialect="postgres")
        if number is None:
            self.undeclared(node, text, f"Placeholder {text} is not supported.")
        elif number < 1 or number > self.param_count:
            self.undeclared(node, text, f"Placeholder {text} has no declared parameter "
                            f"(meta.params declares {self.param_count}).")
        else:
            self.params.add(number)

    def undeclared(self, node: Any, text: str, message: str) -> None:
        if text in self._undeclared:
            return
        self._undeclared.add(text)
        line: int | None
        column: int | None
        if isinstance(node, exp.Placeholder) and text in self.sql:
            # `?` and `:name` carry no position, `%(name)s` only its name's
            line, column = line_column(self.sql, self.sql.index(text))
        else:
            line, column = self._at(node)
        self.problems.append(SqlProblem(
            "SQL_PARAM_UNDECLARED", message + " Parameters are written $1 … $n in "
            "declaration order.", PARAM_FIX, line, column))


def _placeholder_text(node: Any) -> str:
    """A placeholder as it was written: sqlglot prints `:name` as `%(name)s`."""
    if isinstance(node.this, str):
        return f":{node.this}"
    if isinstance(node.this, exp.Identifier):
        return f"%({node.this.name})s"
    return str(node.sql(dialect="postgres"))  # ? or %s


def _ascii_number(text: str) -> bool:
    # str.isdigit() also accepts "¹" or "٣", which are not placeholder numbers.
    return text.isascii() and text.isdigit()
