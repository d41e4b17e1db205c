"""Who may put code in a site's development draft, and the record of every change.

The development draft (`basedb.platform.domain.dev_drafts`) runs with the site's
secrets: a FaaS handler reads the value of each secret it declares. Admins may set a
secret but no route shows them a value, so a dev draft whose FaaS functions declare
secrets is the owner's alone to put; an admin's would read the owner's values through
an env=dev call. Without declared secrets the draft stays open to owners and admins.

A deployment leaves its code behind, immutable and listed; the development draft lives
in memory only. So every put and discard is written to the site's platform log, which
its owners and admins read (`basedb logs`): who, in which role, each function, and a
digest of each handler and statement, beside the `call` entries of env=dev calls.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from basedb.platform.domain.drafts import DraftFunction
from basedb.platform.domain.identity import User
from basedb.platform.storage import platform_log
from basedb.protocol import permission_denied

SECRETS_ROLE = "owner"  # the one role that may run code with the site's secrets


def declared_secrets(functions: Sequence[DraftFunction]) -> dict[str, list[str]]:
    """The secret names each FaaS function of a (judged) draft declares, by function."""
    found: dict[str, list[str]] = {}
    for function in functions:
        declaration = function.declaration
        names = declaration.get("secrets") if isinstance(declaration, dict) else None
        if function.kind == "faas" and isinstance(names, list) and names:
            found[function.function_id] = [str(name) for name in names]
    return found


def check_author(user: User, role: str, app_token: str,
                 functions: Sequence[DraftFunction]) -> None:
    """Refuse a draft that declares secrets unless its author may run code with them."""
    secrets = declared_secrets(functions)
    if secrets and role != SECRETS_ROLE:
        named = "; ".join(f"{fid}: {', '.join(names)}" for fid, names in sorted(secrets.items()))
        platform_log.write(f"basedb dev: {user.user_id} ({role}) was refused the development "
                           f"draft of site {app_token}: its FaaS functions declare secrets "
                           f"({named})")
        raise permission_denied(
            f"User {user.user_id} is an admin of site {app_token}; a development draft whose "
            f"FaaS functions declare secrets ({named}) runs with their values, which only "
            "the site's owner may do",
            "leave `secrets` out of the dev session's function.json, or ask the owner to "
            "run `basedb dev`; a deploy still goes through the draft and its history")


def record_put(user: User, role: str, app_token: str, functions: Sequence[DraftFunction],
               revision: int) -> None:
    secrets = declared_secrets(functions)
    lines = [f"basedb dev: {user.user_id} ({role}) put the development draft of site "
             f"{app_token} (revision {revision}, {len(functions)} functions)"]
    for function in sorted(functions, key=lambda f: (f.kind, f.function_id)):
        code = (function.handler or "") + (function.sql or "")
        digest = hashlib.sha256(code.encode("utf-8")).hexdigest()[:16] if code else "-"
        declared = f", secrets {', '.join(secrets[function.function_id])}" \
            if function.function_id in secrets and function.kind == "faas" else ""
        lines.append(f"  {function.kind} {function.function_id} (code sha256 "
                     f"{digest}{declared})")
    platform_log.write("\n".join(lines))


def record_discard(user: User, role: str, app_token: str, discarded: bool) -> None:
    what = "discarded the development draft" if discarded else \
        "asked to discard the development draft (there was none)"
    platform_log.write(f"basedb dev: {user.user_id} ({role}) {what} of site {app_token}")
