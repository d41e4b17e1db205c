"""The fixed record routes a FaaS handler reaches through `ctx.records`.

A handler asks for `create`, `batchCreate`, `update`, `delete`, `list` or `get` on one
of the site's bound tables (by name or table id; fields by name or field id; cell values
as the Base API takes them). Each call is one transaction through
`basedb.platform.domain.records`, the platform's single write path, with the invoking user as
the actor, so the same cell rules and bookkeeping hold as for the Base API. Calls are not
grouped: a handler that makes three writes and then fails has made three writes, which
is why upstream asks handlers to report partial progress in `data`.

A refused call raises `RecordCallError(code, message)`; the runner turns it into a
rejected promise with `error.code` (a `basedb.protocol.codes.RecordErrorCode`) and
`error.message` in the platform's "… Executed: no. Retry: …" template, so a handler can
catch and report it.
"""

from __future__ import annotations

import sqlite3
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from basedb.platform.domain import bases, records
from basedb.platform.storage import platform_log
from basedb.platform.storage.cells import InvalidCell, closest
from basedb.platform.storage.store import Store, is_busy_error
from basedb.protocol import (
    BUSY_MSG,
    INTERNAL_ERROR_MSG,
    ApiFailure,
    RecordErrorCode,
    quote,
    unexecuted_message,
)
from basedb.protocol.findings import pointer
from basedb.workspace.model import Catalog, Table

MAX_PAGE_SIZE = 200  # as GET …/records
DEFAULT_PAGE_SIZE = 100


class RecordCallError(Exception):
    """A record call the platform refused; nothing of that call was written."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _refused(code: str, reason: str, *, parameter: str, fix: str, received: Any,
             candidates: list[str] | tuple[str, ...] = ()) -> RecordCallError:
    return RecordCallError(code, unexecuted_message(
        reason, parameter=parameter, fix=fix, received=received, candidates=candidates))


@dataclass(slots=True)
class RecordRoutes:
    """The record calls of one FaaS run, bound to the site's tables and the caller."""

    store: Store
    catalog: Catalog
    actor: str
    log_id: str
    zone: str = "UTC"  # the deployment's time zone: datetime cells are written in it
    writes: int = 0  # write calls that succeeded (reported if the run then fails)

    def call(self, op: Any, args: Any) -> Any:
        """Run one call; raises RecordCallError when it is refused."""
        route = _ROUTES.get(op) if isinstance(op, str) else None
        if route is None or not isinstance(args, list):
            raise _refused(RecordErrorCode.INVALID_ARGUMENT, f"Unknown record call {quote(op)}",
                           parameter="/op", received=op, fix="use ctx.records.create, "
                           "batchCreate, update, delete, list or get", candidates=list(_ROUTES))
        method, arity, writes = route
        args = (args + [None] * arity)[:arity]
        try:
            result = method(self, *args)
        except RecordCallError:
            raise
        except InvalidCell as cell:
            code = (RecordErrorCode.FIELD_NOT_FOUND if cell.field is None
                    else RecordErrorCode.INVALID_VALUE)
            raise RecordCallError(code, cell.msg) from None
        except ApiFailure as failure:
            raise RecordCallError(RecordErrorCode.INVALID_VALUE, failure.msg) from None
        except Exception as error:
            if is_busy_error(error):
                raise RecordCallError(RecordErrorCode.BUSY, BUSY_MSG) from None
            # A platform bug: the call's transaction rolled back; the handler may go on.
            _report_bug(error, self.log_id, op)
            raise RecordCallError(RecordErrorCode.INTERNAL_ERROR, INTERNAL_ERROR_MSG) from None
        if writes:
            self.writes += 1
        return result

    # ------------------------------------------------------------------- helpers

    def _table_id(self, table: Any) -> str:
        found = self.catalog.table(table) if isinstance(table, str) and table else None
        if found is None:
            raise _refused(RecordErrorCode.TABLE_NOT_FOUND,
                           f"Table {quote(table)} is not bound to this site",
                           parameter="/table", received=table,
                           fix="use the name or table id of a table the site binds",
                           candidates=closest(str(table), self.catalog.table_names))
        return found.table_id

    def _live_table(self, conn: sqlite3.Connection, table_id: str) -> Table:
        # The catalog was read when the call started; fields may have changed since.
        table = bases.load_table(conn, self.catalog.base_token, table_id)
        if table is None:
            raise _refused(RecordErrorCode.TABLE_NOT_FOUND, f"Table {table_id} no longer exists",
                           parameter="/table", received=table_id,
                           fix="bind an existing table to the site and redeploy")
        return table

    @staticmethod
    def _fields(fields: Any, at: str = "/fields") -> dict[str, Any]:
        if not isinstance(fields, dict):
            raise _refused(RecordErrorCode.INVALID_ARGUMENT, "Field values must be an object",
                           parameter=at, received=fields,
                           fix='pass {"field name": value, …}')
        return fields

    @staticmethod
    def _record_id(record_id: Any) -> str:
        if not isinstance(record_id, str) or not record_id:
            raise _refused(RecordErrorCode.INVALID_ARGUMENT,
                           "The record id must be a non-empty string",
                           parameter="/recordId", received=record_id,
                           fix="pass a record_id returned by create, list or get")
        return record_id

    @staticmethod
    def _missing(table: Table, record_id: str) -> RecordCallError:
        return _refused(RecordErrorCode.RECORD_NOT_FOUND, f"Record {record_id} is not in table "
                        f"{quote(table.name)}", parameter="/recordId", received=record_id,
                        fix="use a record_id returned by create, list or get")

    @staticmethod
    def _record(conn: sqlite3.Connection, table: Table, record_id: str) -> dict[str, Any] | None:
        found = records.read_records(conn, table, [record_id]).get(record_id)
        return None if found is None else {"record_id": record_id, "fields": found}

    # -------------------------------------------------------------------- routes

    def create(self, table: Any, fields: Any) -> dict[str, Any]:
        table_id, values = self._table_id(table), self._fields(fields)
        with self.store.write() as conn:
            live = self._live_table(conn, table_id)
            prepared = records.prepare_values(conn, live, values, at="/fields", zone=self.zone)
            [record_id] = records.insert_records(conn, live, [prepared], actor=self.actor,
                                                 zone=self.zone)
            created = self._record(conn, live, record_id)
        return created or {"record_id": record_id, "fields": {}}

    def batch_create(self, table: Any, rows: Any) -> dict[str, Any]:
        table_id = self._table_id(table)
        if not isinstance(rows, list) or not 1 <= len(rows) <= records.MAX_BATCH:
            raise _refused(RecordErrorCode.INVALID_ARGUMENT,
                           f"rows must be an array of 1 to {records.MAX_BATCH} "
                           "objects", parameter="/rows",
                           received=f"{len(rows)} rows" if isinstance(rows, list) else rows,
                           fix=f"create at most {records.MAX_BATCH} records per call")
        for index, row in enumerate(rows):
            self._fields(row, pointer("rows", index))
        with self.store.write() as conn:
            live = self._live_table(conn, table_id)
            prepared = records.prepare_rows(conn, live, [
                [(("rows", index, key), key, value) for key, value in row.items()]
                for index, row in enumerate(rows)], zone=self.zone)
            record_ids = records.insert_records(conn, live, prepared, actor=self.actor,
                                                zone=self.zone)
        return {"record_id_list": record_ids}

    def update(self, table: Any, record_id: Any, fields: Any) -> dict[str, Any]:
        table_id, rid = self._table_id(table), self._record_id(record_id)
        values = self._fields(fields)
        with self.store.write() as conn:
            live = self._live_table(conn, table_id)
            if not records.existing_record_ids(conn, table_id, [rid]):
                raise self._missing(live, rid)
            prepared = records.prepare_values(conn, live, values, at="/fields", zone=self.zone)
            records.update_records(conn, live, [rid], prepared, actor=self.actor,
                                   zone=self.zone)
            updated = self._record(conn, live, rid)
        return updated or {"record_id": rid, "fields": {}}

    def delete(self, table: Any, record_id: Any) -> dict[str, Any]:
        table_id, rid = self._table_id(table), self._record_id(record_id)
        with self.store.write() as conn:
            live = self._live_table(conn, table_id)
            if not records.delete_records(conn, live, [rid]):
                raise self._missing(live, rid)
        return {"record_id": rid, "deleted": True}

    def list(self, table: Any, options: Any) -> dict[str, Any]:
        table_id = self._table_id(table)
        options = {} if options is None else options
        if not isinstance(options, dict):
            raise _refused(RecordErrorCode.INVALID_ARGUMENT, "List options must be an object",
                           parameter="/options", received=options,
                           fix="pass {offset, limit} or nothing")
        offset = _page_number(options, "offset", 0, 0, 10**9)
        limit = _page_number(options, "limit", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE)
        with self.store.read() as conn:
            return records.list_page(conn, self._live_table(conn, table_id), offset,
                                         limit).to_dict()

    def get(self, table: Any, record_id: Any) -> dict[str, Any]:
        table_id, rid = self._table_id(table), self._record_id(record_id)
        with self.store.read() as conn:
            live = self._live_table(conn, table_id)
            found = self._record(conn, live, rid)
        if found is None:
            raise self._missing(live, rid)
        return found


def _report_bug(error: Exception, log_id: str, op: str) -> None:
    trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    platform_log.write(f"basedb faas: unexpected error (log_id {log_id}) in record call "
                       f"{op}\n{trace}")


def _page_number(options: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = options.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _refused(RecordErrorCode.INVALID_ARGUMENT,
                       f"{name} must be an integer from {low} to {high}",
                       parameter=f"/options/{name}", received=value,
                       fix=f"pass {name}: {default}, or leave it out")
    return value


Route = tuple[Callable[..., Any], int, bool]
"""(method, number of arguments, whether it writes)."""

_ROUTES: dict[str, Route] = {
    "create": (RecordRoutes.create, 2, True),
    "batchCreate": (RecordRoutes.batch_create, 2, True),
    "update": (RecordRoutes.update, 3, True),
    "delete": (RecordRoutes.delete, 2, True),
    "list": (RecordRoutes.list, 2, False),
    "get": (RecordRoutes.get, 2, False),
}
