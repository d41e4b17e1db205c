"""The content hash of one draft function: what the client and the platform both compute,
so that a deploy can name a function the platform already holds instead of sending it.

    function_content_hash(kind, function_id, declaration, sql, handler) -> 64 hex digits

It is the SHA-256 of the canonical JSON (keys sorted, no spaces, non-ASCII as is) of
`[kind, functionId, declaration, sql, handler]`, where `kind` is one of
`database_function`, `mutation`, `faas`, `ai_function`, `declaration` the parsed
function.json document, and `sql` / `handler` the text of main.sql / index.mjs (null for
the kinds that have none). Equal hashes mean the same function.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

CONTENT_HASH_RE = re.compile(r"^[0-9a-f]{64}\Z")
DEFINITION = 1
"""The version of this definition: a hash remembered under another one is not reused."""
RESEND_KEY = "resend"
"""The `data` key of a refusal that lists (as JSON Pointers into the request) what the
platform does not hold and the client must send in full."""


def function_content_hash(kind: str, function_id: str, declaration: Any, sql: str | None,
                          handler: str | None) -> str:
    text = json.dumps([kind, function_id, declaration, sql, handler], ensure_ascii=False,
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
