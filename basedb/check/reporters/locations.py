"""Where a finding is: its line and column, and its path as CI tools want it.

Every finding is *anchored* to a file and a position, because editors, terminals and
code scanning can only point at a line of a file: a finding about a directory (an
invalid function directory name) is anchored to the directory's function.json, one
about the whole workspace to base-database.jsonc, and one whose place in its file is
unknown to the file's first line.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from basedb.core.frozen import frozen_dataclass
from basedb.protocol.findings import Finding, Hint
from basedb.workspace import files
from basedb.workspace.jsonpos import locate

CATALOG_FILE = "catalog.json"
CONFIG_FILE = "base-database.jsonc"
DECLARATION_FILE = "function.json"

# (line, column); the column is unknown for findings that only know their line.
Position = tuple[int, int | None]


@frozen_dataclass
class Anchor:
    """A file (never a directory) and a 1-based line and column in it."""

    file: str
    line: int
    column: int
    exact: bool  # False when the position is the file's start, not the finding's place

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


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

    def anchor(self, item: Finding | Hint) -> Anchor:
        """The file and position an editor or code scanning should show `item` at."""
        file = item.file
        if file and not file.endswith("/"):
            pos = self.of(item)
            if pos is not None:
                return Anchor(file, pos[0], pos[1] or 1, exact=True)
            return Anchor(file, 1, 1, exact=False)
        return Anchor(self._file_in(file) if file else CONFIG_FILE, 1, 1, exact=False)

    def line_text(self, file: str, line: int) -> str:
        """Line `line` of `file`, stripped ("" when unreadable or out of range)."""
        text = self._text(file)
        lines = text.splitlines() if text is not None else []
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    def _file_in(self, directory: str) -> str:
        """A file that stands for `directory`: its function.json, else its first file,
        else the workspace's config (a directory with no file has nothing to point at)."""
        folder = self._root / directory
        if (folder / DECLARATION_FILE).is_file():
            return directory + DECLARATION_FILE
        try:
            names = sorted(entry.name for entry in os.scandir(folder)
                           if entry.is_file(follow_symlinks=False))
        except OSError:
            names = []
        return directory + names[0] if names else CONFIG_FILE

    def _text(self, file: str) -> str | None:
        if file not in self._texts:
            limit = (files.LIMIT_CATALOG if file == CATALOG_FILE else
                     files.LIMIT_SQL if file.endswith(".sql") else files.LIMIT_DECLARATION)
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
