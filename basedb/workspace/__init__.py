"""The site workspace: finding it, loading it, and its typed model."""

from __future__ import annotations

from basedb.workspace.loader import find_root, load_workspace
from basedb.workspace.model import Workspace

__all__ = ["Workspace", "find_root", "load_workspace"]
