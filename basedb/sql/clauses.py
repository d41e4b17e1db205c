"""Clauses that sqlglot parses although PostgreSQL rejects them, and that would not run as
written: an empty `GROUP BY` (SQLite fails on it at invoke time) and a `JOIN` without
`ON` or `USING` (sqlglot quietly turns it into a cross join, so a half-written join
returns every row paired with every row).

The parse tree cannot tell `FROM a JOIN b` from `FROM a, b`, so a suspicious join is
judged on the tokens in front of the joined table. Both checks run only for the rare
trees that have such a node, and never report what they cannot place.
"""

from __future__ import annotations

from typing import Any

from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

from basedb.sql.model import SqlProblem, line_column, node_offset

JOIN_FIX = ("Add ON <condition> after the joined table (or USING (<column>, …)); write "
            "CROSS JOIN if every combination of rows is really meant.")
GROUP_BY_FIX = "List the columns or expressions to group by after GROUP BY, or remove it."

# Tokens that may stand between JOIN (or a comma) and the first positioned token of the
# joined item: `JOIN LATERAL ((SELECT DISTINCT …`.
_LEADING = frozenset({TokenType.L_PAREN, TokenType.LATERAL, TokenType.SELECT,
                      TokenType.DISTINCT, TokenType.ALL})
# What may follow GROUP BY when it lists nothing.
_AFTER_EMPTY_GROUP_BY = frozenset({TokenType.R_PAREN, TokenType.HAVING, TokenType.ORDER_BY,
                                   TokenType.LIMIT, TokenType.OFFSET, TokenType.WINDOW,
                                   TokenType.UNION, TokenType.EXCEPT, TokenType.INTERSECT,
                                   TokenType.FETCH})


def join_without_condition(node: Any) -> bool:
    """Whether a Join node has nothing that says which rows match (a comma join too)."""
    return not (node.args.get("on") or node.args.get("using")
                or node.args.get("kind") == "CROSS" or node.args.get("method"))


def empty_group_by(node: Any) -> bool:
    return not any(node.args.values())


def incomplete_clause_problems(sql: str, joins: list[Any], groups: list[Any],
                               ) -> list[SqlProblem]:
    """Problems for the suspicious Join and empty Group nodes the gate collected."""
    tokens = Dialect.get_or_raise("postgres").tokenize(sql)
    problems: list[SqlProblem] = []
    for join in joins:
        keyword = _join_keyword(tokens, node_offset(join.this))
        if keyword is not None:
            problems.append(SqlProblem(
                "SQL_PARSE_ERROR", "JOIN has no join condition: without ON or USING it "
                "would pair every row with every row of the joined table.", JOIN_FIX,
                *line_column(sql, keyword.start)))
    if groups:
        problems.append(SqlProblem("SQL_PARSE_ERROR", "GROUP BY lists nothing to group by.",
                                   GROUP_BY_FIX, *_empty_group_by_position(sql, tokens)))
    return problems


def _join_keyword(tokens: list[Token], offset: int | None) -> Token | None:
    """The JOIN token in front of the joined item starting at `offset`; None for a comma
    join or when the item cannot be placed."""
    index = next((i for i, token in enumerate(tokens) if token.start == offset), None)
    if index is None:
        return None
    while index > 0 and tokens[index - 1].token_type in _LEADING:
        index -= 1
    if index > 0 and tokens[index - 1].token_type == TokenType.JOIN:
        return tokens[index - 1]
    return None


def _empty_group_by_position(sql: str, tokens: list[Token]) -> tuple[int | None, int | None]:
    group_bys = [i for i, token in enumerate(tokens) if token.token_type == TokenType.GROUP_BY]
    for i in group_bys:
        if i + 1 == len(tokens) or tokens[i + 1].token_type in _AFTER_EMPTY_GROUP_BY:
            return line_column(sql, tokens[i].start)
    return line_column(sql, tokens[group_bys[0]].start) if group_bys else (None, None)
