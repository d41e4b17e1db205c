"""`basedb catalog pull`: catalog.json from the live catalog, bound ids into the config.

catalog.json is rewritten in its canonical form (the one `basedb init` writes: two-space
indented, keys in catalog order), so pulling an unchanged catalog changes no byte. The
bound table ids are merged into `binding.tableIds` of base-database.jsonc with a
surgical text edit (`basedb.workspace.jsonc_edit`): comments, trailing commas and line
ends stay as they were, and ids already listed are never removed (unbinding is a
separate, explicit platform call).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from basedb.client.sites import SiteApi
from basedb.core.atomic import write_file_atomically
from basedb.core.errors import InputError
from basedb.core.frozen import frozen_dataclass
from basedb.workspace import files
from basedb.workspace.catalog import CATALOG_FILE, build_catalog, catalog_to_dict
from basedb.workspace.config import CONFIG_FILE, workspace_app_token
from basedb.workspace.jsonc_edit import JsoncEditError, merge_string_array, set_string

if TYPE_CHECKING:
    from basedb.client.client import Client

TABLE_IDS_PATH = ("binding", "tableIds")
BASE_TOKEN_PATH = ("binding", "baseToken")


def canonical_catalog(doc: Any) -> dict[str, Any]:
    """The catalog.json document of a platform catalog, checked and in canonical order."""
    catalog, findings = build_catalog(doc, file="the platform's catalog")
    if findings:
        raise InputError(f"The platform answered with an unusable catalog: "
                         f"{findings[0].message}", code="CATALOG_INVALID",
                         hint="Retry; if it persists, the platform's table schema needs "
                              "fixing (GET /sites/APP/catalog shows it).")
    return catalog_to_dict(catalog)


def catalog_text(doc: dict[str, Any]) -> str:
    """catalog.json's text for a canonical catalog document."""
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def same_catalog(data: bytes | None, canonical: dict[str, Any]) -> bool:
    """Whether a catalog.json file's bytes describe the same catalog (any formatting)."""
    if data is None:
        return False
    try:
        parsed, findings = build_catalog(json.loads(data.decode("utf-8")))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    return not findings and catalog_to_dict(parsed) == canonical


def merge_binding(config_text: str, catalog: dict[str, Any], *,
                  label: str = CONFIG_FILE) -> tuple[str, list[str]]:
    """base-database.jsonc text with the catalog's table ids merged into
    binding.tableIds (and binding.baseToken set when absent or empty)."""
    table_ids = [t["tableId"] for t in catalog["tables"]]
    try:
        text, added = merge_string_array(config_text, TABLE_IDS_PATH, table_ids)
        current = _binding_base_token(text, label)
        if not current and catalog.get("baseToken"):
            text = set_string(text, BASE_TOKEN_PATH, catalog["baseToken"])
    except JsoncEditError as exc:
        raise InputError(f"{label} cannot be updated: {exc}.", code="WORKSPACE_CONFIG_INVALID",
                         hint="Make \"binding\" an object such as {\"baseToken\": …, "
                              "\"tableIds\": [...]}, then pull again.") from None
    return text, added


def _binding_base_token(text: str, label: str) -> str:
    try:
        doc = files.parse_jsonc(text, label=label)
    except files.FileProblem:
        return ""
    binding = doc.get("binding") if isinstance(doc, dict) else None
    value = binding.get("baseToken") if isinstance(binding, dict) else None
    return value if isinstance(value, str) else ""


def write_workspace_file(path: Path, data: bytes) -> None:
    """Replace a workspace file atomically, keeping its permissions."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode) if path.is_file() else 0o644
    except OSError:
        mode = 0o644
    try:
        write_file_atomically(path, data, mode=mode)
    except OSError as exc:
        raise InputError(f"Cannot write {path}: {exc.strerror or exc}.",
                         code="WORKSPACE_NOT_WRITABLE",
                         hint="Make the workspace writable and pull again.") from None


@frozen_dataclass
class CatalogPull:
    """`catalog pull`: what changed in catalog.json and in binding.tableIds."""

    app_token: str
    base_token: str
    catalog_changed: bool
    tables: int
    tables_added: tuple[str, ...]  # by name
    tables_removed: tuple[str, ...]
    binding_changed: bool
    table_ids: tuple[str, ...]
    ids_added: tuple[str, ...]
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True, "appToken": self.app_token,
            "catalog": {"file": CATALOG_FILE, "changed": self.catalog_changed,
                        "baseToken": self.base_token, "tables": self.tables,
                        "tablesAdded": list(self.tables_added),
                        "tablesRemoved": list(self.tables_removed)},
            "binding": {"file": CONFIG_FILE, "changed": self.binding_changed,
                        "tableIds": list(self.table_ids), "added": list(self.ids_added)},
            "warnings": list(self.warnings),
        }


def pull_catalog(root: Path, client: Client) -> CatalogPull:
    """Refresh catalog.json and binding.tableIds of the workspace at `root`."""
    app_token = workspace_app_token(root)
    catalog = canonical_catalog(SiteApi(client, app_token).catalog())

    catalog_path = root / CATALOG_FILE
    try:
        old_bytes: bytes | None = catalog_path.read_bytes()
    except OSError:
        old_bytes = None
    old_tables = _tables_of(old_bytes)
    new_bytes = catalog_text(catalog).encode("utf-8")
    catalog_changed = old_bytes != new_bytes
    if catalog_changed:
        write_workspace_file(catalog_path, new_bytes)

    config_path = root / CONFIG_FILE
    label = str(config_path)
    try:
        config_text = files.read_text(config_path, label=label, limit=files.LIMIT_CONFIG)
    except files.FileProblem as problem:
        raise InputError(problem.message, code="WORKSPACE_CONFIG_INVALID",
                         hint=problem.fix) from None
    new_config, added = merge_binding(config_text, catalog, label=label)
    if new_config != config_text:
        # Written as read: read_text dropped a BOM, so put it back if there was one.
        bom = config_path.read_bytes().startswith(b"\xef\xbb\xbf")
        write_workspace_file(config_path,
                             (b"\xef\xbb\xbf" if bom else b"") + new_config.encode("utf-8"))

    new_tables = {t["tableId"]: t["name"] for t in catalog["tables"]}
    warnings = []
    bound_base = _binding_base_token(new_config, label)
    if catalog["baseToken"] and bound_base and bound_base != catalog["baseToken"]:
        warnings.append(f"binding.baseToken is {bound_base}, but the site is bound to Base "
                        f"{catalog['baseToken']}; fix binding.baseToken in {CONFIG_FILE}.")
    return CatalogPull(
        app_token=app_token, base_token=catalog["baseToken"], catalog_changed=catalog_changed,
        tables=len(catalog["tables"]),
        tables_added=tuple(sorted(new_tables[t] for t in new_tables if t not in old_tables)),
        tables_removed=tuple(sorted(old_tables[t] for t in old_tables
                                    if t not in new_tables)),
        binding_changed=new_config != config_text,
        table_ids=tuple(_table_ids(new_config, label)), ids_added=tuple(added),
        warnings=tuple(warnings))


def _tables_of(data: bytes | None) -> dict[str, str]:
    if data is None:
        return {}
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return {}
    tables = doc.get("tables") if isinstance(doc, dict) else None
    if not isinstance(tables, list):
        return {}
    return {t["tableId"]: str(t.get("name") or t["tableId"]) for t in tables
            if isinstance(t, dict) and isinstance(t.get("tableId"), str)}


def _table_ids(config_text: str, label: str) -> list[str]:
    try:
        doc = files.parse_jsonc(config_text, label=label)
    except files.FileProblem:
        return []
    binding = doc.get("binding") if isinstance(doc, dict) else None
    ids = binding.get("tableIds") if isinstance(binding, dict) else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []
