"""`{app}` and `{base}` in `basedb api` paths, filled from the workspace (as `gh api`
fills `{owner}` and `{repo}` from the repository it runs in).

    basedb api GET /sites/{app}/functions     # the appToken of base-database.jsonc
    basedb api GET /bases/{base}/tables       # its binding.baseToken

So the examples in the README and the docs work when pasted inside a workspace. Only the
path is expanded; a path with no placeholder is sent as written.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from basedb.core.errors import UsageError

PLACEHOLDERS = {
    "app": "the site's appToken (base-database.jsonc `appToken`)",
    "base": "the bound Base's token (base-database.jsonc `binding.baseToken`)",
}
_PLACEHOLDER = re.compile(r"\{([^{}/]*)\}")


def expand_path(path: str, workspace_dir: Path | None) -> str:
    """`path` with every `{app}` and `{base}` replaced from the workspace at or above
    `workspace_dir` (the current directory when None)."""
    names = _PLACEHOLDER.findall(path)
    if not names:
        return path
    unknown = sorted({name for name in names if name not in PLACEHOLDERS})
    if unknown:
        known = ", ".join(f"{{{name}}} ({what})" for name, what in PLACEHOLDERS.items())
        raise UsageError(f"PATH {path!r} uses {', '.join(f'{{{n}}}' for n in unknown)}, "
                         "which basedb does not fill.", code="PATH_PLACEHOLDER_UNKNOWN",
                         hint=f"The placeholders are {known}; write other values literally.")
    values = _workspace_values(path, workspace_dir)
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], path)


def _workspace_values(path: str, workspace_dir: Path | None) -> dict[str, str]:
    from basedb.core.errors import WorkspaceNotFound
    from basedb.workspace import files
    from basedb.workspace.config import CONFIG_FILE
    from basedb.workspace.loader import find_root

    try:
        root = find_root(workspace_dir)
        label = str(root / CONFIG_FILE)
        doc: Any = files.parse_jsonc(files.read_text(root / CONFIG_FILE, label=label,
                                                     limit=files.LIMIT_CONFIG), label=label)
    except WorkspaceNotFound:
        raise UsageError(f"PATH {path!r} uses a placeholder, but there is no workspace here "
                         "to fill it from.", code="PATH_PLACEHOLDER_UNFILLED",
                         hint="Run inside the site's workspace, pass -C/--workspace DIR, or "
                              "write the token itself in the path.") from None
    except files.FileProblem as problem:
        raise UsageError(f"PATH {path!r} uses a placeholder, but {problem.message}",
                         code="PATH_PLACEHOLDER_UNFILLED", hint=problem.fix) from None
    binding = doc.get("binding") if isinstance(doc, dict) else None
    found = {"app": doc.get("appToken") if isinstance(doc, dict) else None,
             "base": binding.get("baseToken") if isinstance(binding, dict) else None}
    values: dict[str, str] = {}
    for name, value in found.items():
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_-]+", value):
            values[name] = value
    missing = sorted(set(_PLACEHOLDER.findall(path)) - set(values))
    if missing:
        raise UsageError(f"PATH {path!r} uses {{{missing[0]}}}, but {root / CONFIG_FILE} has "
                         f"no usable value for it ({PLACEHOLDERS[missing[0]]}).",
                         code="PATH_PLACEHOLDER_UNFILLED",
                         hint="Fix base-database.jsonc (`basedb check` says how), or write "
                              "the token itself in the path.")
    return values
