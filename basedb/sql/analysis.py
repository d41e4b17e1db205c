"""Analyse a Database Function's SQL: parse, read-only gate, names, parameters, bindings.

`analyze_sql` is pure (no I/O) and never raises on bad SQL: every problem becomes a
`SqlProblem` with a line and column. Tokenize once (statement count and leading keyword
are judged on tokens, so PRAGMA or ATTACH never reach the parser), parse the tokens
(PostgreSQL dialect), then walk the tree once: the resolver (`resolve.py`) resolves
names against the catalog while the read-only gate below rides along, refusing writes,
locks and unsafe functions and collecting `$n` placeholders. sqlglot's optimizer is
deliberately not used: it costs several times a parse.
"""

from __future__ import annotations

import difflib
import logging
import re
import threading
from collections.abc import Sequence
from typing import Any

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.parser import Parser
from sqlglot.tokens import Token, Tokenizer, TokenType

from basedb.sql import clauses, functions
from basedb.sql.model import (
    OutputColumn,
    SqlAnalysis,
    SqlProblem,
    line_column,
    node_offset,
)
from basedb.sql.pgtypes import field_type
from basedb.sql.resolve import Resolver
from basedb.sql.scope import is_all_call
from basedb.sql.typing import Typer
from basedb.workspace.files import LIMIT_SQL
from basedb.workspace.model import Catalog

# sqlglot warns through logging when it falls back to an opaque command; the read-only
# gate reports those statements itself, so keep the warning off the user's terminal.
logging.getLogger("sqlglot").addHandler(logging.NullHandler())

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_STARTS = (TokenType.SELECT, TokenType.WITH, TokenType.L_PAREN)

READ_ONLY_FIX = ("Write exactly one read-only SELECT (WITH … SELECT and UNION / INTERSECT / "
                 "EXCEPT allowed); use a Mutation or FaaS function to change data.")
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
        tree, problem = _parse(sql)
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


# --------------------------------------------------------------------------- parsing


class _Postgres(threading.local):
    """A PostgreSQL tokenizer and parser, built once per thread (building them costs
    more than tokenizing a typical query); both start afresh on every call."""

    def __init__(self) -> None:
        dialect = Dialect.get_or_raise("postgres")
        self.tokenizer: Tokenizer = dialect.tokenizer()
        self.parser: Parser = dialect.parser(error_level=ErrorLevel.IMMEDIATE)


_POSTGRES = _Postgres()


def _parse(sql: str) -> tuple[Any, SqlProblem | None]:
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
            if isinstance(node.parent, (exp.From, exp.Join)):
                self.refuse("Table function UNNEST is not supported; compare with "
                            "`field = ANY($n)` instead.", node)
            else:
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
