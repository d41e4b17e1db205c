"""The scopes a user signs in with: a named default set basedb needs, plus what `--scope`
adds, so that the first deploy after `auth login` does not fail on one missing scope after
another (99991679, one re-login each).

`SITE_BUILDER` is read from lark-cli's `shortcuts/base/` (the scopes its Base commands
declare) for what basedb does there: create a Base, list, create and delete its tables,
manage its fields and read and write its records. The site endpoints' own scopes are
not published; they are taken to be the app's (`base:app:*`), as the site is the Base's
app. `offline_access` makes the sign-in refreshable.
"""

from __future__ import annotations

OFFLINE_ACCESS = "offline_access"
DEFAULT_SET = "site-builder"
"""The default set's name, as `auth login --help` and docs/lark.md call it."""

SITE_BUILDER: tuple[str, ...] = (
    "base:app:create", "base:app:read", "base:app:update",
    "base:table:create", "base:table:read", "base:table:delete",
    "base:field:create", "base:field:read", "base:field:update", "base:field:delete",
    "base:record:create", "base:record:read", "base:record:update",
)


def requested(extra: str = "") -> str:
    """What `auth login` asks for: offline_access, the default set, then `extra`
    (space-separated), each once, in that order."""
    words = [OFFLINE_ACCESS, *SITE_BUILDER, *extra.split()]
    return " ".join(dict.fromkeys(words))


def missing(granted: str) -> list[str]:
    """The default set's scopes a sign-in with `granted` lacks, in the set's order."""
    have = set(granted.split())
    return [scope for scope in SITE_BUILDER if scope not in have]
