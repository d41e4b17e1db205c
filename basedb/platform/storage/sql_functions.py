"""The SQLite functions that give compiled Database Functions PostgreSQL's semantics.

SQLite's own functions differ from PostgreSQL's in many small ways: `lower('É')` leaves
the letter alone, `substr('abc', -1, 3)` counts from the end, `round(2.5)` rounds away
from zero where PostgreSQL's double precision rounds to even, `1 / 0` is NULL where
PostgreSQL raises, `max(a, b)` is NULL when either is. The compiler
(`sql_translate`) emits SQLite's built-ins where they agree and these `bdb_` functions
where they do not; `register_functions` adds them to a connection (the read-only
authorizer allows the `bdb_` prefix, and `check` never lets an author call them by
name). Each raises ValueError where PostgreSQL raises an error, which fails the call.

Values arrive and leave in the local representation of their PostgreSQL type
(`basedb.check.sql.pgvalues`): booleans as 0/1, dates and timestamps as PostgreSQL's
text, jsonb and arrays as JSON text.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sqlite3
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal, InvalidOperation
from typing import Any

from basedb.check.sql import pgvalues as V

MAX_TEXT = 1_000_000  # characters one string function may build (repeat, lpad, …)


def _fail(message: str) -> ValueError:
    return ValueError(message)


# ------------------------------------------------------------------ errors and guards

def bdb_error(message: Any) -> Any:
    raise _fail(str(message))


def bdb_nonzero(value: Any) -> Any:
    if value == 0:
        raise _fail("division by zero")
    return value


def bdb_bound(value: Any, which: str) -> Any:
    """A LIMIT or OFFSET value: NULL means no limit (-1) or 0, negative is an error."""
    if value is None:
        return -1 if which == "LIMIT" else 0
    if isinstance(value, float):
        value = _rint(value)
    if value < 0:
        raise _fail(f"{which} must not be negative")
    return value


# ------------------------------------------------------------------ numbers

def _rint(value: float) -> int:
    return round(value)  # Python rounds halves to even, as rint() does


def _check_int(value: int, bits: int) -> int:
    low, high = V.INT4_RANGE if bits == 32 else V.INT8_RANGE
    if not low <= value <= high:
        raise _fail("integer out of range" if bits == 32 else "bigint out of range")
    return value


def bdb_float_to_int(value: Any, bits: int) -> Any:
    if value is None:
        return None
    if math.isnan(value) or math.isinf(value):
        raise _fail("integer out of range")
    return _check_int(_rint(value), bits)


def bdb_numeric_to_int(value: Any, bits: int) -> Any:
    if value is None:
        return None
    if isinstance(value, int):
        return _check_int(value, bits)
    return _check_int(int(V.round_numeric(value)), bits)


def bdb_int_range(value: Any, bits: int) -> Any:
    return None if value is None else _check_int(int(value), bits)


def bdb_to_numeric(value: Any) -> Any:
    """double precision → numeric: its 15 significant digits."""
    if value is None or isinstance(value, int):
        return value
    try:
        return float(V.numeric_value(value))
    except V.ValueInputError as error:
        raise _fail(str(error)) from None


def bdb_numeric_typmod(value: Any, precision: int, scale: int) -> Any:
    if value is None:
        return None
    try:
        rounded = V.numeric_value(float(value)).quantize(Decimal(1).scaleb(-scale),
                                                          rounding="ROUND_HALF_UP")
    except (V.ValueInputError, InvalidOperation):
        raise _fail("numeric field overflow") from None
    if rounded and abs(rounded) >= Decimal(10) ** (precision - scale):
        raise _fail(f"numeric field overflow (precision {precision}, scale {scale})")
    return float(rounded)


def _signed(result: float, value: float) -> float:
    """A zero result keeps the sign of its input, as C's rint/ceil/trunc do (-0)."""
    return math.copysign(result, value) if result == 0 else result


def bdb_round_even(value: Any) -> Any:
    if value is None or not math.isfinite(value):
        return value
    return _signed(float(round(value)), value)


def bdb_round_numeric(value: Any, places: Any = 0) -> Any:
    if value is None or places is None:
        return None
    if isinstance(value, int) and places >= 0:
        return value
    return V.round_numeric(float(value), int(places))


def bdb_trunc(value: Any, places: Any = 0, numeric: int = 0) -> Any:
    if value is None or places is None:
        return None
    if numeric:
        return value if isinstance(value, int) and places >= 0 else V.trunc_numeric(
            float(value), int(places))
    return _signed(float(math.trunc(value)), value) if math.isfinite(value) else value


def bdb_ceil(value: Any) -> Any:
    if value is None or isinstance(value, int):
        return value
    return _signed(float(math.ceil(value)), value) if math.isfinite(value) else value


def bdb_floor(value: Any) -> Any:
    if value is None or isinstance(value, int):
        return value
    return _signed(float(math.floor(value)), value) if math.isfinite(value) else value


def bdb_sign(value: Any) -> Any:
    if value is None:
        return None
    return float((value > 0) - (value < 0))


def bdb_sqrt(value: Any) -> Any:
    if value is None:
        return None
    if value < 0:
        raise _fail("cannot take square root of a negative number")
    return math.sqrt(value)


def bdb_cbrt(value: Any) -> Any:
    if value is None:
        return None
    return math.copysign(abs(value) ** (1 / 3), value) if value else 0.0


def bdb_exp(value: Any) -> Any:
    if value is None:
        return None
    try:
        return math.exp(value)
    except OverflowError:
        raise _fail("value out of range: overflow") from None


def _log_check(value: Any) -> None:
    if value == 0:
        raise _fail("cannot take logarithm of zero")
    if value < 0:
        raise _fail("cannot take logarithm of a negative number")


def bdb_ln(value: Any) -> Any:
    if value is None:
        return None
    _log_check(value)
    return math.log(value)


def bdb_log10(value: Any) -> Any:
    if value is None:
        return None
    _log_check(value)
    return math.log10(value)


def bdb_log(base: Any, value: Any) -> Any:
    if base is None or value is None:
        return None
    _log_check(base)
    _log_check(value)
    if base == 1:
        raise _fail("division by zero")
    return math.log(value) / math.log(base)


def bdb_power(base: Any, exponent: Any) -> Any:
    if base is None or exponent is None:
        return None
    if base == 0 and exponent < 0:
        raise _fail("zero raised to a negative power is undefined")
    if base < 0 and exponent != int(exponent):
        raise _fail("a negative number raised to a non-integer power yields a complex result")
    try:
        return math.pow(base, exponent)
    except OverflowError:
        raise _fail("value out of range: overflow") from None


def bdb_mod(left: Any, right: Any) -> Any:
    """numeric % numeric: the remainder with the sign of the dividend, exactly."""
    if left is None or right is None:
        return None
    if right == 0:
        raise _fail("division by zero")
    if isinstance(left, int) and isinstance(right, int):
        return int(math.fmod(left, right)) if abs(left) < 2**53 else left - right * int(
            left / right)
    remainder = V.numeric_value(float(left)) % V.numeric_value(float(right))
    return float(remainder)


def bdb_div(left: Any, right: Any) -> Any:
    """div(numeric, numeric): the quotient truncated towards zero."""
    if left is None or right is None:
        return None
    if right == 0:
        raise _fail("division by zero")
    quotient = V.numeric_value(float(left)) / V.numeric_value(float(right))
    return float(int(quotient))


def bdb_greatest(*values: Any) -> Any:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def bdb_least(*values: Any) -> Any:
    present = [v for v in values if v is not None]
    return min(present) if present else None


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


def _limit(text: str) -> str:
    if len(text) > MAX_TEXT:
        raise _fail(f"the result would be longer than {MAX_TEXT} characters")
    return text


def bdb_octet_length(text: Any) -> Any:
    return None if text is None else len(str(text).encode("utf-8"))


def bdb_substr(text: Any, start: Any, count: Any = "all") -> Any:
    if text is None or start is None or count is None:
        return None
    if count == "all":
        return text[max(start, 1) - 1:]
    if count < 0:
        raise _fail("negative substring length not allowed")
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
        raise _fail(f"the result would be longer than {MAX_TEXT} characters")
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
        raise _fail(f"the result would be longer than {MAX_TEXT} characters")
    return text * count


def bdb_reverse(text: Any) -> Any:
    return None if text is None else text[::-1]


def bdb_split_part(text: Any, delimiter: Any, index: Any) -> Any:
    if text is None or delimiter is None or index is None:
        return None
    if index == 0:
        raise _fail("field position must not be zero")
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
        raise _fail("null character not permitted")
    if not 0 < code <= 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise _fail("requested character too large for encoding" if code > 0 else
                    "character number must be positive")
    return chr(code)


def bdb_concat_ws(separator: Any, *values: Any) -> Any:
    if separator is None:
        return None
    return _limit(separator.join(str(v) for v in values if v is not None))


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
                raise _fail("LIKE pattern must not end with escape character")
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


# ------------------------------------------------------------------ casts from text

def _parsed(parse: Callable[[str], Any], text: Any) -> Any:
    if text is None:
        return None
    try:
        return parse(str(text))
    except V.ValueInputError as error:
        raise _fail(str(error)) from None


def bdb_int(text: Any, bits: int) -> Any:
    return _parsed(lambda t: V.parse_int(t, bits), text)


def bdb_float(text: Any) -> Any:
    return _parsed(V.parse_float, text)


def bdb_numeric(text: Any) -> Any:
    return _parsed(V.parse_numeric, text)


def bdb_bool(text: Any) -> Any:
    found = _parsed(V.parse_bool, text)
    return None if found is None else int(found)


def bdb_date(text: Any) -> Any:
    found = _parsed(V.parse_date, text)
    return None if found is None else V.format_date(found)


def bdb_timestamp(text: Any) -> Any:
    found = _parsed(V.parse_timestamp, text)
    return None if found is None else V.format_timestamp(found)


def bdb_timestamptz(text: Any, zone: str) -> Any:
    found = _parsed(lambda t: V.parse_timestamptz(t, V.zone_info(zone)), text)
    return None if found is None else V.format_timestamp(found)


def bdb_jsonb(text: Any) -> Any:
    if text is None:
        return None
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        raise _fail("invalid input syntax for type json") from None


# ------------------------------------------------------------------ dates and times

def bdb_date_add(day: Any, count: Any) -> Any:
    if day is None or count is None:
        return None
    try:
        return V.format_date(date.fromisoformat(day) + timedelta(days=count))
    except (OverflowError, ValueError):
        raise _fail("date out of range") from None


def bdb_add_interval(moment: Any, factor: Any, months: int, days: int, micros: int,
                     zone: Any) -> Any:
    if moment is None or factor is None:
        return None
    interval = V.Interval(months, days, micros)
    if factor != 1:
        interval = interval.scaled(float(factor))
    try:
        found = V.add_interval(V.read_timestamp(moment), interval,
                               V.zone_info(zone) if zone else None)
    except V.ValueInputError as error:
        raise _fail(str(error)) from None
    return V.format_timestamp(found)


_TRUNC_PLURALS = {"microsecond": "microseconds", "millisecond": "milliseconds"}


def bdb_date_trunc(unit: Any, moment: Any) -> Any:
    if unit is None or moment is None:
        return None
    word = str(unit).strip().lower()
    word = _TRUNC_PLURALS.get(word, word)
    if word.endswith("s") and word not in ("microseconds", "milliseconds"):
        word = word[:-1]
    value = V.read_timestamp(moment)
    if word == "microseconds":
        found = value
    elif word == "milliseconds":
        found = value.replace(microsecond=value.microsecond // 1000 * 1000)
    elif word == "second":
        found = value.replace(microsecond=0)
    elif word == "minute":
        found = value.replace(second=0, microsecond=0)
    elif word == "hour":
        found = value.replace(minute=0, second=0, microsecond=0)
    elif word in ("day", "week"):
        found = value.replace(hour=0, minute=0, second=0, microsecond=0)
        if word == "week":
            found -= timedelta(days=found.weekday())
    elif word in ("month", "quarter", "year", "decade", "century", "millennium"):
        month = 1 if word != "month" and word != "quarter" else (
            value.month if word == "month" else (value.month - 1) // 3 * 3 + 1)
        year = value.year
        if word == "decade":
            year = year // 10 * 10
        elif word == "century":
            year = (year - 1) // 100 * 100 + 1
        elif word == "millennium":
            year = (year - 1) // 1000 * 1000 + 1
        found = datetime(year, month, 1)
    else:
        raise _fail(f'unit "{unit}" not recognized for type timestamp')
    return V.format_timestamp(found)


_EPOCH = datetime(1970, 1, 1)


def bdb_extract(field: Any, moment: Any, kind: str, zone: Any) -> Any:
    """extract(field FROM x) for a date, timestamp or timestamptz (local text)."""
    if field is None or moment is None:
        return None
    word = str(field).strip().lower()
    value = datetime.fromisoformat(moment) if kind != "date" else datetime.combine(
        date.fromisoformat(moment), datetime.min.time())
    seconds = value.second + value.microsecond / 1_000_000
    if word == "epoch":
        if kind == "timestamptz" and zone:
            instant = value.replace(tzinfo=V.zone_info(zone)).astimezone(timezone.utc)
            delta = instant.replace(tzinfo=None) - _EPOCH
        else:
            delta = value - _EPOCH
        return delta.days * 86400 + delta.seconds + delta.microseconds / 1_000_000
    iso = value.isocalendar()
    fields: dict[str, Any] = {
        "year": value.year, "month": value.month, "day": value.day,
        "hour": value.hour, "minute": value.minute, "second": seconds,
        "milliseconds": seconds * 1000, "microseconds": value.second * 1_000_000
        + value.microsecond, "quarter": (value.month - 1) // 3 + 1,
        "dow": (value.weekday() + 1) % 7, "isodow": value.isoweekday(),
        "doy": value.timetuple().tm_yday, "week": iso[1], "isoyear": iso[0],
        "decade": value.year // 10, "century": (value.year - 1) // 100 + 1,
        "millennium": (value.year - 1) // 1000 + 1,
        "julian": value.toordinal() + 1721425 + (
            value.hour * 3600 + seconds + value.minute * 60) / 86400,
    }
    if word not in fields:
        raise _fail(f'unit "{field}" not recognized')
    if kind == "date" and word in ("hour", "minute", "second", "milliseconds",
                                   "microseconds"):
        raise _fail(f'unit "{word}" not supported for type date')
    if kind == "date" and word == "julian":
        return value.toordinal() + 1721425
    return fields[word]


def bdb_make_date(year: Any, month: Any, day: Any) -> Any:
    if year is None or month is None or day is None:
        return None
    try:
        return V.format_date(date(year, month, day))
    except ValueError:
        raise _fail(f"date field value out of range: {year}-{month:02d}-{day:02d}") from None


def bdb_make_timestamp(year: Any, month: Any, day: Any, hour: Any, minute: Any,
                       second: Any) -> Any:
    parts = (year, month, day, hour, minute, second)
    if any(p is None for p in parts):
        return None
    try:
        whole = int(second)
        moment = datetime(year, month, day, hour, minute, whole) + timedelta(
            microseconds=round((second - whole) * 1_000_000))
    except ValueError:
        raise _fail("date/time field value out of range") from None
    return V.format_timestamp(moment)


def bdb_to_timestamp(seconds: Any, zone: Any) -> Any:
    if seconds is None:
        return None
    try:
        instant = datetime.fromtimestamp(0, timezone.utc) + timedelta(seconds=seconds)
    except (OverflowError, ValueError):
        raise _fail("timestamp out of range") from None
    return V.format_timestamp(instant.astimezone(V.zone_info(zone)).replace(tzinfo=None))


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
        raise _fail("cannot get array length of a non-array")
    return len(value)


def bdb_jsonb_typeof(document: Any) -> Any:
    if document is None:
        return None
    value = json.loads(document)
    if value is None:
        return "null"
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), "number")


# ------------------------------------------------------------------ aggregates

class _One:
    """The value of a scalar subquery: an error when it returns more than one row."""

    def __init__(self) -> None:
        self.rows = 0
        self.value: Any = None

    def step(self, value: Any) -> None:
        self.rows += 1
        if self.rows > 1:
            raise _fail("more than one row returned by a subquery used as an expression")
        self.value = value

    def finalize(self) -> Any:
        return self.value


def sort_key(value: Any, descending: bool, nulls_first: bool) -> tuple[int, Any]:
    """A key that orders values as PostgreSQL's ORDER BY does (see `_Ordered`)."""
    if value is None:
        return (0 if nulls_first else 2, 0)
    if isinstance(value, str):
        encoded = value.encode("utf-8")
        return (1, _Reversed(encoded) if descending else encoded)
    return (1, -value if descending else value)


class _Reversed:
    __slots__ = ("value",)

    def __init__(self, value: bytes) -> None:
        self.value = value

    def __lt__(self, other: _Reversed) -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


class _Ordered:
    """An aggregate whose input is ordered (string_agg / array_agg with ORDER BY). After
    the value (and the separator), each sort key comes with two flags: descending and
    NULLs first."""

    extra = 0

    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []
        self.seq = 0
        self.separator: Any = None

    def step(self, value: Any, *rest: Any) -> None:
        if self.extra:
            self.separator, rest = rest[0], rest[1:]
        keys = []
        for index in range(0, len(rest), 3):
            keys.append(sort_key(rest[index], bool(rest[index + 1]), bool(rest[index + 2])))
        self.seq += 1
        self.items.append((*keys, self.seq, value))
        if len(self.items) > 1_000_000:
            raise _fail("too many rows in one aggregate")

    def ordered(self) -> list[Any]:
        self.items.sort(key=lambda item: item[:-1])
        return [item[-1] for item in self.items]


class _StringAgg(_Ordered):
    extra = 1

    def finalize(self) -> Any:
        values = [v for v in self.ordered() if v is not None]
        if not values:
            return None
        return _limit((self.separator or "").join(values))


class _ArrayAgg(_Ordered):
    """array_agg(x ORDER BY …): the separator slot carries the element type ("boolean"
    turns 0 / 1 into JSON false / true)."""

    extra = 1

    def finalize(self) -> Any:
        if not self.items:
            return None
        values = self.ordered()
        if self.separator == "boolean":
            values = [None if v is None else bool(v) for v in values]
        return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


class _WindowSum:
    """sum() / avg() of doubles over a window frame whose start moves. SQLite updates such
    a frame by subtracting the rows that leave it, and subtracting a large value loses
    the small ones (PostgreSQL sums each frame afresh); a compensated (Neumaier) sum keeps
    them, so the result agrees with PostgreSQL's to its last digits."""

    average = False

    def __init__(self) -> None:
        self.total = 0.0
        self.compensation = 0.0
        self.count = 0

    def _add(self, value: float) -> None:
        total = self.total + value
        if abs(self.total) >= abs(value):
            self.compensation += (self.total - total) + value
        else:
            self.compensation += (value - total) + self.total
        self.total = total

    def step(self, value: Any) -> None:
        if value is not None:
            self._add(float(value))
            self.count += 1

    def inverse(self, value: Any) -> None:
        if value is not None:
            self._add(-float(value))
            self.count -= 1

    def value(self) -> Any:
        if self.count == 0:
            return None
        found = self.total + self.compensation
        return found / self.count if self.average else found

    def finalize(self) -> Any:
        return self.value()


class _WindowAvg(_WindowSum):
    average = True


# ------------------------------------------------------------------ registration

_SCALARS: dict[str, tuple[int, Callable[..., Any]]] = {
    "bdb_error": (1, bdb_error), "bdb_nonzero": (1, bdb_nonzero), "bdb_bound": (2, bdb_bound),
    "bdb_float_to_int": (2, bdb_float_to_int), "bdb_numeric_to_int": (2, bdb_numeric_to_int),
    "bdb_int_range": (2, bdb_int_range), "bdb_to_numeric": (1, bdb_to_numeric),
    "bdb_numeric_typmod": (3, bdb_numeric_typmod), "bdb_round_even": (1, bdb_round_even),
    "bdb_round_numeric": (-1, bdb_round_numeric), "bdb_trunc": (-1, bdb_trunc),
    "bdb_ceil": (1, bdb_ceil), "bdb_floor": (1, bdb_floor), "bdb_sign": (1, bdb_sign),
    "bdb_sqrt": (1, bdb_sqrt), "bdb_cbrt": (1, bdb_cbrt), "bdb_exp": (1, bdb_exp),
    "bdb_ln": (1, bdb_ln), "bdb_log10": (1, bdb_log10), "bdb_log": (2, bdb_log),
    "bdb_power": (2, bdb_power), "bdb_mod": (2, bdb_mod), "bdb_div": (2, bdb_div),
    "bdb_greatest": (-1, bdb_greatest), "bdb_least": (-1, bdb_least),
    "bdb_lower": (1, bdb_lower), "bdb_upper": (1, bdb_upper), "bdb_initcap": (1, bdb_initcap),
    "bdb_octet_length": (1, bdb_octet_length), "bdb_substr": (-1, bdb_substr),
    "bdb_left": (2, bdb_left), "bdb_right": (2, bdb_right), "bdb_lpad": (-1, bdb_lpad),
    "bdb_rpad": (-1, bdb_rpad), "bdb_repeat": (2, bdb_repeat), "bdb_reverse": (1, bdb_reverse),
    "bdb_split_part": (3, bdb_split_part), "bdb_starts_with": (2, bdb_starts_with),
    "bdb_md5": (1, bdb_md5), "bdb_ascii": (1, bdb_ascii), "bdb_chr": (1, bdb_chr),
    "bdb_concat_ws": (-1, bdb_concat_ws), "bdb_like_glob": (-1, bdb_like_glob),
    "bdb_float_text": (1, bdb_float_text), "bdb_bool_output": (1, bdb_bool_output),
    "bdb_tstz_text": (2, bdb_tstz_text), "bdb_jsonb_text": (1, bdb_jsonb_text),
    "bdb_int": (2, bdb_int), "bdb_float": (1, bdb_float), "bdb_numeric": (1, bdb_numeric),
    "bdb_bool": (1, bdb_bool), "bdb_date": (1, bdb_date), "bdb_timestamp": (1, bdb_timestamp),
    "bdb_timestamptz": (2, bdb_timestamptz), "bdb_jsonb": (1, bdb_jsonb),
    "bdb_date_add": (2, bdb_date_add), "bdb_add_interval": (6, bdb_add_interval),
    "bdb_date_trunc": (2, bdb_date_trunc), "bdb_extract": (4, bdb_extract),
    "bdb_make_date": (3, bdb_make_date), "bdb_make_timestamp": (6, bdb_make_timestamp),
    "bdb_to_timestamp": (2, bdb_to_timestamp), "bdb_jsonb_get": (2, bdb_jsonb_get),
    "bdb_jsonb_get_text": (2, bdb_jsonb_get_text),
    "bdb_jsonb_array_length": (1, bdb_jsonb_array_length),
    "bdb_jsonb_typeof": (1, bdb_jsonb_typeof),
}
_VOLATILE = frozenset({"bdb_error"})
_AGGREGATES: dict[str, tuple[int, type]] = {
    "bdb_one": (1, _One), "bdb_string_agg": (-1, _StringAgg), "bdb_array_agg": (-1, _ArrayAgg),
}
PLATFORM_FUNCTIONS = frozenset(_SCALARS) | frozenset(_AGGREGATES) | {
    "bdb_random", "bdb_window_sum", "bdb_window_avg"}


def has_window_functions() -> bool:
    """Whether this Python can add window functions to SQLite (3.11 and later)."""
    return hasattr(sqlite3.Connection, "create_window_function")


def bdb_random() -> float:
    return random.random()  # PostgreSQL's random(): not for secrets


def register_functions(conn: sqlite3.Connection) -> None:
    """Add the `bdb_` functions to a connection."""
    for name, (arity, function) in _SCALARS.items():
        conn.create_function(name, arity, function, deterministic=name not in _VOLATILE)
    conn.create_function("bdb_random", 0, bdb_random)
    for name, (arity, aggregate) in _AGGREGATES.items():
        conn.create_aggregate(name, arity, aggregate)
    if hasattr(conn, "create_window_function"):  # Python 3.11 and later
        conn.create_window_function("bdb_window_sum", 1, _WindowSum)
        conn.create_window_function("bdb_window_avg", 1, _WindowAvg)
