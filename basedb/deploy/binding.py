"""`basedb bind` and `basedb unbind`: the incremental binding flow in one step.

Upstream's flow for using a new table of the bound Base is three calls, done by hand:

    POST /sites/:app/bind_base {baseToken, tableIds}   appends and dedupes, never replaces
    GET  /sites/:app/catalog                           written to catalog.json
    merge the new ids into binding.tableIds            keeping the rest of the file

`bind_tables` does exactly that (the last two are `catalog pull`). Unbinding is the
explicit reverse: POST /sites/:app/unbind_base, the ids taken out of binding.tableIds
(comments and layout kept), catalog.json refreshed. Removing an id from the file alone
never unbinds anything, and the command asks before it unbinds.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from basedb.client.bases import BaseApi, item_id
from basedb.client.sites import SiteApi
from basedb.core.errors import InputError, UsageError
from basedb.core.frozen import frozen_dataclass
from basedb.deploy.catalog_sync import (
    TABLE_IDS_PATH,
    CatalogPull,
    pull_catalog,
    write_workspace_file,
)
from basedb.workspace import files
from basedb.workspace.catalog import CATALOG_FILE, build_catalog
from basedb.workspace.config import CONFIG_FILE, read_workspace_config
from basedb.workspace.jsonc_edit import JsoncEditError, remove_strings

if TYPE_CHECKING:
    from basedb.client.client import Client


@frozen_dataclass
class BindingChange:
    """What `bind` or `unbind` did: the tables named, the site's binding after, the pull."""

    action: str  # "bind" | "unbind"
    app_token: str
    base_token: str
    tables: tuple[tuple[str, str], ...]  # (table id, name) of the tables named
    bound: tuple[str, ...]  # every table id the site binds afterwards
    pull: CatalogPull
    ids_removed: tuple[str, ...] = ()  # unbind: taken out of binding.tableIds

    def to_dict(self) -> dict[str, Any]:
        pulled = self.pull.to_dict()
        binding = dict(pulled["binding"])
        if self.action == "unbind":
            binding["removed"] = list(self.ids_removed)
        return {"ok": True, "appToken": self.app_token, "baseToken": self.base_token,
                "tables": [{"tableId": tid, "name": name} for tid, name in self.tables],
                "bound": list(self.bound), "catalog": pulled["catalog"], "binding": binding,
                "warnings": pulled["warnings"]}


def bind_tables(root: Path, client: Client, refs: list[str], *,
                base_token: str | None = None) -> BindingChange:
    """Bind the tables `refs` (ids or names) of the workspace's Base (or `base_token`)."""
    config = read_workspace_config(root)
    bound_base = config.binding.base_token
    base = base_token or bound_base
    if not base:
        raise UsageError("The workspace binds no Base yet, so there is nowhere to find "
                         f"{refs[0]!r}.", code="BASE_TOKEN_REQUIRED",
                         hint="Pass --base-token bas… (the Base the tables are in; `basedb "
                              "base create` makes one).")
    if base_token and bound_base and base_token != bound_base and config.binding.table_ids:
        raise UsageError(f"--base-token {base_token} is not the Base this site binds "
                         f"({bound_base}); a site binds tables of one Base.",
                         code="BASE_TOKEN_MISMATCH",
                         hint=f"Leave out --base-token to bind tables of {bound_base}, or "
                              "unbind its tables first (`basedb unbind`).")
    api = BaseApi(client, base)
    listed = api.tables()
    tables = _unique([api.resolve_table(ref, tables=listed) for ref in refs])
    ids = [item_id(t) for t in tables]
    answer = SiteApi(client, config.app_token).bind_base(base, ids)
    pull = pull_catalog(root, client)
    return BindingChange(action="bind", app_token=config.app_token, base_token=base,
                         tables=tuple((item_id(t), str(t.get("name", ""))) for t in tables),
                         bound=tuple(_strings(answer.get("tableIds"))), pull=pull)


def unbind_plan(root: Path, refs: list[str]) -> tuple[str, list[tuple[str, str]]]:
    """(appToken, [(table id, name)]) of the bound tables `refs` name, read from the
    workspace alone, so that the command can ask before anything is sent."""
    config = read_workspace_config(root)
    known = _bound_tables(root, list(config.binding.table_ids))
    found: list[tuple[str, str]] = []
    for ref in refs:
        match = [(tid, name) for tid, name in known if ref in (tid, name)]
        if not match:
            shown = ", ".join(repr(name or tid) for tid, name in known[:5]) or "none"
            raise InputError(f"TABLE {ref!r} is not a table this workspace binds "
                             f"(bound: {shown}).", code="NOT_FOUND",
                             hint="Name a table by its id or name as catalog.json lists it; "
                                  "`basedb catalog pull` refreshes the list.")
        if match[0] not in found:
            found.append(match[0])
    return config.app_token, found


def unbind_tables(root: Path, client: Client, refs: list[str]) -> BindingChange:
    """Unbind the bound tables `refs` from the site and from the workspace."""
    app_token, tables = unbind_plan(root, refs)
    ids = [tid for tid, _ in tables]
    base = read_workspace_config(root).binding.base_token
    answer = SiteApi(client, app_token).unbind_base(ids)
    removed = drop_table_ids(root, ids)
    pull = pull_catalog(root, client)
    return BindingChange(action="unbind", app_token=app_token, base_token=base,
                         tables=tuple(tables), bound=tuple(_strings(answer.get("tableIds"))),
                         pull=pull, ids_removed=tuple(removed))


# ------------------------------------------------------------------------ helpers


def _unique(tables: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    kept = []
    for table in tables:
        if item_id(table) not in seen:
            seen.add(item_id(table))
            kept.append(table)
    return kept


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _bound_tables(root: Path, table_ids: list[str]) -> list[tuple[str, str]]:
    """(id, name) of every bound table: names from catalog.json where it has them."""
    names: dict[str, str] = {}
    try:
        doc = files.read_json(root / CATALOG_FILE, label=CATALOG_FILE,
                              limit=files.LIMIT_CATALOG)
    except files.FileProblem:
        doc = None
    if doc is not None:
        catalog, _ = build_catalog(doc)
        names = {t.table_id: t.name for t in catalog.tables}
    ordered = list(dict.fromkeys([*table_ids, *names]))
    return [(tid, names.get(tid, "")) for tid in ordered]


def drop_table_ids(root: Path, ids: list[str]) -> list[str]:
    """Take `ids` out of binding.tableIds (comments and layout kept); the ids removed."""
    path = root / CONFIG_FILE
    raw = path.read_bytes()
    bom = raw.startswith(b"\xef\xbb\xbf")
    text = raw.decode("utf-8-sig")
    try:
        new_text, removed = remove_strings(text, TABLE_IDS_PATH, ids)
    except JsoncEditError as exc:
        raise InputError(f"{path} cannot be updated: {exc}.", code="WORKSPACE_CONFIG_INVALID",
                         hint="Make binding.tableIds an array of table ids, then unbind "
                              "again (the site has already unbound them).") from None
    if new_text != text:
        write_workspace_file(path, (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8"))
    return removed
