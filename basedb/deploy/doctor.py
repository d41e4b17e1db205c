"""`basedb doctor`: is this machine, profile and workspace ready to build a site?

Each check answers ok, warn (works, but something is missing or out of date) or fail
(a command will not work), with what it found and the fix:

    python       the interpreter basedb runs on
    basedb       the installed version
    sqlglotc     the compiled SQL parser (optional: makes `check` faster)
    node         Node.js for FaaS functions on the local platform
    faas sandbox what the local platform's FaaS sandbox enforces here (given by the
                 command line, the one layer that may look inside the platform)
    profile      which profile commands here use, and where its name came from
    token        the profile's identity: the token verified (GET /users/me on a basedb
                 platform; for Feishu/Lark the user's user_info, the bot's tenant token,
                 or lark-cli's `auth status`)
    sites        GET /sites/list answers (upstream's doctor: the identity verifies and the
                 site listing succeeds)
    workspace    base-database.jsonc found and loadable
    catalog      catalog.json against the live catalog of the site

`ok` is true when no check failed. A failed sign-in or scope check also carries
upstream's `state` (SKILL.md, "认证与重新授权"), repeated at the top of the result:

    not_configured           no app credentials (or lark-cli is not configured)
    token_missing            nobody signed in
    need_user_authorization  the sign-in expired: sign in again
    app_scope_not_applied    the app lacks a scope the site API needs (developer console)
    missing_scopes           the user has not granted a scope: sign in again with it
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from basedb import __version__, install_command
from basedb.client import endpoints
from basedb.client.lark.oauth import load_token
from basedb.client.lark.scopes import missing as missing_scopes
from basedb.client.lark.signin import lark_cli_status
from basedb.client.profiles import current_profile
from basedb.client.secrets import secret_store
from basedb.client.sites import SiteApi
from basedb.core import environment
from basedb.core.errors import (
    AuthError,
    BadResponse,
    BasedbError,
    PermissionDenied,
    WorkspaceNotFound,
)
from basedb.core.frozen import frozen_dataclass
from basedb.core.node import MIN_NODE_MAJOR, node_executable, node_version
from basedb.core.wording import plural
from basedb.deploy.catalog_sync import canonical_catalog, same_catalog
from basedb.protocol import lark_errors
from basedb.workspace.catalog import CATALOG_FILE
from basedb.workspace.loader import find_root, load_workspace

if TYPE_CHECKING:
    from basedb.client.client import Client
    from basedb.client.profiles import Profile

MIN_PYTHON = (3, 10)


@frozen_dataclass
class Check:
    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str | None = None
    state: str | None = None  # upstream's sign-in / scope state, when one applies

    def to_dict(self) -> dict[str, Any]:
        found = {"name": self.name, "status": self.status, "detail": self.detail,
                 "fix": self.fix}
        if self.state:
            found["state"] = self.state
        return found


def check_python() -> Check:
    version = ".".join(str(part) for part in sys.version_info[:3])
    if sys.version_info[:2] < MIN_PYTHON:
        return Check("python", "fail", f"Python {version} at {sys.executable}",
                     f"Install Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or later.")
    return Check("python", "ok", f"Python {version} at {sys.executable}")


def check_basedb() -> Check:
    return Check("basedb", "ok", f"basedb {__version__} at {Path(__file__).resolve().parents[1]}")


def check_sqlglotc() -> Check:
    # sqlglotc has no module of its own: it installs compiled builds of sqlglot's modules,
    # so look at what sqlglot's tokenizer core would be loaded from.
    spec = importlib.util.find_spec("sqlglot.tokenizer_core")
    if spec is not None and spec.origin and not spec.origin.endswith(".py"):
        return Check("sqlglotc", "ok", "the compiled SQL parser is installed")
    return Check("sqlglotc", "warn", "the compiled SQL parser (sqlglotc) is not installed; "
                 "`basedb check` parses SQL in pure Python, which is slower",
                 install_command("fast"))


def check_node() -> Check:
    executable = node_executable()
    fix = (f"Install Node.js {MIN_NODE_MAJOR} or later and put `node` on PATH (or set "
           "$BASEDB_NODE to its path).")
    if executable is None:
        return Check("node", "warn", "Node.js was not found: FaaS functions cannot run on "
                     "the local platform (everything else works)", fix)
    version = node_version()
    if version is None or int(version.split(".")[0]) < MIN_NODE_MAJOR:
        found = f"Node.js {version}" if version else "an unusable Node.js"
        return Check("node", "warn", f"{found} at {executable}: FaaS functions need "
                     f"Node.js {MIN_NODE_MAJOR}+", fix)
    return Check("node", "ok", f"Node.js {version} at {executable}")


def check_token(client: Client, profile: Profile) -> Check:
    try:
        if profile.lark is not None:
            return _check_lark_identity(client, profile)
        me = client.request("GET", endpoints.USERS_ME).get("data") or {}
    except AuthError as error:
        fix = ("Check that $BASEDB_DATA_DIR points at the data dir the local platform was "
               "created in." if profile.embedded else profile.login_command)
        return Check("token", "fail", f"the sign-in was refused: {error.message}", fix,
                     _state_of(error))
    except BasedbError as error:
        return Check("token", "fail", f"the platform could not be reached: {error.message}",
                     error.hint)
    name = me.get("name") or me.get("user_id") or "unknown user"
    return Check("token", "ok", f"signed in as {name} ({me.get('user_id')})")


def _state_of(error: BasedbError) -> str | None:
    state = error.detail.get("state")
    if isinstance(state, str):
        return state
    if isinstance(error, AuthError):
        if error.type == "config":
            return "not_configured"
        if error.code in lark_errors.AUTH_CODES:
            return "need_user_authorization"
    return None


def _check_lark_identity(client: Client, profile: Profile) -> Check:
    lark = profile.lark
    assert lark is not None
    what = f"{lark.brand} {lark.identity}"
    if lark.via == "lark-cli":
        status = lark_cli_status(lark)
        if status["state"] is not None:
            return Check("token", "fail", f"lark-cli: {status['detail']}",
                         status.get("fix") or profile.login_command, status["state"])
        who = status.get("userName") or status.get("appId") or "lark-cli's account"
        return Check("token", "ok", f"{what} through lark-cli, signed in as {who}")
    client.credentials.token()
    if lark.identity == "bot":
        return Check("token", "ok", f"{what}: app {lark.app_id} has a tenant access token")
    info = client.request("GET", endpoints.USER_INFO).get("data") or {}
    return Check("token", "ok", f"{what}: signed in as {info.get('name') or 'a user'} "
                 f"({info.get('open_id')})")


def check_sites(client: Client, profile: Profile) -> Check:
    """GET /sites/list succeeds: the identity has the scopes the site API needs."""
    try:
        data = client.request("GET", endpoints.SITES_LIST, params={"pageSize": 1}).get(
            "data") or {}
    except PermissionDenied as error:
        state = ("missing_scopes" if error.code in lark_errors.USER_SCOPE_CODES
                 else "app_scope_not_applied")
        # Every scope the user lacks at once: the refused ones and the rest of the set.
        wanted = [*error.scopes, *(_ungranted(profile) if state == "missing_scopes" else [])]
        scopes = " ".join(dict.fromkeys(wanted)) or "the site scopes"
        fix = (f"{profile.login_command} --scope \"{scopes}\"" if state == "missing_scopes"
               else f"apply for {scopes} in the developer console"
               + (f": {error.console_url}" if error.console_url else ""))
        return Check("sites", "fail", f"the site listing was refused for lack of {scopes} "
                     f"[{error.code}]", fix, state)
    except BasedbError as error:
        return Check("sites", "fail", f"the site listing failed: {error.message}", error.hint,
                     _state_of(error))
    listed = data.get("sites") if isinstance(data, dict) else None
    more = ", and more" if isinstance(data, dict) and data.get("hasMore") else ""
    return Check("sites", "ok", f"GET /sites/list answered ({plural(len(listed or []), 'site')} "
                 f"on the first page{more})")


def _ungranted(profile: Profile) -> list[str]:
    """The site-builder scopes a native user's stored sign-in was not granted."""
    lark = profile.lark
    if lark is None or lark.via == "lark-cli" or lark.identity != "user":
        return []
    stored = load_token(secret_store(), profile.name)
    return missing_scopes(stored.scope) if stored is not None else []


def check_workspace(start: Path | None) -> tuple[Check, Path | None, str | None]:
    """(the check, the workspace root, its appToken) — root None when there is none."""
    try:
        root = find_root(start)
    except WorkspaceNotFound as missing:
        return (Check("workspace", "warn", missing.message,
                      "cd into a workspace, pass -C DIR, or create one with `basedb init`."),
                None, None)
    workspace = load_workspace(root)
    problems = [f for f in workspace.load_findings
                if f.code in ("WORKSPACE_CONFIG_INVALID", "CATALOG_INVALID")]
    if problems or workspace.config is None:
        first = problems[0] if problems else None
        detail = f"{root}: {first.message}" if first else f"{root}: no appToken"
        return (Check("workspace", "fail", detail, first.fix if first else None), root,
                workspace.config.app_token if workspace.config else None)
    counts = ", ".join(f"{kind} {len(workspace.of_kind(kind))}"
                       for kind in ("database_function", "mutation", "faas", "ai_function"))
    others = len(workspace.load_findings)
    note = f"; {plural(others, 'declaration problem')}, see `basedb check`" if others else ""
    status = "warn" if others else "ok"
    return (Check("workspace", status, f"{root} (site {workspace.config.app_token}; "
                  f"{counts}){note}", "basedb check" if others else None),
            root, workspace.config.app_token)


READABLE_INFERRED = ("draft_functions", "draft_hashes", "draft_ai_functions",
                     "draft_agent_tools", "deployments", "secrets")
"""The inferred paths doctor reads (GET changes nothing) to see whether Lark has them."""


def check_inferred_paths(client: Client, app_token: str) -> Check:
    """Which inferred site paths answer 404 on this platform (a Lark profile): each is
    named with its path, so $BASEDB_LARK_ENDPOINTS can give the real one."""
    missing: list[str] = []
    for name in READABLE_INFERRED:
        path = getattr(endpoints, name)(app_token)
        try:
            client.request("GET", path)
        except BadResponse as error:
            if error.detail.get("http_status") == 404:
                missing.append(f"{name} (GET {path})")
        except BasedbError:
            continue  # answered as an API: the path exists
    if missing:
        return Check("endpoints", "fail",
                     f"inferred paths answered 404: {', '.join(missing)}",
                     f"give their real paths in ${environment.LARK_ENDPOINTS} (docs/lark.md, "
                     "\"Endpoints: known and inferred\")")
    return Check("endpoints", "ok", f"the {len(READABLE_INFERRED)} inferred site paths doctor "
                 "reads all answered")


def check_catalog(client: Client, root: Path, app_token: str) -> Check:
    try:
        live = canonical_catalog(SiteApi(client, app_token).catalog())
    except BasedbError as error:
        return Check("catalog", "fail", f"the live catalog of {app_token} could not be read: "
                     f"{error.message}", error.hint)
    try:
        local = (root / CATALOG_FILE).read_bytes()
    except OSError:
        return Check("catalog", "warn", f"{CATALOG_FILE} is missing", "basedb catalog pull")
    if same_catalog(local, live):
        return Check("catalog", "ok", f"{CATALOG_FILE} matches the live catalog "
                     f"({plural(len(live['tables']), 'table')})")
    return Check("catalog", "warn", f"{CATALOG_FILE} differs from the live catalog of the "
                 "site's bound tables; checks run against a stale schema",
                 "basedb catalog pull")


def run_doctor(profile_name: str | None, start: Path | None, *,
               open_client: Callable[[Profile], Client],
               machine_checks: tuple[Callable[[], Check], ...] = ()) -> DoctorReport:
    """Run every check; never raises for what it diagnoses. `open_client` connects to a
    profile's platform (the command line's, which can embed the local platform);
    `machine_checks` add checks of this machine after the Node.js one."""
    checks = [check_python(), check_basedb(), check_sqlglotc(), check_node()]
    checks += [_guarded("machine", check) for check in machine_checks]
    workspace_check, root, app_token = check_workspace(start)
    try:
        profile, source = current_profile(profile_name, root)
    except BasedbError as error:
        checks += [Check("profile", "fail", error.message, error.hint), workspace_check]
        return _result(checks)
    where = {"--profile": "named by --profile",
             "base-database.jsonc": "named by base-database.jsonc",
             "default": "the default"}.get(source, source)
    endpoint = "the embedded local platform" if profile.embedded else profile.endpoint
    checks.append(Check("profile", "ok", f"{profile.name} ({where}): {endpoint}"))

    try:
        client = open_client(profile)
    except BasedbError as error:
        checks += [Check("token", "fail", error.message, error.hint, _state_of(error)),
                   workspace_check]
        return _result(checks)
    with client:
        token = check_token(client, profile)
        checks.append(token)
        if token.status == "ok":
            checks.append(check_sites(client, profile))
        checks.append(workspace_check)
        if root is not None and app_token is not None and token.status == "ok":
            checks.append(_guarded("catalog", lambda: check_catalog(client, root, app_token)))
            if profile.lark is not None:
                checks.append(_guarded("endpoints",
                                       lambda: check_inferred_paths(client, app_token)))
    return _result(checks)


def _guarded(name: str, run: Callable[[], Check]) -> Check:
    try:
        return run()
    except BasedbError as error:
        return Check(name, "fail", error.message, error.hint)


@frozen_dataclass
class DoctorReport:
    """Every check, in order; ok when none failed (warnings allowed). `state` is the first
    upstream sign-in or scope state a check reported."""

    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    @property
    def warnings(self) -> int:
        return sum(c.status == "warn" for c in self.checks)

    @property
    def state(self) -> str | None:
        return next((c.state for c in self.checks if c.state), None)

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"ok": self.ok, "checks": [c.to_dict() for c in self.checks]}
        if self.state is not None:
            result["state"] = self.state
        return result


def _result(checks: list[Check]) -> DoctorReport:
    return DoctorReport(tuple(checks))
