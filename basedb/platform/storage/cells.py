"""Cell values: validate what a caller writes, and decode what a column stores.

Writes take lark-cli's cell shapes (text string, number, select option name or names,
datetime "YYYY-MM-DD HH:mm:ss", checkbox bool, user and link `[{"id": …}]`) and become
the storage encodings of `basedb.platform.storage.physical`. A value that does not fit raises
`InvalidCell` (code 9499) naming the field, the JSON Pointer and what is expected.
Whether link and user ids exist is checked afterwards in bulk (`records`), since that
needs the database.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from basedb.platform.storage.ids import DATETIME_FORMAT
from basedb.protocol import ApiFailure, Code, quote, unexecuted_message
from basedb.sql.pgvalues import zone_info
from basedb.workspace.model import Field

MAX_TEXT_CHARS = 100_000
MAX_JSON_CHARS = 100_000
_DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2})?\Z")
_MISSING = object()


class InvalidCell(ApiFailure):
    """A value that cannot be written to a field (nothing was written)."""

    def __init__(self, field: Field | None, at: str, reason: str, fix: str, *,
                 received: Any = _MISSING, candidates: tuple[Any, ...] | list[Any] = ()) -> None:
        kwargs: dict[str, Any] = {} if received is _MISSING else {"received": received}
        super().__init__(Code.BAD_REQUEST, unexecuted_message(
            reason, parameter=at, fix=fix, candidates=candidates, **kwargs))
        self.field = field
        self.at = at
        self.reason = reason
        self.fix = fix


def closest(word: str, choices: list[str] | tuple[str, ...]) -> list[str]:
    """Up to three choices most like `word`, else the first three."""
    found = difflib.get_close_matches(word, choices, n=3, cutoff=0.5) if word else []
    return found or list(choices[:3])


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------- writes


def encode_cell(field: Field, value: Any, at: str, *, zone: str) -> Any:
    """The stored form of `value` for `field`; None clears the cell. A datetime given as
    milliseconds since 1970 is stored as the wall-clock time of that instant in `zone`
    (the IANA zone of the site or Base written to)."""
    if field.is_read_only:
        raise InvalidCell(field, at, f"Field {quote(field.name)} is read-only ({field.type}); the "
                          "platform maintains it", "remove it from the request", received=value)
    if value is None:
        return 0 if field.type == "checkbox" else None
    if field.type == "datetime":
        return _datetime(field, value, at, zone)
    return _ENCODERS[field.type](field, value, at)


def encoder_for(field: Field, zone: str) -> Callable[[Any], Any]:
    """`encode_cell(field, value, "", zone=zone)` as a function of the value alone, with
    what depends only on the field decided once: a batch encodes the same fields row
    after row. Its InvalidCell has an empty pointer (encode again to say where)."""
    encoder = _ENCODERS.get(field.type)
    if field.is_read_only or (encoder is None and field.type != "datetime"):
        return lambda value: encode_cell(field, value, "", zone=zone)
    if field.type == "datetime":
        return lambda value: None if value is None else _datetime(field, value, "", zone)
    assert encoder is not None
    if field.type == "checkbox":
        return lambda value: 0 if value is None else encoder(field, value, "")
    return lambda value: None if value is None else encoder(field, value, "")


def column_encoder_for(field: Field) -> Callable[[Sequence[Any]], list[Any] | None] | None:
    """For the simplest field types, a function encoding a whole column of values at
    once: the stored values when every value is of the plain valid kind (what
    `encode_cell` would store for each), or None when any is not, and the cells must be
    encoded one by one (to find and word the error). None for other field types."""
    ftype = field.type
    if field.is_read_only:
        return None
    if ftype == "text":
        def text(values: Sequence[Any]) -> list[Any] | None:
            if all(v is None or (type(v) is str and len(v) <= MAX_TEXT_CHARS) for v in values):
                return [v or None for v in values]
            return None
        return text
    if ftype == "number":
        def number(values: Sequence[Any]) -> list[Any] | None:
            if all(v is None or (type(v) is int and -_NUMBER_BOUND <= v <= _NUMBER_BOUND)
                   or (type(v) is float and math.isfinite(v)) for v in values):
                return list(values)
            return None
        return number
    if ftype == "select" and not field.multiple:
        options = frozenset(field.options)

        def select(values: Sequence[Any]) -> list[Any] | None:
            if all(v is None or (type(v) is str and v in options) for v in values):
                return list(values)
            return None
        return select
    if ftype == "checkbox":
        def checkbox(values: Sequence[Any]) -> list[Any] | None:
            if all(v is None or type(v) is bool for v in values):
                return [int(v) if v is not None else 0 for v in values]
            return None
        return checkbox
    return None


_NUMBER_BOUND = 2**53


def _expect(field: Field, at: str, value: Any, expected: str, fix: str,
            candidates: tuple[Any, ...] | list[Any] = ()) -> InvalidCell:
    reason = f"Field {quote(field.name)} ({field.type}) expects {expected}"
    return InvalidCell(field, at, reason, fix, received=value, candidates=candidates)


def _text(field: Field, value: Any, at: str) -> Any:
    if not isinstance(value, str) or len(value) > MAX_TEXT_CHARS:
        raise _expect(field, at, value, "a string", f"send text of at most {MAX_TEXT_CHARS} "
                      "characters (numbers as strings too)")
    return value or None


def _number(field: Field, value: Any, at: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and not math.isfinite(value)):
        raise _expect(field, at, value, "a number", "send a JSON number such as 12.5, "
                      "not a string")
    if isinstance(value, int) and abs(value) > 2**53:
        raise _expect(field, at, value, "a number within ±2^53", "send a smaller number")
    return value


def _select(field: Field, value: Any, at: str) -> Any:
    if field.multiple:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _expect(field, at, value, "a list of option names",
                          'send ["Option A", "Option B"]', list(field.options[:3]))
        names = list(dict.fromkeys(value))
        for index, name in enumerate(names):
            if name not in field.options:
                raise _expect(field, f"{at}/{index}", name, "option names it defines",
                              "use one of the field's options, or add the option first",
                              closest(name, field.options))
        return _json(names) if names else None
    if not isinstance(value, str):
        raise _expect(field, at, value, "one option name (a string)", 'send "Option A"',
                      list(field.options[:3]))
    if value not in field.options:
        raise _expect(field, at, value, "one of its options",
                      "use one of the field's options, or add the option first",
                      closest(value, field.options))
    return value


def _datetime(field: Field, value: Any, at: str, zone: str) -> Any:
    fix = 'send "YYYY-MM-DD HH:mm:ss", "YYYY-MM-DD" or milliseconds since 1970 as an integer'
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            moment = datetime.fromtimestamp(value / 1000, UTC)
            return moment.astimezone(zone_info(zone)).strftime(DATETIME_FORMAT)
        except (OverflowError, OSError, ValueError):
            raise _expect(field, at, value, "a date and time", fix) from None
    if isinstance(value, str) and _DATETIME_RE.match(value):
        text = value if len(value) > 10 else value + " 00:00:00"
        try:
            datetime.strptime(text, DATETIME_FORMAT)
        except ValueError:
            raise _expect(field, at, value, "a real calendar date and time", fix) from None
        return text
    raise _expect(field, at, value, "a date and time", fix)


def _checkbox(field: Field, value: Any, at: str) -> Any:
    if not isinstance(value, bool):
        raise _expect(field, at, value, "true or false", "send a JSON boolean")
    return int(value)


def _ids(field: Field, value: Any, at: str, what: str, example: str) -> list[str]:
    fix = f'send [{{"id": "{example}"}}]'
    if not isinstance(value, list):
        raise _expect(field, at, value, f"a list of {what} objects", fix)
    found: list[str] = []
    for index, item in enumerate(value):
        ident = item.get("id") if isinstance(item, dict) else None
        if not isinstance(ident, str) or not ident:
            raise _expect(field, f"{at}/{index}", item, f'{what} objects like {{"id": "…"}}', fix)
        if ident not in found:
            found.append(ident)
    return found


def _user(field: Field, value: Any, at: str) -> Any:
    users = _ids(field, value, at, "user", "ou_…")
    if not users:
        return None
    if field.multiple:
        return _json(users)
    if len(users) > 1:
        raise _expect(field, at, value, "a single user", 'send one [{"id": "ou_…"}]')
    return users[0]


def _link(field: Field, value: Any, at: str) -> Any:
    records = _ids(field, value, at, "record", "rec…")
    return _json(records) if records else None


def _attachment(field: Field, value: Any, at: str) -> Any:
    fix = 'send [{"file_token": "…", "name": "a.png", "size": 123, "mime_type": "image/png"}]'
    if not isinstance(value, list):
        raise _expect(field, at, value, "a list of attachment objects", fix)
    files = []
    for index, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("file_token"), str):
            raise _expect(field, f"{at}/{index}", item, "attachments with a file_token", fix)
        files.append({k: item[k] for k in ("file_token", "name", "size", "mime_type")
                      if k in item})
    return _bounded_json(field, at, files) if files else None


def _location(field: Field, value: Any, at: str) -> Any:
    if not isinstance(value, dict):
        raise _expect(field, at, value, "a location object",
                      'send {"location": "116.39,39.9", "full_address": "…"}')
    return _bounded_json(field, at, value)


def _bounded_json(field: Field, at: str, value: Any) -> str:
    text = _json(value)
    if len(text) > MAX_JSON_CHARS:
        raise _expect(field, at, value, f"at most {MAX_JSON_CHARS} characters of JSON",
                      "send a smaller value")
    return text


_ENCODERS: dict[str, Callable[[Field, Any, str], Any]] = {
    "text": _text, "number": _number, "select": _select,
    "checkbox": _checkbox, "user": _user, "link": _link, "attachment": _attachment,
    "location": _location,
}


def referenced_ids(field: Field, stored: Any) -> list[str]:
    """The user or record ids a stored link/user cell refers to."""
    if stored is None or field.type not in ("link", "user"):
        return []
    if field.type == "link" or field.multiple:
        return list(json.loads(stored))
    return [stored]


# ----------------------------------------------------------------------------- reads


def _number_out(stored: Any) -> Any:
    if isinstance(stored, float) and stored.is_integer() and abs(stored) <= 2**53:
        return int(stored)
    return stored


def _json_out(stored: Any) -> Any:
    return None if stored is None else json.loads(stored)


def _ids_out(stored: Any) -> Any:
    return None if stored is None else [{"id": i} for i in json.loads(stored)]


def _id_out(stored: Any) -> Any:
    return None if stored is None else [{"id": stored}]


def _same(stored: Any) -> Any:
    return stored


def decodes_as_stored(field: Field) -> bool:
    """Whether the field's API value is its stored cell unchanged."""
    return decoder_for(field) is _same


def decoder_for(field: Field) -> Callable[[Any], Any]:
    """A function from a stored cell to its API value."""
    ftype = field.type
    if ftype == "number":
        return _number_out
    if ftype == "checkbox":
        return lambda stored: bool(stored)
    if ftype == "select":
        return _json_out if field.multiple else _same
    if ftype == "user":
        return _ids_out if field.multiple else _id_out
    if ftype in ("created_by", "updated_by"):
        return _id_out
    if ftype == "link":
        return _ids_out
    if ftype in ("attachment", "location"):
        return _json_out
    return _same
