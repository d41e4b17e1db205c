"""Sites: create, read, bind and unbind Base tables, the live catalog, members
(camelCase like upstream).

`POST /sites/create` and `GET /sites/list` (paged by `pageToken`, with `hasMore`) are the
paths the Base Database Open API is known to serve; the rest mirror upstream's skill.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from basedb.platform.domain import bases, grants, identity, quotas, sites
from basedb.platform.domain.access import require_base, require_site
from basedb.platform.web.http import Call, Endpoint, QueryParam
from basedb.platform.web.routes.schemas import (
    BOOLEAN,
    CATALOG,
    ID,
    IDS,
    INTEGER,
    NAME,
    STRING,
    STRINGS,
    array,
    obj,
)
from basedb.platform.web.sessions import close_member_sessions
from basedb.protocol import bad_request, not_found, permission_denied
from basedb.workspace.catalog import catalog_to_dict

MAX_BOUND_TABLES = 100
DEFAULT_SITES_PAGE = 20
MAX_SITES_PAGE = 100


def create_site(call: Call) -> dict[str, Any]:
    title = bases.parse_name(call.body_object({"title"}).get("title"), "/title", "site title")
    with call.store.write() as conn:
        quotas.require_site_quota(conn, call.caller, call.context.quotas)
        site = sites.create_site(conn, title, call.caller.user_id)
    return sites.SiteCreated(site).to_dict()


def _sites_page_token(offset: int) -> str:
    raw = json.dumps({"offset": offset}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _sites_offset(call: Call) -> int:
    token = call.query.get("pageToken")
    if not token:
        return 0
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError):
        decoded = None
    offset = decoded.get("offset") if isinstance(decoded, dict) else None
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise bad_request("pageToken is not one this listing returned", parameter="?pageToken",
                          received=token, fix="send the pageToken of the previous page, or "
                          "leave it out to start from the first page")
    return offset


def list_sites(call: Call) -> dict[str, Any]:
    page_size = call.query_int("pageSize", default=DEFAULT_SITES_PAGE, minimum=1,
                               maximum=MAX_SITES_PAGE)
    offset = _sites_offset(call)
    with call.store.read() as conn:
        found = sites.sites_of_user(conn, call.caller.user_id)
    page = [sites.Membership(site, role) for site, role in found[offset:offset + page_size]]
    has_more = offset + len(page) < len(found)
    token = _sites_page_token(offset + len(page)) if has_more else None
    return sites.SitePage(page, token).to_dict()


def get_site(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        site, role = require_site(conn, call.caller, call.path["app_token"])
        binding = sites.Binding.of(site, sites.bound_table_ids(conn, site.app_token))
    return sites.SiteView(site, role, binding).to_dict()


def delete_site(call: Call) -> dict[str, Any]:
    with call.store.write() as conn:
        site, _ = require_site(conn, call.caller, call.path["app_token"], roles=("owner",))
        sites.delete_site(conn, site.app_token)
    return sites.SiteDeleted(site).to_dict()


def bind_base(call: Call) -> dict[str, Any]:
    body = call.body_object({"baseToken", "tableIds"})
    base_token = body.get("baseToken")
    if not isinstance(base_token, str) or not base_token:
        raise bad_request("baseToken is missing", parameter="/baseToken",
                          received=base_token, fix="send the Base's token (bas…)")
    table_ids = body.get("tableIds")
    if not isinstance(table_ids, list) or not table_ids or len(table_ids) > MAX_BOUND_TABLES \
            or not all(isinstance(t, str) for t in table_ids):
        raise bad_request("tableIds must be a non-empty array of table ids",
                          parameter="/tableIds", received=table_ids,
                          fix=f"send 1 to {MAX_BOUND_TABLES} ids from GET "
                          f"/bases/{base_token}/tables")
    with call.store.write() as conn:
        site, _ = require_site(conn, call.caller, call.path["app_token"],
                               roles=sites.MANAGER_ROLES)
        current = sites.bound_table_ids(conn, site.app_token)
        if current and site.base_token != base_token:
            raise bad_request(
                f"Site {site.app_token} is bound to Base {site.base_token}; a site binds "
                "one Base", parameter="/baseToken", received=base_token,
                fix=f"bind tables of {site.base_token}, or unbind its tables first "
                f"(POST /sites/{site.app_token}/unbind_base)")
        base = require_base(conn, call.caller, base_token)
        known = [t.table_id for t in bases.list_tables(conn, base_token, 0, 10**6).tables]
        for index, table_id in enumerate(table_ids):
            if table_id not in known:
                raise not_found(f"Table {table_id} of Base {base_token}",
                                f"/tableIds/{index}", table_id,
                                f"use ids from GET /bases/{base_token}/tables")
        if not current:
            # A new binding rests on the binder's own access, and ends with it.
            basis = grants.binding_basis(conn, base_token, base.owner_id,
                                         call.caller.user_id, excluding=site.app_token)
            if basis is None:
                raise not_found(f"Base {base_token}", "/baseToken", base_token,
                                "bind a Base you own or were granted")
            grants.record_binding(conn, site.app_token, call.caller.user_id, basis)
        bound = sites.bind_tables(conn, site, base_token, table_ids)
        grants.reconcile(conn, base_token)
    return sites.SiteBinding(site.app_token, sites.Binding(base_token, tuple(bound))).to_dict()


def unbind_base(call: Call) -> dict[str, Any]:
    body = call.optional_body_object({"tableIds"})
    table_ids = body.get("tableIds")
    if "tableIds" in body and (not isinstance(table_ids, list) or not all(
            isinstance(t, str) and t for t in table_ids)):
        raise bad_request("tableIds must be an array of table ids", parameter="/tableIds",
                          received=table_ids, fix="send the ids to unbind, or omit tableIds "
                          "to unbind every table")
    with call.store.write() as conn:
        site, _ = require_site(conn, call.caller, call.path["app_token"],
                               roles=sites.MANAGER_ROLES)
        remaining = sites.unbind_tables(conn, site, table_ids)
        grants.reconcile(conn, site.base_token)
    return sites.SiteBinding(site.app_token, sites.Binding.of(site, remaining)).to_dict()


def get_catalog(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        site, _ = require_site(conn, call.caller, call.path["app_token"])
        catalog = sites.site_catalog(conn, site)
    return catalog_to_dict(catalog)


# ------------------------------------------------------------------------- members


def list_members(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        site, _ = require_site(conn, call.caller, call.path["app_token"])
        members = sites.list_members(conn, site.app_token)
    return members.to_dict()


def _member_id(call: Call) -> str:
    user_id = call.body.get("userId") if isinstance(call.body, dict) else None
    if user_id is None:
        user_id = call.query.get("userId")
    if not isinstance(user_id, str) or not user_id:
        raise bad_request("userId is missing", parameter="/userId", received=user_id,
                          fix="send the member's user id (ou_…)")
    return user_id


def add_member(call: Call) -> dict[str, Any]:
    body = call.body_object({"userId", "role"})
    user_id, role = _member_id(call), body.get("role", "member")
    if role not in ("admin", "member"):
        raise bad_request("role must be admin or member (a site's one owner is its creator)",
                          parameter="/role", received=role, fix="send admin or member",
                          candidates=("member", "admin"))
    with call.store.write() as conn:
        site, my_role = require_site(conn, call.caller, call.path["app_token"],
                                     roles=sites.MANAGER_ROLES)
        if identity.get_user(conn, user_id) is None:
            raise not_found(f"User {user_id}", "/userId", user_id,
                            "use a user id from POST /users or GET /users/me")
        current = sites.role_of(conn, site.app_token, user_id)
        if current == "owner":
            raise bad_request("The site owner's role cannot change", parameter="/userId",
                              received=user_id, fix="choose another user")
        if my_role != "owner" and "admin" in (role, current):
            raise permission_denied("Only the site owner grants or revokes the admin role",
                                    "ask the site owner")
        sites.set_member(conn, site.app_token, user_id, role)
        grants.reconcile(conn, site.base_token)
    return sites.MemberRole(user_id, role).to_dict()


def remove_member(call: Call) -> dict[str, Any]:
    call.optional_body_object({"userId"})
    user_id = _member_id(call)
    with call.store.write() as conn:
        site, my_role = require_site(conn, call.caller, call.path["app_token"])
        current = sites.role_of(conn, site.app_token, user_id)
        if current is None:
            raise not_found(f"Member {user_id} of site {site.app_token}", "/userId", user_id,
                            f"see GET /sites/{site.app_token}/members")
        if current == "owner":
            raise bad_request("The site owner cannot be removed", parameter="/userId",
                              received=user_id, fix="choose another member")
        leaving = user_id == call.caller.user_id
        if not leaving and (my_role not in sites.MANAGER_ROLES
                            or (current == "admin" and my_role != "owner")):
            raise permission_denied(f"A site {my_role} cannot remove a site {current}",
                                    "ask the site owner")
        sites.remove_member(conn, site.app_token, user_id)
        # Everything held through the membership ends with it: page sessions on the
        # site, and Base access through it (with what was bound on that access).
        close_member_sessions(conn, site.app_token, user_id)
        grants.reconcile(conn, site.base_token)
    return sites.MemberRemoved(user_id).to_dict()


_SITE = "/sites/{app_token}"
_BINDING = obj({"baseToken": {"type": ["string", "null"]}, "tableIds": STRINGS},
               ("baseToken", "tableIds"))
_MEMBER_BODY = obj({"userId": ID, "role": {"type": "string", "enum": ["admin", "member"],
                                               "default": "member"}}, ("userId",))

ENDPOINTS = [
    Endpoint("POST", "/sites/create", create_site, "Create a site owned by the caller.", "sites",
             description="A user owns at most `basedb serve --sites-per-owner` sites (20 by "
             "default; the platform's owner is exempt); past that, 403.",
             body=obj({"title": NAME}, ("title",)),
             response=obj({"appToken": STRING, "title": STRING}, ("appToken", "title")),
             errors=(403,)),
    Endpoint("GET", "/sites/list", list_sites, "The sites the caller belongs to, a page at a "
             "time.", "sites",
             query=(QueryParam("pageSize", {"type": "integer", "minimum": 1,
                                            "maximum": MAX_SITES_PAGE,
                                            "default": DEFAULT_SITES_PAGE}, "Sites per page."),
                    QueryParam("pageToken", STRING, "The pageToken of the previous page.")),
             response=obj({"sites": array(obj({"appToken": STRING, "title": STRING,
                                                "role": STRING,
                                                "baseToken": {"type": ["string", "null"]}})),
                           "hasMore": BOOLEAN, "pageToken": STRING}, ("sites", "hasMore"))),
    Endpoint("GET", _SITE, get_site, "A site, the caller's role and its binding.", "sites",
             response=obj({"appToken": STRING, "title": STRING, "ownerId": STRING,
                           "role": STRING, "binding": _BINDING},
                          ("appToken", "title", "role", "binding"))),
    Endpoint("DELETE", _SITE, delete_site, "Delete the site (its owner only).", "sites",
             description="Removes the site with its members, drafts, deployments and log "
             "entries; its pages and functions stop answering. The bound Base and its "
             "records are kept.",
             response=obj({"appToken": STRING, "deleted": BOOLEAN,
                           "baseToken": {"type": ["string", "null"]}},
                          ("appToken", "deleted", "baseToken"))),
    Endpoint("POST", _SITE + "/bind_base", bind_base, "Bind tables of one Base to the site.",
             "sites", description="Appends and dedupes; never replaces. A site binds one Base (400 "
             "for tables of another while any are bound).",
             body=obj({"baseToken": ID, "tableIds": {**IDS, "minItems": 1}},
                      ("baseToken", "tableIds")),
             response=obj({"appToken": STRING, "baseToken": STRING, "tableIds": STRINGS},
                          ("appToken", "baseToken", "tableIds"))),
    Endpoint("POST", _SITE + "/unbind_base", unbind_base, "Unbind tables (all when tableIds "
             "is omitted).", "sites", body=obj({"tableIds": IDS}), body_required=False,
             response=obj({"appToken": STRING, **_BINDING["properties"]},
                          ("appToken", "baseToken", "tableIds"))),
    Endpoint("GET", _SITE + "/catalog", get_catalog, "The catalog.json of the bound tables.",
             "sites", response=CATALOG),
    Endpoint("GET", _SITE + "/members", list_members, "The site's members.", "members",
             response=obj({"members": array(obj({"userId": STRING, "name": STRING,
                                                  "role": STRING})),
                           "total": INTEGER}, ("members", "total"))),
    Endpoint("POST", _SITE + "/members", add_member, "Add a member or change a role.",
             "members", description="Owners and admins add members; only the owner grants "
             "or revokes admin.", body=_MEMBER_BODY,
             response=obj({"userId": STRING, "role": STRING}, ("userId", "role"))),
    Endpoint("DELETE", _SITE + "/members", remove_member, "Remove a member.", "members",
             description="The user id comes in the body or as ?userId=; one of the two is "
             "needed (400). Members may remove themselves.", body=obj({"userId": ID},
                                                                       ("userId",)),
             body_required=False,
             query=(QueryParam("userId", ID, "The member to remove (instead of the "
                               "body)."),),
             response=obj({"userId": STRING, "removed": {"type": "boolean"}},
                          ("userId", "removed"))),
]
