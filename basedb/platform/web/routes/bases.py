"""Bases, tables and fields (the Base v3 subset; snake_case like Lark).

Shapes follow what lark-cli's Base shortcuts read (`shortcuts/base/` in larksuite/cli):
tables and fields are `{"id", "name", …}`, listings are `{"tables"|"fields": […], "total"}`
paged by `offset`/`limit`.
"""

from __future__ import annotations

from typing import Any

from basedb.platform.domain import bases, grants, identity
from basedb.platform.domain.access import require_base
from basedb.platform.web.http import Call, Endpoint, QueryParam
from basedb.platform.web.routes.paths import path_table
from basedb.platform.web.routes.schemas import (
    BOOLEAN,
    FIELD,
    FIELD_BODY,
    ID,
    INTEGER,
    MAX_OFFSET,
    MAX_PAGE,
    NAME,
    PAGE_QUERY,
    STRING,
    TABLE,
    array,
    obj,
)
from basedb.protocol import bad_request, not_found, quote
from basedb.workspace.model import Field, Table

MAX_FIELDS_PER_TABLE = bases.MAX_FIELDS_PER_TABLE


def field_view(field: Field) -> dict[str, Any]:
    view: dict[str, Any] = {"id": field.field_id, "name": field.name, "type": field.type,
                            "description": field.description}
    if field.type in ("select", "user"):
        view["multiple"] = field.multiple
    if field.type == "select":
        view["options"] = [{"name": o} for o in field.options]
    if field.type == "link":
        view["link_table"] = field.link_table
    return view


def table_view(table: Table) -> dict[str, Any]:
    return {"id": table.table_id, "name": table.name,
            "primary_field": table.fields[0].field_id if table.fields else None,
            "fields": [field_view(f) for f in table.fields]}


# --------------------------------------------------------------------------- bases


def create_base(call: Call) -> dict[str, Any]:
    body = call.body_object({"name", "timezone"})
    name = bases.parse_name(body.get("name"), "/name", "Base")
    timezone = bases.parse_timezone(body.get("timezone"), "/timezone")
    with call.store.write() as conn:
        base = bases.create_base(conn, name, call.caller.user_id, timezone)
    return base.to_dict()


# -------------------------------------------------------------------------- grants


def list_grants(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        base = require_base(conn, call.caller, call.path["base_token"])
        listing = grants.GrantListing(base.owner_id, grants.list_grants(conn, base.base_token))
    return listing.to_dict()


def _grantee(call: Call) -> str:
    user_id = call.body.get("user_id") if isinstance(call.body, dict) else None
    if user_id is None:
        user_id = call.query.get("user_id")
    if not isinstance(user_id, str) or not user_id:
        raise bad_request("user_id is missing", parameter="/user_id", received=user_id,
                          fix="send the user's id (ou_…)")
    return user_id


def add_grant(call: Call) -> dict[str, Any]:
    call.body_object({"user_id"})
    user_id = _grantee(call)
    with call.store.write() as conn:
        base = require_base(conn, call.caller, call.path["base_token"], owner=True)
        if identity.get_user(conn, user_id) is None:
            raise not_found(f"User {user_id}", "/user_id", user_id,
                            "use a user id from POST /users or GET /users/me")
        if user_id == base.owner_id:
            raise bad_request("The Base's owner needs no grant", parameter="/user_id",
                              received=user_id, fix="grant access to another user")
        grants.grant_directly(conn, base.base_token, user_id, call.caller.user_id)
    return grants.GrantGiven(user_id).to_dict()


def remove_grant(call: Call) -> dict[str, Any]:
    if call.body is not None:
        call.body_object({"user_id"})
    user_id = _grantee(call)
    with call.store.write() as conn:
        base = require_base(conn, call.caller, call.path["base_token"], owner=True)
        if not grants.revoke_direct(conn, base.base_token, user_id):
            raise not_found(f"A direct grant to {user_id} on Base {base.base_token}",
                            "/user_id", user_id, f"see GET /bases/{base.base_token}/grants "
                            "(access held through a site ends with the site role)")
        done = grants.reconcile(conn, base.base_token)
    return grants.GrantRevoked(user_id, done.unbound).to_dict()


# -------------------------------------------------------------------------- tables


def list_tables(call: Call) -> dict[str, Any]:
    offset = call.query_int("offset", default=0, minimum=0, maximum=MAX_OFFSET)
    limit = call.query_int("limit", default=100, minimum=1, maximum=MAX_PAGE)
    with call.store.read() as conn:
        require_base(conn, call.caller, call.path["base_token"])
        page = bases.list_tables(conn, call.path["base_token"], offset, limit)
    return page.to_dict()


def create_table(call: Call) -> dict[str, Any]:
    body = call.body_object({"name", "fields"})
    base_token = call.path["base_token"]
    name = bases.parse_name(body.get("name"), "/name", "table")
    raw_fields = body.get("fields", [])
    if not isinstance(raw_fields, list) or len(raw_fields) > MAX_FIELDS_PER_TABLE:
        raise bad_request("fields must be an array of field definitions", parameter="/fields",
                          received=raw_fields, fix=f"send at most {MAX_FIELDS_PER_TABLE} "
                          "objects like {\"name\": …, \"type\": …}")
    with call.store.write() as conn:
        require_base(conn, call.caller, base_token)
        specs = [bases.parse_field_spec(conn, base_token, raw, f"/fields/{index}")
                 for index, raw in enumerate(raw_fields)]
        table = bases.create_table(conn, base_token, name, specs)
    return table_view(table)


def get_table(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        table = path_table(conn, call)
    return table_view(table)


def patch_table(call: Call) -> dict[str, Any]:
    name = bases.parse_name(call.body_object({"name"}).get("name"), "/name", "table")
    base_token = call.path["base_token"]
    with call.store.write() as conn:
        table = path_table(conn, call)
        table = bases.rename_table(conn, base_token, table, name)
    return table_view(table)


def delete_table(call: Call) -> dict[str, Any]:
    base_token = call.path["base_token"]
    with call.store.write() as conn:
        deleted = bases.delete_table(conn, base_token, path_table(conn, call))
    return deleted.to_dict()


# -------------------------------------------------------------------------- fields


def list_fields(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        table = path_table(conn, call)
    return {"fields": [field_view(f) for f in table.fields], "has_more": False,
            "total": len(table.fields)}


def create_field(call: Call) -> dict[str, Any]:
    base_token = call.path["base_token"]
    body = call.body_object()
    with call.store.write() as conn:
        table = path_table(conn, call)
        if len(table.fields) >= MAX_FIELDS_PER_TABLE:
            raise bad_request(f"Table {quote(table.name)} already has {MAX_FIELDS_PER_TABLE} "
                              "fields", parameter="/", fix="delete a field first")
        field = bases.add_field(conn, table, bases.parse_field_spec(conn, base_token, body))
    return field_view(field)


def get_field(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        table = path_table(conn, call)
    return field_view(bases.require_field(table, call.path["field_id"]))


def put_field(call: Call) -> dict[str, Any]:
    base_token = call.path["base_token"]
    body = call.body_object()
    with call.store.write() as conn:
        table = path_table(conn, call)
        field = bases.require_field(table, call.path["field_id"])
        spec = bases.parse_field_spec(conn, base_token, body, current=field)
        field = bases.update_field(conn, table, field, spec)
    return field_view(field)


def delete_field(call: Call) -> dict[str, Any]:
    with call.store.write() as conn:
        table = path_table(conn, call)
        field = bases.require_field(table, call.path["field_id"])
        deleted = bases.delete_field(conn, table, field)
    return deleted.to_dict()


# ------------------------------------------------------------------------ metadata

_TABLES = "/bases/{base_token}/tables"
_TABLE = _TABLES + "/{table_id}"
_FIELDS = _TABLE + "/fields"
_FIELD = _FIELDS + "/{field_id}"
_DELETED = obj({"id": STRING, "deleted": BOOLEAN}, ("id", "deleted"))
_FIELD_UPDATE = {k: v for k, v in FIELD_BODY.items() if k != "required"}

_GRANTS = "/bases/{base_token}/grants"
_GRANT = obj({"user_id": STRING, "name": STRING,
              "via_app_token": {"type": ["string", "null"],
                                "description": "null: given by the Base's owner; else the "
                                "site whose owner or admin the user is (bound to the Base)."},
              "granted_by": STRING, "created_at": STRING},
             ("user_id", "name", "via_app_token", "granted_by", "created_at"))
_GRANTEE = obj({"user_id": ID}, ("user_id",))

# What a field body must also satisfy, by its type; refused with 9499 (400).
_FIELD_RULES = ("Field rules by type (400 when broken): options only on select fields, "
                "multiple only on select and user fields, link_table only on link fields, "
                "where it is required and names a table of the same Base; field names differ "
                "within a table, and option names within a field (both compared without "
                "surrounding spaces).")

ENDPOINTS = [
    Endpoint("POST", "/bases", create_base, "Create a Base owned by the caller.", "bases",
             description="`timezone` (an IANA time zone name, UTC when absent or null; 400 "
             "for any other name) is the zone the record "
             "routes write datetimes in: a value in milliseconds since 1970, and created / "
             "updated times.",
             body=obj({"name": NAME, "timezone": {"type": ["string", "null"]}}, ("name",)),
             response=obj({"base_token": STRING, "name": STRING, "timezone": STRING},
                          ("base_token", "name", "timezone"))),
    Endpoint("GET", _GRANTS, list_grants, "Who may use the Base besides its owner.", "bases",
             description="Direct grants (given by the owner) and grants held through a site "
             "bound to the Base (its owner and admins, while they hold the role).",
             response=obj({"owner_id": STRING, "grants": array(_GRANT), "total": INTEGER},
                          ("owner_id", "grants", "total"))),
    Endpoint("POST", _GRANTS, add_grant, "Let a user use the Base (its owner only).", "bases",
             body=_GRANTEE,
             response=obj({"user_id": STRING, "granted": BOOLEAN}, ("user_id", "granted"))),
    Endpoint("DELETE", _GRANTS, remove_grant, "Take a direct grant back (its owner only).",
             "bases", description="The user id comes in the body or as ?user_id=; one of the "
             "two is needed (400). Sites the "
             "user bound on that access, and that rest on no other access of theirs, are "
             "unbound from the Base (unbound_app_tokens).",
             body=_GRANTEE, body_required=False,
             query=(QueryParam("user_id", ID, "The user (instead of the body)."),),
             response=obj({"user_id": STRING, "revoked": BOOLEAN,
                           "unbound_app_tokens": array(STRING)},
                          ("user_id", "revoked", "unbound_app_tokens"))),
    Endpoint("GET", _TABLES, list_tables, "List the Base's tables.", "tables",
             query=PAGE_QUERY,
             response=obj({"tables": array(obj({"id": STRING, "name": STRING})),
                           "has_more": BOOLEAN, "total": INTEGER},
                          ("tables", "has_more", "total"))),
    Endpoint("POST", _TABLES, create_table, "Create a table, optionally with fields.", "tables",
             description=_FIELD_RULES,
             body=obj({"name": NAME, "fields": array(FIELD_BODY,
                                                     maxItems=MAX_FIELDS_PER_TABLE)},
                      ("name",)),
             response=TABLE, errors=(409,)),
    Endpoint("GET", _TABLE, get_table, "A table and its fields.", "tables", response=TABLE),
    Endpoint("PATCH", _TABLE, patch_table, "Rename a table.", "tables",
             body=obj({"name": NAME}, ("name",)), response=TABLE, errors=(409,)),
    Endpoint("DELETE", _TABLE, delete_table, "Delete a table and its records.", "tables",
             description="Refused while a link field of another table points at it; the "
             "table is also unbound from sites.", response=_DELETED),
    Endpoint("GET", _FIELDS, list_fields, "List a table's fields.", "fields",
             response=obj({"fields": array(FIELD), "has_more": BOOLEAN, "total": INTEGER},
                          ("fields", "has_more", "total"))),
    Endpoint("POST", _FIELDS, create_field, "Add a field (a new column).", "fields",
             description=_FIELD_RULES, body=FIELD_BODY, response=FIELD, errors=(409,)),
    Endpoint("GET", _FIELD, get_field, "One field.", "fields", response=FIELD),
    Endpoint("PUT", _FIELD, put_field, "Update a field's name, description, options or "
             "multiple.", "fields",
             description="Omitted keys keep their values; the type and link_table cannot "
             "change (400). Cells holding removed options are cleared. " + _FIELD_RULES,
             body=_FIELD_UPDATE, response=FIELD, errors=(409,)),
    Endpoint("DELETE", _FIELD, delete_field, "Delete a field and its cells.", "fields",
             response=_DELETED),
]
