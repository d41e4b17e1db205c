"""PostgreSQL's text input and output for the types of the subset, in Python.

One implementation serves three places: `check` validates string literals against the
type their context gives them (`'2024-13-01'::date` is refused before anything runs),
the compiler folds such literals into constants, and the local platform's SQLite
functions convert text at run time (`"Code"::int`), raising as PostgreSQL does.

Date and time values travel as text in PostgreSQL's own output format, which sorts as
the values do: dates `YYYY-MM-DD`, timestamps `YYYY-MM-DD HH:MM:SS` with `.ffffff`
(trailing zeros dropped) only when there is a fraction. A `timestamp with time zone`
is the same text read in the site's time zone (PostgreSQL's `SET TIME ZONE`).

Input is accepted in the ISO 8601 forms (`2024-05-17`, `2024-05-17 10:30`,
`2024-05-17T10:30:00.5+08:00`); PostgreSQL's other date styles (`5/17/2024`,
`May 17 2024`, `today`) are refused with a message that says to write ISO.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from basedb.core.frozen import frozen_dataclass

INT4_RANGE = (-(2**31), 2**31 - 1)
INT8_RANGE = (-(2**63), 2**63 - 1)


class ValueInputError(ValueError):
    """Text that is not a valid value of the type (PostgreSQL: invalid input syntax)."""


_INT = re.compile(r"^\s*([+-]?\d+)\s*\Z")
_NUMBER = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*\Z")
_SPECIAL_FLOAT = {"nan": math.nan, "infinity": math.inf, "+infinity": math.inf,
                  "-infinity": -math.inf, "inf": math.inf, "+inf": math.inf,
                  "-inf": -math.inf}


def parse_int(text: str, bits: int = 32) -> int:
    match = _INT.match(text)
    kind = "integer" if bits == 32 else "bigint"
    if match is None:
        raise ValueInputError(f'invalid input syntax for type {kind}: "{text}"')
    value = int(match.group(1))
    low, high = INT4_RANGE if bits == 32 else INT8_RANGE
    if not low <= value <= high:
        raise ValueInputError(f'value "{text}" is out of range for type {kind}')
    return value


def parse_float(text: str) -> float:
    special = _SPECIAL_FLOAT.get(text.strip().lower())
    if special is not None:
        return special
    match = _NUMBER.match(text)
    if match is None:
        raise ValueInputError(f'invalid input syntax for type double precision: "{text}"')
    value = float(match.group(1))
    if math.isinf(value):
        raise ValueInputError(f'"{text}" is out of range for type double precision')
    return value


def parse_numeric(text: str) -> float:
    """A numeric as the local platform holds it: the nearest double."""
    if text.strip().lower() == "nan":
        return math.nan
    match = _NUMBER.match(text)
    if match is None:
        raise ValueInputError(f'invalid input syntax for type numeric: "{text}"')
    return float(match.group(1))


_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def parse_bool(text: str) -> bool:
    word = text.strip().lower()
    if word:
        if word in ("t", "y", "1") or any(w.startswith(word) for w in ("true", "yes")) or (
                len(word) >= 2 and "on".startswith(word)):
            return True
        if word in ("f", "n", "0") or any(w.startswith(word) for w in ("false", "no")) or (
                len(word) >= 3 and "off".startswith(word)):
            return False
    raise ValueInputError(f'invalid input syntax for type boolean: "{text}"')


# ------------------------------------------------------------------ dates and times

_DATE_TIME = re.compile(
    r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})"
    r"(?:(?:\s+|T)(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
    r"\s*(Z|z|[+-]\d{1,2}(?::?\d{2})?)?)?\s*\Z")


def _fraction(digits: str | None) -> int:
    """Microseconds from a fraction's digits, rounded as PostgreSQL rounds them."""
    if not digits:
        return 0
    return round(int(digits) / 10 ** (len(digits) - 6)) if len(digits) > 6 else int(
        digits.ljust(6, "0"))


def _offset(text: str) -> timezone:
    if text in ("Z", "z"):
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours, minutes = (int(digits), 0) if len(digits) <= 2 else (int(digits[:-2]),
                                                                 int(digits[-2:]))
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def _parts(text: str, what: str) -> tuple[datetime, timezone | None]:
    match = _DATE_TIME.match(text)
    if match is None:
        raise ValueInputError(f'invalid input syntax for type {what}: "{text}" (write ISO '
                              "8601, e.g. 2024-05-17 or 2024-05-17 10:30:00)")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        moment = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0),
                          int(second or 0)) + timedelta(microseconds=_fraction(fraction))
    except ValueError:
        raise ValueInputError(f'date/time field value out of range: "{text}"') from None
    return moment, _offset(zone) if zone else None


def parse_date(text: str) -> date:
    moment, _ = _parts(text, "date")
    return moment.date()


def parse_timestamp(text: str) -> datetime:
    """A timestamp without time zone: any offset in the text is ignored (as PostgreSQL)."""
    moment, _ = _parts(text, "timestamp")
    return moment


def parse_timestamptz(text: str, zone: tzinfo) -> datetime:
    """A timestamp with time zone, as wall-clock time in `zone` (the session's zone)."""
    moment, offset = _parts(text, "timestamp with time zone")
    if offset is None:
        return moment
    return moment.replace(tzinfo=offset).astimezone(zone).replace(tzinfo=None)


def format_date(value: date) -> str:
    return value.isoformat()


def format_timestamp(value: datetime) -> str:
    """A naive timestamp as PostgreSQL prints it (isoformat pads the year to four digits
    and writes the fraction only when there is one)."""
    text = value.isoformat(sep=" ")
    return text.rstrip("0") if value.microsecond else text


CANONICAL_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")
CANONICAL_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def read_timestamp(text: str) -> datetime:
    """A timestamp from the local platform's own text (fast path of `parse_timestamp`)."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return parse_timestamp(text)


@lru_cache(maxsize=64)
def zone_info(name: str) -> tzinfo:
    """An IANA zone by name (UTC when it is unknown: config validation reports that)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


# ------------------------------------------------------------------------- numbers


def format_float(value: float) -> str:
    """double precision as PostgreSQL prints it: the shortest digits that read back the
    same, in exponent form below 1e-4 and from 1e15 on."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exponent = f"{abs(value)!r}".partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) + (int(exponent) if exponent else 0)  # digits before the point
    if whole == "0":
        point = -(len(fraction) - len(fraction.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    power = point - 1
    if power < -4 or power >= 15:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if len(digits) <= point:
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def numeric_value(value: float) -> Decimal:
    """The decimal a double stands for when it holds a numeric: its 15 significant digits
    (how PostgreSQL converts double precision to numeric)."""
    if not math.isfinite(value):
        raise ValueInputError("cannot convert infinity or NaN to numeric")
    return Decimal(f"{value:.15g}")


def round_numeric(value: float, places: int = 0) -> float:
    """round(numeric, places): half away from zero on the decimal value."""
    try:
        decimal = numeric_value(value)
        return float(decimal.quantize(Decimal(1).scaleb(-places), rounding="ROUND_HALF_UP"))
    except InvalidOperation:
        return value


def trunc_numeric(value: float, places: int = 0) -> float:
    try:
        decimal = numeric_value(value)
        return float(decimal.quantize(Decimal(1).scaleb(-places), rounding="ROUND_DOWN"))
    except InvalidOperation:
        return value


# ------------------------------------------------------------------------ intervals


@frozen_dataclass
class Interval:
    """An interval as PostgreSQL keeps it: months, days and microseconds, each signed."""

    months: int = 0
    days: int = 0
    micros: int = 0

    def scaled(self, factor: float) -> Interval:
        """`factor * interval`: fractions of months spill into days, of days into time."""
        months = self.months * factor
        whole_months = math.trunc(months)
        days = self.days * factor + (months - whole_months) * 30
        whole_days = math.trunc(days)
        micros = self.micros * factor + (days - whole_days) * 86_400_000_000
        return Interval(whole_months, whole_days, round(micros))

    def negated(self) -> Interval:
        return Interval(-self.months, -self.days, -self.micros)


_UNITS: dict[str, tuple[str, float]] = {}
for _names, _unit in ((("microsecond", "microseconds", "us", "usec", "usecs"), ("micros", 1)),
                      (("millisecond", "milliseconds", "ms", "msec", "msecs"),
                       ("micros", 1_000)),
                      (("second", "seconds", "s", "sec", "secs"), ("micros", 1_000_000)),
                      (("minute", "minutes", "m", "min", "mins"), ("micros", 60_000_000)),
                      (("hour", "hours", "h", "hr", "hrs"), ("micros", 3_600_000_000)),
                      (("day", "days", "d"), ("days", 1)),
                      (("week", "weeks", "w"), ("days", 7)),
                      (("month", "months", "mon", "mons"), ("months", 1)),
                      (("year", "years", "y", "yr", "yrs"), ("months", 12)),
                      (("decade", "decades"), ("months", 120)),
                      (("century", "centuries"), ("months", 1200)),
                      (("millennium", "millennia"), ("months", 12000))):
    for _name in _names:
        _UNITS[_name] = _unit
INTERVAL_UNITS = frozenset(_UNITS)
_INTERVAL_TOKEN = re.compile(r"([+-]?\d+(?:\.\d*)?|[+-]?\.\d+)\s*([a-z]+)|"
                             r"([+-]?)(\d+):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?")


def parse_interval(text: str) -> Interval:
    """PostgreSQL's interval input, in its common forms: `1 day`, `2 hours 30 minutes`,
    `1 year 2 mons`, `-3 days`, `1 day 02:00:00`, `90 minutes ago`."""
    body = text.strip().lower()
    ago = body.endswith(" ago")
    if ago:
        body = body[:-4].rstrip()
    if body.startswith("@"):
        body = body[1:].strip()
    position, months, days, micros = 0, 0.0, 0.0, 0.0
    seen = False
    while position < len(body):
        if body[position].isspace():
            position += 1
            continue
        match = _INTERVAL_TOKEN.match(body, position)
        if match is None:
            raise ValueInputError(f'invalid input syntax for type interval: "{text}"')
        amount, unit, sign, hours, minutes, seconds, fraction = match.groups()
        if unit is not None:
            if unit not in _UNITS:
                raise ValueInputError(f'invalid input syntax for type interval: "{text}"')
            part, size = _UNITS[unit]
            value = float(amount) * size
            if part == "months":
                months += value
            elif part == "days":
                days += value
            else:
                micros += value
        else:
            span = (int(hours) * 3600 + int(minutes) * 60 + int(seconds or 0)) * 1_000_000
            span += _fraction(fraction)
            micros += -span if sign == "-" else span
        seen = True
        position = match.end()
    if not seen:
        raise ValueInputError(f'invalid input syntax for type interval: "{text}"')
    whole_months = math.trunc(months)
    days += (months - whole_months) * 30
    whole_days = math.trunc(days)
    micros += (days - whole_days) * 86_400_000_000
    interval = Interval(whole_months, whole_days, round(micros))
    return interval.negated() if ago else interval


def _add_months(moment: datetime, months: int) -> datetime:
    total = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(total, 12)
    month += 1
    last = (date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)).day
    return moment.replace(year=year, month=month, day=min(moment.day, last))


def add_interval(moment: datetime, interval: Interval, zone: tzinfo | None = None,
                 ) -> datetime:
    """`timestamp + interval` as PostgreSQL computes it: months (clamped to the month's
    last day), then days, on the calendar; then the time part. With `zone` (a timestamp
    with time zone) the time part is added to the absolute instant, so a day across a
    daylight-saving change keeps the wall-clock time and an hour is a real hour."""
    try:
        if interval.months:
            moment = _add_months(moment, interval.months)
        if interval.days:
            moment += timedelta(days=interval.days)
        if interval.micros:
            if zone is None:
                moment += timedelta(microseconds=interval.micros)
            else:
                aware = moment.replace(tzinfo=zone).astimezone(UTC)
                aware += timedelta(microseconds=interval.micros)
                moment = aware.astimezone(zone).replace(tzinfo=None)
    except (OverflowError, ValueError):
        raise ValueInputError("timestamp out of range") from None
    return moment
