"""Preparing a batch column by column gives what preparing it cell by cell gives: the
same stored values, and the same first error, worded the same."""

from __future__ import annotations

import sqlite3
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from basedb.platform.domain.records import prepare_grid, prepare_rows
from basedb.platform.storage.cells import (
    InvalidCell,
    column_encoder_for,
    encode_cell,
)
from basedb.protocol import ApiFailure
from basedb.workspace.model import Field, Table

FIELDS = (
    Field("fldText", "Title", "text"),
    Field("fldNum", "Amount", "number"),
    Field("fldSel", "Status", "select", options=("Open", "Done")),
    Field("fldTags", "Tags", "select", multiple=True, options=("a", "b")),
    Field("fldBox", "Done", "checkbox"),
    Field("fldDue", "Due", "datetime"),
    Field("fldNo", "No", "auto_number"),
)
TABLE = Table(table_id="tblT", name="T", fields=FIELDS)
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([2**53, 2**53 + 1, -2**60]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(
        ["", "Open", "Done", "open", "x", "2025-01-31", "2025-01-31 09:00:00", "a" * 100_001]),
    st.lists(st.sampled_from(["a", "b", "c"]), max_size=3), st.text(max_size=5))


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(FIELDS), st.lists(VALUES, max_size=6))
def test_a_column_encodes_as_its_cells(field: Field, values: list[Any]) -> None:
    encode_column = column_encoder_for(field)
    if encode_column is None:
        return
    expected: list[Any] | None = []
    for value in values:
        try:
            assert expected is not None
            expected.append(encode_cell(field, value, "", zone="UTC"))
        except InvalidCell:
            expected = None
            break
    got = encode_column(values)
    if got is not None:
        assert got == expected
        assert [type(v) for v in got] == [type(v) for v in expected or []]


def _outcome(prepare: Any) -> Any:
    try:
        return ("ok", prepare())
    except ApiFailure as failure:
        return ("failed", failure.code, failure.msg)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["Title", "Amount", "Status", "Tags", "Done", "Due",
                                 "fldText", "No", "Nope"]), min_size=1, max_size=4),
       st.data())
def test_a_grid_prepares_as_its_rows(keys: list[str], data: st.DataObject) -> None:
    rows = data.draw(st.lists(st.lists(VALUES, min_size=len(keys), max_size=len(keys)),
                              min_size=1, max_size=5))
    conn = sqlite3.connect(":memory:")
    cells = [[(("rows", r, c), keys[c], value) for c, value in enumerate(row)]
             for r, row in enumerate(rows)]
    def by_columns() -> list[list[Any]]:
        # prepare_grid answers column by column, one list per key, in key order.
        prepared = prepare_rows(conn, TABLE, cells, zone="UTC")
        return [list(column) for column in zip(*(row.values() for row in prepared),
                                               strict=True)]

    assert _outcome(lambda: prepare_grid(conn, TABLE, keys, rows, zone="UTC")) == _outcome(
        by_columns)
