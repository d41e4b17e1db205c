"""Build small workspaces on disk from dicts, for tests of anything that loads one.

    root = write_workspace(tmp_path,
                           catalog=catalog(table("Tasks", field("Title", "text"))),
                           functions={"mutations/createTask": {...function.json...}},
                           agent_tools={"exclude": ["createTask"]})
    ws = load_workspace(root)

`functions` maps "<kind dir>/<functionId>" ("database-functions/…", "mutations/…", "faas/…",
"ai/…") to the function.json document; a `str` value is written verbatim (for broken
JSON). Companion files get harmless defaults unless `files` provides them: main.sql is
`SELECT 1`, index.mjs a handler returning `{code: 0}`. `files` writes any other
workspace-relative file (str or bytes). Pass ABSENT to leave a file out entirely.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from basedb.check.context import CheckContext
from basedb.workspace import Workspace, load_workspace


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()

DEFAULT_SQL = "SELECT 1\n"
DEFAULT_HANDLER = ("export default async function (input, ctx) {\n"
                   "  return { code: 0, msg: 'ok', data: null };\n}\n")


def _short_id(prefix: str, name: str) -> str:
    return prefix + hashlib.sha256(name.encode()).hexdigest()[:8]


def field(name: str, type: str, *, field_id: str | None = None,
          options: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    """A catalog field; `options` are option names (written as [{"name": …}])."""
    doc: dict[str, Any] = {"fieldId": field_id or _short_id("fld", name), "name": name,
                           "type": type}
    if options is not None:
        doc["options"] = [{"name": o} for o in options]
    doc.update(extra)
    return doc


def table(name: str, *fields: dict[str, Any], table_id: str | None = None) -> dict[str, Any]:
    return {"tableId": table_id or _short_id("tbl", name), "name": name, "fields": list(fields)}


def catalog(*tables: dict[str, Any], base_token: str = "bas_test") -> dict[str, Any]:
    return {"baseToken": base_token, "tables": list(tables)}


def write_workspace(root: Path, *, config: Any = None, catalog: Any = None,
                    functions: Mapping[str, Any] | None = None, agent_tools: Any = ABSENT,
                    files: Mapping[str, str | bytes] | None = None) -> Path:
    """Write a workspace into `root` and return `root`.

    `config` defaults to a valid base-database.jsonc bound to the catalog's tables;
    `catalog` defaults to an empty catalog; `agent_tools` defaults to no file.
    """
    catalog_doc = {"baseToken": "bas_test", "tables": []} if catalog is None else catalog
    if config is None:
        tables = catalog_doc.get("tables", []) if isinstance(catalog_doc, dict) else []
        config = {"appToken": "app_test", "title": "Test site", "binding": {
            "baseToken": "bas_test",
            "tableIds": [t["tableId"] for t in tables if isinstance(t, dict) and "tableId" in t],
        }}
    root.mkdir(parents=True, exist_ok=True)
    _write(root / "base-database.jsonc", config)
    _write(root / "catalog.json", catalog_doc)
    _write(root / "agent-tools.json", agent_tools)
    extra = dict(files or {})
    for key, doc in (functions or {}).items():
        kind_dir, _, function_id = key.partition("/")
        fdir = root / kind_dir / function_id
        fdir.mkdir(parents=True, exist_ok=True)
        _write(fdir / "function.json", doc)
        if kind_dir == "database-functions":
            extra.setdefault(f"{key}/main.sql", DEFAULT_SQL)
        elif kind_dir == "faas":
            extra.setdefault(f"{key}/index.mjs", DEFAULT_HANDLER)
    for rel, content in extra.items():
        _write(root / rel, content)
    return root


def build_workspace(root: Path, *, skip_ai: bool = False, **kwargs: Any) -> Workspace:
    """write_workspace, then load_workspace."""
    return load_workspace(write_workspace(root, **kwargs), skip_ai=skip_ai)


def check_context(root: Path, *, skip_ai: bool = False, **kwargs: Any) -> CheckContext:
    """A fresh CheckContext over a workspace written from `kwargs`."""
    return CheckContext(workspace=build_workspace(root, skip_ai=skip_ai, **kwargs),
                        skip_ai=skip_ai)


def _write(path: Path, content: Any) -> None:
    if content is ABSENT:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content, ensure_ascii=False, indent=2) + "\n",
                        encoding="utf-8")
