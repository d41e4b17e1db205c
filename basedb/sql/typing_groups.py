"""PostgreSQL's rules for grouped queries, DISTINCT and positions, as the typer applies
them: a column selected (or in HAVING or ORDER BY) must be grouped, inside an aggregate,
or of a table whose record_id is grouped; aggregates and windows are not allowed in WHERE,
ON or GROUP BY; DISTINCT needs ORDER BY on selected expressions and DISTINCT ON leads
ORDER BY; a constant in GROUP BY, ORDER BY or DISTINCT ON is a position of the select
list, or an error; LIMIT and OFFSET take a count that is never negative.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from basedb.sql import pgtypes as T
from basedb.sql.functions import FUNCTIONS
from basedb.sql.model import ColumnRef, Resolution
from basedb.sql.typing_base import ANY, QUERIES, function_name, is_windowed
from basedb.sql.typing_expr import ExpressionTyper


class GroupingRules(ExpressionTyper):
    """The grouping half of `typing.Typer`; see the module docstring."""

    resolution: Resolution
    keys: dict[int, Any]  # key() of each node met, by id
    bounds: dict[int, str]  # node id of a LIMIT / OFFSET value -> "limit" / "offset"
    bound_params: set[int]  # the $n written as a LIMIT or OFFSET

    def constant_item(self, item: Any, clause: str, width: int) -> bool:
        """A constant in GROUP BY / ORDER BY / DISTINCT ON is a position of the select
        list, or an error as in PostgreSQL; False when it was reported."""
        inner, sign = item, 1
        if isinstance(inner, exp.Neg) and isinstance(inner.this, exp.Literal):
            inner, sign = inner.this, -1
        if isinstance(inner, exp.Literal) and not inner.is_string and str(
                inner.this).isdigit():
            position = sign * int(str(inner.this))
            if 1 <= position <= width:
                return True
            self.invalid(f"{clause} position {position} is not in select list", item,
                         f"Use a position from 1 to {width}, or name the column.")
            return False
        if isinstance(inner, (exp.Literal, exp.Boolean, exp.Null)):
            self.invalid(f"non-integer constant in {clause}", item,
                         "Name a column or an expression; a constant changes nothing.")
            return False
        return True

    def is_aggregate(self, node: Any) -> bool:
        if isinstance(node, exp.Filter) and not isinstance(node.parent, exp.Window):
            node = node.this
        if not isinstance(node, exp.Anonymous) or is_windowed(node):
            return False
        spec = FUNCTIONS.get(function_name(node))
        return spec is not None and spec.kind == "aggregate"

    def level_nodes(self, root: Any) -> list[Any]:
        """Nodes of one query level under `root`: subqueries are not entered."""
        out, stack = [], [root]
        while stack:
            node = stack.pop()
            out.append(node)
            if node is not root and isinstance(node, QUERIES):
                continue
            stack.extend(node.iter_expressions())
        return out

    def no_aggregates(self, root: Any, where: str, typed: int | None = None) -> None:
        """Report an aggregate or window call at `root`'s level. `typed`: the typer's
        `suspects` before `root` was typed; when typing it met no call (and `root` is
        not a subquery, whose own level typing does not enter), there is none."""
        if typed == self.suspects and not isinstance(root, QUERIES):
            return
        for node in self.level_nodes(root):
            if self.is_aggregate(node):
                self.invalid(f"aggregate functions are not allowed in {where}", node,
                             "Filter groups with HAVING, or aggregate in a subquery.")
                return
            if isinstance(node, exp.Window):
                self.invalid(f"window functions are not allowed in {where}", node,
                             "Compute the window in a subquery and filter outside it.")
                return

    def no_output_names(self, root: Any, where: str) -> None:
        for node in self.level_nodes(root):
            ref = self.resolution.columns.get(id(node)) if isinstance(node, exp.Column) \
                else None
            if ref is not None and ref.kind == "output":
                self.invalid(f'column "{ref.name}" does not exist ({where} cannot use an '
                             "output column name)", node, "Repeat the expression instead of "
                             "its alias.")
                return

    def has_aggregates(self, sel: Any) -> bool:
        """Whether the select list or ORDER BY of `sel` calls an aggregate at its own
        level (one walk, which stops at the first)."""
        roots = list(sel.expressions)
        if sel.args.get("order") is not None:
            roots.append(sel.args["order"])
        for root in roots:
            stack = [root]
            while stack:
                node = stack.pop()
                if isinstance(node, (exp.Anonymous, exp.Filter)) and self.is_aggregate(node):
                    return True
                if node is not root and isinstance(node, QUERIES):
                    continue
                stack.extend(node.iter_expressions())
        return False

    def group_target(self, item: Any, sel: Any) -> Any:
        """The expression a GROUP BY item stands for (a position or an output name
        means that projection)."""
        if isinstance(item, exp.Literal) and not item.is_string and str(item.this).isdigit():
            index = int(str(item.this)) - 1
            if 0 <= index < len(sel.expressions):
                proj = sel.expressions[index]
                return proj.this if isinstance(proj, exp.Alias) else proj
            self.invalid(f"GROUP BY position {item.this} is not in select list", item)
            return item
        ref = self.resolution.columns.get(id(item)) if isinstance(item, exp.Column) else None
        if ref is not None and ref.kind == "output":
            for proj in sel.expressions:
                if self.resolution.names.get(id(proj)) == ref.name:
                    return proj.this if isinstance(proj, exp.Alias) else proj
        return item

    def grouping(self, sel: Any, grouped: list[Any]) -> None:
        keys = {self.key(item) for item in grouped}
        whole = {ref.qualifier for item in grouped
                 if (ref := self.resolution_ref(item)) is not None and ref.kind == "field"
                 and ref.name == "record_id"}
        roots = [p.this if isinstance(p, exp.Alias) else p for p in sel.expressions]
        for key in ("having", "order"):
            if sel.args.get(key) is not None:
                roots.append(sel.args[key])
        for root in roots:
            problem = self.ungrouped(root, keys, whole, sel)
            if problem is not None:
                ref = self.resolution.columns.get(id(problem))
                name = ref.name if ref is not None else problem.sql(dialect="postgres")
                self.invalid(f'column "{name}" must appear in the GROUP BY clause or be used '
                             "in an aggregate function", problem,
                             f'Add "{name}" to GROUP BY, or aggregate it (e.g. max(…)).')
                return

    def ungrouped(self, root: Any, keys: set[Any], whole: set[str | None], sel: Any) -> Any:
        stack = [root]
        while stack:
            node = stack.pop()
            if self.key(node) in keys or self.is_aggregate(node):
                continue
            if isinstance(node, QUERIES):
                continue
            if isinstance(node, exp.Column):
                ref = self.resolution.columns.get(id(node))
                if ref is None or ref.kind == "output":
                    continue
                if not self.is_local(ref, sel) or ref.qualifier in whole:
                    continue
                return node
            stack.extend(node.iter_expressions())
        return None

    def is_local(self, ref: ColumnRef, sel: Any) -> bool:
        """Whether a column reference names a FROM item of this SELECT (not an outer one)."""
        from_ = sel.args.get("from_")
        items = [from_.this] if from_ is not None else []
        items += [join.this for join in sel.args.get("joins") or ()]
        for item in items:
            for inner in [item, *(j.this for j in item.args.get("joins") or ())]:
                alias = inner.alias_or_name if hasattr(inner, "alias_or_name") else ""
                source = self.resolution.sources.get(id(inner))
                if source is not None:
                    alias = source.alias
                if alias and ref.qualifier and alias.casefold() == ref.qualifier.casefold():
                    return True
                if not alias and not ref.qualifier:
                    return True
        return False

    def key(self, node: Any) -> Any:
        """A structural key of an expression, names resolved (for GROUP BY matching);
        kept per node, as the rules ask again for the keys of a key's parts."""
        while isinstance(node, exp.Paren):
            node = node.this
        if not isinstance(node, exp.Expression):
            return node
        known = self.keys.get(id(node))
        if known is None:
            known = self.keys[id(node)] = self._key(node)
        return known

    def _key(self, node: Any) -> Any:
        if isinstance(node, exp.Column):
            ref = self.resolution.columns.get(id(node))
            if ref is not None:
                return ("column", ref.kind, (ref.qualifier or "").casefold(), ref.name)
        parts: list[tuple[str, Any]] = []
        for name, value in sorted(node.args.items()):
            if isinstance(value, list):
                parts.append((name, tuple(self.key(v) for v in value)))
            elif isinstance(value, exp.Expression):
                parts.append((name, self.key(value)))
            elif value is not None:
                parts.append((name, value if isinstance(value, (str, int, bool)) else str(
                    value)))
        return (type(node).__name__, tuple(parts))

    def distinct_order(self, sel: Any, distinct: Any, on: Any, order: Any) -> None:
        projections = [p.this if isinstance(p, exp.Alias) else p for p in sel.expressions]
        keys = {self.key(p) for p in projections}
        items = list(order.expressions)
        if on is not None:
            leading = on.expressions if isinstance(on, exp.Tuple) else [on]
            for index, item in enumerate(leading):
                target = self.group_target(items[index].this, sel) if index < len(
                    items) else None
                if target is None or self.key(target) != self.key(self.group_target(
                        item, sel)):
                    self.invalid("SELECT DISTINCT ON expressions must match initial ORDER BY "
                                 "expressions", item, "Start ORDER BY with the DISTINCT ON "
                                 "expressions, in the same order.")
                    return
            return
        if any(isinstance(p, exp.Star) for p in sel.expressions):
            return
        for item in items:
            target = self.group_target(item.this, sel)
            ref = self.resolution_ref(item.this)
            if ref is not None and ref.kind == "output":
                continue
            if self.key(target) not in keys:
                self.invalid("for SELECT DISTINCT, ORDER BY expressions must appear in select "
                             "list", item, "Select the expression too, or order by a "
                             "selected column.")
                return

    def limits(self, node: Any, scope: Any) -> None:
        """LIMIT and OFFSET (or FETCH FIRST): a count that is a constant 0 or more, NULL,
        or a parameter, which binds as a bigint."""
        for key, word in (("limit", "LIMIT"), ("offset", "OFFSET")):
            clause = node.args.get(key)
            if clause is None:
                continue
            if isinstance(clause, exp.Fetch):
                if clause.args.get("percent") or clause.args.get("with_ties"):
                    self.unsupported("limit_expression", "FETCH … PERCENT / WITH TIES", clause)
                    continue
                value = clause.args.get("count")
            else:
                value = clause.args.get("expression") if isinstance(
                    clause, (exp.Limit, exp.Offset)) else clause
            if value is None:
                continue
            self.expr(value, scope)
            self.bound(value, key, word)

    def bound(self, value: Any, key: str, word: str) -> None:
        inner = value
        while isinstance(inner, (exp.Paren, exp.Cast)):
            inner = inner.this
        if isinstance(inner, exp.Neg) and isinstance(inner.this, exp.Literal):
            self.invalid(f"{word} must not be negative", value, f"Write {word} 0 or more.")
            return
        if isinstance(inner, exp.Null):
            self.bounds[id(value)] = key
            return
        if isinstance(inner, exp.Literal) and not inner.is_string and str(
                inner.this).isdigit():
            return
        if isinstance(inner, exp.Parameter):
            found = self.t(inner)
            if found == T.UNKNOWN:
                self.coerce(inner, T.INT8, word)
            elif found not in (ANY, T.INT8, T.INT4, T.FLOAT8, T.NUMERIC):
                self.invalid(f"argument of {word} must be type bigint, not type "
                             f"{T.describe(found)}", value, "Declare the parameter INT.")
                return
            self.bounds[id(value)] = key
            self.bound_params.add(int(str(inner.this.this)))
            return
        self.unsupported("limit_expression", f"{word} {value.sql(dialect='postgres')}", value)
