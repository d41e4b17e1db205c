"""The Base v3 endpoints for schema work: Bases, tables and fields, one method each.

Shapes are lark-cli's (`shortcuts/base/`): tables and fields are `{"id", "name", …}`
(older answers said `table_id` / `field_id`; both are read), listings are paged by
`offset`/`limit`. Each method returns the envelope's `data`; errors are the client's.

Commands name tables and fields as people do, by id or by name: `resolve_table` and
`resolve_field` turn either into the object the platform returned, and say which names
exist when nothing matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from basedb.client import endpoints
from basedb.core.errors import InputError
from basedb.protocol import data_of

if TYPE_CHECKING:
    from basedb.client.client import Client

TABLE_PAGE = 100
CANDIDATES_SHOWN = 5


def item_id(item: Any) -> str:
    """The id of a table or field as the platform gave it (`id`, or `table_id`/`field_id`)."""
    if not isinstance(item, dict):
        return ""
    found = item.get("id") or item.get("table_id") or item.get("field_id")
    return found if isinstance(found, str) else ""


def create_base(client: Client, name: str) -> dict[str, Any]:
    """POST /bases {name} -> {base_token, name}."""
    return data_of(client.request("POST", endpoints.BASES, json={"name": name}))


def base_token_of(created: dict[str, Any]) -> str:
    """The token of a Base a POST /bases answer describes (`base_token`, or `app_token`)."""
    return str(created.get("base_token") or created.get("app_token") or "")


class BaseApi:
    """The tables and fields of one Base (`base_token`) on the platform `client` talks to."""

    def __init__(self, client: Client, base_token: str) -> None:
        self.client = client
        self.base_token = base_token

    def _send(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        return data_of(self.client.request(method, path, json=body))

    # --------------------------------------------------------------------- tables

    def tables(self) -> list[dict[str, Any]]:
        """Every table of the Base (`{id, name}`), in the Base's order."""
        envelope = self.client.paginate("GET", endpoints.tables(self.base_token),
                                        params={"limit": TABLE_PAGE}, list_field="tables")
        found = data_of(envelope).get("tables")
        return [t for t in found if item_id(t)] if isinstance(found, list) else []

    def table(self, table_id: str) -> dict[str, Any]:
        """One table with its fields."""
        return self._send("GET", endpoints.table(self.base_token, table_id))

    def create_table(self, name: str, fields: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name}
        if fields:
            body["fields"] = list(fields)
        return self._send("POST", endpoints.tables(self.base_token), body)

    def delete_table(self, table_id: str) -> dict[str, Any]:
        return self._send("DELETE", endpoints.table(self.base_token, table_id))

    # --------------------------------------------------------------------- fields

    def fields(self, table_id: str) -> list[dict[str, Any]]:
        found = self._send("GET", endpoints.fields(self.base_token, table_id)).get("fields")
        return [f for f in found if item_id(f)] if isinstance(found, list) else []

    def create_field(self, table_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._send("POST", endpoints.fields(self.base_token, table_id), body)

    def update_field(self, table_id: str, field_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._send("PUT", endpoints.field(self.base_token, table_id, field_id), body)

    def delete_field(self, table_id: str, field_id: str) -> dict[str, Any]:
        return self._send("DELETE", endpoints.field(self.base_token, table_id, field_id))

    # ----------------------------------------------------------------- resolving

    def resolve_table(self, ref: str, *, parameter: str = "TABLE",
                      tables: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The table whose id or name is `ref` (InputError listing the tables otherwise)."""
        listed = self.tables() if tables is None else tables
        return _resolve(listed, ref, what=f"table of Base {self.base_token}",
                        parameter=parameter, listing="basedb table list")

    def resolve_field(self, table: dict[str, Any], ref: str, *,
                      parameter: str = "FIELD") -> dict[str, Any]:
        """The field of `table` whose id or name is `ref`."""
        return _resolve(self.fields(item_id(table)), ref,
                        what=f"field of table {table.get('name') or item_id(table)}",
                        parameter=parameter,
                        listing=f"basedb field list {item_id(table)}")


def _resolve(items: list[dict[str, Any]], ref: str, *, what: str, parameter: str,
             listing: str) -> dict[str, Any]:
    by_id = [i for i in items if item_id(i) == ref]
    if by_id:
        return by_id[0]
    by_name = [i for i in items if i.get("name") == ref]
    if len(by_name) == 1:
        return by_name[0]
    if len(by_name) > 1:
        ids = ", ".join(item_id(i) for i in by_name)
        raise InputError(f"{parameter} {ref!r} names several of a {what} ({ids}).",
                         code="NAME_AMBIGUOUS", hint=f"Pass the id instead: one of {ids}.")
    names = [str(i.get("name")) for i in items]
    shown = ", ".join(repr(n) for n in names[:CANDIDATES_SHOWN])
    more = f" and {len(names) - CANDIDATES_SHOWN} more" if len(names) > CANDIDATES_SHOWN else ""
    raise InputError(
        f"{parameter} {ref!r} is neither the id nor the name of a {what}.",
        code="NOT_FOUND",
        hint=(f"Use one of {shown}{more} (`{listing}` lists them)." if names
              else f"It has none yet: create one first (`{listing}` lists them)."))
