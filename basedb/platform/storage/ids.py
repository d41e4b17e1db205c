"""Identifiers, secrets and timestamps minted by the local platform.

Ids are a fixed prefix (Lark's, where Lark has one) followed by random letters and
digits, so they are safe inside SQLite identifiers (see `physical`) and URLs alike.

Record ids are the primary key of their table, so they start with the time instead
(`new_record_ids`): seven characters of milliseconds, in an alphabet that sorts as its
digits do, then seven random ones. A new record's key is then the largest yet, and an
insert appends to the key's b-tree instead of landing on a random page of it (on a
million-record table, a random key makes each insert read and split pages all over
the index). Records made before keep their random ids; both kinds read alike.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from datetime import UTC, datetime

from basedb.sql.pgvalues import zone_info

# prefix -> number of random characters after it
BASE_TOKEN = ("bas", 20)
TABLE_ID = ("tbl", 14)
FIELD_ID = ("fld", 10)
RECORD_ID = ("rec", 14)
APP_TOKEN = ("Prj", 16)
USER_ID = ("ou_", 24)

TOKEN_PREFIX = "bdb_"
"""Platform bearer tokens look like `bdb_<random>`; basedb.core.redact masks that shape."""


_NOT_ALPHANUMERIC = str.maketrans("", "", "-_")


def random_alphanumeric(length: int) -> str:
    """`length` random letters and digits (token_urlsafe with `-` and `_` dropped; each
    of the 62 that remain stays equally likely)."""
    out = ""
    while len(out) < length:
        out += secrets.token_urlsafe(length + 8).translate(_NOT_ALPHANUMERIC)
    return out[:length]


def new_id(kind: tuple[str, int]) -> str:
    """A fresh id such as `new_id(RECORD_ID)` -> 'recXXXXXXXXXXXXXX'."""
    prefix, length = kind
    return prefix + random_alphanumeric(length)


def new_ids(kind: tuple[str, int], count: int) -> list[str]:
    """`count` fresh ids of one kind, drawing the randomness for all of them at once."""
    prefix, length = kind
    pool = random_alphanumeric(length * count)
    return [prefix + pool[start:start + length] for start in range(0, length * count, length)]


_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # ASCII order
_TIME_CHARS = 7  # 62**7 milliseconds: until the year 2080


def new_record_ids(count: int, *, now_ms: int | None = None) -> list[str]:
    """`count` fresh record ids that sort after every id made at an earlier millisecond:
    'rec' + the time in base 62 + random letters and digits (14 characters in all)."""
    prefix, length = RECORD_ID
    stamp = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    head = ""
    for _ in range(_TIME_CHARS):
        stamp, digit = divmod(stamp, len(_DIGITS))
        head = _DIGITS[digit] + head
    tail = length - _TIME_CHARS
    pool = random_alphanumeric(tail * count)
    return [prefix + head + pool[start:start + tail] for start in range(0, tail * count, tail)]


def new_token() -> str:
    """A fresh bearer token; only its hash is ever stored."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_log_id() -> str:
    """A request id in Lark's style: a UTC timestamp followed by random hex."""
    return time.strftime("%Y%m%d%H%M%S", time.gmtime()) + secrets.token_hex(8).upper()


DATETIME_FORMAT = "%Y-%m-%d %H:%M:%S"
DEFAULT_TIMEZONE = "UTC"  # a site or Base whose author named no time zone


def now_text() -> str:
    """The current local time, for the platform's own bookkeeping (not record cells)."""
    return datetime.now().strftime(DATETIME_FORMAT)


def now_in(zone: str) -> str:
    """The current time in the IANA zone `zone`, as a Base datetime cell
    ('YYYY-MM-DD HH:MM:SS'): what created/updated time cells hold."""
    second = int(time.time())
    kept = _now_by_zone.get(zone)
    if kept is not None and kept[0] == second:
        return kept[1]
    text = datetime.fromtimestamp(second, UTC).astimezone(zone_info(zone)).strftime(
        DATETIME_FORMAT)
    _now_by_zone[zone] = (second, text)
    return text


# The text of the last second asked for, by zone: writes within one second share it.
_now_by_zone: dict[str, tuple[int, str]] = {}
