"""`basedb link`: connect a workspace to a site on the active profile.

A workspace cloned from git names a site (`appToken`) and a Base that may not exist where
it is deployed next: another profile, a fresh data dir, a colleague's platform. `link`
points it at one that does:

    link_existing(root, client, app_token)
        GET  /sites/:app              the site exists and the caller belongs to it
        GET  /sites/:app/catalog      its bound tables
        base-database.jsonc           appToken, binding.baseToken and binding.tableIds
                                      set to the site's (every other byte kept)
        catalog.json                  rewritten from the live catalog

    link_new(root, client, title)
        the tables and fields of catalog.json, recreated (PlatformProvisioner):
        POST /sites/create, POST /bases, POST …/tables, POST …/fields (links last),
        POST /sites/:app/bind_base, GET /sites/:app/catalog
        then the same two file updates

Database Functions, Mutations and FaaS name tables and fields by name, so they work
against the new ids unchanged. Fields the CLI cannot recreate (formula and lookup, whose
expressions catalog.json does not hold, and links to tables outside the catalog) are left
out and reported. Nothing on the platform the workspace named before is touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from basedb.client.sites import SiteApi
from basedb.core.errors import InputError
from basedb.core.frozen import frozen_dataclass
from basedb.deploy.catalog_sync import (
    BASE_TOKEN_PATH,
    TABLE_IDS_PATH,
    canonical_catalog,
    catalog_text,
    write_workspace_file,
)
from basedb.deploy.provision import PlatformProvisioner
from basedb.deploy.schema_edit import COMPUTED_FIELD_TYPES
from basedb.workspace import files
from basedb.workspace.catalog import CATALOG_FILE, build_catalog
from basedb.workspace.config import CONFIG_FILE, read_workspace_config
from basedb.workspace.jsonc_edit import JsoncEditError, set_string, set_string_array
from basedb.workspace.model import Catalog
from basedb.workspace.template_schema import TemplateField, TemplateSchema, TemplateTable

if TYPE_CHECKING:
    from basedb.client.client import Client


@frozen_dataclass
class LinkResult:
    """What `link` connected the workspace to, and what it changed."""

    app_token: str
    previous_app_token: str
    created: bool  # a new site and Base (--create), or an existing site
    title: str
    base_token: str
    tables: tuple[tuple[str, str], ...]  # (table id, name) bound
    skipped_fields: tuple[str, ...]  # "table.field (why)" not recreated
    profile: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"ok": True, "appToken": self.app_token,
                "previousAppToken": self.previous_app_token, "created": self.created,
                "title": self.title, "baseToken": self.base_token,
                "tables": [{"tableId": tid, "name": name} for tid, name in self.tables],
                "skippedFields": list(self.skipped_fields), "profile": self.profile,
                "files": [CONFIG_FILE, CATALOG_FILE]}


def link_existing(root: Path, client: Client, app_token: str, *,
                  profile: str | None = None) -> LinkResult:
    """Point the workspace at the existing site `app_token`."""
    previous = read_workspace_config(root).app_token
    site_api = SiteApi(client, app_token)
    site = site_api.site()
    catalog = canonical_catalog(site_api.catalog())
    _write_link(root, app_token, catalog, profile)
    return LinkResult(app_token=app_token, previous_app_token=previous, created=False,
                      title=str(site.get("title") or ""), base_token=catalog["baseToken"],
                      tables=_tables(catalog), skipped_fields=(), profile=profile)


def link_new(root: Path, client: Client, *, title: str | None = None,
             profile: str | None = None) -> LinkResult:
    """Create a site and a Base with catalog.json's tables, and point the workspace at it."""
    config = read_workspace_config(root)
    site_title = title or config.title or root.name
    schema, skipped = schema_from_catalog(_local_catalog(root), title=site_title)
    provisioner = PlatformProvisioner(client)
    created = provisioner.provision(schema, title=site_title, base_token=None)
    catalog = canonical_catalog(created.catalog)
    try:
        _write_link(root, created.app_token, catalog, profile)
    except InputError as error:
        made = ", ".join(f"{k} {v}" for k, v in provisioner.created.items())
        raise error.with_context(hint=f"{error.hint} Already created: {made}; rerun with "
                                      f"--app-token {created.app_token} once fixed.") from None
    return LinkResult(app_token=created.app_token, previous_app_token=config.app_token,
                      created=True, title=site_title, base_token=created.base_token,
                      tables=_tables(catalog), skipped_fields=tuple(skipped), profile=profile)


def schema_from_catalog(catalog: Catalog, *, title: str) -> tuple[TemplateSchema, list[str]]:
    """The tables and fields of `catalog` as a schema to create, and the fields left out."""
    names = {t.table_id: t.name for t in catalog.tables}
    skipped: list[str] = []
    tables = []
    for table in catalog.tables:
        fields = []
        for f in table.fields:
            if f.type in COMPUTED_FIELD_TYPES:
                skipped.append(f"{table.name}.{f.name} ({f.type}: its definition is not in "
                               f"{CATALOG_FILE})")
                continue
            if f.type == "link" and f.link_table not in names:
                skipped.append(f"{table.name}.{f.name} (links to {f.link_table}, a table "
                               f"{CATALOG_FILE} does not describe)")
                continue
            fields.append(TemplateField(
                name=f.name, type=f.type, multiple=f.multiple, options=f.options,
                link_table=names[f.link_table] if f.type == "link" and f.link_table else None,
                description=f.description))
        tables.append(TemplateTable(name=table.name, fields=tuple(fields)))
    return TemplateSchema(title=title, tables=tuple(tables), records={}), skipped


# ------------------------------------------------------------------------ helpers


def _local_catalog(root: Path) -> Catalog:
    label = str(root / CATALOG_FILE)
    try:
        doc = files.read_json(root / CATALOG_FILE, label=label, limit=files.LIMIT_CATALOG)
    except files.FileProblem as problem:
        raise InputError(f"{problem.message} `link --create` builds the new Base from it.",
                         code="CATALOG_INVALID",
                         hint=problem.fix or "Restore catalog.json (e.g. from git).") from None
    catalog, findings = build_catalog(doc, file=label)
    if findings:
        raise InputError(findings[0].message, code="CATALOG_INVALID",
                         hint=findings[0].fix or f"Fix {label}.")
    if not catalog.tables:
        raise InputError(f"{label} describes no tables, so there is no schema to create.",
                         code="CATALOG_EMPTY",
                         hint="Link an existing site with --app-token, or create tables "
                              "with `basedb table create` and bind them (`basedb bind`).")
    return catalog


def _tables(catalog: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((t["tableId"], t["name"]) for t in catalog["tables"])


def _write_link(root: Path, app_token: str, catalog: dict[str, Any],
                profile: str | None) -> None:
    """base-database.jsonc and catalog.json for the site `app_token` (comments kept)."""
    path = root / CONFIG_FILE
    raw = path.read_bytes()
    bom = raw.startswith(b"\xef\xbb\xbf")
    text = raw.decode("utf-8-sig")
    try:
        text = set_string(text, ("appToken",), app_token)
        text = set_string(text, BASE_TOKEN_PATH, catalog["baseToken"])
        text = set_string_array(text, TABLE_IDS_PATH, [t["tableId"] for t in catalog["tables"]])
        if profile is not None:
            text = set_string(text, ("profile",), profile)
    except JsoncEditError as exc:
        raise InputError(f"{path} cannot be updated: {exc}.", code="WORKSPACE_CONFIG_INVALID",
                         hint="Make \"binding\" an object such as {\"baseToken\": …, "
                              "\"tableIds\": [...]}, then link again.") from None
    write_workspace_file(root / CATALOG_FILE, catalog_text(catalog).encode("utf-8"))
    write_workspace_file(path, (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))

