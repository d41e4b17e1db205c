"""Every Open API path basedb calls, in one place, relative to /open-apis/base/v3.

Three kinds of path live here, and each says how sure it is:

- **Known**: seen answering on the real Base Database Open API
  (`POST /sites/create`, `GET /sites/list` with `pageToken`/`hasMore`), or read from
  lark-cli's source (`shortcuts/base/`: bases, tables, fields, records) or from upstream's
  skill (bind_base, catalog, the Agent OpenAPI's functions/describe/invoke).
- **Inferred**: the draft, deployment, promote, rollback, artifact, skill and secrets
  paths. No public source shows them; basedb's local platform serves them as written
  below.
- **Local**: the local platform's own extensions (users), never sent to Lark.

THE INFERRED PATHS ARE DECLARED HERE AND NOWHERE ELSE. When the real paths become known,
change them in this module: the deploy pipeline, pull, doctor and the agent tools build
every request from these functions. tests/unit/test_endpoints.py checks that the local
platform serves each of them.
"""

from __future__ import annotations

from urllib.parse import quote


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
    return f"/sites/{_seg(app_token)}"


def bind_base(app_token: str) -> str:
    return site(app_token) + "/bind_base"


def unbind_base(app_token: str) -> str:
    return site(app_token) + "/unbind_base"


def catalog(app_token: str) -> str:
    return site(app_token) + "/catalog"


def functions(app_token: str) -> str:
    return site(app_token) + "/functions"


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


# ------------------------------------------------------------------------ inferred
# Not confirmed against the real Open API: change them here, and only here.


def draft_functions(app_token: str) -> str:
    """PUT (full overwrite of Database Functions, Mutations, FaaS) / GET."""
    return site(app_token) + "/draft/functions"


def draft_hashes(app_token: str) -> str:
    """GET: content hashes of the draft functions and fingerprints of the newest
    deployments, so a deploy sends only what the platform lacks."""
    return site(app_token) + "/draft/hashes"


def draft_ai_functions(app_token: str) -> str:
    """PUT (full overwrite) / GET."""
    return site(app_token) + "/draft/ai-functions"


def draft_agent_tools(app_token: str) -> str:
    """PUT {exclude} / GET."""
    return site(app_token) + "/draft/agent-tools"


def dev_functions(app_token: str) -> str:
    """PUT (replace), GET, DELETE: the development draft `basedb dev` keeps current
    (basedb's local platform; no known equivalent on Lark)."""
    return site(app_token) + "/dev/functions"


def deployments(app_token: str) -> str:
    """POST multipart (site.zip + fingerprint) -> a preview; GET -> the list."""
    return site(app_token) + "/deployments"


def deployment(app_token: str, deployment_id: str) -> str:
    return deployments(app_token) + f"/{_seg(deployment_id)}"


def promote(app_token: str, deployment_id: str) -> str:
    return deployment(app_token, deployment_id) + "/promote"


def rollback(app_token: str, deployment_id: str) -> str:
    return deployment(app_token, deployment_id) + "/rollback"


def artifact(app_token: str, deployment_id: str) -> str:
    return deployment(app_token, deployment_id) + "/artifact"


def skill(app_token: str) -> str:
    """GET ?env=prod: the site Skill rendered from production."""
    return site(app_token) + "/skill"


def secrets(app_token: str) -> str:
    """GET: the names of the site's secrets (FaaS environment variables)."""
    return site(app_token) + "/secrets"


def secret(app_token: str, name: str) -> str:
    """PUT {value} / DELETE: one secret."""
    return secrets(app_token) + f"/{_seg(name)}"


INFERRED = ("draft_functions", "draft_hashes", "draft_ai_functions", "draft_agent_tools",
            "deployments", "deployment", "promote", "rollback", "artifact", "skill", "secrets",
            "secret")
"""The names of the inferred path builders above (docs/lark.md lists them)."""

# --------------------------------------------------------------------------- local

USERS_ME = "/users/me"
"""GET: the calling user on a basedb platform (Lark answers `authen/v1/user_info`)."""

USERS = "/users"
"""POST {name}: create a user (the local platform's owner only)."""

def logs(app_token: str) -> str:
    """GET ?logId&after&limit&tail&env&functionId&kind&wait: the site's platform log."""
    return site(app_token) + "/logs"


PLATFORM_LOGS = "/logs"
"""GET (same query as `logs`): every entry of the platform log (its owner only)."""

# ------------------------------------------------------------ Lark, outside base/v3

USER_INFO = "/open-apis/authen/v1/user_info"
"""GET with a user access token: {open_id, name, …} (lark-cli internal/auth/paths.go)."""
