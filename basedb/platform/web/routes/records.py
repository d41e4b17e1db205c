"""Records of a Base table: list (column-oriented), get, create, patch, delete, batches."""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from basedb.platform.domain import bases, records
from basedb.platform.domain.access import require_base
from basedb.platform.domain.records import MAX_BATCH
from basedb.platform.web.http import MIB, Call, Endpoint, QueryParam
from basedb.platform.web.routes.schemas import (
    BOOLEAN,
    CELL,
    IDS,
    INTEGER,
    MAX_OFFSET,
    MAX_PAGE,
    PAGE_QUERY,
    RECORD,
    STRING,
    STRINGS,
    array,
    obj,
)
from basedb.protocol import bad_request, not_found
from basedb.workspace.model import Table

# A record holds up to a few hundred fields of up to 100,000 characters each.
RECORD_BODY_LIMIT = 8 * MIB
BATCH_BODY_LIMIT = 32 * MIB


def _table_and_zone(conn: sqlite3.Connection, call: Call) -> tuple[Table, str]:
    """The table named by the path (`base_token`, `table_id`), if the caller may use its
    Base, and the time zone the Base writes datetimes in. The caller's access is checked
    on every call; the table itself is kept by catalog revision."""
    base = require_base(conn, call.caller, call.path["base_token"])
    table = records.current_table(conn, call.caches.tables, base.base_token,
                                  call.path["table_id"])
    return table, base.timezone


def _table(conn: sqlite3.Connection, call: Call) -> Table:
    return _table_and_zone(conn, call)[0]


def list_records(call: Call) -> dict[str, Any]:
    offset = call.query_int("offset", default=0, minimum=0, maximum=MAX_OFFSET)
    limit = call.query_int("limit", default=100, minimum=1, maximum=MAX_PAGE)
    after = _page_position(call.query.get("page_token"))
    with call.store.read() as conn:
        page = records.list_page(conn, _table(conn, call), offset, limit, after=after)
    data = page.to_dict()
    if page.last_seq is not None:
        data["page_token"] = f"{_TOKEN_PREFIX}{page.last_seq}"
    return data


_TOKEN_PREFIX = "seq"
_TOKEN_RE = re.compile(r"seq([0-9]{1,18})")


def _page_position(token: str | None) -> int | None:
    """The insertion number a page token stands for (records after it come next)."""
    if token is None:
        return None
    found = _TOKEN_RE.fullmatch(token)
    if found is None:
        raise bad_request("Query parameter page_token is not a token this listing gave",
                          parameter="?page_token", received=token,
                          fix="send the page_token of the previous page, or leave it out "
                              "for the first page")
    return int(found.group(1))


def create_record(call: Call) -> dict[str, Any]:
    body = call.body_object()
    with call.store.write() as conn:
        table, zone = _table_and_zone(conn, call)
        prepared = records.prepare_values(conn, table, body, zone=zone)
        [record_id] = records.insert_records(conn, table, [prepared],
                                             actor=call.caller.user_id, zone=zone)
        return records.require_record(conn, table, record_id).to_dict()


def get_record(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        return records.require_record(conn, _table(conn, call),
                                      call.path["record_id"]).to_dict()


def patch_record(call: Call) -> dict[str, Any]:
    body = call.body_object()
    record_id = call.path["record_id"]
    with call.store.write() as conn:
        table, zone = _table_and_zone(conn, call)
        records.require_record(conn, table, record_id)
        prepared = records.prepare_values(conn, table, body, zone=zone)
        records.update_records(conn, table, [record_id], prepared, actor=call.caller.user_id,
                               zone=zone)
        return records.require_record(conn, table, record_id).to_dict()


def delete_record(call: Call) -> dict[str, Any]:
    record_id = call.path["record_id"]
    with call.store.write() as conn:
        table = _table(conn, call)
        records.require_record(conn, table, record_id)
        records.delete_records(conn, table, [record_id])
    return records.RecordDeleted(record_id).to_dict()


def _string_list(value: Any, at: str, what: str, *, limit: int) -> list[str]:
    if not isinstance(value, list) or not value or len(value) > limit or not all(
            isinstance(v, str) and v for v in value):
        raise bad_request(f"{at[1:]} must be a non-empty array of {what}", parameter=at,
                          received=value, fix=f"send 1 to {limit} strings")
    return value


def batch_create(call: Call) -> dict[str, Any]:
    body = call.body_object({"fields", "rows"})
    keys = _string_list(body.get("fields"), "/fields", "field names or ids",
                        limit=bases.MAX_FIELDS_PER_TABLE)
    rows = body.get("rows")
    if not isinstance(rows, list) or not rows or len(rows) > MAX_BATCH:
        raise bad_request(f"rows must be an array of 1 to {MAX_BATCH} rows", parameter="/rows",
                          received=(f"{len(rows)} rows" if isinstance(rows, list) else rows),
                          fix=f"send at most {MAX_BATCH} rows per call and split larger "
                          "imports into several calls")
    for index, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(keys):
            raise bad_request(f"Each row must be an array of {len(keys)} values, one per "
                              "entry of fields", parameter=f"/rows/{index}", received=row,
                              fix="give every row exactly one value per field, null for none")
    with call.store.write() as conn:
        table, zone = _table_and_zone(conn, call)
        fields = [records.resolve_field(table, key, f"/fields/{index}")
                  for index, key in enumerate(keys)]
        columns = records.prepare_grid(conn, table, keys, rows, zone=zone)
        # As lark-cli's +record-batch-create reads it: the rows as stored, aligned with
        # `fields`.
        written = records.insert_grid(conn, table, fields, columns,
                                      actor=call.caller.user_id, zone=zone)
    return written.to_dict()


def batch_update(call: Call) -> dict[str, Any]:
    body = call.body_object({"record_id_list", "patch"})
    record_ids = list(dict.fromkeys(_string_list(body.get("record_id_list"), "/record_id_list",
                                                 "record ids", limit=MAX_BATCH)))
    patch = body.get("patch")
    if not isinstance(patch, dict) or not patch:
        raise bad_request("patch must be a non-empty object of field values", parameter="/patch",
                          received=patch, fix='send {"field name": value, …}')
    with call.store.write() as conn:
        table, zone = _table_and_zone(conn, call)
        existing = records.existing_record_ids(conn, table.table_id, record_ids)
        for index, record_id in enumerate(body["record_id_list"]):
            if record_id not in existing:
                raise not_found(f"Record {record_id} of table {table.table_id}",
                                f"/record_id_list/{index}", record_id,
                                "remove it or use ids from GET …/records")
        prepared = records.prepare_values(conn, table, patch, at="/patch", zone=zone)
        records.update_records(conn, table, record_ids, prepared, actor=call.caller.user_id,
                               zone=zone)
        names = [records.resolve_field(table, key, "/patch").name for key in patch]
        first = records.read_records(conn, table, record_ids[:1])[record_ids[0]]
    patched = records.RecordsPatched(tuple(record_ids), {name: first[name] for name in names})
    return patched.to_dict()


_RECORDS = "/bases/{base_token}/tables/{table_id}/records"
_RECORD = _RECORDS + "/{record_id}"
_FLAT = {"type": "object", "additionalProperties": CELL,
         "description": "Cell values keyed by field name or field_id."}

_KEYS = "Keys are the table's field names or ids (400 for any other)."

ENDPOINTS = [
    Endpoint("GET", _RECORDS, list_records, "A page of records, column-oriented.", "records",
             query=(*PAGE_QUERY, QueryParam(
                 "page_token", {"type": "string", "pattern": _TOKEN_RE.pattern},
                 "The page_token of the previous page: the page after it (offset is then "
                 "not used).")),
             description="`data[i][j]` is the value of field `field_id_list[j]` in record "
             "`record_id_list[i]`, in insertion order. Page with `page_token`: each page "
             "costs the same however deep it is, where `offset` reads and skips the "
             "records before it (kept for callers that page by offset).",
             response=obj({"fields": STRINGS, "field_id_list": STRINGS,
                           "record_id_list": STRINGS, "data": array(array(CELL)),
                           "has_more": BOOLEAN, "total": INTEGER,
                           "page_token": {**STRING, "description": "Present when has_more: "
                                          "send it back for the next page."}},
                          ("fields", "field_id_list", "record_id_list", "data", "has_more",
                           "total"))),
    Endpoint("POST", _RECORDS, create_record, "Create a record.", "records", body=_FLAT,
             body_limit=RECORD_BODY_LIMIT, description=_KEYS, response=RECORD),
    Endpoint("GET", _RECORD, get_record, "One record.", "records", response=RECORD),
    Endpoint("PATCH", _RECORD, patch_record, "Update some fields of a record.", "records",
             body=_FLAT, body_limit=RECORD_BODY_LIMIT, description=_KEYS, response=RECORD),
    Endpoint("DELETE", _RECORD, delete_record, "Delete a record (and links to it).",
             "records", response=obj({"record_id": STRING, "deleted": BOOLEAN},
                                     ("record_id", "deleted"))),
    Endpoint("POST", _RECORDS + "/batch_create", batch_create,
             f"Create up to {MAX_BATCH} records.", "records",
             description="Each row holds one value per entry of fields, in the same order "
             "(null for none); fields are the table's field names or ids (400 otherwise). "
             f"At most {MAX_BATCH} rows, as in Base's own batch_create (lark-cli's `base "
             "+record-batch-create`), so that a load written against this platform runs "
             "unchanged against Base: send more rows in several calls.",
             body=obj({"fields": {**IDS, "minItems": 1, "maxItems": bases.MAX_FIELDS_PER_TABLE,
                                  "description": "Field names or ids."},
                       "rows": array(array(CELL), minItems=1, maxItems=MAX_BATCH)},
                      ("fields", "rows")),
             body_limit=BATCH_BODY_LIMIT,
             response=obj({"fields": STRINGS, "field_id_list": STRINGS,
                           "record_id_list": STRINGS, "data": array(array(CELL))},
                          ("fields", "field_id_list", "record_id_list", "data"))),
    Endpoint("POST", _RECORDS + "/batch_update", batch_update,
             f"Apply one patch to up to {MAX_BATCH} records.", "records",
             body=obj({"record_id_list": {**IDS, "minItems": 1, "maxItems": MAX_BATCH},
                       "patch": {**_FLAT, "minProperties": 1}},
                      ("record_id_list", "patch")),
             body_limit=RECORD_BODY_LIMIT,
             response=obj({"record_id_list": STRINGS,
                           "update": {"type": "object", "additionalProperties": CELL,
                                      "description": "The values written, by field name."}},
                          ("record_id_list", "update"))),
]
