"""to_char(timestamp, format): PostgreSQL's template patterns for dates and times.

One module for both sides: `check` parses a format (a literal) and refuses a pattern
basedb does not write, and the local platform's `bdb_to_char` formats with the same
parse. The patterns are PostgreSQL's (manual 9.8, table 9.27), matched as it matches
them: case-sensitively, the longest first, lower-case spellings of the numeric ones
too, with the FM (no padding) and TM prefixes and the TH / th (ordinal) suffix. Text in
double quotes is copied (a backslash escapes the next character there; outside, only a
backslash before a double quote is an escape), and anything else is copied as it is.
Names are English (PostgreSQL's C locale): Month and Day pad to nine characters unless
FM or TM.

Left out, and refused by `check`: the time zone patterns (TZ, TZH, TZM, OF; a
timestamptz shows in the site's zone, so write the zone yourself) and the SP suffix
(PostgreSQL does not spell numbers out either). FX, which only to_date reads, is
accepted and does nothing, as in PostgreSQL.
"""

from __future__ import annotations

from datetime import date, datetime

from basedb.core.frozen import frozen_dataclass

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")

# Every pattern, each spelling as PostgreSQL lists it; the longest match wins.
_NUMERIC = ("Y,YYY", "YYYY", "YYY", "YY", "Y", "IYYY", "IYY", "IY", "I", "MM", "DDD", "DD",
            "D", "IDDD", "ID", "HH24", "HH12", "HH", "MI", "SSSSS", "SSSS", "SS", "MS", "US",
            "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "WW", "W", "IW", "Q", "CC", "J")
_TEXTUAL = ("MONTH", "Month", "month", "MON", "Mon", "mon", "DAY", "Day", "day", "DY", "Dy",
            "dy", "RM", "rm", "AM", "am", "PM", "pm", "A.M.", "a.m.", "P.M.", "p.m.", "AD",
            "ad", "BC", "bc", "A.D.", "a.d.", "B.C.", "b.c.")
_PREFIXES = ("FM", "TM", "FX")  # FX matters only to to_date
_REFUSED = ("TZH", "TZM", "TZ", "tzh", "tzm", "tz", "OF", "of")
_PATTERNS = tuple(sorted({*_NUMERIC, *(p.lower() for p in _NUMERIC), *_TEXTUAL, *_REFUSED},
                         key=len, reverse=True))


class FormatError(ValueError):
    """A format basedb does not write (the message says which pattern)."""


@frozen_dataclass
class Part:
    """A pattern (with its FM and TH modifiers) or literal text."""

    text: str
    pattern: bool = False
    fill: bool = False  # FM: no padding
    ordinal: str = ""  # "TH" or "th"


def parse_format(template: str) -> tuple[Part, ...]:
    """The parts of a to_char format; FormatError for a pattern basedb does not write."""
    parts: list[Part] = []
    i, n = 0, len(template)
    while i < n:
        if template[i] == '"':
            end = i + 1
            text = []
            while end < n and template[end] != '"':
                if template[end] == "\\" and end + 1 < n:
                    end += 1
                text.append(template[end])
                end += 1
            parts.append(Part("".join(text)))
            i = end + 1
            continue
        if template.startswith('\\"', i):  # outside quotes only \" is an escape
            parts.append(Part('"'))
            i += 2
            continue
        prefix = template[i:i + 2].upper()
        prefix = prefix if prefix in _PREFIXES and template[i:i + 2] in (
            prefix, prefix.lower()) else ""
        i += len(prefix)  # one prefix, then a pattern
        fill, names = prefix == "FM", prefix == "TM"
        found = next((p for p in _PATTERNS if template.startswith(p, i)), None)
        if found is None:
            if prefix:  # a prefix before no pattern is dropped, the next character copied
                parts.extend(Part(c) for c in template[i:i + 1])
                i += 1
                continue
            parts.append(Part(template[i]))
            i += 1
            continue
        if found in _REFUSED:
            raise FormatError(f'the to_char time zone pattern "{found}"')
        i += len(found)
        ordinal = ""
        if template.startswith(("TH", "th"), i):
            ordinal = template[i:i + 2]
            i += 2
        elif template.startswith("SP", i):
            raise FormatError('the to_char suffix "SP"')
        if names and found.upper() in ("MONTH", "DAY"):
            fill = True  # TM writes names unpadded
        parts.append(Part(found, pattern=True, fill=fill, ordinal=ordinal))
    return tuple(parts)


def to_char(moment: datetime, parts: tuple[Part, ...]) -> str:
    """`moment` written by the parts of a format, as PostgreSQL's to_char writes it."""
    out = []
    for part in parts:
        if not part.pattern:
            out.append(part.text)
            continue
        text = _field(moment, part.text, part.fill)
        if part.ordinal and text.strip().isdigit():
            text += _ordinal(int(text), part.ordinal == "TH")
        out.append(text)
    return "".join(out)


def _ordinal(number: int, upper: bool) -> str:
    last = number % 100
    suffix = "th" if 11 <= last <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return suffix.upper() if upper else suffix


def _iso(moment: datetime) -> tuple[int, int, int]:
    return moment.isocalendar()


def _number(value: int, width: int, fill: bool) -> str:
    return str(value) if fill else f"{value:0{width}d}"


def _name(name: str, spelling: str, width: int, fill: bool) -> str:
    if spelling.isupper():
        name = name.upper()
    elif spelling.islower():
        name = name.lower()
    return name if fill else name.ljust(width)


def _field(m: datetime, p: str, fill: bool) -> str:
    upper = p.upper()
    if upper == "Y,YYY":
        return f"{m.year // 1000},{m.year % 1000:03d}"
    if upper in ("YYYY", "IYYY"):
        year = m.year if upper == "YYYY" else _iso(m)[0]
        return _number(year, 4, fill)
    if upper in ("YYY", "YY", "Y", "IYY", "IY", "I"):
        year = m.year if upper[0] == "Y" else _iso(m)[0]
        digits = len(upper)  # the last 3, 2 or 1 digits
        return _number(year % 10 ** digits, digits, fill)
    if upper == "MM":
        return _number(m.month, 2, fill)
    if upper == "DD":
        return _number(m.day, 2, fill)
    if upper == "DDD":
        return _number(m.timetuple().tm_yday, 3, fill)
    if upper == "D":
        return str(m.isoweekday() % 7 + 1)
    if upper == "ID":
        return str(m.isoweekday())
    if upper == "IDDD":
        _, week, day = _iso(m)
        return _number((week - 1) * 7 + day, 3, fill)
    if upper in ("HH", "HH12"):
        return _number((m.hour + 11) % 12 + 1, 2, fill)
    if upper == "HH24":
        return _number(m.hour, 2, fill)
    if upper == "MI":
        return _number(m.minute, 2, fill)
    if upper == "SS":
        return _number(m.second, 2, fill)
    if upper in ("SSSS", "SSSSS"):
        return str(m.hour * 3600 + m.minute * 60 + m.second)
    if upper == "MS":  # FM does not shorten MS and US
        return f"{m.microsecond // 1000:03d}"
    if upper == "US":
        return f"{m.microsecond:06d}"
    if upper.startswith("FF"):
        digits = int(upper[2])
        return f"{m.microsecond:06d}"[:digits]
    if upper == "WW":
        return _number((m.timetuple().tm_yday - 1) // 7 + 1, 2, fill)
    if upper == "W":
        return str((m.day - 1) // 7 + 1)
    if upper == "IW":
        return _number(_iso(m)[1], 2, fill)
    if upper == "Q":
        return str((m.month - 1) // 3 + 1)
    if upper == "CC":
        return _number((m.year - 1) // 100 + 1, 2, fill)
    if upper == "J":
        return str(m.date().toordinal() - date(1, 1, 1).toordinal() + 1721426)
    if upper in ("MONTH", "MON"):
        name = _MONTHS[m.month - 1]
        return _name(name, p, 9, fill) if upper == "MONTH" else _name(name[:3], p, 3, True)
    if upper in ("DAY", "DY"):
        name = _DAYS[m.isoweekday() % 7]
        return _name(name, p, 9, fill) if upper == "DAY" else _name(name[:3], p, 3, True)
    if upper == "RM":
        roman = _ROMAN[m.month - 1]
        roman = roman if p == "RM" else roman.lower()
        return roman if fill else roman.ljust(4)
    if upper in ("AM", "PM", "A.M.", "P.M."):
        word = ("AM" if m.hour < 12 else "PM") if len(upper) == 2 else (
            "A.M." if m.hour < 12 else "P.M.")
        return word if p.isupper() else word.lower()
    if upper in ("AD", "BC", "A.D.", "B.C."):
        word = "AD" if len(upper) == 2 else "A.D."
        return word if p.isupper() else word.lower()
    raise FormatError(f'the to_char pattern "{p}"')  # pragma: no cover (parse refuses)
