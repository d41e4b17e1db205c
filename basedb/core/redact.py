"""Keep secrets out of everything basedb prints or logs."""

from __future__ import annotations

import re

# Keys whose values are credentials, in JSON bodies and form bodies alike. Identifiers
# that merely end in "token" (appToken, base_token, pageToken) are not secrets.
_SECRET_KEYS = (r"access_?token|accessToken|refresh_?token|refreshToken|tenant_access_token"
                r"|app_access_token|user_access_token|app_?secret|appSecret|client_secret"
                r"|device_code|deviceCode|token|secret|password|authorization")

# Bearer and Basic credentials, basedb platform tokens (bdb_…), Lark user, tenant and
# refresh tokens (u-…, t-…, ur-…), then secret-valued keys in JSON and in forms.
_PATTERNS = [
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?i)(basic\s+)[A-Za-z0-9+/=]{8,}"),
    re.compile(r"\bbdb_[A-Za-z0-9_-]{8,}"),
    re.compile(r"\b(?:u|t|ur)-[A-Za-z0-9_-]{20,}"),
    re.compile(rf'(?i)("(?:{_SECRET_KEYS})"\s*:\s*")[^"]+(")'),
    re.compile(rf"(?i)(\b(?:{_SECRET_KEYS})=)[^&\s\"']+()"),
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
