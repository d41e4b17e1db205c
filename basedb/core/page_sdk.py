"""The page SDK: one ES module (basedb/_data/runtime.js, declared in page.d.ts) that a
site's page reaches under three names.

    @lark-base-open/base-database-app-sdk/page   upstream's name (what its pages import)
    database-runtime                            the 1.3.9 name
    /_basedb/runtime.js                         the URL every basedb server serves it at

A page served by basedb (`basedb dev`, a preview, production) gets an import map as the
first element of its `<head>` that maps both bare names to the URL, so the browser loads
one module whichever name a script uses (a module's identity is its URL). A bundled page
resolves the upstream name from the npm package `basedb sdk pack` writes
(basedb.contracts.sdk_package), which holds the same two files.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path

SDK_PACKAGE = "@lark-base-open/base-database-app-sdk"
SDK_SPECIFIER = SDK_PACKAGE + "/page"
LEGACY_SPECIFIER = "database-runtime"
RUNTIME_URL = "/_basedb/runtime.js"
SPECIFIERS = (SDK_SPECIFIER, LEGACY_SPECIFIER)

_DATA_DIR = Path(__file__).resolve().parent.parent / "_data"
RUNTIME_FILE = _DATA_DIR / "runtime.js"
DECLARATIONS_FILE = _DATA_DIR / "page.d.ts"

IMPORT_MAP = json.dumps({"imports": dict.fromkeys(SPECIFIERS, RUNTIME_URL)},
                        separators=(",", ":"))
IMPORT_MAP_TAG = f'<script type="importmap">{IMPORT_MAP}</script>'.encode("ascii")
# Part of a served HTML page's ETag, so a cached page is refetched when the map changes.
IMPORT_MAP_DIGEST = hashlib.sha256(IMPORT_MAP_TAG).hexdigest()[:16]

_HEAD_OPEN_RE = re.compile(rb"<head(?:\s[^>]*)?>", re.IGNORECASE)
_HTML_OPEN_RE = re.compile(rb"<html(?:\s[^>]*)?>", re.IGNORECASE)
_DOCTYPE_RE = re.compile(rb"^\s*(?:\xef\xbb\xbf)?\s*<!doctype[^>]*>", re.IGNORECASE)


@functools.lru_cache(maxsize=1)
def runtime_source() -> bytes:
    """The SDK module's source."""
    return RUNTIME_FILE.read_bytes()


@functools.lru_cache(maxsize=1)
def declarations_source() -> bytes:
    """The SDK's TypeScript declarations."""
    return DECLARATIONS_FILE.read_bytes()


def inject_import_map(html: bytes) -> bytes:
    """`html` with the SDK's import map first in its `<head>` (after `<html>` or the
    doctype when it has no head), where it precedes every script that could import the
    SDK. A map of the page's own that names the same specifiers comes later and so
    does not override the platform's (browsers merge import maps, first rule wins)."""
    for pattern in (_HEAD_OPEN_RE, _HTML_OPEN_RE, _DOCTYPE_RE):
        found = pattern.search(html)
        if found is not None:
            return html[:found.end()] + IMPORT_MAP_TAG + html[found.end():]
    return IMPORT_MAP_TAG + html
