"""Parse a Database Function's SQL as PostgreSQL's, with sqlglot, into one tree or one
problem.

The SQL is tokenized once: the statement count and the leading keyword are judged on
the tokens, so PRAGMA, ATTACH or a second statement never reach the parser. Function
names are hidden from sqlglot (it would merge names PostgreSQL keeps apart) and typed
literals followed by a cast are parenthesized, then the tokens are parsed in the
PostgreSQL dialect. Errors are worded in SQL terms, never in sqlglot's classes, with
the line and column they point at.
"""

from __future__ import annotations

import difflib
import logging
import re
import threading
from typing import Any

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.parser import Parser
from sqlglot.tokens import Token, Tokenizer, TokenType

from basedb.sql.model import SqlProblem, line_column

# sqlglot warns through logging when it falls back to an opaque command; the read-only
# gate reports those statements itself, so keep the warning off the user's terminal.
logging.getLogger("sqlglot").addHandler(logging.NullHandler())

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_STARTS = (TokenType.SELECT, TokenType.WITH, TokenType.L_PAREN)

READ_ONLY_FIX = ("Write exactly one read-only SELECT (WITH … SELECT and UNION / INTERSECT / "
                 "EXCEPT allowed); use a Mutation or FaaS function to change data.")


class _Postgres(threading.local):
    """A PostgreSQL tokenizer and parser, built once per thread (building them costs
    more than tokenizing a typical query); both start afresh on every call."""

    def __init__(self) -> None:
        dialect = Dialect.get_or_raise("postgres")
        self.tokenizer: Tokenizer = dialect.tokenizer()
        self.parser: Parser = dialect.parser(error_level=ErrorLevel.IMMEDIATE)


_POSTGRES = _Postgres()


def parse(sql: str) -> tuple[Any, SqlProblem | None]:
    """The tree of the one statement `sql` holds, or the problem that stops it: a token
    or parse error, several statements, or a statement other than a SELECT."""
    postgres = _POSTGRES
    try:
        tokens = postgres.tokenizer.tokenize(sql)
    except TokenError as error:
        return None, _token_problem(sql, error)
    statements: list[list[Token]] = [[]]
    if ";" not in sql:  # no statement separator (the common case): one statement
        statements = [tokens]
    else:
        for token in tokens:
            if token.token_type == TokenType.SEMICOLON:
                statements.append([])
            else:
                statements[-1].append(token)
    statements = [s for s in statements if s]
    if not statements:
        return None, SqlProblem("SQL_PARSE_ERROR", "main.sql contains no SQL statement "
                                "(only comments).", "Write one SELECT statement.", 1, 1)
    if len(statements) > 1:
        line, column = line_column(sql, statements[1][0].start)
        return None, SqlProblem(
            "SQL_NOT_READ_ONLY", f"main.sql contains {len(statements)} statements; a Database "
            "Function runs exactly one SELECT.", READ_ONLY_FIX, line, column)
    first = statements[0][0]
    if first.token_type == TokenType.IDENTIFIER or (
            first.token_type == TokenType.VAR and first.text.upper() not in _OTHER_STATEMENTS):
        return None, _unknown_word_problem(sql, first)
    if first.token_type not in _STARTS:
        line, column = line_column(sql, first.start)
        return None, SqlProblem(
            "SQL_NOT_READ_ONLY", f"main.sql starts with {first.text.upper()!r}: a Database "
            "Function runs exactly one read-only SELECT.", READ_ONLY_FIX, line, column)
    tokens, renamed = _keep_function_names(statements[0])
    if "::" in sql:  # only a cast can follow a typed literal
        tokens = _parenthesize_typed_literals(tokens)
    try:
        trees = postgres.parser.parse(tokens, sql)
    except ParseError as error:
        return None, _parse_problem(sql, error)
    except RecursionError:
        raise
    except Exception as error:  # sqlglot may fail on hostile input in unplanned ways
        line, column = line_column(sql, first.start)
        return None, SqlProblem("SQL_PARSE_ERROR", f"main.sql could not be parsed "
                                f"({type(error).__name__}).", "Check the SQL syntax.",
                                line, column)
    tree = trees[0] if trees else None
    if tree is not None and renamed:
        _restore_function_names(tree)
    if not _is_select(tree):
        kind = type(tree).__name__.upper() if tree is not None else "nothing"
        line, column = line_column(sql, first.start)
        return None, SqlProblem("SQL_NOT_READ_ONLY", f"main.sql is a {kind} statement, not a "
                                "SELECT.", READ_ONLY_FIX, line, column)
    return tree, None


# sqlglot maps function names to its own classes, merging names PostgreSQL keeps apart
# (date_part and extract, log10 and log) and accepting other dialects' names (ifnull,
# nvl) as if they were PostgreSQL's. Function names are therefore hidden from it: each
# call parses as an anonymous function under the name it was written with, which the
# typer then judges against PostgreSQL's own function table. Only calls with a syntax of
# their own (extract(… FROM …), substring(… FROM … FOR …), position(… IN …), trim(…
# FROM …), CAST) and the platform's CURRENT_USER_ID() keep sqlglot's parsing.
_KEEP = "#keep"
_SYNTAX_FUNCTIONS = frozenset({"extract", "substring", "position", "trim", "overlay", "cast",
                               "current_user_id"})
_NAMED_TOKENS = frozenset({TokenType.VAR, TokenType.REPLACE, TokenType.LEFT,
                           TokenType.RIGHT, TokenType.FORMAT})


# A typed literal followed by a cast (DATE '2024-02-29'::timestamp) is the literal cast;
# sqlglot would cast the string first and build the literal of that (a date), so the
# literal is parenthesized before parsing.
_LITERAL_TYPES = frozenset({TokenType.DATE, TokenType.TIMESTAMP, TokenType.TIMESTAMPTZ,
                            TokenType.INTERVAL, TokenType.INT, TokenType.BIGINT,
                            TokenType.DECIMAL, TokenType.TEXT, TokenType.BOOLEAN,
                            TokenType.JSONB, TokenType.DOUBLE, TokenType.VARCHAR})


def _parenthesize_typed_literals(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if (token.token_type in _LITERAL_TYPES and index + 2 < len(tokens)
                and tokens[index + 1].token_type == TokenType.STRING
                and tokens[index + 2].token_type == TokenType.DCOLON):
            literal = tokens[index + 1]
            out += [Token(TokenType.L_PAREN, "(", token.line, token.col, token.start,
                          token.start, []), token, literal,
                    Token(TokenType.R_PAREN, ")", literal.line, literal.col, literal.end,
                          literal.end, [])]
            index += 2
            continue
        out.append(token)
        index += 1
    return out


def _keep_function_names(tokens: list[Token]) -> tuple[list[Token], bool]:
    """The tokens with each function name marked, and whether any was: the tree of a
    query that calls no function needs no walk to restore names."""
    out = list(tokens)
    renamed = False
    for index in range(len(out) - 1):
        token = out[index]
        if (token.token_type in _NAMED_TOKENS
                and out[index + 1].token_type == TokenType.L_PAREN
                and token.text.lower() not in _SYNTAX_FUNCTIONS
                and (index == 0 or out[index - 1].token_type != TokenType.DOT)):
            out[index] = Token(token.token_type, token.text + _KEEP, token.line, token.col,
                               token.start, token.end, token.comments)
            renamed = True
    return out, renamed


def _restore_function_names(tree: Any) -> None:
    for node in tree.walk():
        value = node.args.get("this")
        if isinstance(value, str) and value.endswith(_KEEP):
            node.set("this", value[:-len(_KEEP)])


def _unknown_word_problem(sql: str, first: Token) -> SqlProblem:
    """A statement that opens with a word SQL does not know (`SELEC`) is misspelt, not a
    write: say which word, and the keyword it is closest to."""
    line, column = line_column(sql, first.start)
    word = first.text
    near = difflib.get_close_matches(word.upper(), _STATEMENT_KEYWORDS, n=1, cutoff=0.6)
    meant = f"; did you mean {near[0]}?" if near else "."
    what = (f"the quoted name \"{word}\"" if first.token_type == TokenType.IDENTIFIER
            else f"{word!r}, which is not an SQL keyword")
    return SqlProblem(
        "SQL_PARSE_ERROR", f"main.sql starts with {what}{meant}",
        f"Start the statement with {near[0] if near else 'SELECT'}; a "
        "Database Function runs exactly one SELECT (WITH … SELECT allowed).", line, column)


_STATEMENT_KEYWORDS = ("SELECT", "WITH")
# Statements of PostgreSQL or SQLite that the PostgreSQL tokenizer reads as plain words:
# they are writes or commands (SQL_NOT_READ_ONLY), not misspellings.
_OTHER_STATEMENTS = frozenset({
    "ABORT", "ANALYSE", "ANALYZE", "ATTACH", "CALL", "CHECKPOINT", "CLOSE", "CLUSTER",
    "DEALLOCATE", "DETACH", "DISCARD", "DO", "END", "IMPORT", "LISTEN", "LOAD", "LOCK",
    "MOVE", "NOTIFY", "PREPARE", "REASSIGN", "REINDEX", "RELEASE", "REPLACE", "RESET",
    "SAVEPOINT", "SECURITY", "START", "UNLISTEN", "UPSERT", "VACUUM",
})


def _is_select(tree: Any) -> bool:
    while isinstance(tree, exp.Subquery):
        tree = tree.this
    return isinstance(tree, (exp.Select, exp.SetOperation))


def _token_problem(sql: str, error: TokenError) -> SqlProblem:
    start = getattr(error, "start", None)
    end = getattr(error, "end", None)
    # The tokenizer quotes sql[start:end] centred (50 characters each side) on the
    # failure, unless clipped at the start or end of the text.
    if isinstance(start, int) and start > 0:
        offset = start + 50
    elif isinstance(end, int) and end < len(sql) - 1:
        offset = max(0, end - 50)
    else:
        offset = len(sql)
    line, column = line_column(sql, min(offset, len(sql)))
    return SqlProblem("SQL_PARSE_ERROR", "main.sql could not be tokenized near line "
                      f"{line}: look for an unterminated string, quoted name or comment.",
                      "Close every '…' string, \"…\" name and /* … */ comment.", line, column)


def _parse_problem(sql: str, error: ParseError) -> SqlProblem:
    detail = error.errors[0] if error.errors else {}
    description = _plain_description(
        _ANSI.sub("", str(detail.get("description") or error)).split("\n")[0])
    highlight = _ANSI.sub("", str(detail.get("highlight") or ""))
    before = _ANSI.sub("", str(detail.get("start_context") or ""))
    offset = _locate(sql, before, highlight)
    line, column = line_column(sql, offset) if offset is not None else (
        detail.get("line"), detail.get("col"))
    near = f" near {highlight[:40]!r}" if highlight else ""
    return SqlProblem("SQL_PARSE_ERROR", f"main.sql could not be parsed: {description}{near}.",
                      "Fix the SQL syntax (PostgreSQL dialect; quote names with \"…\").",
                      line, column)


# sqlglot words some errors in terms of its own classes and token objects.
_MISSING_PART = re.compile(r"Required keyword: '\w+' missing for <class '(?:\w+\.)*(\w+)'>")
_TOKEN_REPR = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+, "
                         r"col: \d+, start: \d+, end: \d+, comments: \[.*?\]>")
_CLASS_REPR = re.compile(r"<class '(?:\w+\.)*(\w+)'>")
_CONSTRUCTS = {"Order": "ORDER BY", "Group": "GROUP BY", "EQ": "'='", "NEQ": "'<>'",
               "GT": "'>'", "GTE": "'>='", "LT": "'<'", "LTE": "'<='", "Add": "'+'",
               "Sub": "'-'", "Mul": "'*'", "Div": "'/'", "Mod": "'%'", "DPipe": "'||'",
               "CTE": "WITH"}


def _plain_description(description: str) -> str:
    """sqlglot's error description in SQL terms: "incomplete WHERE" rather than
    "Required keyword: 'this' missing for <class 'sqlglot.expressions.query.Where'>"."""
    missing = _MISSING_PART.fullmatch(description.rstrip("."))
    if missing:
        name = missing.group(1)
        return f"incomplete {_CONSTRUCTS.get(name, name.upper())}: an expression is missing"

    def token(match: re.Match[str]) -> str:
        kind, text = match.groups()
        return "the end of the query" if kind in ("SENTINEL", "EOF") else repr(text)

    description = _TOKEN_REPR.sub(token, description)
    return _CLASS_REPR.sub(lambda match: match.group(1).upper(), description)


def _locate(sql: str, before: str, highlight: str) -> int | None:
    # sqlglot's own line/column can drift after `$n` tokens; find the quoted context.
    if not highlight:
        return len(before) if sql.startswith(before) else None
    position = sql.find(highlight)
    while position >= 0:
        if sql[max(0, position - len(before)):position] == before:
            return position
        position = sql.find(highlight, position + 1)
    return None
