"""Mutations: the fixed record writes a function.json declares, run in one transaction.

A spec names a table and an action. `set` maps fields to a "$param", a literal or
"@current_user"; a missing or null optional param skips its field (the old value stays,
and the field is reported in `ignored_fields`). `recordId` is a "$param" (a list param
makes a batch); ids that do not exist are reported in `record_not_found`. `precondition`
maps fields to the value they must hold for a record to be written; records that do not
match are skipped and reported in `precondition_failed`. `clear` maps fields to a BOOL
param; true clears the field. Every write goes through `basedb.platform.domain.records`, so the
Base API's cell rules hold, and the caller's `store.write()` makes the call atomic.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain import records
from basedb.platform.domain.records import MAX_BATCH
from basedb.platform.storage.cells import InvalidCell, closest
from basedb.protocol import ApiFailure, Code, quote, unexecuted_message
from basedb.protocol.findings import pointer
from basedb.sql.model import ParamBinding
from basedb.workspace.model import RECORD_ID_FIELD, Catalog, Field, Mutation, Table

CURRENT_USER = "@current_user"
# "$name" references a param; any other value is a literal (the rule of basedb check).
_REFERENCE_RE = re.compile(r"^\$([A-Za-z][A-Za-z0-9_]{0,63})\Z")
_ID_CELL_TYPES = frozenset({"link", "user"})


@frozen_dataclass
class FromParam:
    name: str


@frozen_dataclass
class FromLiteral:
    value: Any


@frozen_dataclass
class FromCaller:
    pass


Source = FromParam | FromLiteral | FromCaller


def source_of(value: Any) -> Source:
    if value == CURRENT_USER:
        return FromCaller()
    match = _REFERENCE_RE.match(value) if isinstance(value, str) else None
    return FromParam(match.group(1)) if match else FromLiteral(value)


@frozen_dataclass
class MutationPlan:
    """A spec resolved against the live catalog."""

    function_id: str
    table: Table
    action: str
    sets: tuple[tuple[Field, Source], ...]
    record_param: str | None
    preconditions: tuple[tuple[Field, Source], ...]
    clears: tuple[tuple[Field, str], ...]  # field, BOOL param


def plan_mutation(decl: Mutation, catalog: Catalog) -> MutationPlan:
    """Resolve the spec's names; ValueError when one no longer exists (a function whose
    re-validation passed never raises)."""
    spec = decl.spec
    if spec is None:
        raise ValueError("the mutation has no valid spec")
    table = catalog.table(spec.table) if isinstance(spec.table, str) else None
    if table is None:
        raise ValueError(f"table {spec.table!r} is not bound")

    def field(name: str) -> Field:
        found = table.field(name)
        if found is None:
            raise ValueError(f"field {name!r} is not in table {table.name!r}")
        return found

    clears = []
    for name, value in spec.clear.items():
        flag = source_of(value)
        if not isinstance(flag, FromParam):
            raise ValueError(f"clear of {name!r} is not a parameter reference")
        clears.append((field(name), flag.name))
    record = source_of(spec.record_id) if spec.record_id is not None else None
    return MutationPlan(
        function_id=decl.function_id, table=table, action=str(spec.action),
        sets=tuple((field(name), source_of(v)) for name, v in spec.set.items()),
        record_param=record.name if isinstance(record, FromParam) else None,
        preconditions=tuple((field(name), source_of(v))
                            for name, v in spec.precondition.items()),
        clears=tuple(clears))


def mutation_bindings(decl: Mutation, catalog: Catalog) -> list[ParamBinding]:
    """Which param is written to (or compared with) which field: set, precondition and
    recordId, as `basedb check` sees them. Names that do not resolve are skipped."""
    spec = decl.spec
    table = catalog.table(spec.table) if spec is not None and isinstance(spec.table,
                                                                          str) else None
    if spec is None or table is None:
        return []
    index = {p.name: p.index for p in decl.params if isinstance(p.name, str)}
    out = []
    pairs = [*spec.set.items(), *spec.precondition.items()]
    for name, value in pairs:
        source, found = source_of(value), table.field(name)
        if isinstance(source, FromParam) and found is not None and source.name in index:
            out.append(ParamBinding(index[source.name], table, found, True))
    record = source_of(spec.record_id) if spec.record_id is not None else None
    if isinstance(record, FromParam) and record.name in index:
        out.append(ParamBinding(index[record.name], table, RECORD_ID_FIELD, True))
    return out


# ------------------------------------------------------------------------ running


@frozen_dataclass
class _Origin:
    """Where a written cell's value came from, to word a failure."""

    param: str | None
    value: Any
    is_list: bool


def run_mutation(conn: sqlite3.Connection, plan: MutationPlan, values: Mapping[str, Any], *,
                 caller_id: str, zone: str) -> dict[str, Any]:
    """Apply the mutation with validated, normalised param `values` (absent params are
    missing or None), writing datetimes in `zone` (the deployment's time zone). The
    caller holds `store.write()`; any failure rolls it all back."""
    cells, ignored = _cells(plan, values, caller_id)
    prepared = _prepare(conn, plan.table, cells, zone)
    if plan.action == "create":
        created = records.insert_records(conn, plan.table, [prepared], actor=caller_id,
                                         zone=zone)
        return _result(created, [], ignored, [])
    ids = _record_ids(plan, values)
    existing = records.existing_record_ids(conn, plan.table.table_id, ids)
    missing = [i for i in ids if i not in existing]
    targets = [i for i in ids if i in existing]
    failed = _precondition_failures(conn, plan, targets, values, caller_id)
    targets = [i for i in targets if i not in failed]
    if plan.action == "delete":
        records.delete_records(conn, plan.table, targets)
        return _result(targets, missing, [], failed)
    if not prepared:
        return _result([], missing, ignored, failed)  # every field was skipped
    records.update_records(conn, plan.table, targets, prepared, actor=caller_id, zone=zone)
    return _result(targets, missing, ignored, failed)


def _result(written: list[str], missing: list[str], ignored: list[str],
            failed: list[str]) -> dict[str, Any]:
    return {"recordIds": written, "affected": len(written), "record_not_found": missing,
            "ignored_fields": ignored, "precondition_failed": failed}


def _cells(plan: MutationPlan, values: Mapping[str, Any], caller_id: str,
           ) -> tuple[dict[str, tuple[Field, Any, _Origin]], list[str]]:
    """{JSON Pointer: (field, cell value, origin)} to write, and the skipped field names."""
    cells: dict[str, tuple[Field, Any, _Origin]] = {}
    ignored: list[str] = []
    written: set[str] = set()
    for field, source in plan.sets:
        if isinstance(source, FromParam):
            value = values.get(source.name)
            if value is None:
                ignored.append(field.name)
                continue
            at = _param_pointer(source.name)
            cells[at] = (field, _to_cell(field, value),
                         _Origin(source.name, value, isinstance(value, list)))
        else:
            value = caller_id if isinstance(source, FromCaller) else source.value
            at = _set_pointer(field.name)
            cells[at] = (field, _to_cell(field, value) if isinstance(source, FromCaller)
                         else value, _Origin(None, value, False))
        written.add(field.field_id)
    for field, flag in plan.clears:
        if values.get(flag) is not True:
            continue
        for at in [at for at, cell in cells.items() if cell[0].field_id == field.field_id]:
            del cells[at]
        cells[_param_pointer(flag)] = (field, None, _Origin(flag, True, False))
        if field.name in ignored:
            ignored.remove(field.name)
    return cells, ignored


@lru_cache(maxsize=4096)
def _param_pointer(name: str) -> str:
    return pointer("params", name)


@lru_cache(maxsize=4096)
def _set_pointer(field_name: str) -> str:
    return pointer("spec", "set", field_name)


def _to_cell(field: Field, value: Any) -> Any:
    """A param value in the Base API's cell shape: ids become [{"id": …}] for link and
    user fields, and one option name a list for a multi-select field."""
    if field.type in _ID_CELL_TYPES:
        items = value if isinstance(value, list) else [value]
        if all(isinstance(item, str) for item in items):
            return [{"id": item} for item in dict.fromkeys(items)]
        return value
    if field.type == "select" and field.multiple and isinstance(value, str):
        return [value]
    return value


def _prepare(conn: sqlite3.Connection, table: Table,
             cells: dict[str, tuple[Field, Any, _Origin]], zone: str) -> dict[str, Any]:
    if not cells:
        return {}
    try:
        [prepared] = records.prepare_rows(conn, table, [
            [(at, field.field_id, value) for at, (field, value, _) in cells.items()]],
            zone=zone)
    except InvalidCell as exc:
        raise _cell_failure(exc, table, cells) from None
    return prepared


def _cell_failure(exc: InvalidCell, table: Table,
                  cells: dict[str, tuple[Field, Any, _Origin]]) -> ApiFailure:
    base = next((at for at in cells if exc.at == at or exc.at.startswith(at + "/")), None)
    origin = cells[base][2] if base is not None else None
    if base is None or origin is None or origin.param is None:
        return ApiFailure(
            Code.EXECUTION_FAILED,
            f"The function writes a fixed value that table {quote(table.name)} no longer "
            f"accepts ({exc.reason.rstrip('. ')}). Fix: ask the function's author to fix "
            "its declaration and redeploy. Executed: no. Retry: do not retry.", status=422)
    if exc.field is not None and exc.field.type == "link":
        return _missing_link_failure(exc, base, origin)
    if exc.at == base or origin.is_list:
        return ApiFailure(Code.PARAMETER_INVALID, exc.msg)
    # A single value written as a one-element list cell: point at the param itself.
    field = exc.field
    candidates = closest(str(origin.value), field.options) if field and field.is_option else []
    return ApiFailure(Code.PARAMETER_INVALID, unexecuted_message(
        exc.reason, parameter=base, received=origin.value, fix=exc.fix,
        candidates=candidates))


def _missing_link_failure(exc: InvalidCell, base: str, origin: _Origin) -> ApiFailure:
    """A param naming a record that does not exist, worded for the function's caller:
    the Base API's wording points at the linked table's records endpoint, which a site
    member (and the agent acting for one) usually may not read."""
    value, at = origin.value, base
    if origin.is_list:
        index = exc.at[len(base) + 1:].split("/", 1)[0]
        if index.isdigit() and int(index) < len(origin.value):
            value, at = origin.value[int(index)], pointer("params", str(origin.param), index)
    field = exc.field.name if exc.field is not None else "?"
    return ApiFailure(Code.PARAMETER_INVALID, unexecuted_message(
        f"No record {quote(value)} exists in the table that field {quote(field)} links to",
        parameter=at, received=value,
        fix="pass the id of an existing record, obtained the way the parameter's description "
            "says (describe the function); a title, a name or an id of another table does "
            "not work"))


def _record_ids(plan: MutationPlan, values: Mapping[str, Any]) -> list[str]:
    name = plan.record_param
    raw = values.get(name) if name is not None else None
    if raw is None:
        return []
    ids = list(dict.fromkeys(raw if isinstance(raw, list) else [raw]))
    if len(ids) > MAX_BATCH:
        raise ApiFailure(Code.PARAMETER_INVALID, unexecuted_message(
            f"A call {plan.action}s at most {MAX_BATCH} records", parameter=pointer(
                "params", str(name)), received=f"{len(ids)} record ids",
            fix=f"split the ids into calls of at most {MAX_BATCH}"))
    return ids


# ------------------------------------------------------------------ preconditions


def _precondition_failures(conn: sqlite3.Connection, plan: MutationPlan, targets: list[str],
                           values: Mapping[str, Any], caller_id: str) -> list[str]:
    checks: list[tuple[Field, Any]] = []
    for field, source in plan.preconditions:
        if isinstance(source, FromParam):
            expected = values.get(source.name)
            if expected is None:
                continue  # an optional param not given sets no condition
        else:
            expected = caller_id if isinstance(source, FromCaller) else source.value
        checks.append((field, expected))
    if not checks or not targets:
        return []
    current = records.read_records(conn, plan.table, targets)
    failed = []
    for record_id in targets:
        cells = current.get(record_id, {})
        for field, expected in checks:
            value = record_id if field.type == "record_id" else cells.get(field.name)
            if not _matches(field, value, expected):
                failed.append(record_id)
                break
    return failed


def _ids(value: Any) -> list[Any]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [item.get("id") if isinstance(item, dict) else item for item in items]


def _is_empty(value: Any) -> bool:
    return value is None or value == [] or value == "" or value is False


def _matches(field: Field, current: Any, expected: Any) -> bool:
    """Whether a record's current cell meets a precondition value. On a multi-valued
    field a single value matches when it is among the cell's values (as SQL `=` does)
    and a list matches the same set; on a single-valued field a list means "one of"."""
    if expected is None:
        return _is_empty(current)
    ftype = field.type
    if field.is_multi_valued or ftype in ("user", "created_by", "updated_by"):
        have = _ids(current)
        if isinstance(expected, list):
            want = _ids(expected)
            return set(have) == set(want) if field.is_multi_valued else (
                bool(have) and have[0] in want)
        return _ids(expected)[0] in have
    options = expected if isinstance(expected, list) else [expected]
    return any(_same_scalar(ftype, current, option) for option in options)


def _same_scalar(ftype: str, current: Any, expected: Any) -> bool:
    if ftype == "checkbox":
        return bool(current) == expected if isinstance(expected, bool) else False
    if ftype in ("number", "auto_number"):
        try:
            return current is not None and float(current) == float(expected)
        except (TypeError, ValueError):
            return False
    if ftype in ("datetime", "created_at", "updated_at") and isinstance(expected, str):
        padded = expected + " 00:00:00" if len(expected) == 10 else expected
        return current == padded
    if expected == "" and current is None:
        return True
    return bool(current == expected)
