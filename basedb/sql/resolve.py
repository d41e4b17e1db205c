"""Name resolution and parameter bindings for one parsed Database Function query.

A single walk over the tree, with scopes as PostgreSQL has them: CTEs (recursive ones
see themselves), FROM items and their aliases, derived tables whose columns come from
their projections, correlated subqueries that see outer scopes, and output names usable
in ORDER BY / GROUP BY / HAVING. Expressions are walked with an explicit stack, so a
query with thousands of ANDs or UNIONs does not exhaust Python's recursion limit; only
query nesting (already bounded by the parser) recurses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from basedb.sql.ctes import CteDefinition, bind_ctes
from basedb.sql.model import (
    ColumnRef,
    OutputColumn,
    ParamBinding,
    Resolution,
    SourceRef,
    SqlProblem,
    StarColumn,
    line_column,
    node_offset,
)
from basedb.sql.scope import (
    Cte,
    Scope,
    Source,
    did_you_mean,
    is_quoted,
    match_column,
    output_name,
    parameter_number,
    rename,
    set_operation_parts,
    strip_casts,
)
from basedb.workspace.model import Catalog, Table

# Connectives through which a comparison stays on a purely conjunctive path.
_CONJUNCTIVE = (exp.And, exp.Paren, exp.Alias)
# Predicates whose subquery still constrains the row (a binding inside can be provable).
_QUERY_PREDICATES = (exp.In, exp.Exists, exp.Any, exp.EQ, exp.NEQ, exp.GT, exp.GTE,
                     exp.LT, exp.LTE)
_QUERIES = (exp.Select, exp.SetOperation, exp.Subquery)
# Node roles, cached per class: one dict lookup per node instead of several isinstance.
_COLUMN, _QUERY, _COMPARISON, _CONNECTIVE, _PREDICATE = 1, 2, 4, 8, 16
_ROLES: dict[type, int] = {}


def _role(kind: type) -> int:
    role = ((_COLUMN if issubclass(kind, exp.Column) else 0)
            | (_QUERY if issubclass(kind, _QUERIES) else 0)
            | (_COMPARISON if issubclass(kind, (exp.EQ, exp.NEQ, exp.In)) else 0)
            | (_CONNECTIVE if issubclass(kind, _CONJUNCTIVE) else 0)
            | (_PREDICATE if issubclass(kind, _QUERY_PREDICATES) else 0))
    _ROLES[kind] = role
    return role


# Select arguments walked explicitly (the rest are walked generically).
_SELECT_HANDLED = frozenset({"with_", "from_", "joins", "expressions"})
# How output names apply per clause: "first" (ORDER BY) or after input columns.
_ALIAS_MODES = {"order": "first", "group": "fallback", "having": "fallback",
                "qualify": "fallback"}

TABLE_FIX = ("Use a table name or tableId from catalog.json (quote names with \"…\"); run "
             "`basedb catalog pull` if the table was bound recently.")
FIELD_FIX = ("Use a field name from catalog.json (quote names with \"…\"), or `record_id`; "
             "run `basedb catalog pull` if the field was added recently.")


class Resolver:
    """Resolves names against a catalog and collects bindings, problems and tables."""

    def __init__(self, sql: str, catalog: Catalog, param_count: int,
                 visit: Callable[[Any], None] | None = None,
                 visit_skips: set[type] | frozenset[type] = frozenset()) -> None:
        # `visit` sees every expression node the walk reaches, except those of classes in
        # `visit_skips` (the read-only gate rides along, so the tree is walked once).
        self.visit = visit
        self.visit_skips = visit_skips
        self.sql = sql
        self.catalog = catalog
        self.param_count = param_count
        self.problems: list[SqlProblem] = []
        self.resolution = Resolution()
        self.tables: dict[str, Table] = {}
        self._bindings: dict[tuple[int, str, str], ParamBinding] = {}
        self._seen: set[int] = set()
        self._reported: set[tuple[str, str, int | None]] = set()

    # ------------------------------------------------------------------ results

    @property
    def bindings(self) -> tuple[ParamBinding, ...]:
        return tuple(self._bindings.values())

    def run(self, root: Any) -> list[OutputColumn]:
        columns = self.query(root, None, {}, True)
        unknown_table = any(p.code == "SQL_UNKNOWN_TABLE" for p in self.problems)
        if not self.tables and not unknown_table:
            names = ", ".join(f'"{n}"' for n in self.catalog.table_names[:8]) or "none"
            self.problems.append(SqlProblem(
                "SQL_NO_BOUND_TABLE",
                "main.sql reads no table of the catalog: a Database Function must query at "
                "least one bound table.",
                f"Select FROM a bound table (catalog tables: {names}).", 1, 1))
        return columns

    def problem(self, code: str, message: str, fix: str, node: Any) -> None:
        offset = node_offset(node)
        key = (code, message, offset)
        if key in self._reported:
            return
        self._reported.add(key)
        line, column = line_column(self.sql, offset) if offset is not None else (None, None)
        self.problems.append(SqlProblem(code, message, fix, line, column))

    # ------------------------------------------------------------------ queries

    def query(self, node: Any, outer: Scope | None, ctes: dict[str, Cte], conj: bool,
              pending: Cte | None = None) -> list[OutputColumn]:
        if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Query):
            columns = self.query(node.this, outer, ctes, conj, pending)
            self._tail(node, outer, ctes, columns)
            return columns
        if isinstance(node, exp.Select):
            return self.select(node, outer, ctes, conj)
        if isinstance(node, exp.SetOperation):
            return self.set_operation(node, outer, ctes, conj, pending)
        if isinstance(node, exp.Values):
            return self.values(node, outer, ctes)
        self.expr(node, Scope(outer, ctes), False)
        return []

    def with_clause(self, with_: Any, outer: Scope | None, ctes: dict[str, Cte],
                    conj: bool) -> dict[str, Cte]:
        def define(cte: CteDefinition, visible: dict[str, Cte]) -> Cte:
            # A recursive CTE reads itself while its columns are still being found: its
            # entry has the column list's names until the first branch gives them all.
            names = list(cte.column_names)
            entry = Cte(cte.name, [OutputColumn(n) for n in names] if names else None)
            if cte.recursive:
                visible[entry.name] = entry
            columns = self.query(cte.body, outer, visible, conj,
                                 entry if cte.recursive else None)
            entry.columns = rename(columns, names)
            return entry

        return bind_ctes(with_, ctes, define)

    def set_operation(self, node: Any, outer: Scope | None, ctes: dict[str, Cte],
                      conj: bool, pending: Cte | None) -> list[OutputColumn]:
        ctes = self.with_clause(node.args.get("with_"), outer, ctes, conj)
        _, branches = set_operation_parts(node)
        result: list[OutputColumn] | None = None
        for branch in branches:
            columns = self.query(branch, outer, ctes, conj)
            if result is None:
                result = list(columns)
                if pending is not None and pending.columns is None:
                    pending.columns = list(result)
                continue
            # A result column keeps its source field only when every branch agrees.
            for i, col in enumerate(result):
                other = columns[i] if i < len(columns) else None
                if col.field is not None and (other is None or other.field != col.field
                                              or other.table != col.table):
                    result[i] = OutputColumn(col.name)
        columns = result or []
        self._tail(node, outer, ctes, columns)
        return columns

    def _tail(self, node: Any, outer: Scope | None, ctes: dict[str, Cte],
              columns: list[OutputColumn]) -> None:
        scope = Scope(outer, ctes)
        for key in ("order", "limit", "offset"):
            value = node.args.get(key)
            if isinstance(value, exp.Expression):
                self.expr(value, scope, False, "first", columns)

    def values(self, node: Any, outer: Scope | None,
               ctes: dict[str, Cte]) -> list[OutputColumn]:
        self.expr(node, Scope(outer, ctes), False)
        rows = node.expressions
        width = len(rows[0].expressions) if rows and isinstance(rows[0], exp.Tuple) else 1
        return [OutputColumn(f"column{i + 1}") for i in range(width)]

    def select(self, sel: Any, outer: Scope | None, ctes: dict[str, Cte],
               conj: bool) -> list[OutputColumn]:
        scope = Scope(outer, self.with_clause(sel.args.get("with_"), outer, ctes, conj))
        from_ = sel.args.get("from_")
        if from_ is not None:
            self.add_source(from_.this, scope, conj)
        for join in sel.args.get("joins") or ():
            self.join(join, scope, conj)
        columns = self.projections(sel, scope, conj)
        for key, value in sel.args.items():
            if key in _SELECT_HANDLED or value is None:
                continue
            mode = _ALIAS_MODES.get(key)
            for item in value if isinstance(value, list) else [value]:
                if not isinstance(item, exp.Expression):
                    continue
                if isinstance(item, (exp.Where, exp.Having)):
                    self.expr(item.this, scope, conj, mode, columns)
                else:
                    self.expr(item, scope, False, mode, columns)
        return columns

    # ------------------------------------------------------------------ FROM items

    def join(self, join: Any, scope: Scope, conj: bool) -> None:
        if self.visit is not None:
            self.visit(join)
        self.add_source(join.this, scope, conj)
        if join.args.get("using"):
            self.using(join, scope)
        elif str(join.args.get("method") or "").upper() == "NATURAL":
            self.natural(join, scope)
        if join.args.get("on") is not None:
            self.expr(join.args["on"], scope, conj)

    def add_source(self, node: Any, scope: Scope, conj: bool) -> None:
        alias_node = node.args.get("alias")
        alias = alias_node.name if alias_node is not None else ""
        alias_columns = ([c.name for c in alias_node.columns]
                         if isinstance(alias_node, exp.TableAlias) else [])
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            scope.sources.append(self.table_source(node, scope, alias, alias_columns))
            for join in node.args.get("joins") or ():  # FROM (a JOIN b ON …)
                self.join(join, scope, conj)
        elif (isinstance(node, exp.Subquery) and isinstance(node.this, exp.Table)
              and alias_node is None):
            self.add_source(node.this, scope, conj)
        elif isinstance(node, exp.Subquery) and isinstance(node.this, exp.Query):
            outer = scope if node.args.get("lateral") else scope.parent
            columns = self.query(node.this, outer, scope.ctes, conj)
            scope.sources.append(Source(alias, columns=rename(columns, alias_columns)))
        elif isinstance(node, exp.Values):
            columns = self.values(node, scope.parent, scope.ctes)
            scope.sources.append(Source(alias, columns=rename(columns, alias_columns)))
        else:  # LATERAL, parenthesized joins, table functions: columns unknown
            self.expr(node, scope, False)
            scope.sources.append(Source(alias))

    def table_source(self, node: Any, scope: Scope, alias: str,
                     alias_columns: list[str]) -> Source:
        if self.visit is not None:
            self.visit(node)
        name, quoted = str(node.name), is_quoted(node.this)
        if node.args.get("db") is not None or node.args.get("catalog") is not None:
            self.problem("SQL_UNKNOWN_TABLE",
                         f'Unknown table "{node.sql(dialect="postgres")}": schema-qualified '
                         "names are not supported; name bound tables directly.",
                         TABLE_FIX, node)
            return Source(alias or name)
        cte = scope.ctes.get(name)
        if cte is None and not quoted:
            folded = [c for k, c in scope.ctes.items() if k.casefold() == name.casefold()]
            cte = folded[0] if len(folded) == 1 else None
        if cte is not None:
            self.resolution.sources[id(node)] = SourceRef(alias or cte.name, cte_name=cte.name)
            columns = None if cte.columns is None else rename(cte.columns, alias_columns)
            return Source(alias or cte.name, columns=columns)
        table = self.catalog.table(name)
        if table is None and not quoted:
            folded_tables = [t for t in self.catalog.tables
                             if t.name.casefold() == name.casefold()]
            table = folded_tables[0] if len(folded_tables) == 1 else None
        if table is None:
            self.problem("SQL_UNKNOWN_TABLE",
                         f'Unknown table "{name}": the catalog has no table of that name or '
                         f"id.{did_you_mean(name, self.catalog.table_names)}",
                         TABLE_FIX, node)
            return Source(alias or name)
        self.tables.setdefault(table.table_id, table)
        self.resolution.sources[id(node)] = SourceRef(alias or name, table=table)
        return Source(alias or name, table=table)

    def using(self, join: Any, scope: Scope) -> None:
        right, left = scope.sources[-1], scope.sources[:-1]
        pairs: list[tuple[ColumnRef, ColumnRef]] = []
        for ident in join.args["using"]:
            name, quoted = str(ident.name), is_quoted(ident)
            left_ref = next((r for s in left if (r := s.find(name, quoted))), None)
            right_ref = right.find(name, quoted)
            opaque = right.opaque or any(s.opaque for s in left)
            if (left_ref is None or right_ref is None) and not opaque:
                side = right.alias if right_ref is None else "the tables on its left"
                self.problem("SQL_UNKNOWN_FIELD",
                             f'JOIN … USING ("{name}"): {side} has no field "{name}".',
                             FIELD_FIX, ident)
            if left_ref is not None and right_ref is not None:
                pairs.append((left_ref, right_ref))
            scope.using.add(name)
        self.resolution.usings[id(join)] = tuple(pairs)

    def natural(self, join: Any, scope: Scope) -> None:
        """NATURAL JOIN: USING the names both sides have (none: a cross join)."""
        right, left = scope.sources[-1], scope.sources[:-1]
        pairs: list[tuple[ColumnRef, ColumnRef]] = []
        for name in right.names():
            left_ref = next((r for s in left if (r := s.find(name, True))), None)
            right_ref = right.find(name, True)
            if left_ref is not None and right_ref is not None:
                pairs.append((left_ref, right_ref))
                scope.using.add(name)
        self.resolution.usings[id(join)] = tuple(pairs)

    # ------------------------------------------------------------------ expressions

    def projections(self, sel: Any, scope: Scope, conj: bool) -> list[OutputColumn]:
        columns: list[OutputColumn] = []
        for proj in sel.expressions:
            if isinstance(proj, exp.Star) or (isinstance(proj, exp.Column)
                                              and isinstance(proj.this, exp.Star)):
                items = self.expand_star(proj, scope)
                self.resolution.stars[id(proj)] = tuple(items)
                columns.extend(item.column for item in items)
                continue
            self.expr(proj, scope, conj)
            target = strip_casts(proj.this if isinstance(proj, exp.Alias) else proj)
            ref = self.resolution.columns.get(id(target)) if isinstance(
                target, exp.Column) else None
            name = output_name(proj, ref)
            self.resolution.names[id(proj)] = name
            if ref is not None and ref.field is not None:
                columns.append(OutputColumn(name, ref.table, ref.field))
            else:
                columns.append(OutputColumn(name))
        return columns

    def expand_star(self, proj: Any, scope: Scope) -> list[StarColumn]:
        sources = scope.sources
        if isinstance(proj, exp.Column):
            qualifier, quoted = str(proj.table), is_quoted(proj.args.get("table"))
            found = self.find_source(scope, qualifier, quoted)
            if found is None:
                self.unknown_qualifier(proj, qualifier, scope)
                return []
            sources = [found]
        items: list[StarColumn] = []
        for source in sources:
            if source.table is not None:
                items.extend(StarColumn(source.alias, OutputColumn(f.name, source.table, f),
                                        True) for f in source.table.fields)
            else:
                items.extend(StarColumn(source.alias or None, c, False)
                             for c in source.columns or ())
        return items

    def expr(self, root: Any, scope: Scope, conj: bool, alias_mode: str | None = None,
             outputs: list[OutputColumn] | None = None) -> None:
        stack: list[tuple[Any, bool]] = [(root, conj)]
        visit, skips = self.visit, self.visit_skips
        while stack:
            node, provable = stack.pop()
            kind = type(node)
            role = _ROLES.get(kind)
            if role is None:
                role = _role(kind)
            if visit is not None and kind not in skips:
                visit(node)
            if role & _COLUMN:
                self.column(node, scope, alias_mode, outputs)
                continue
            if role & _QUERY:
                self.query(node, scope, scope.ctes, provable)
                continue
            if role & _COMPARISON:
                self.comparison(node, scope, provable, alias_mode, outputs)
            keep = provable and bool(role & _CONNECTIVE)
            into_query = provable and bool(role & _PREDICATE)
            for child in node.iter_expressions():
                stack.append((child, keep or (into_query and isinstance(child, _QUERIES))))

    def comparison(self, node: Any, scope: Scope, provable: bool, alias_mode: str | None,
                   outputs: list[OutputColumn] | None) -> None:
        if isinstance(node, exp.In):
            pairs = [(node.this, value) for value in node.expressions]
        else:
            pairs = [(node.this, node.expression), (node.expression, node.this)]
        for column_side, value_side in pairs:
            column = strip_casts(column_side)
            number = parameter_number(value_side)
            if not isinstance(column, exp.Column) or number is None:
                continue
            ref = self.column(column, scope, alias_mode, outputs)
            if ref is None or ref.field is None or ref.table is None:
                continue
            if 1 <= number <= self.param_count:
                key = (number, ref.table.table_id, ref.field.field_id)
                known = self._bindings.get(key)
                if known is None or (provable and not known.provable):
                    self._bindings[key] = ParamBinding(number - 1, ref.table, ref.field,
                                                       provable)

    def column(self, col: Any, scope: Scope, alias_mode: str | None,
               outputs: list[OutputColumn] | None) -> ColumnRef | None:
        key = id(col)
        if key in self._seen:
            return self.resolution.columns.get(key)
        self._seen.add(key)
        if isinstance(col.this, exp.Star):
            return None
        ref = self._resolve_column(col, scope, alias_mode, outputs)
        if ref is not None:
            self.resolution.columns[key] = ref
        return ref

    def _resolve_column(self, col: Any, scope: Scope, alias_mode: str | None,
                        outputs: list[OutputColumn] | None) -> ColumnRef | None:
        name, quoted = str(col.name), is_quoted(col.this)
        if col.args.get("db") is not None:
            self.problem("SQL_UNKNOWN_TABLE",
                         f'Unknown column reference "{col.sql(dialect="postgres")}": only '
                         "table.field or field is supported.", FIELD_FIX, col)
            return None
        qualifier = str(col.table)
        if qualifier:
            source = self.find_source(scope, qualifier, is_quoted(col.args.get("table")))
            if source is None:
                self.unknown_qualifier(col, qualifier, scope)
                return None
            ref = source.find(name, quoted)
            if ref is None and not source.opaque:
                what = f'table "{source.table.name}"' if source.table else f'"{qualifier}"'
                self.problem("SQL_UNKNOWN_FIELD",
                             f'Unknown field "{name}": {what} has no such column.'
                             f"{did_you_mean(name, source.names())}", FIELD_FIX, col)
            return ref
        if alias_mode == "first" and outputs:
            out = match_column(outputs, name, quoted)
            if out is not None:
                return ColumnRef("output", None, out.name, out.table, out.field)
        current: Scope | None = scope
        opaque = False
        while current is not None:
            matches = [r for s in current.sources if (r := s.find(name, quoted))]
            opaque = opaque or any(s.opaque for s in current.sources)
            if len(matches) > 1 and name not in current.using:
                where = ", ".join(f'"{r.qualifier}"' for r in matches)
                self.problem("SQL_UNKNOWN_FIELD",
                             f'Field "{name}" is ambiguous: it exists in {where}.',
                             f'Qualify it with its table or alias, e.g. "{matches[0].qualifier}"'
                             f'."{name}".', col)
                return None
            if matches:
                return matches[0]
            if current is scope and alias_mode == "fallback" and outputs:
                out = match_column(outputs, name, quoted)
                if out is not None:
                    return ColumnRef("output", None, out.name, out.table, out.field)
            current = current.parent
        if not opaque:
            candidates = [n for s in scope.sources for n in s.names()]
            tables = [s.table for s in scope.sources if s.table is not None]
            where = (f'table "{tables[0].name}" has no field'
                     if len(scope.sources) == 1 and tables else "no table in scope has a field")
            self.problem("SQL_UNKNOWN_FIELD",
                         f'Unknown field "{name}": {where} of that name.'
                         f"{did_you_mean(name, candidates)}", FIELD_FIX, col)
        return None

    def find_source(self, scope: Scope, qualifier: str, quoted: bool) -> Source | None:
        current: Scope | None = scope
        while current is not None:
            for source in current.sources:
                if source.alias == qualifier:
                    return source
            if not quoted:
                folded = [s for s in current.sources
                          if s.alias.casefold() == qualifier.casefold()]
                if len(folded) == 1:
                    return folded[0]
            current = current.parent
        return None

    def unknown_qualifier(self, node: Any, qualifier: str, scope: Scope) -> None:
        aliases: list[str] = []
        current: Scope | None = scope
        while current is not None:
            aliases.extend(s.alias for s in current.sources if s.alias)
            current = current.parent
        shown = ", ".join(f'"{a}"' for a in aliases) or "none"
        self.problem("SQL_UNKNOWN_TABLE",
                     f'"{qualifier}" is not a table or alias in this query\'s FROM (in scope: '
                     f"{shown}).{did_you_mean(qualifier, aliases)}",
                     "Qualify fields with a FROM item's alias (or its table name when it has "
                     "no alias).", node)

