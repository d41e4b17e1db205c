"""Errors, guards, numbers and conversions from text, with PostgreSQL's semantics
(see `udf`): rounding as PostgreSQL rounds (halves to even for double
precision, away from zero for numeric), errors where it raises (division by zero, the
square root of a negative, text that is not a number), -0 where C's math gives it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from basedb.sql import pgvalues as V

MAX_TEXT = 1_000_000  # characters one string function may build (repeat, lpad, …)


def fail(message: str) -> ValueError:
    """The error a function raises where PostgreSQL raises one (it fails the call)."""
    return ValueError(message)


def limit_text(text: str) -> str:
    if len(text) > MAX_TEXT:
        raise fail(f"the result would be longer than {MAX_TEXT} characters")
    return text


# ------------------------------------------------------------------ errors and guards

def bdb_error(message: Any) -> Any:
    raise fail(str(message))


def bdb_nonzero(value: Any) -> Any:
    if value == 0:
        raise fail("division by zero")
    return value


def bdb_bound(value: Any, which: str) -> Any:
    """A LIMIT or OFFSET value: NULL means no limit (-1) or 0, negative is an error."""
    if value is None:
        return -1 if which == "LIMIT" else 0
    if isinstance(value, float):
        value = _rint(value)
    if value < 0:
        raise fail(f"{which} must not be negative")
    return value


# ------------------------------------------------------------------ numbers

def _rint(value: float) -> int:
    return round(value)  # Python rounds halves to even, as rint() does


def _check_int(value: int, bits: int) -> int:
    low, high = V.INT4_RANGE if bits == 32 else V.INT8_RANGE
    if not low <= value <= high:
        raise fail("integer out of range" if bits == 32 else "bigint out of range")
    return value


def bdb_float_to_int(value: Any, bits: int) -> Any:
    if value is None:
        return None
    if math.isnan(value) or math.isinf(value):
        raise fail("integer out of range")
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
        raise fail(str(error)) from None


def bdb_numeric_typmod(value: Any, precision: int, scale: int) -> Any:
    if value is None:
        return None
    try:
        rounded = V.numeric_value(float(value)).quantize(Decimal(1).scaleb(-scale),
                                                          rounding="ROUND_HALF_UP")
    except (V.ValueInputError, InvalidOperation):
        raise fail("numeric field overflow") from None
    if rounded and abs(rounded) >= Decimal(10) ** (precision - scale):
        raise fail(f"numeric field overflow (precision {precision}, scale {scale})")
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
        raise fail("cannot take square root of a negative number")
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
        raise fail("value out of range: overflow") from None


def _log_check(value: Any) -> None:
    if value == 0:
        raise fail("cannot take logarithm of zero")
    if value < 0:
        raise fail("cannot take logarithm of a negative number")


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
        raise fail("division by zero")
    return math.log(value) / math.log(base)


def bdb_power(base: Any, exponent: Any) -> Any:
    if base is None or exponent is None:
        return None
    if base == 0 and exponent < 0:
        raise fail("zero raised to a negative power is undefined")
    if base < 0 and exponent != int(exponent):
        raise fail("a negative number raised to a non-integer power yields a complex result")
    try:
        return math.pow(base, exponent)
    except OverflowError:
        raise fail("value out of range: overflow") from None


def bdb_mod(left: Any, right: Any) -> Any:
    """numeric % numeric: the remainder with the sign of the dividend, exactly."""
    if left is None or right is None:
        return None
    if right == 0:
        raise fail("division by zero")
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
        raise fail("division by zero")
    quotient = V.numeric_value(float(left)) / V.numeric_value(float(right))
    return float(int(quotient))


def bdb_greatest(*values: Any) -> Any:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def bdb_least(*values: Any) -> Any:
    present = [v for v in values if v is not None]
    return min(present) if present else None


# ------------------------------------------------------------------ casts from text

def _parsed(parse: Callable[[str], Any], text: Any) -> Any:
    if text is None:
        return None
    try:
        return parse(str(text))
    except V.ValueInputError as error:
        raise fail(str(error)) from None


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
        raise fail("invalid input syntax for type json") from None


SCALARS: dict[str, tuple[int, Callable[..., Any]]] = {
    "bdb_error": (1, bdb_error), "bdb_nonzero": (1, bdb_nonzero), "bdb_bound": (2, bdb_bound),
    "bdb_float_to_int": (2, bdb_float_to_int), "bdb_numeric_to_int": (2, bdb_numeric_to_int),
    "bdb_int_range": (2, bdb_int_range), "bdb_to_numeric": (1, bdb_to_numeric),
    "bdb_numeric_typmod": (3, bdb_numeric_typmod), "bdb_round_even": (1, bdb_round_even),
    "bdb_round_numeric": (-1, bdb_round_numeric), "bdb_trunc": (-1, bdb_trunc),
    "bdb_ceil": (1, bdb_ceil), "bdb_floor": (1, bdb_floor), "bdb_sign": (1, bdb_sign),
    "bdb_sqrt": (1, bdb_sqrt), "bdb_cbrt": (1, bdb_cbrt), "bdb_exp": (1, bdb_exp),
    "bdb_ln": (1, bdb_ln), "bdb_log10": (1, bdb_log10), "bdb_log": (2, bdb_log),
    "bdb_power": (2, bdb_power), "bdb_mod": (2, bdb_mod), "bdb_div": (2, bdb_div),
    "bdb_greatest": (-1, bdb_greatest), "bdb_least": (-1, bdb_least), "bdb_int": (2, bdb_int),
    "bdb_float": (1, bdb_float), "bdb_numeric": (1, bdb_numeric), "bdb_bool": (1, bdb_bool),
    "bdb_date": (1, bdb_date), "bdb_timestamp": (1, bdb_timestamp),
    "bdb_timestamptz": (2, bdb_timestamptz), "bdb_jsonb": (1, bdb_jsonb),
}
