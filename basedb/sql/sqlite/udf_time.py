"""Date and time functions with PostgreSQL's semantics (see `udf`):
calendar arithmetic with months clamped to the month's end, date_trunc and extract on
PostgreSQL's text of dates and timestamps, timestamptz in the site's zone.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any

from basedb.sql import pgvalues as V
from basedb.sql.datetime_format import FormatError, Part, parse_format, to_char
from basedb.sql.sqlite.udf_values import fail

# ------------------------------------------------------------------ dates and times

def bdb_date_add(day: Any, count: Any) -> Any:
    if day is None or count is None:
        return None
    try:
        return V.format_date(date.fromisoformat(day) + timedelta(days=count))
    except (OverflowError, ValueError):
        raise fail("date out of range") from None


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
        raise fail(str(error)) from None
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
        raise fail(f'unit "{unit}" not recognized for type timestamp')
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
            instant = value.replace(tzinfo=V.zone_info(zone)).astimezone(UTC)
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
        raise fail(f'unit "{field}" not recognized')
    if kind == "date" and word in ("hour", "minute", "second", "milliseconds",
                                   "microseconds"):
        raise fail(f'unit "{word}" not supported for type date')
    if kind == "date" and word == "julian":
        return value.toordinal() + 1721425
    return fields[word]


def bdb_make_date(year: Any, month: Any, day: Any) -> Any:
    if year is None or month is None or day is None:
        return None
    try:
        return V.format_date(date(year, month, day))
    except ValueError:
        raise fail(f"date field value out of range: {year}-{month:02d}-{day:02d}") from None


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
        raise fail("date/time field value out of range") from None
    return V.format_timestamp(moment)


def bdb_to_timestamp(seconds: Any, zone: Any) -> Any:
    if seconds is None:
        return None
    try:
        instant = datetime.fromtimestamp(0, UTC) + timedelta(seconds=seconds)
    except (OverflowError, ValueError):
        raise fail("timestamp out of range") from None
    return V.format_timestamp(instant.astimezone(V.zone_info(zone)).replace(tzinfo=None))


@lru_cache(maxsize=256)
def _template(text: str) -> tuple[Part, ...]:
    return parse_format(text)


def bdb_to_char(moment: Any, template: Any) -> Any:
    """to_char(timestamp, template); `check` let through only templates it parsed."""
    if moment is None or template is None or template == "":
        return None  # PostgreSQL: an empty template gives NULL
    try:
        return to_char(V.read_timestamp(moment), _template(str(template)))
    except FormatError as error:
        raise fail(f"{error} is not supported") from None


SCALARS: dict[str, tuple[int, Callable[..., Any]]] = {
    "bdb_to_char": (2, bdb_to_char),
    "bdb_date_add": (2, bdb_date_add), "bdb_add_interval": (6, bdb_add_interval),
    "bdb_date_trunc": (2, bdb_date_trunc), "bdb_extract": (4, bdb_extract),
    "bdb_make_date": (3, bdb_make_date), "bdb_make_timestamp": (6, bdb_make_timestamp),
    "bdb_to_timestamp": (2, bdb_to_timestamp),
}
