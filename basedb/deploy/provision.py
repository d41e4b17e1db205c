"""The platform side of `basedb init`: create the site, its Base and sample data.

`PlatformProvisioner.provision` (the `Provisioner` of `basedb.workspace.scaffold`):

    with --base-token: GET /bases/:b/tables                 every table of that Base
                                                          (`{tables: [{id, name}]}` as
                                                          lark-cli reads it), read before
                                                          anything is created
    POST /sites/create {title}                            the site
    without --base-token:
      POST /bases {name}                                  a Base named like the site
      POST /bases/:b/tables {name, fields}                every table, with its fields up
                                                          to its first link
      POST /bases/:b/tables/:t/fields {…, link_table}     then the rest, in order, so
                                                          tables may link in any order (or
                                                          to themselves) and fields keep
                                                          their order
      GET /users/me, or authen/v1/user_info on Lark        the caller ("@current_user"); a bot
                                                          has none, and those cells stay empty
      POST /users {name}                                  the sample colleagues ("@user:…"),
                                                          where the caller may create users
      POST …/records/batch_create                         sample records; a link names its
                                                          targets by `_key`, so tables are
                                                          filled targets first and links to
                                                          records not created yet are set
      PATCH …/records/:r                                  afterwards, one record at a time
    POST /sites/:app/bind_base {baseToken, tableIds}
    GET  /sites/:app/catalog                              catalog.json

A failure after the site exists says which resources were already created.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from basedb.client import endpoints
from basedb.core.errors import ApiError, BasedbError
from basedb.protocol import Code, data_of
from basedb.workspace.scaffold import ProvisionedSite
from basedb.workspace.template_schema import (
    CURRENT_USER,
    USER_REFERENCE_PREFIX,
    TemplateField,
    TemplateSchema,
    TemplateTable,
)

if TYPE_CHECKING:
    from basedb.client.client import Client

BATCH_ROWS = 200
BASE_TABLE_PAGE = 100


def _field_body(field: TemplateField, table_ids: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = {"name": field.name, "type": field.type}
    if field.type in ("select", "user"):
        body["multiple"] = field.multiple
    if field.options:
        body["options"] = [{"name": option} for option in field.options]
    if field.link_table is not None:
        body["link_table"] = table_ids[field.link_table]
    if field.description:
        body["description"] = field.description
    return body


def _table_id(table: Any) -> str | None:
    """A table's id as the Base v3 API gives it (`id`; older answers said `table_id`)."""
    if not isinstance(table, dict):
        return None
    found = table.get("id") or table.get("table_id")
    return str(found) if isinstance(found, str) and found else None


def _fill_order(schema: TemplateSchema) -> list[TemplateTable]:
    """Tables ordered so that link targets come first wherever the links allow it."""
    ordered: list[TemplateTable] = []
    pending = list(schema.tables)
    while pending:
        placed = {t.name for t in ordered}
        ready = next((t for t in pending if all(
            f.link_table in placed or f.link_table == t.name
            for f in t.fields if f.link_table is not None)), pending[0])
        ordered.append(ready)
        pending.remove(ready)
    return ordered


class PlatformProvisioner:
    """Creates a template's site (and Base) through the Open API `client` talks to."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.created: dict[str, str] = {}

    def _call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        return data_of(self.client.request(method, path, json=body))

    def provision(self, schema: TemplateSchema, *, title: str, base_token: str | None,
                  timezone: str | None = None) -> ProvisionedSite:
        # A given Base is read before the site is created, so that a mistyped token
        # leaves nothing behind on the platform.
        table_ids = self._tables_of(base_token) if base_token is not None else []
        app_token = str(self._call("POST", endpoints.SITES_CREATE, {"title": title})["appToken"])
        self.created["appToken"] = app_token
        try:
            if base_token is None:
                base_token, table_ids = self._create_base(schema, title, timezone)
            self._call("POST", endpoints.bind_base(app_token),
                       {"baseToken": base_token, "tableIds": table_ids})
            catalog = self._call("GET", endpoints.catalog(app_token))
        except BasedbError as error:
            made = ", ".join(f"{key} {value}" for key, value in self.created.items())
            raise error.with_context(
                hint=(f"Already created on the platform: {made}. "
                      + (error.hint or "Fix the cause and run `basedb init` again.")),
                detail={"created": dict(self.created)}) from error
        return ProvisionedSite(app_token=app_token, base_token=base_token,
                               table_ids=tuple(table_ids), catalog=catalog)

    # ------------------------------------------------------------------------ Base

    def _tables_of(self, base_token: str) -> list[str]:
        envelope = self.client.paginate("GET", endpoints.tables(base_token),
                                        params={"limit": BASE_TABLE_PAGE},
                                        list_field="tables")
        tables = data_of(envelope).get("tables") or []
        ids = [table_id for table_id in map(_table_id, tables) if table_id]
        if not ids:
            raise ApiError(f"Base {base_token} has no tables to bind.", code=Code.BAD_REQUEST,
                           hint="Create a table in the Base first, or leave out --base-token "
                                "to create a Base from the template.")
        return ids

    def _create_base(self, schema: TemplateSchema, title: str,
                     timezone: str | None) -> tuple[str, list[str]]:
        body = {"name": title} if timezone is None else {"name": title, "timezone": timezone}
        created_base = self._call("POST", endpoints.BASES, body)
        base = str(created_base.get("base_token") or created_base["app_token"])
        self.created["baseToken"] = base
        tables_path = endpoints.tables(base)
        table_ids: dict[str, str] = {}
        # Each table is created with its fields up to the first link; the rest follow
        # once every table exists, in their order, so links may point anywhere and the
        # fields keep the schema's order (the first is the primary field).
        later: list[tuple[TemplateTable, list[TemplateField]]] = []
        for table in schema.tables:
            first_link = next((i for i, f in enumerate(table.fields) if f.type == "link"),
                              len(table.fields))
            fields = [_field_body(f, table_ids) for f in table.fields[:first_link]]
            created = self._call("POST", tables_path, {"name": table.name, "fields": fields})
            table_ids[table.name] = _table_id(created) or ""
            later.append((table, list(table.fields[first_link:])))
        for table, rest in later:
            for field in rest:
                self._call("POST", f"{tables_path}/{table_ids[table.name]}/fields",
                           _field_body(field, table_ids))
        self._fill(schema, tables_path, table_ids)
        return base, [table_ids[t.name] for t in schema.tables]

    # --------------------------------------------------------------------- records

    def _users(self, schema: TemplateSchema) -> dict[str, str | None]:
        """Sample user values → user ids; None where the user cannot be created."""
        users: dict[str, str | None] = {CURRENT_USER: self.client.current_user_id()}
        for name in schema.sample_user_names():
            try:
                users[USER_REFERENCE_PREFIX + name] = str(self._call("POST", endpoints.USERS,
                                                        {"name": name})["user_id"])
            except ApiError:
                # Only a platform owner creates users (Lark has no such endpoint): the
                # template's convention is to leave these cells empty then.
                users[USER_REFERENCE_PREFIX + name] = None
        return users

    def _fill(self, schema: TemplateSchema, tables_path: str,
              table_ids: dict[str, str]) -> None:
        if not any(schema.records_of(t.name) for t in schema.tables):
            return
        users = self._users(schema)
        record_ids: dict[tuple[str, str], str] = {}
        deferred: list[tuple[str, str, dict[str, Any]]] = []  # (table id, record id, links)
        for table in _fill_order(schema):
            records = schema.records_of(table.name)
            names = [f.name for f in table.fields if any(f.name in r.values for r in records)]
            rows: list[list[Any]] = []
            later: list[dict[str, Any]] = []
            for record in records:
                row: list[Any] = []
                links: dict[str, Any] = {}
                for name in names:
                    field = table.field(name)
                    assert field is not None  # the template schema was validated
                    value = record.values.get(name)
                    if field.type == "link" and value:
                        ids = [record_ids.get((field.link_table or "", key)) for key in value]
                        if None in ids:  # a target not created yet: link it afterwards
                            links[name] = value
                            value = None
                        else:
                            value = [{"id": rid} for rid in ids]
                    elif field.type == "user" and value is not None:
                        items = value if isinstance(value, list) else [value]
                        found = [users.get(item) for item in items]
                        value = [{"id": uid} for uid in found if uid] or None
                    row.append(value)
                rows.append(row)
                later.append(links)
            created = self._create_records(f"{tables_path}/{table_ids[table.name]}/records",
                                           names, rows)
            for record, record_id, links in zip(records, created, later, strict=True):
                if record.key is not None:
                    record_ids[(table.name, record.key)] = record_id
                if links:
                    deferred.append((table_ids[table.name], record_id, links))
            self._deferred_links(schema, tables_path, deferred, record_ids, table_ids)

    def _deferred_links(self, schema: TemplateSchema, tables_path: str,
                        deferred: list[tuple[str, str, dict[str, Any]]],
                        record_ids: dict[tuple[str, str], str],
                        table_ids: dict[str, str]) -> None:
        """PATCH the links whose every target exists by now; keep the rest for later."""
        names_by_id = {tid: name for name, tid in table_ids.items()}
        for entry in list(deferred):
            table_id, record_id, links = entry
            table = schema.table(names_by_id[table_id])
            assert table is not None
            patch: dict[str, Any] = {}
            for name, keys in links.items():
                field = table.field(name)
                assert field is not None
                ids = [record_ids.get((field.link_table or "", key)) for key in keys]
                if None not in ids:
                    patch[name] = [{"id": rid} for rid in ids]
            if len(patch) == len(links):
                self._call("PATCH", f"{tables_path}/{table_id}/records/{record_id}", patch)
                deferred.remove(entry)

    def _create_records(self, path: str, names: list[str],
                        rows: list[list[Any]]) -> list[str]:
        if not names:  # records with no values at all
            return [str(self._call("POST", path, {})["record_id"]) for _ in rows]
        created: list[str] = []
        for start in range(0, len(rows), BATCH_ROWS):
            data = self._call("POST", path + "/batch_create",
                              {"fields": names, "rows": rows[start:start + BATCH_ROWS]})
            created.extend(str(rid) for rid in data["record_id_list"])
        return created
