"""Every Open API path basedb calls, in one place, relative to /open-apis/base/v3.

Three kinds of path live here, and each says how sure it is:

- **Known**: seen answering on the real Base Database Open API
  (`POST /sites/create`, `GET /sites/list` with `pageToken`/`hasMore`), or read from
  lark-cli's source (`shortcuts/base/`: bases, tables, fields, records) or from upstream's
  skill (bind_base, catalog, the Agent OpenAPI's functions/describe/invoke).
- **Inferred**: the site itself, unbind, the drafts, the development draft, deployments,
  promote, rollback, artifact, skill, secrets and logs paths. No public source shows them;
  basedb's local platform serves them as `INFERRED_PATHS` writes them.
- **Local**: the local platform's own extensions (users), never sent to Lark.

THE INFERRED PATHS ARE DECLARED IN `INFERRED_PATHS` AND NOWHERE ELSE, as templates
(`{app}` the site's appToken, `{id}` a deployment id or a secret's name, each filled in
as one percent-encoded segment). When a real path is found to differ, it can be given
without a code change: $BASEDB_LARK_ENDPOINTS names a JSON file of `{"name": "template"}`
that replaces the templates it names (`basedb doctor` says which inferred path answered
404). tests/unit/test_endpoints.py checks that the local platform serves each of them.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import quote

from basedb.core import environment
from basedb.core.errors import InputError


def _seg(value: str) -> str:
    return quote(value, safe="")


# --------------------------------------------------------------------------- known

SITES_CREATE = "/sites/create"
"""POST {title} -> {appToken, title}: create a site (an "app")."""

SITES_LIST = "/sites/list"
"""GET ?pageSize&pageToken -> {sites, hasMore, pageToken?}: the caller's sites."""

BASES = "/bases"
"""POST {name} -> {base_token, name}: create a Base (lark-cli `base +base-create`)."""


def site(app_token: str) -> str:
    """GET: the site; DELETE: delete it (the local platform; inferred for Lark)."""
    return _inferred("site", app=app_token)


def _site(app_token: str) -> str:
    return f"/sites/{_seg(app_token)}"


def bind_base(app_token: str) -> str:
    return _site(app_token) + "/bind_base"


def unbind_base(app_token: str) -> str:
    return _inferred("unbind_base", app=app_token)


def catalog(app_token: str) -> str:
    return _site(app_token) + "/catalog"


def functions(app_token: str) -> str:
    return _site(app_token) + "/functions"


def function(app_token: str, function_id: str) -> str:
    return functions(app_token) + f"/{_seg(function_id)}"


def invoke(app_token: str, function_id: str) -> str:
    return function(app_token, function_id) + "/invoke"


def tables(base_token: str) -> str:
    return f"/bases/{_seg(base_token)}/tables"


def table(base_token: str, table_id: str) -> str:
    return tables(base_token) + f"/{_seg(table_id)}"


def fields(base_token: str, table_id: str) -> str:
    return table(base_token, table_id) + "/fields"


def field(base_token: str, table_id: str, field_id: str) -> str:
    return fields(base_token, table_id) + f"/{_seg(field_id)}"


def records(base_token: str, table_id: str) -> str:
    return tables(base_token) + f"/{_seg(table_id)}/records"


def record(base_token: str, table_id: str, record_id: str) -> str:
    return records(base_token, table_id) + f"/{_seg(record_id)}"


def batch_create(base_token: str, table_id: str) -> str:
    return records(base_token, table_id) + "/batch_create"


def batch_update(base_token: str, table_id: str) -> str:
    return records(base_token, table_id) + "/batch_update"


# ------------------------------------------------------------------------ inferred
# Not confirmed against the real Open API: written here, and only here, overridable by
# $BASEDB_LARK_ENDPOINTS.

INFERRED_PATHS: dict[str, str] = {
    "site": "/sites/{app}",  # GET the site, DELETE it
    "unbind_base": "/sites/{app}/unbind_base",  # POST {tableIds}
    "draft_functions": "/sites/{app}/draft/functions",  # PUT (full overwrite) / GET
    # GET: content hashes of the draft functions and the newest deployments' fingerprints
    "draft_hashes": "/sites/{app}/draft/hashes",
    "draft_ai_functions": "/sites/{app}/draft/ai-functions",  # PUT (full overwrite) / GET
    "draft_agent_tools": "/sites/{app}/draft/agent-tools",  # PUT {exclude} / GET
    "dev_functions": "/sites/{app}/dev/functions",  # PUT, GET, DELETE: `basedb dev`'s draft
    # POST multipart (site.zip + fingerprint, or JSON without site.zip) / GET the list
    "deployments": "/sites/{app}/deployments",
    "deployment": "/sites/{app}/deployments/{id}",
    "promote": "/sites/{app}/deployments/{id}/promote",
    "rollback": "/sites/{app}/deployments/{id}/rollback",
    "artifact": "/sites/{app}/deployments/{id}/artifact",
    "skill": "/sites/{app}/skill",  # GET ?env=prod: the site Skill
    "secrets": "/sites/{app}/secrets",  # GET: the names of the FaaS secrets
    "secret": "/sites/{app}/secrets/{id}",  # PUT {value} / DELETE
    "logs": "/sites/{app}/logs",  # GET ?logId&after&limit&tail&env&functionId&kind&wait
}
INFERRED = tuple(INFERRED_PATHS)
"""The names of the inferred paths (docs/lark.md lists them)."""

_loaded: dict[str, dict[str, str]] = {}


def _overrides() -> dict[str, str]:
    """The templates $BASEDB_LARK_ENDPOINTS replaces (its file read once)."""
    named = os.environ.get(environment.LARK_ENDPOINTS, "").strip()
    if not named:
        return {}
    if named not in _loaded:
        _loaded[named] = _read_overrides(Path(named).expanduser())
    return _loaded[named]


def _read_overrides(path: Path) -> dict[str, str]:
    variable = f"${environment.LARK_ENDPOINTS}"
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{variable} names {path}, which is not a readable JSON file: {exc}.",
                         code="ENDPOINTS_INVALID",
                         hint='Write a JSON object such as {"deployments": '
                              '"/sites/{app}/releases"}, or unset it.') from None
    if not isinstance(found, dict):
        raise InputError(f"{path} ({variable}) must hold a JSON object.",
                         code="ENDPOINTS_INVALID", hint='e.g. {"skill": "/sites/{app}/skill"}')
    for name, template in found.items():
        if name not in INFERRED_PATHS:
            raise InputError(f"{path} ({variable}) names {name!r}, which is no inferred path.",
                             code="ENDPOINTS_INVALID",
                             hint=f"Use one of: {', '.join(INFERRED_PATHS)}.")
        wanted = set(re.findall(r"\{(\w+)\}", INFERRED_PATHS[name]))
        if not isinstance(template, str) or not template.startswith("/") or set(
                re.findall(r"\{(\w+)\}", template)) != wanted:
            raise InputError(f"{path} ({variable}): {name!r} must be a path starting with / "
                             f"that uses {', '.join('{' + w + '}' for w in sorted(wanted))}.",
                             code="ENDPOINTS_INVALID",
                             hint=f"e.g. \"{name}\": \"{INFERRED_PATHS[name]}\"")
    return {str(k): str(v) for k, v in found.items()}


def _inferred(name: str, *, app: str, id: str | None = None) -> str:
    template = _overrides().get(name) or INFERRED_PATHS[name]
    return template.replace("{app}", _seg(app)).replace("{id}", _seg(id or ""))


def draft_functions(app_token: str) -> str:
    return _inferred("draft_functions", app=app_token)


def draft_hashes(app_token: str) -> str:
    return _inferred("draft_hashes", app=app_token)


def draft_ai_functions(app_token: str) -> str:
    return _inferred("draft_ai_functions", app=app_token)


def draft_agent_tools(app_token: str) -> str:
    return _inferred("draft_agent_tools", app=app_token)


def dev_functions(app_token: str) -> str:
    return _inferred("dev_functions", app=app_token)


def deployments(app_token: str) -> str:
    return _inferred("deployments", app=app_token)


def deployment(app_token: str, deployment_id: str) -> str:
    return _inferred("deployment", app=app_token, id=deployment_id)


def promote(app_token: str, deployment_id: str) -> str:
    return _inferred("promote", app=app_token, id=deployment_id)


def rollback(app_token: str, deployment_id: str) -> str:
    return _inferred("rollback", app=app_token, id=deployment_id)


def artifact(app_token: str, deployment_id: str) -> str:
    return _inferred("artifact", app=app_token, id=deployment_id)


def skill(app_token: str) -> str:
    return _inferred("skill", app=app_token)


def secrets(app_token: str) -> str:
    return _inferred("secrets", app=app_token)


def secret(app_token: str, name: str) -> str:
    return _inferred("secret", app=app_token, id=name)


def logs(app_token: str) -> str:
    return _inferred("logs", app=app_token)


# --------------------------------------------------------------------------- local

USERS_ME = "/users/me"
"""GET: the calling user on a basedb platform (Lark answers `authen/v1/user_info`)."""

USERS = "/users"
"""POST {name}: create a user (the local platform's owner only)."""

PLATFORM_LOGS = "/logs"
"""GET (same query as `logs`): every entry of the platform log (its owner only)."""

# ------------------------------------------------------------ Lark, outside base/v3

USER_INFO = "/open-apis/authen/v1/user_info"
"""GET with a user access token: {open_id, name, …} (lark-cli internal/auth/paths.go)."""
