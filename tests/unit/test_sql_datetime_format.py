"""to_char's templates (tests/differential compares them with a real PostgreSQL)."""

from __future__ import annotations

from datetime import datetime

import pytest

from basedb.sql.datetime_format import FormatError, parse_format, to_char
from basedb.sql.sqlite.udf_time import bdb_to_char

MOMENT = datetime(2024, 3, 1, 8, 5, 9, 120456)  # a Friday


@pytest.mark.parametrize(("template", "written"), [
    ("YYYY-MM", "2024-03"),
    ("yyyy-mm-dd hh24:mi:ss", "2024-03-01 08:05:09"),
    ("FMMonth FMDDth, YYYY HH12:MI AM", "March 1st, 2024 08:05 AM"),
    ("Month|Day|", "March    |Friday   |"),
    ("TMMonth TMDay", "March Friday"),
    ("MON Mon mon DY Dy dy", "MAR Mar mar FRI Fri fri"),
    ("DDD D ID IW WW W Q CC J", "061 6 5 09 09 1 1 21 2460371"),
    ("MS US FF2 SSSS", "120 120456 12 29109"),
    ('YYYY"年"MM"月" "Q"Q', "2024年03月 Q1"),
    ("RM rm FMRM", "III  iii  III"),
    ("Y,YYY YYY YY Y IYYY", "2,024 024 24 4 2024"),
    ("a.m. PM AD b.c.", "a.m. AM AD a.d."),
    ('\\"HH\\"', '"08"'),
    ("FMFMDD FM", "FM01 "),
])
def test_templates_write_as_postgresql_writes_them(template: str, written: str) -> None:
    assert to_char(MOMENT, parse_format(template)) == written


@pytest.mark.parametrize("template", ["TZ", "HH24 OF", "tzh:tzm", "DDSP"])
def test_time_zone_patterns_and_spelling_are_refused(template: str) -> None:
    with pytest.raises(FormatError):
        parse_format(template)


def test_the_platform_function_reads_local_timestamps() -> None:
    assert bdb_to_char("2024-02-29 23:59:59", "FMDD/FMMM HH12 PM") == "29/2 11 PM"
    assert bdb_to_char(None, "YYYY") is None
    assert bdb_to_char("2024-02-29 23:59:59", "") is None  # as PostgreSQL: NULL
