"""Keep secrets out of everything basedb prints or logs."""

from __future__ import annotations

import re

# Bearer tokens, basedb platform tokens (bdb_…), Lark user/tenant tokens (u-…, t-…).
_PATTERNS = [
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"\bbdb_[A-Za-z0-9_-]{8,}"),
    re.compile(r"\b(?:u|t)-[A-Za-z0-9_-]{20,}"),
    re.compile(r'(?i)("(?:access_?token|token|secret|password|authorization)"\s*:\s*")[^"]+(")'),
]
REDACTED = "***"


def redact(text: str) -> str:
    """Replace anything that looks like a credential with ***."""
    for pattern in _PATTERNS:
        if pattern.groups == 2:
            text = pattern.sub(lambda m: m.group(1) + REDACTED + m.group(2), text)
        elif pattern.groups == 1:
            text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        else:
            text = pattern.sub(REDACTED, text)
    return text
