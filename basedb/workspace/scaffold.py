"""Create a workspace from a template: the core of `basedb init`.

    init_workspace(target, "example", provisioner=..., title=None, base_token=None)
      ├── load the template's _template.json (the Base it needs)
      ├── refuse a target that is not empty (before anything is created remotely)
      ├── provisioner.provision(...)  → site, Base, tables, catalog on a platform
      │   (basedb.deploy.provision.PlatformProvisioner talks to the Open API)
      └── write_workspace_files(...)  → base-database.jsonc, catalog.json, .gitignore
                                        and every file of the template

Files are created exclusively (never overwriting), and a failed write removes what this
run created, so a user's files are never touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from basedb.core.errors import InputError, InternalError
from basedb.core.frozen import frozen_dataclass
from basedb.core.resources import TEMPLATE_SCHEMA_FILE, template_dir
from basedb.workspace import files
from basedb.workspace.catalog import CATALOG_FILE, build_catalog, catalog_to_dict
from basedb.workspace.config import CONFIG_FILE, build_config
from basedb.workspace.jsonc_edit import set_string
from basedb.workspace.model import Catalog, Field, Table
from basedb.workspace.template_schema import TemplateSchema, load_template_schema

__all__ = [
    "InitResult",
    "ProvisionedSite",
    "Provisioner",
    "TemplateSchema",
    "catalog_from_schema",
    "ensure_empty_target",
    "init_workspace",
    "load_template_schema",
    "write_workspace_files",
]

TABLE_ID_PREFIX, TABLE_ID_LENGTH = "tbl", 14
FIELD_ID_PREFIX, FIELD_ID_LENGTH = "fld", 10
TITLE_MAX_LENGTH = 100
DESCRIPTION_MAX_LENGTH = 2000

GITIGNORE_FILE = ".gitignore"
GITIGNORE_TEXT = """\
# basedb local state: deployment records, site.zip artifacts and the stage log.
.base-database-cli/
node_modules/
"""

# Template files that are not copied: the Base schema, and what init writes itself.
_GENERATED = frozenset({TEMPLATE_SCHEMA_FILE, CONFIG_FILE, CATALOG_FILE, GITIGNORE_FILE})
_CONFIG_VALUES = ("appToken", "title", "baseToken", "tableIds")
_PLACEHOLDER_RE = re.compile(r'"\$\{([A-Za-z]+)\}"')
_BASE_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{1,128}\Z")
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


@frozen_dataclass
class ProvisionedSite:
    """What a provisioner created: the site, its Base and the bound tables' catalog."""

    app_token: str
    base_token: str
    table_ids: tuple[str, ...]
    catalog: dict[str, Any]  # the catalog.json document (the Catalog envelope's data)


class Provisioner(Protocol):
    """Creates the site (and, unless `base_token` is given, a Base) on a platform; a
    Base it creates writes datetimes in `timezone` (the template's; the platform's default
    when None)."""

    def provision(self, schema: TemplateSchema, *, title: str, base_token: str | None,
                  timezone: str | None = None) -> ProvisionedSite: ...


@frozen_dataclass
class InitResult:
    workspace: Path
    template: str
    title: str
    app_token: str
    base_token: str
    files: tuple[Path, ...]  # absolute paths of every file written, sorted

    def to_dict(self) -> dict[str, Any]:
        """The `basedb init --json` document."""
        return {
            "workspace": str(self.workspace), "appToken": self.app_token,
            "baseToken": self.base_token, "template": self.template,
            "files": [p.relative_to(self.workspace).as_posix() for p in self.files],
        }


def init_workspace(target: Path | str, template: str, *, provisioner: Provisioner,
                   title: str | None = None, base_token: str | None = None,
                   schema: TemplateSchema | None = None,
                   description: str | None = None) -> InitResult:
    """Create a workspace in `target` (a new or empty directory) from `template`; with
    `schema` (`init --schema FILE`), the new Base has its tables instead of the template's."""
    target = Path(target)
    if schema is None:
        schema = load_template_schema(template_dir(template) / TEMPLATE_SCHEMA_FILE)
    site_title = schema.title if title is None else _checked_title(title)
    if description is not None:
        description = _checked_description(description)
    if base_token is not None and not _BASE_TOKEN_RE.match(base_token):
        raise InputError(f"--base-token {base_token!r} is not a Base token.",
                         code="BASE_TOKEN_INVALID",
                         hint="Pass the token from the Base URL, e.g. basXXXXXXXXXXXXXXXX.")
    ensure_empty_target(target)  # before a provisioner creates anything remotely
    site = provisioner.provision(schema, title=site_title, base_token=base_token,
                                 timezone=template_timezone(template))
    written = write_workspace_files(
        target, template, title=site_title, app_token=site.app_token,
        base_token=site.base_token, table_ids=list(site.table_ids), catalog=site.catalog,
        description=description)
    return InitResult(workspace=target.resolve(), template=template, title=site_title,
                      app_token=site.app_token, base_token=site.base_token,
                      files=tuple(written))


def ensure_empty_target(target: Path, *, command: str = "basedb init",
                        example: str = "my-site") -> None:
    """InputError unless `target` does not exist yet or is an empty directory; the
    messages name `command` (init, demo), suggesting `command example`."""
    if not target.exists() and not target.is_symlink():
        return
    if not target.is_dir():
        raise InputError(f"{target} exists and is not a directory.", code="TARGET_NOT_EMPTY",
                         hint=f"Pass a new or empty directory to `{command}`.")
    try:
        entries = sorted(os.listdir(target))
    except OSError as exc:
        raise InputError(f"{target} cannot be read: {exc.strerror}.", code="TARGET_NOT_EMPTY",
                         hint="Pass a new or empty directory you can write to.") from None
    if entries:
        shown = ", ".join(entries[:3]) + (", …" if len(entries) > 3 else "")
        raise InputError(
            f"{target} is not empty (it contains {shown}); `{command}` never overwrites "
            "files.", code="TARGET_NOT_EMPTY",
            hint=f"Pass a new or empty directory, e.g. `{command} {example}`.")


def write_workspace_files(target: Path, template: str, *, title: str, app_token: str,
                          base_token: str, table_ids: list[str],
                          catalog: dict[str, Any], description: str | None = None,
                          ) -> list[Path]:
    """Write a workspace into `target` (new or empty) and return the files written."""
    tdir = template_dir(template)
    config_text = _render_config(tdir / CONFIG_FILE, template, {
        "appToken": app_token, "title": title, "baseToken": base_token,
        "tableIds": list(table_ids)})
    if description:
        config_text = set_string(config_text, ("description",), description)
    contents: dict[str, bytes] = {
        CONFIG_FILE: config_text.encode("utf-8"),
        CATALOG_FILE: _catalog_text(catalog).encode("utf-8"),
        GITIGNORE_FILE: GITIGNORE_TEXT.encode("utf-8"),
    }
    for rel, source in _template_files(tdir):
        contents[rel] = source.read_bytes()
    ensure_empty_target(target)
    return _write_all(target, contents)


def catalog_from_schema(schema: TemplateSchema, *, base_token: str) -> dict[str, Any]:
    """A catalog.json document for `schema` with ids derived from the names.

    For tests and tools that need a workspace without a platform: the ids are stable
    (the same names give the same ids on every machine) and shaped like real ones, but
    name nothing on a platform.
    """
    table_ids = {t.name: _derived_id(TABLE_ID_PREFIX, TABLE_ID_LENGTH, "table", t.name)
                 for t in schema.tables}
    tables = []
    for t in schema.tables:
        fields = tuple(
            Field(field_id=_derived_id(FIELD_ID_PREFIX, FIELD_ID_LENGTH, "field", t.name,
                                       f.name),
                  name=f.name, type=f.type,
                  multiple=f.multiple if f.type in ("select", "user") else False,
                  options=f.options,
                  link_table=table_ids[f.link_table] if f.link_table else None)
            for f in t.fields)
        tables.append(Table(table_id=table_ids[t.name], name=t.name, fields=fields))
    ids = [t.table_id for t in tables] + [f.field_id for t in tables for f in t.fields]
    if len(set(ids)) != len(ids):  # ~60 bits per id: a collision means a bug, not bad luck
        raise InternalError("Derived catalog ids collide.", code="CATALOG_ID_COLLISION")
    return catalog_to_dict(Catalog(base_token=base_token, tables=tuple(tables)))


# ------------------------------------------------------------------------ helpers


def _checked_title(title: str) -> str:
    cleaned = title.strip()
    if not cleaned:
        raise InputError("--name is empty.", code="TITLE_INVALID",
                         hint="Pass a site name such as --name \"团队休假报备\", or leave it "
                              "out to use the template's.")
    if len(cleaned) > TITLE_MAX_LENGTH:
        raise InputError(f"--name is {len(cleaned)} characters; at most {TITLE_MAX_LENGTH} "
                         "are allowed.", code="TITLE_INVALID", hint="Shorten the name.")
    if any(ord(ch) < 32 for ch in cleaned):
        raise InputError("--name contains control characters such as line breaks.",
                         code="TITLE_INVALID", hint="Pass the title on one line.")
    return cleaned


def _checked_description(description: str) -> str:
    cleaned = description.strip()
    if len(cleaned) > DESCRIPTION_MAX_LENGTH:
        raise InputError(f"--description is {len(cleaned)} characters; at most "
                         f"{DESCRIPTION_MAX_LENGTH} are allowed.", code="DESCRIPTION_INVALID",
                         hint="Shorten the description.")
    if any(ord(ch) < 32 and ch not in "\n\t" for ch in cleaned):
        raise InputError("--description contains control characters.",
                         code="DESCRIPTION_INVALID", hint="Pass plain text.")
    return cleaned


def _derived_id(prefix: str, length: int, *names: str) -> str:
    digest = hashlib.sha256("\0".join(names).encode("utf-8")).digest()
    return prefix + _base62(digest)[:length]


def _base62(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    out = []
    while number:
        number, digit = divmod(number, 62)
        out.append(_BASE62[digit])
    return "".join(out) or "0"


def template_timezone(template: str) -> str | None:
    """The `timezone` the template's base-database.jsonc sets, if any."""
    rendered = _render_config(template_dir(template) / CONFIG_FILE, template,
                              {name: "x" if name != "tableIds" else [] for name in
                               _CONFIG_VALUES})
    config, _ = build_config(files.parse_jsonc(rendered, label=CONFIG_FILE))
    return config.timezone if config is not None else None


def _render_config(path: Path, template: str, values: dict[str, Any]) -> str:
    """Fill the template's base-database.jsonc; its placeholders are `"${name}"` strings."""
    label = f"template {template!r} {CONFIG_FILE}"
    try:
        text = files.read_text(path, label=label, limit=files.LIMIT_CONFIG)
    except files.FileProblem as problem:
        raise InternalError(problem.message, code="TEMPLATE_INVALID") from None
    used: set[str] = set()

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise InternalError(f"{label} has an unknown placeholder ${{{name}}}.",
                                code="TEMPLATE_INVALID")
        used.add(name)
        return json.dumps(values[name], ensure_ascii=False)

    rendered = _PLACEHOLDER_RE.sub(fill, text)
    missing = [name for name in _CONFIG_VALUES if name not in used]
    if missing:
        raise InternalError(f"{label} lacks the placeholders "
                            f"{', '.join('${' + m + '}' for m in missing)}.",
                            code="TEMPLATE_INVALID")
    try:
        doc = files.parse_jsonc(rendered, label=label)
    except files.FileProblem as problem:
        raise InternalError(problem.message, code="TEMPLATE_INVALID") from None
    _config, findings = build_config(doc)
    if findings:
        raise InternalError(f"{label} renders an invalid configuration: "
                            f"{findings[0].message}", code="TEMPLATE_INVALID")
    return rendered


def _catalog_text(catalog: dict[str, Any]) -> str:
    """catalog.json in the canonical shape and order, after checking the document."""
    parsed, findings = build_catalog(catalog)
    if findings:
        raise InternalError(f"The catalog for the new workspace is invalid: "
                            f"{findings[0].message}", code="CATALOG_INVALID")
    return json.dumps(catalog_to_dict(parsed), ensure_ascii=False, indent=2) + "\n"


def _template_files(tdir: Path) -> Iterator[tuple[str, Path]]:
    """(workspace-relative posix path, source) for every file a template contributes."""
    for dirpath, dirnames, filenames in os.walk(tdir):
        # Hidden entries and caches are never part of a template; sorted for determinism.
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        here = Path(dirpath)
        for name in sorted(filenames):
            source = here / name
            rel = source.relative_to(tdir).as_posix()
            if name.startswith(".") or rel in _GENERATED or not source.is_file():
                continue
            yield rel, source


def _write_all(target: Path, contents: dict[str, bytes]) -> list[Path]:
    """Create every file exclusively; on any failure remove what was created here."""
    created_dirs: list[Path] = []
    created_files: list[Path] = []

    def make_dir(path: Path) -> None:
        missing = [p for p in (path, *path.parents) if not p.exists()]
        for p in reversed(missing):
            p.mkdir()
            created_dirs.append(p)

    try:
        make_dir(target)
        for rel in sorted(contents):
            path = target / rel
            make_dir(path.parent)
            with open(path, "xb") as handle:
                created_files.append(path)
                handle.write(contents[rel])
    except BaseException as exc:
        for path in reversed(created_files):
            path.unlink(missing_ok=True)
        for path in reversed(created_dirs):
            with contextlib.suppress(OSError):  # keep going; leave what cannot be removed
                path.rmdir()
        if not isinstance(exc, OSError):
            raise
        raise InputError(f"Cannot write the workspace into {target}: "
                         f"{exc.strerror or exc} ({exc.filename or target}).",
                         code="TARGET_NOT_WRITABLE",
                         hint="Pass a directory you can write to.") from None
    return sorted(p.resolve() for p in created_files)
