"""Where a finding is: its line and column, and its path as CI tools want it."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from basedb.core.findings import Finding, Hint
from basedb.workspace import files
from basedb.workspace.jsonpos import locate

CATALOG_FILE = "catalog.json"

# (line, column); the column is unknown for findings that only know their line.
Position = tuple[int, int | None]


class Positions:
    """Positions of findings, reading each JSON file of the workspace at most once.

    A finding that carries a line (SQL, or a JSON syntax error) is trusted as it is;
    otherwise its JSON Pointer is resolved in the file's text. Files that cannot be read
    safely (missing, binary, enormous, a loop) simply have no positions.
    """

    def __init__(self, root: Path) -> None:
        self._root = root
        self._texts: dict[str, str | None] = {}

    def of(self, item: Finding | Hint) -> Position | None:
        if isinstance(item, Finding) and item.line is not None:
            return item.line, item.column
        if not item.file.endswith((".json", ".jsonc")):
            return None
        text = self._text(item.file)
        if text is None:
            return None
        return locate(text, item.pointer, jsonc=item.file.endswith(".jsonc"))

    def _text(self, file: str) -> str | None:
        if file not in self._texts:
            limit = files.LIMIT_CATALOG if file == CATALOG_FILE else files.LIMIT_DECLARATION
            try:
                self._texts[file] = files.read_text(self._root / file, label=file, limit=limit)
            except files.FileProblem:
                self._texts[file] = None
        return self._texts[file]


def format_position(position: Position | None) -> str:
    if position is None:
        return ""
    line, column = position
    return f"{line}:{column}" if column is not None else str(line)


def repository_prefix(root: Path, base: Path | None = None) -> str:
    """The workspace's path inside the repository, as a POSIX prefix ("" at the top).

    CI annotations and code scanning resolve paths against the repository checkout. On
    GitHub Actions that is $GITHUB_WORKSPACE; elsewhere we take the current directory to
    be the checkout. A workspace outside it keeps workspace-relative paths.
    """
    if base is None:
        env = os.environ.get("GITHUB_WORKSPACE")
        base = Path(env) if env else Path.cwd()
    try:
        relative = Path(root).resolve().relative_to(base.resolve())
    except (ValueError, OSError):
        return ""
    return relative.as_posix() if relative.parts else ""


def repository_path(prefix: str, file: str) -> str:
    if not prefix:
        return file
    joined = str(PurePosixPath(prefix) / file)
    return joined + "/" if file.endswith("/") else joined
