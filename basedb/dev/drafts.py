"""The development draft's body: every function of the workspace, as PUT draft/functions
sends it (plus the AI Functions), re-read from disk only for the functions that changed.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from basedb.deploy.payloads import AI_LIST, CODE_LISTS
from basedb.workspace import files
from basedb.workspace.declarations import declaration_file, handler_file, sql_file
from basedb.workspace.model import FunctionKind, Workspace

# index.mjs, as the platform accepts it (PUT draft/functions).
LIMIT_HANDLER = files.MIB
LISTS: dict[str, FunctionKind] = {**CODE_LISTS, AI_LIST: "ai_function"}


class DevDraftBody:
    """Builds the body from a checked workspace (check found no errors, so every file
    it needs is there and parses)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._items: dict[tuple[FunctionKind, str], dict[str, Any]] = {}

    def build(self, ws: Workspace, changed: Collection[str] | None) -> dict[str, Any]:
        """The body for `ws`; `changed` None re-reads every function."""
        if changed is None:
            self._items.clear()
        body: dict[str, list[dict[str, Any]]] = {key: [] for key in LISTS}
        wanted: set[tuple[FunctionKind, str]] = set()
        for key, kind in LISTS.items():
            for function_id in sorted(f for f, kinds in ws.ids.items() if kind in kinds):
                if function_id not in ws.declarations:
                    continue  # left out of this run (AI Functions under --skip-ai-functions)
                wanted.add((kind, function_id))
                if changed is not None and function_id in changed:
                    self._items.pop((kind, function_id), None)
                item = self._items.get((kind, function_id))
                if item is None:
                    item = self._items[(kind, function_id)] = self._read(kind, function_id)
                body[key].append(item)
        for stale in set(self._items) - wanted:
            del self._items[stale]
        config = ws.config
        # The development draft runs in the site's time zone, as a deployment does.
        return {**body, "timezone": (config.timezone if config is not None else None) or "UTC"}

    def _read(self, kind: FunctionKind, function_id: str) -> dict[str, Any]:
        decl_path = declaration_file(kind, function_id)
        declaration = files.read_json(self.root / decl_path, label=decl_path,
                                      limit=files.LIMIT_DECLARATION)
        if kind == "ai_function":
            return {"key": function_id, "declaration": declaration}
        item: dict[str, Any] = {"functionId": function_id, "declaration": declaration}
        if kind == "database_function":
            item["sql"] = files.read_text(self.root / sql_file(function_id),
                                          label=sql_file(function_id), limit=files.LIMIT_SQL)
        elif kind == "faas":
            item["handler"] = files.read_text(self.root / handler_file(function_id),
                                              label=handler_file(function_id),
                                              limit=LIMIT_HANDLER)
        return item
