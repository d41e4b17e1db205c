"""The page's files under `src/`, resolved from a request path without ever leaving it.

A request path is split into segments; `.`, `..`, empty segments inside the path,
hidden names (`.env`, `.git`), backslashes and control characters are refused before
the file system is asked anything. The resolved file must then lie inside `src/` after
every symlink is followed (a link to `~/.ssh/id_rsa` is not served), be a regular file
and be smaller than `MAX_FILE_BYTES`.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from basedb.core.frozen import frozen_dataclass
from basedb.workspace.files import MIB

INDEX = "index.html"
MAX_FILE_BYTES = 64 * MIB
_UNSAFE_SEGMENT_RE = re.compile(r"[\x00-\x1f\x7f\\]")

# Types browsers must get right (module scripts are refused under a wrong type).
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8", ".json": "application/json",
    ".map": "application/json", ".svg": "image/svg+xml", ".wasm": "application/wasm",
    ".txt": "text/plain; charset=utf-8", ".md": "text/markdown; charset=utf-8",
    ".ico": "image/x-icon", ".png": "image/png", ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
    ".woff": "font/woff", ".woff2": "font/woff2",
    ".webmanifest": "application/manifest+json",
}


@frozen_dataclass
class PageFile:
    path: Path
    data: bytes

    @property
    def content_type(self) -> str:
        return CONTENT_TYPES.get(self.path.suffix.lower(), "application/octet-stream")

    @property
    def is_html(self) -> bool:
        return self.path.suffix.lower() in (".html", ".htm")


@frozen_dataclass
class Lookup:
    """A path's outcome: a file, a redirect to the directory URL, or nothing."""

    file: PageFile | None = None
    redirect_to_directory: bool = False


def safe_segments(path: str) -> list[str] | None:
    """The segments of a request path below the page root, or None when one is unsafe."""
    segments = path.split("/")
    for index, segment in enumerate(segments):
        if segment == "":
            if index in (0, len(segments) - 1):
                continue
            return None  # `a//b`
        if segment.startswith(".") or _UNSAFE_SEGMENT_RE.search(segment):
            return None
    return [s for s in segments if s]


def lookup(page_root: Path, path: str) -> Lookup:
    """What to answer for the request `path` below the page root."""
    segments = safe_segments(path)
    if segments is None:
        return Lookup()
    directory_url = path == "" or path.endswith("/")
    target = page_root.joinpath(*segments)
    if directory_url:
        target = target / INDEX
    found = _read_inside(page_root, target)
    if found is not None:
        return Lookup(file=found)
    if not directory_url and _read_inside(page_root, target / INDEX) is not None:
        return Lookup(redirect_to_directory=True)
    return Lookup()


def _read_inside(page_root: Path, target: Path) -> PageFile | None:
    try:
        root = page_root.resolve(strict=True)
        real = target.resolve(strict=True)
    except (OSError, RuntimeError):
        return None  # missing, or a symlink loop
    if real != root and root not in real.parents:
        return None  # a symlink out of src/
    try:
        descriptor = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        try:
            info = os.fstat(handle.fileno())
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None  # a FIFO, a device, a directory, or too large to serve
        return PageFile(path=real, data=handle.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES])
