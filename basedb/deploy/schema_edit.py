"""Schema work from the command line: the field bodies `basedb field create|update` send,
and keeping catalog.json in step when a changed table is one the workspace binds.

A field body is the Base v3 one (`{name, type, description?, multiple?, options?:
[{name}], link_table?}`). What does not fit the type is refused here, naming the command
line option, before anything is sent: the platform would refuse it too, but would name
the JSON Pointer of a body the user never wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from basedb.core.errors import UsageError
from basedb.core.frozen import frozen_dataclass
from basedb.deploy.catalog_sync import CatalogPull, pull_catalog
from basedb.workspace.config import read_workspace_config
from basedb.workspace.model import FIELD_TYPES

if TYPE_CHECKING:
    from basedb.client.client import Client

COMPUTED_FIELD_TYPES = ("formula", "lookup")
"""Types whose definition (an expression, a lookup path) the CLI does not take."""
FIELD_TYPE_CHOICES = tuple(t for t in FIELD_TYPES if t not in COMPUTED_FIELD_TYPES)
MULTIPLE_TYPES = ("select", "user")


@frozen_dataclass
class FieldOptions:
    """A field as the command line gives it; None means "not given"."""

    name: str | None = None
    type: str | None = None
    options: Sequence[str] | None = None
    multiple: bool | None = None
    link_table: str | None = None  # a table id, resolved from an id or a name
    description: str | None = None


def field_body(given: FieldOptions, *, current_type: str | None = None) -> dict[str, Any]:
    """The body of POST (no `current_type`) or PUT …/fields for `given`."""
    ftype = given.type or current_type
    if ftype is None:
        raise UsageError("--type is required to create a field.", code="FIELD_TYPE_REQUIRED",
                         hint=f"Pass --type, one of {', '.join(FIELD_TYPE_CHOICES)}.")
    body: dict[str, Any] = {}
    if given.name is not None:
        body["name"] = given.name
    if current_type is None:
        body["type"] = ftype
    if given.description is not None:
        body["description"] = given.description
    if given.options is not None:
        if ftype != "select":
            raise UsageError(f"--option applies to select fields; this field is {ftype}.",
                             code="FIELD_OPTION_INVALID",
                             hint="Remove --option, or create a select field (--type select).")
        if len(set(given.options)) != len(given.options):
            repeated = next(o for o in given.options if given.options.count(o) > 1)
            raise UsageError(f"--option {repeated!r} is given twice.",
                             code="FIELD_OPTION_INVALID", hint="List each option once.")
        body["options"] = [{"name": option} for option in given.options]
    elif ftype == "select" and current_type is None:
        raise UsageError("A select field needs its options.", code="FIELD_OPTION_INVALID",
                         hint="Pass --option NAME once per option, e.g. --option 待办 "
                              "--option 完成.")
    if given.multiple is not None:
        if ftype not in MULTIPLE_TYPES:
            raise UsageError(f"--multiple/--single applies to select and user fields; this "
                             f"field is {ftype}.", code="FIELD_OPTION_INVALID",
                             hint="Remove --multiple/--single.")
        body["multiple"] = given.multiple
    if given.link_table is not None:
        if ftype != "link" or current_type is not None:
            raise UsageError("--link-table is set when a link field is created, and only "
                             "then." if ftype == "link" else
                             f"--link-table applies to link fields; this field is {ftype}.",
                             code="FIELD_OPTION_INVALID",
                             hint="Remove --link-table (a link's table cannot change: create "
                                  "a new link field instead)." if ftype == "link" else
                                  "Remove --link-table, or pass --type link.")
        body["link_table"] = given.link_table
    elif ftype == "link" and current_type is None:
        raise UsageError("A link field needs the table it links to.",
                         code="FIELD_OPTION_INVALID",
                         hint="Pass --link-table TABLE (an id or name of a table of the same "
                              "Base).")
    if current_type is not None and not body:
        raise UsageError("Nothing to update: no option names a change.",
                         code="FIELD_UPDATE_EMPTY",
                         hint="Pass --name, --description, --option or --multiple/--single.")
    return body


def refresh_if_bound(root: Path | None, client: Client, base_token: str,
                     table_ids: Sequence[str]) -> CatalogPull | None:
    """`catalog pull` in the workspace at `root` when it binds one of `table_ids` of
    `base_token` (its catalog.json describes them, and just went stale); else None."""
    if root is None:
        return None
    config = read_workspace_config(root)
    if config.binding.base_token != base_token or not set(table_ids) & set(
            config.binding.table_ids):
        return None
    return pull_catalog(root, client)
