"""The site workspace: finding it, loading it, and its typed model.

Owns the files of a workspace (base-database.jsonc, catalog.json, the declarations,
agent-tools.json), reading them defensively, and the JSONC scanner that edits and
locates values in them. May import: basedb.core.
"""

from __future__ import annotations

from basedb.workspace.loader import find_root, load_workspace
from basedb.workspace.model import Workspace

__all__ = ["Workspace", "find_root", "load_workspace"]
