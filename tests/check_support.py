"""Workspaces of many Database Functions for tests of check's SQL analysis."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

CASES = Path(__file__).resolve().parent / "cases" / "negative"


def workspace_of_queries(root: Path, texts: Sequence[str]) -> Path:
    """A copy of the `enum_out_of_domain` case at `root` whose one function is replaced
    by one per text: `query000`, `query001`, … with the same declaration, each with its
    text as `main.sql` (written as given, lone surrogates included)."""
    shutil.copytree(CASES / "enum_out_of_domain", root)
    template = root / "database-functions" / "searchTasks"
    declaration = json.loads((template / "function.json").read_text(encoding="utf-8"))
    shutil.rmtree(template)
    for n, text in enumerate(texts):
        folder = root / "database-functions" / f"query{n:03d}"
        folder.mkdir(parents=True)
        (folder / "function.json").write_text(
            json.dumps({**declaration, "name": f"query{n:03d}"}), encoding="utf-8")
        (folder / "main.sql").write_text(text, encoding="utf-8", errors="surrogateescape")
    return root
