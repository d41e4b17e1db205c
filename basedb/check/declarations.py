"""Parameter declarations and descriptions of every function kind (upstream "平台检查与提示").

Database Function params (`meta.params[]`) and Mutation params (`spec.params[]`) must each
have a valid, unique name, a non-blank description, a known kind and, when present, an
enum that is a non-empty array of distinct, non-null values of the kind's JSON type.
Short descriptions are only hints: upstream never blocks on prose quality.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

from basedb.check.context import CheckContext
from basedb.check.messages import show_json
from basedb.protocol.findings import Finding, Hint
from basedb.workspace.declarations import json_type
from basedb.workspace.model import (
    MUTATION_PARAM_KINDS,
    PARAM_NAME_PATTERN,
    PARAM_NAME_RE,
    SQL_PARAM_KINDS,
    AnyDeclaration,
    Param,
)

# Upstream's threshold: fewer characters (after trimming) than this earns a hint.
SHORT_DESCRIPTION_CHARS = 8

# Spellings people reach for, normalised (upper case, `-` and spaces as `_`), by kind.
_KIND_ALIASES: dict[str, tuple[str, ...]] = {
    "TEXT": ("STRING", "STR", "VARCHAR", "CHAR", "CHARACTER", "UUID", "EMAIL", "URL",
             "SELECT", "OPTION", "ENUM"),
    "INT": ("INTEGER", "BIGINT", "SMALLINT", "LONG", "INT32", "INT64", "SERIAL"),
    "NUMBER": ("FLOAT", "DOUBLE", "DECIMAL", "NUMERIC", "REAL", "CURRENCY", "FLOAT64"),
    "BOOL": ("BOOLEAN", "CHECKBOX"),
    "DATE": ("DAY",),
    "DATETIME": ("TIMESTAMP", "TIMESTAMPTZ", "DATE_TIME", "TIME"),
    "RECORD_ID": ("RECORDID", "RECORD", "LINK", "REF", "REFERENCE", "ID"),
    "USER_ID": ("USERID", "USER", "MEMBER", "OPEN_ID", "OPENID"),
}
_ALIAS_TO_KIND = {alias: kind for kind, aliases in _KIND_ALIASES.items()
                  for alias in (kind, *aliases)}
_ARRAY_WRAPPER_RE = re.compile(r"^(?:ARRAY|LIST)\s*[<(\[]\s*(.+?)\s*[>)\]]\Z")

_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\Z")
# "YYYY-MM-DD HH:mm:ss" (the platform's cell format) or ISO 8601 with a `T`.
_DATETIME_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})"
    r"(?: (\d{2}):(\d{2}):(\d{2})"
    r"|T(\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)\Z"
)


def check_declarations(ctx: CheckContext) -> None:
    """Add param and description findings for every loaded declaration."""
    ws = ctx.workspace
    for function_id in sorted(ws.declarations):
        decl = ws.declarations[function_id]
        if decl.kind == "ai_function" and ctx.skip_ai:
            continue
        hint = _function_description_hint(decl)
        if hint is not None:
            ctx.add(hint)
        if decl.kind == "database_function":
            ctx.extend(list(check_params(decl, SQL_PARAM_KINDS)))
        elif decl.kind == "mutation":
            ctx.extend(list(check_params(decl, MUTATION_PARAM_KINDS)))


def check_params(decl: AnyDeclaration, legal_kinds: tuple[str, ...],
                 ) -> Iterator[Finding | Hint]:
    """Every rule about the declared params of one function."""
    first_by_name: dict[str, Param] = {}
    for param in decl.params:
        yield from _name_rules(decl, param, first_by_name)
        yield from _description_rules(decl, param)
        kind_ok = isinstance(param.kind, str) and param.kind in legal_kinds
        if not kind_ok:
            yield _kind_finding(decl, param, legal_kinds)
        if param.has_enum:
            yield from _enum_rules(decl, param, kind_ok)


# ----------------------------------------------------------------------- descriptions


def _function_description_hint(decl: AnyDeclaration) -> Hint | None:
    text = decl.description_str
    if len(text) >= SHORT_DESCRIPTION_CHARS:
        return None
    what = (f"is only {_characters(len(text))} ({text!r})" if text
            else "is missing" if decl.description is None else "is blank")
    return Hint(
        "function_description_short", decl.function_id,
        f"The description of {decl.function_id!r} {what}. External agents choose functions "
        "by their description: say what it does, when to use it, when not to, and which "
        "neighbouring function to use instead.",
        decl.file, "/description")


def _description_rules(decl: AnyDeclaration, param: Param) -> Iterator[Finding | Hint]:
    where = f"{param.pointer}/description"
    desc = param.description
    if not isinstance(desc, str) or not desc.strip():
        problem = ("has no description" if desc is None
                   else f"has a description that is {json_type(desc)}, not a string"
                   if not isinstance(desc, str) else "has a blank description")
        yield Finding(
            "PARAM_DESCRIPTION_MISSING",
            f"Parameter {_label(param)} {problem}.",
            decl.file, where, decl.function_id,
            "Write a description that says what the value means, its unit or format, and "
            "where a caller gets it (e.g. which function returns it).")
        return
    length = len(desc.strip())  # characters, not bytes: 8 Chinese characters are enough
    if length < SHORT_DESCRIPTION_CHARS:
        yield Hint(
            "param_description_short", decl.function_id,
            f"The description of parameter {_label(param)} is only {_characters(length)} "
            f"({desc.strip()!r}). Say what the value means, its unit or format and where it "
            "comes from; do not pad it with repeated words.",
            decl.file, where, param.name_str)


# ------------------------------------------------------------------------------ names


def _name_rules(decl: AnyDeclaration, param: Param, first_by_name: dict[str, Param],
                ) -> Iterator[Finding]:
    where = f"{param.pointer}/name"
    name = param.name
    fix_name = "Name it like a variable: a letter, then letters, digits or _ (e.g. periodId)."
    if name is None or (isinstance(name, str) and not name.strip()):
        yield Finding("PARAM_NAME_MISSING",
                      f"Parameter {param.index + 1} ({param.pointer}) has no name.",
                      decl.file, where, decl.function_id,
                      "Give every parameter a stable name; callers pass values by name. "
                      + fix_name)
        return
    if not isinstance(name, str):
        yield Finding("PARAM_NAME_INVALID",
                      f"Parameter {param.index + 1} has a name that is {json_type(name)}, "
                      "not a string.", decl.file, where, decl.function_id, fix_name)
        return
    if not PARAM_NAME_RE.match(name):
        yield Finding("PARAM_NAME_INVALID",
                      f"Parameter name {name!r} is invalid: it must match "
                      f"{PARAM_NAME_PATTERN} (start with a letter; letters, digits and _; "
                      "at most 64 characters).",
                      decl.file, where, decl.function_id,
                      _renamed(name) or fix_name)
        return
    first = first_by_name.get(name)
    if first is not None:
        yield Finding("PARAM_NAME_DUPLICATE",
                      f"Parameter name {name!r} is declared twice (parameters "
                      f"{first.index + 1} and {param.index + 1}).",
                      decl.file, where, decl.function_id,
                      "Give each parameter its own name, or remove the repeated one.")
        return
    first_by_name[name] = param


def _renamed(name: str) -> str | None:
    """'Rename it to …' with a valid camelCase form of `name`, when one can be made."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name) if w]
    if not words:
        return None
    candidate = words[0][:1].lower() + words[0][1:] + "".join(w[:1].upper() + w[1:]
                                                               for w in words[1:])
    if not candidate[:1].isalpha():
        candidate = "p" + candidate
    candidate = candidate[:64]
    if not PARAM_NAME_RE.match(candidate) or candidate == name:
        return None
    return f"Rename it, e.g. to {candidate!r} (a letter, then letters, digits or _)."


def _label(param: Param) -> str:
    """How messages name a param: its name, or its position when it has no usable name."""
    if isinstance(param.name, str) and param.name.strip():
        return repr(param.name)
    return f"#{param.index + 1}"


def _characters(n: int) -> str:
    return f"{n} character" + ("" if n == 1 else "s")


# ------------------------------------------------------------------------------ kinds


def _kind_finding(decl: AnyDeclaration, param: Param, legal_kinds: tuple[str, ...],
                  ) -> Finding:
    kind = param.kind
    where = f"{param.pointer}/kind"
    what = ("has no kind" if kind is None
            else f"has a kind that is {json_type(kind)}, not a string"
            if not isinstance(kind, str) else f"has unknown kind {kind!r}")
    suggestion = suggest_kind(kind, legal_kinds) if isinstance(kind, str) else None
    fix = f"Use {suggestion}." if suggestion else "Set kind to one of the legal kinds."
    if kind is None and param.unknown:
        # Most often the kind is there under another name ("type", "Kind"): say which.
        keys = ", ".join(repr(key) for key, _ in param.unknown[:3])
        what += (f" (it has {keys}, which basedb does not read: a parameter's type is "
                 "its \"kind\")")
        key, written = param.unknown[0]
        meant = suggest_kind(written, legal_kinds) if isinstance(written, str) else None
        fix = (f"Rename {key!r} to \"kind\" and set it to "
               + (f"{meant}." if meant else "one of the legal kinds."))
    return Finding("PARAM_KIND_INVALID",
                   f"Parameter {_label(param)} {what}; legal kinds are "
                   f"{', '.join(legal_kinds)}.",
                   decl.file, where, decl.function_id,
                   fix + " Kinds are written in upper case.")


def suggest_kind(kind: str, legal_kinds: tuple[str, ...]) -> str | None:
    """The legal kind someone writing `kind` most likely meant, quoted for a message."""
    norm = re.sub(r"[\s-]+", "_", kind.strip().upper())
    is_array = False
    if norm.endswith("[]"):
        norm, is_array = norm[:-2].strip("_"), True
    else:
        wrapped = _ARRAY_WRAPPER_RE.match(norm)
        if wrapped:
            norm, is_array = wrapped.group(1), True
    base = _ALIAS_TO_KIND.get(norm)
    if base is None:
        return None
    mutation = "RECORD_ID" in legal_kinds
    if base in ("RECORD_ID", "USER_ID") and not mutation:
        base = "TEXT"  # SQL compares record and user ids as text
    if not is_array:
        return f'"{base}"'
    if f"{base}[]" in legal_kinds:
        return f'"{base}[]"' + (f' (or "{base}" with "list": true)' if mutation else "")
    if mutation:
        return f'"{base}" with "list": true'
    return None


# ------------------------------------------------------------------------------ enums


def _enum_rules(decl: AnyDeclaration, param: Param, kind_ok: bool) -> Iterator[Finding]:
    where = f"{param.pointer}/enum"
    enum = param.enum
    if not isinstance(enum, list):
        yield Finding("ENUM_TYPE_MISMATCH",
                      f"The enum of parameter {_label(param)} is {json_type(enum)}, not an "
                      "array.", decl.file, where, decl.function_id,
                      "Write enum as an array of the allowed values, e.g. [\"open\", "
                      "\"closed\"], or remove it.")
        return
    if not enum:
        yield Finding("ENUM_EMPTY",
                      f"The enum of parameter {_label(param)} is empty, so no value could "
                      "ever be passed.", decl.file, where, decl.function_id,
                      "List the allowed values, or remove enum if any value is allowed.")
        return
    element_kind = param.element_kind if kind_ok else None
    seen: dict[str, int] = {}
    for i, value in enumerate(enum):
        at = f"{where}/{i}"
        if value is None:
            yield Finding("ENUM_NULL",
                          f"The enum of parameter {_label(param)} contains null.",
                          decl.file, at, decl.function_id,
                          "Remove null from enum; to make the parameter optional set "
                          "\"required\": false and describe what leaving it out means.")
            continue
        key = _enum_key(value)
        if key in seen:
            yield Finding("ENUM_DUPLICATE",
                          f"Enum value {show_json(value)} of parameter {_label(param)} is "
                          f"listed twice (at {where}/{seen[key]} and {at}).",
                          decl.file, at, decl.function_id, "Remove the repeated value.")
            continue
        seen[key] = i
        if element_kind is not None and not value_fits_kind(value, element_kind):
            yield Finding("ENUM_TYPE_MISMATCH",
                          f"Enum value {show_json(value)} of parameter {_label(param)} is "
                          f"{json_type(value)}, which does not fit kind {param.kind}: "
                          f"{'each element must be' if param.is_array else 'it must be'} "
                          f"{_KIND_EXPECTS[element_kind]}.",
                          decl.file, at, decl.function_id,
                          f"Write every enum value as {_KIND_EXPECTS[element_kind]}, or "
                          "change the parameter's kind.")


_KIND_EXPECTS: dict[str, str] = {
    "TEXT": "a JSON string",
    "RECORD_ID": "a JSON string (a record id)",
    "USER_ID": "a JSON string (a user id)",
    "INT": "a JSON integer such as 10 (not \"10\", 1.5 or true)",
    "NUMBER": "a JSON number such as 2.5 (not \"2.5\" or true)",
    "BOOL": "true or false",
    "DATE": "a date string \"YYYY-MM-DD\"",
    "DATETIME": "a date-time string \"YYYY-MM-DD HH:mm:ss\" or ISO 8601",
}


def value_fits_kind(value: Any, kind: str) -> bool:
    """Whether a JSON value is a valid value of a scalar (element) kind."""
    if kind in ("TEXT", "RECORD_ID", "USER_ID"):
        return isinstance(value, str)
    if kind == "INT":
        # JSON has one number type; 3.0 is an integer as JSON Schema counts it.
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if kind == "NUMBER":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "BOOL":
        return isinstance(value, bool)
    if kind == "DATE":
        return isinstance(value, str) and _is_date(value)
    if kind == "DATETIME":
        return isinstance(value, str) and _is_datetime(value)
    return False


def _is_date(text: str) -> bool:
    m = _DATE_RE.match(text)
    if not m:
        return False
    try:
        date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return False
    return True


def _is_datetime(text: str) -> bool:
    m = _DATETIME_RE.match(text)
    if not m:
        return False
    hour, minute, second = (m[4], m[5], m[6]) if m[4] else (m[7], m[8], m[9] or "0")
    try:
        datetime(int(m[1]), int(m[2]), int(m[3]), int(hour), int(minute), int(second))
    except ValueError:
        return False
    return True


def _enum_key(value: Any) -> str:
    # JSON equality, not Python's: true is not 1, but 1 and 1.0 are the same number.
    if isinstance(value, bool):
        return f"b:{value}"
    if isinstance(value, int) and abs(value) >= 2**53:
        return f"n:{value}"  # beyond float precision; compare exactly
    if isinstance(value, (int, float)):
        return f"n:{float(value)!r}"
    return "j:" + json.dumps(value, sort_keys=True, ensure_ascii=False)

