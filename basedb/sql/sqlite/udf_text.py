"""Text and jsonb functions with PostgreSQL's semantics (see `udf`):
lower/upper of every letter, substr/left/right/lpad with negative and out-of-range
arguments, LIKE patterns as case-sensitive GLOB patterns, values as text the way
PostgreSQL prints them, jsonb keys in PostgreSQL's order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from basedb.sql import pgvalues as V
from basedb.sql.sqlite.udf_values import MAX_TEXT, fail, limit_text

# ------------------------------------------------------------------ text

def _map_case(text: str, upper: bool) -> str:
    # Character by character, as PostgreSQL's lower()/upper() do: a letter whose other
    # case is more than one character (ß → SS) stays as it is.
    out = []
    for char in text:
        other = char.upper() if upper else char.lower()
        out.append(other if len(other) == 1 else char)
    return "".join(out)


def bdb_lower(text: Any) -> Any:
    if text is None:
        return None
    return text.lower() if text.isascii() else _map_case(text, False)


def bdb_upper(text: Any) -> Any:
    if text is None:
        return None
    return text.upper() if text.isascii() else _map_case(text, True)


def bdb_initcap(text: Any) -> Any:
    if text is None:
        return None
    out, start = [], True
    for char in text:
        out.append(_map_case(char, start) if char.isalnum() else char)
        start = not char.isalnum()
    return "".join(out)


def bdb_octet_length(text: Any) -> Any:
    return None if text is None else len(str(text).encode("utf-8"))


def bdb_substr(text: Any, start: Any, count: Any = "all") -> Any:
    if text is None or start is None or count is None:
        return None
    if count == "all":
        return text[max(start, 1) - 1:]
    if count < 0:
        raise fail("negative substring length not allowed")
    end = start + count
    first = max(start, 1)
    return text[first - 1:max(end - 1, first - 1)] if end > first else ""


def bdb_left(text: Any, count: Any) -> Any:
    if text is None or count is None:
        return None
    return text[:count] if count >= 0 else text[:max(len(text) + count, 0)]


def bdb_right(text: Any, count: Any) -> Any:
    if text is None or count is None:
        return None
    if count >= 0:
        return text[max(len(text) - count, 0):] if count else ""
    return text[-count:]


def bdb_lpad(text: Any, length: Any, fill: Any = " ") -> Any:
    return _pad(text, length, fill, left=True)


def bdb_rpad(text: Any, length: Any, fill: Any = " ") -> Any:
    return _pad(text, length, fill, left=False)


def _pad(text: Any, length: Any, fill: Any, *, left: bool) -> Any:
    if text is None or length is None or fill is None:
        return None
    if length <= 0:
        return ""
    if length > MAX_TEXT:
        raise fail(f"the result would be longer than {MAX_TEXT} characters")
    if len(text) >= length or not fill:
        return text[:length]
    padding = (fill * (length // len(fill) + 1))[:length - len(text)]
    return padding + text if left else text + padding


def bdb_repeat(text: Any, count: Any) -> Any:
    if text is None or count is None:
        return None
    if count <= 0:
        return ""
    if len(text) * count > MAX_TEXT:
        raise fail(f"the result would be longer than {MAX_TEXT} characters")
    return text * count


def bdb_reverse(text: Any) -> Any:
    return None if text is None else text[::-1]


def bdb_split_part(text: Any, delimiter: Any, index: Any) -> Any:
    if text is None or delimiter is None or index is None:
        return None
    if index == 0:
        raise fail("field position must not be zero")
    parts = (text.split(delimiter) if delimiter else [text]) if text else []
    position = index - 1 if index > 0 else len(parts) + index
    return parts[position] if 0 <= position < len(parts) else ""


def bdb_starts_with(text: Any, prefix: Any) -> Any:
    if text is None or prefix is None:
        return None
    return int(text.startswith(prefix))


def bdb_md5(text: Any) -> Any:
    return None if text is None else hashlib.md5(text.encode("utf-8"),
                                                 usedforsecurity=False).hexdigest()


def bdb_ascii(text: Any) -> Any:
    if text is None:
        return None
    return ord(text[0]) if text else 0


def bdb_chr(code: Any) -> Any:
    if code is None:
        return None
    if code == 0:
        raise fail("null character not permitted")
    if not 0 < code <= 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise fail("requested character too large for encoding" if code > 0 else
                    "character number must be positive")
    return chr(code)


def bdb_concat_ws(separator: Any, *values: Any) -> Any:
    if separator is None:
        return None
    return limit_text(separator.join(str(v) for v in values if v is not None))


def bdb_like_glob(pattern: Any, escape: Any = "\\") -> Any:
    """A LIKE pattern as an SQLite GLOB pattern (GLOB is case-sensitive, as LIKE is in
    PostgreSQL): `%` → `*`, `_` → `?`, the escape character makes the next one literal,
    and GLOB's own special characters are bracketed."""
    if pattern is None:
        return None
    if escape is None:
        return None
    out, index = [], 0
    while index < len(pattern):
        char = pattern[index]
        if escape and char == escape:
            index += 1
            if index == len(pattern):
                raise fail("LIKE pattern must not end with escape character")
            char = pattern[index]
            out.append(_glob_literal(char))
        elif char == "%":
            out.append("*")
        elif char == "_":
            out.append("?")
        else:
            out.append(_glob_literal(char))
        index += 1
    return "".join(out)


def _glob_literal(char: str) -> str:
    return f"[{char}]" if char in "*?[" else char


# ------------------------------------------------------------------ text of values

def bdb_float_text(value: Any) -> Any:
    return None if value is None else V.format_float(float(value))


def bdb_bool_output(value: Any) -> Any:
    return None if value is None else ("t" if value else "f")


def bdb_tstz_text(value: Any, zone: str) -> Any:
    """A timestamptz as PostgreSQL prints it: local time in the zone, then its offset."""
    if value is None:
        return None
    moment = V.read_timestamp(value).replace(tzinfo=V.zone_info(zone))
    offset = moment.utcoffset() or timedelta(0)
    seconds = int(offset.total_seconds())
    sign = "-" if seconds < 0 else "+"
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    suffix = f"{sign}{hours:02d}" + (f":{minutes:02d}" if minutes or secs else "") + (
        f":{secs:02d}" if secs else "")
    return value + suffix


def _jsonb_order(value: Any) -> Any:
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode("utf-8")), k.encode("utf-8")))
        return {k: _jsonb_order(value[k]) for k in keys}
    if isinstance(value, list):
        return [_jsonb_order(v) for v in value]
    return value


def jsonb_text(value: Any) -> str:
    """A JSON value as PostgreSQL prints jsonb (keys by length, then bytes)."""
    return json.dumps(_jsonb_order(value), ensure_ascii=False, separators=(", ", ": "))


def bdb_jsonb_text(value: Any) -> Any:
    return None if value is None else jsonb_text(json.loads(value))


# ------------------------------------------------------------------ jsonb

def _json_step(document: Any, step: Any) -> Any:
    if document is None or step is None:
        return None, False
    value = json.loads(document)
    if isinstance(step, int):
        if not isinstance(value, list):
            return None, False
        index = step if step >= 0 else len(value) + step
        return (value[index], True) if 0 <= index < len(value) else (None, False)
    if not isinstance(value, dict) or step not in value:
        return None, False
    return value[step], True


def bdb_jsonb_get(document: Any, step: Any) -> Any:
    found, ok = _json_step(document, step)
    return json.dumps(found, ensure_ascii=False, separators=(",", ":")) if ok else None


def bdb_jsonb_get_text(document: Any, step: Any) -> Any:
    found, ok = _json_step(document, step)
    if not ok or found is None:
        return None
    if isinstance(found, str):
        return found
    if isinstance(found, bool):
        return "true" if found else "false"
    return jsonb_text(found)


def bdb_jsonb_array_length(document: Any) -> Any:
    if document is None:
        return None
    value = json.loads(document)
    if not isinstance(value, list):
        raise fail("cannot get array length of a non-array")
    return len(value)


def bdb_jsonb_typeof(document: Any) -> Any:
    if document is None:
        return None
    value = json.loads(document)
    if value is None:
        return "null"
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), "number")


SCALARS: dict[str, tuple[int, Callable[..., Any]]] = {
    "bdb_lower": (1, bdb_lower), "bdb_upper": (1, bdb_upper), "bdb_initcap": (1, bdb_initcap),
    "bdb_octet_length": (1, bdb_octet_length), "bdb_substr": (-1, bdb_substr),
    "bdb_left": (2, bdb_left), "bdb_right": (2, bdb_right), "bdb_lpad": (-1, bdb_lpad),
    "bdb_rpad": (-1, bdb_rpad), "bdb_repeat": (2, bdb_repeat), "bdb_reverse": (1, bdb_reverse),
    "bdb_split_part": (3, bdb_split_part), "bdb_starts_with": (2, bdb_starts_with),
    "bdb_md5": (1, bdb_md5), "bdb_ascii": (1, bdb_ascii), "bdb_chr": (1, bdb_chr),
    "bdb_concat_ws": (-1, bdb_concat_ws), "bdb_like_glob": (-1, bdb_like_glob),
    "bdb_float_text": (1, bdb_float_text), "bdb_bool_output": (1, bdb_bool_output),
    "bdb_tstz_text": (2, bdb_tstz_text), "bdb_jsonb_text": (1, bdb_jsonb_text),
    "bdb_jsonb_get": (2, bdb_jsonb_get), "bdb_jsonb_get_text": (2, bdb_jsonb_get_text),
    "bdb_jsonb_array_length": (1, bdb_jsonb_array_length),
    "bdb_jsonb_typeof": (1, bdb_jsonb_typeof),
}
