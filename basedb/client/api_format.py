"""`basedb api --format` and `--jq`: a JSON answer shown as lark-cli's `api` shows it
(`internal/output/format.go`, `jq.go`, `table.go`, `csv.go`).

    json     the answer as it came (api_output.success_text)
    ndjson   the answer's items, one JSON object a line
    table    the items as aligned columns
    csv      the items as CSV with a header row

The items are the first array in `data` (a Lark envelope), else the first array of the
answer itself; without one the whole answer is the one item. `--jq EXPR` filters the
answer with jq (the `jq` package, bindings to the jq library itself): strings print raw,
other scalars as JSON, objects and arrays as indented JSON, one result a line.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from basedb.core.errors import UsageError

FORMATS = ("json", "ndjson", "table", "csv")


def check_jq(expression: str) -> Any:
    """The compiled jq program, or a UsageError naming what is wrong with it."""
    import jq  # noqa: PLC0415  (only `api --jq` needs it)

    try:
        return jq.compile(expression)
    except ValueError as error:
        raise UsageError(f"invalid jq expression: {error}", code="JQ_INVALID",
                         hint="Check the expression, e.g. --jq '.data.items[].name'.") from None


def jq_text(program: Any, answer: Any) -> str:
    """Every result of the jq program on the answer, one a line."""
    try:
        results = program.input_value(answer).all()
    except ValueError as error:
        raise UsageError(f"jq error: {error}", code="JQ_FAILED",
                         hint="The expression does not fit this answer's shape.") from None
    return "".join(_jq_line(value) for value in results)


def _jq_line(value: Any) -> str:
    if isinstance(value, str):
        return value + "\n"
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    return json.dumps(value) + "\n"


def items_of(answer: Any) -> list[Any] | None:
    """The answer's list of items, as lark-cli's ExtractItems finds it."""
    if isinstance(answer, list):
        return answer
    if not isinstance(answer, dict):
        return None
    data = answer.get("data")
    for holder in ((data,) if isinstance(data, dict) else ()) + (answer,):
        for value in holder.values():
            if isinstance(value, list):
                return value
    return None


def formatted(answer: Any, fmt: str) -> str:
    """The answer in `fmt` (ndjson, table or csv)."""
    found = items_of(answer)
    items = found if found is not None else [answer]
    if fmt == "ndjson":
        return "".join(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n"
                       for item in items)
    columns, rows = _rows(items)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
        return buffer.getvalue()
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    lines = [columns, ["-" * w for w in widths], *rows]
    return "".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True))
                   .rstrip() + "\n" for line in lines)


def _rows(items: list[Any]) -> tuple[list[str], list[list[str]]]:
    columns: dict[str, None] = {}
    for item in items:
        for key in item if isinstance(item, dict) else ("value",):
            columns.setdefault(str(key), None)
    names = list(columns)
    rows = [[_cell(item.get(name) if isinstance(item, dict) else item) for name in names]
            for item in items]
    return names, rows


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
