"""Compile an analysed Database Function into one SQLite statement for the local platform.

    analysis = analyze_sql(sql, catalog, len(params), param_kinds=kinds)
    compiled = compile_for_sqlite(analysis, catalog, timezone="Asia/Shanghai")

The result (`basedb.sql.sqlite.query.CompiledQuery`) runs with PostgreSQL's semantics in the site's
time zone; run it as `basedb.sql.sqlite.query` says.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from basedb.platform.storage import physical
from basedb.platform.storage.sql_rewrite import Rewriter
from basedb.sql.model import SqlAnalysis
from basedb.sql.sqlite.query import CompiledQuery, CompileError, Slot
from basedb.workspace.model import Catalog

DEFAULT_TIMEZONE = "UTC"


def compile_for_sqlite(analysis: SqlAnalysis, catalog: Catalog, *,
                       timezone: str = DEFAULT_TIMEZONE) -> CompiledQuery:
    """Rewrite an analysed query (no problems, names resolved, typed) into SQLite, for a
    site whose time zone is `timezone` (an IANA name).

    Raises CompileError when the query is not compilable: it has problems, or was
    analysed without a catalog.
    """
    if analysis.problems or not analysis.resolved or analysis.tree is None:
        raise CompileError("Only a query that analysed without problems against the catalog "
                           "can be compiled; run `basedb check` for details.")
    marker = "__bdb_p"
    while marker in analysis.sql:  # a marker must never occur in the author's text
        marker += "_"
    tables = frozenset(physical.table_name(t.table_id) for t in analysis.tables)
    try:
        rewriter = Rewriter(analysis, marker, timezone)
        tree = rewriter.run()
        _check_tables(tree, tables | set(rewriter.cte_names.values()))
        text = tree.sql(dialect="sqlite", unsupported_level=ErrorLevel.RAISE)
    except RecursionError:
        raise CompileError("The query is nested too deeply to compile.") from None
    except SqlglotError as error:
        raise CompileError(f"The query uses SQL the local platform cannot run: "
                           f"{str(error).splitlines()[0]}") from None
    slots: list[Slot] = []
    conversions: list[str] = []

    def to_question_mark(match: re.Match[str]) -> str:
        tag = match.group(1)
        if tag == "u":
            slots.append("current_user")
            conversions.append("text")
        elif tag == "now":
            slots.append("now")
            conversions.append(tag)
        elif tag == "today":
            slots.append("today")
            conversions.append(tag)
        else:
            number, _, _ = tag.partition("x")
            slots.append(int(number))
            conversions.append(rewriter.slot_types.get(marker + tag, ""))
        return "?"

    sql = re.sub(rf":{re.escape(marker)}(\d+x\d+|u|now|today)\b", to_question_mark, text)
    return CompiledQuery(sql=sql, slots=tuple(slots), columns=analysis.columns, tables=tables,
                         ctes=frozenset(rewriter.cte_names.values()),
                         conversions=tuple(conversions), timezone=timezone)


def _check_tables(tree: Any, allowed: set[str] | frozenset[str]) -> None:
    """Every table the statement names must be physical, a CTE, a derived table or
    json_each."""
    for node in tree.walk():
        if not isinstance(node, exp.Table):
            continue
        if isinstance(node.this, exp.Anonymous) and str(node.this.this).lower() == "json_each":
            continue
        if isinstance(node.this, exp.Identifier) and node.name in allowed and not (
                node.args.get("db") or node.args.get("catalog")):
            continue
        raise CompileError(f"The compiled query would read {node.sql()!r}, which is not a "
                           "bound table of the query (parenthesized joins are not supported "
                           "on the local platform; write the joins without parentheses).")
