"""Profiles: which platform a command talks to, and as whom. Three kinds:

    local      the embedded platform (implicit, never stored); its owner token is read
               from the platform's data dir only when a request is about to be sent
    endpoint   any basedb-compatible server and a token:
                 {"endpoint": "https://…", "token": "…"}
    lark       Feishu or Lark, as a user or a bot, natively or through lark-cli:
                 {"kind": "lark", "brand": "feishu", "identity": "user",
                  "appId": "cli_…", "via": "native" | "lark-cli", "larkProfile"?: "…"}

Stored in `<config dir>/config.json` (`{"version": 2, "profiles": {…}}`; version 1 files,
which hold only endpoint profiles, read the same), the directory mode 0700, the file
mode 0600, written atomically so a crash never leaves half a file. A Lark profile's
secrets (app secret, user tokens) are kept in the secret store (`basedb.client.secrets`),
never in config.json.

A CI job needs no stored profile: when `--profile NAME` (or BASEDB_PROFILE) names no
stored profile and LARK_APP_ID and LARK_APP_SECRET are set, NAME is a Lark bot profile
with those credentials (brand $LARK_BRAND, default feishu).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from basedb.client.embedded import EmbeddedFactory, embedded_platform
from basedb.client.lark.brands import BRANDS, IDENTITIES, hosts, parse_brand
from basedb.core import environment, paths
from basedb.core.atomic import PRIVATE_FILE_MODE, ensure_private_dir, write_file_atomically
from basedb.core.errors import InputError, UsageError, WorkspaceNotFound
from basedb.workspace import files
from basedb.workspace.config import CONFIG_FILE as WORKSPACE_CONFIG
from basedb.workspace.loader import find_root

CONFIG_FILE = "config.json"
CONFIG_VERSION = 2
LOCAL_PROFILE = "local"
EMBEDDED_ENDPOINT = "embedded"
PROFILE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_CONFIG_LIMIT = 1024 * 1024

LOGIN_FIX = "basedb auth login --endpoint URL --token TOKEN --profile NAME"
LARK_LOGIN_FIX = "basedb auth login --brand feishu --profile NAME"
APP_ID_ENV = environment.LARK_APP_ID
APP_SECRET_ENV = environment.LARK_APP_SECRET
BRAND_ENV = environment.LARK_BRAND
VIA = ("native", "lark-cli")


@dataclass(frozen=True)
class LarkAccount:
    """How a Lark profile signs in."""

    brand: str  # feishu | lark
    identity: str  # user | bot
    app_id: str | None = None
    via: str = "native"  # native | lark-cli
    lark_profile: str | None = None  # lark-cli's --profile
    from_env: bool = False  # built from LARK_APP_ID / LARK_APP_SECRET, not stored

    def to_config(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"kind": "lark", "brand": self.brand,
                                 "identity": self.identity, "via": self.via}
        if self.app_id:
            entry["appId"] = self.app_id
        if self.lark_profile:
            entry["larkProfile"] = self.lark_profile
        return entry


@dataclass(frozen=True)
class Profile:
    """A named platform endpoint and how to sign in there; the token never appears in
    the repr. A Lark profile's endpoint is its brand's open host."""

    name: str
    endpoint: str
    token: str | None = field(default=None, repr=False)
    lark: LarkAccount | None = None

    @property
    def embedded(self) -> bool:
        """Whether this profile talks to the in-process local platform."""
        return self.endpoint == EMBEDDED_ENDPOINT

    @property
    def kind(self) -> str:
        """`local`, `endpoint` or `lark`."""
        return "local" if self.embedded else "lark" if self.lark is not None else "endpoint"

    @property
    def identity(self) -> str:
        return self.lark.identity if self.lark is not None else "user"

    @property
    def login_command(self) -> str:
        """The command that signs this profile in (again)."""
        lark = self.lark
        if lark is None:
            if self.embedded:
                return "basedb auth token"
            return LOGIN_FIX.replace("NAME", self.name)
        if lark.via == "lark-cli":  # lark-cli holds the sign-in
            return "lark-cli auth login" + (f" --profile {lark.lark_profile}"
                                             if lark.lark_profile else "")
        if lark.from_env:
            return f"set {APP_ID_ENV} and {APP_SECRET_ENV} to the app's credentials"
        return (f"basedb auth login --brand {lark.brand} --as {lark.identity} "
                f"--profile {self.name}")

    def with_identity(self, identity: str) -> Profile:
        """This profile speaking as `identity` (`--as`)."""
        if identity == self.identity:
            return self
        if self.lark is not None:
            if identity not in IDENTITIES:
                raise UsageError(f"--as {identity!r} is not user or bot.",
                                 code="IDENTITY_INVALID", hint="Pass --as user or --as bot.")
            return replace(self, lark=replace(self.lark, identity=identity))
        kind = "the embedded local platform" if self.embedded else "a basedb platform"
        raise UsageError(
            f"--as {identity}: profile {self.name!r} ({kind}) has only a user identity.",
            code="IDENTITY_UNAVAILABLE",
            hint="Use a Lark profile for a bot: set LARK_APP_ID and LARK_APP_SECRET and pass "
                 "--profile NAME, or `basedb auth login --brand feishu --as bot --profile "
                 "NAME`.")


LOCAL = Profile(LOCAL_PROFILE, EMBEDDED_ENDPOINT)


def config_path() -> Path:
    return paths.config_dir() / CONFIG_FILE


def load_profiles() -> dict[str, Profile]:
    """The stored profiles by name (without the implicit `local`)."""
    doc = _read_config()
    profiles: dict[str, Profile] = {}
    for name, entry in doc["profiles"].items():
        if entry.get("kind") == "lark":
            account = LarkAccount(brand=entry["brand"], identity=entry["identity"],
                                  app_id=entry.get("appId"), via=entry.get("via", "native"),
                                  lark_profile=entry.get("larkProfile"))
            profiles[name] = Profile(name, hosts(account.brand).open, lark=account)
        else:
            profiles[name] = Profile(name, entry["endpoint"], entry.get("token"))
    return profiles


def environment_profile(name: str) -> Profile | None:
    """The Lark bot profile LARK_APP_ID and LARK_APP_SECRET make of `name`, if both are
    set (how a CI job signs in without a stored profile)."""
    app_id = os.environ.get(APP_ID_ENV, "").strip()
    if not app_id or not os.environ.get(APP_SECRET_ENV, "").strip():
        return None
    brand = parse_brand(os.environ.get(BRAND_ENV, "").strip() or "feishu")
    account = LarkAccount(brand=brand, identity="bot", app_id=app_id, from_env=True)
    return Profile(name, hosts(brand).open, lark=account)


def known_profile_names() -> list[str]:
    """`local` followed by the stored profiles, sorted."""
    return [LOCAL_PROFILE, *sorted(load_profiles())]


def get_profile(name: str, *, named_by: str = "--profile") -> Profile:
    """The profile called `name`; UsageError listing the known ones when there is none.

    `named_by` says where the name came from, so the message can point there.
    """
    if name == LOCAL_PROFILE:
        return LOCAL
    profiles = load_profiles()
    if name in profiles:
        return profiles[name]
    from_env = environment_profile(name)
    if from_env is not None:
        return from_env
    known = ", ".join([LOCAL_PROFILE, *sorted(profiles)])
    login = LOGIN_FIX.replace("NAME", name)
    raise UsageError(
        f"Unknown profile {name!r} (named by {named_by}). Known profiles: {known}.",
        code="PROFILE_NOT_FOUND",
        hint=f"Create it with `{login}` (or `{LARK_LOGIN_FIX.replace('NAME', name)}` for "
             f"Feishu/Lark; a CI job may set {APP_ID_ENV} and {APP_SECRET_ENV} instead), or "
             "use one of the known profiles.",
    )


def resolve_profile(explicit: str | None, workspace_profile: str | None) -> Profile:
    """The profile a command uses: --profile, else the workspace's `profile`, else local."""
    if explicit:
        return get_profile(explicit)
    if workspace_profile:
        return get_profile(workspace_profile, named_by='"profile" in base-database.jsonc')
    return LOCAL


def current_profile(explicit: str | None, workspace_dir: Path | None) -> tuple[Profile, str]:
    """The profile a command run in `workspace_dir` (cwd when None) uses, and where its
    name came from: "--profile", "base-database.jsonc" or "default"."""
    if explicit:
        return get_profile(explicit), "--profile"
    named = workspace_profile(workspace_dir)
    if named:
        return resolve_profile(None, named), "base-database.jsonc"
    return LOCAL, "default"


def workspace_profile(start: Path | None) -> str | None:
    """The `profile` named by the workspace at or above `start` (cwd when None).

    No workspace means no preference. A workspace whose config cannot be read is an
    error rather than a silent fall back to `local`: the file may name a production
    profile, and a request sent to the wrong platform is worse than no request.
    """
    try:
        root = find_root(start)
    except WorkspaceNotFound:
        if start is not None:
            raise
        return None
    label = str(root / WORKSPACE_CONFIG)
    try:
        doc = files.parse_jsonc(
            files.read_text(root / WORKSPACE_CONFIG, label=label, limit=files.LIMIT_CONFIG),
            label=label)
    except files.FileProblem as problem:
        raise InputError(problem.message, code="WORKSPACE_CONFIG_INVALID",
                         hint=problem.fix) from None
    value = doc.get("profile") if isinstance(doc, dict) else None
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{label}: /profile must be a non-empty string.",
                         code="WORKSPACE_CONFIG_INVALID",
                         hint="Set \"profile\" to a profile name from `basedb auth list`, "
                              "or remove it to use the local platform.")
    return value


def save_profile(profile: Profile) -> Path:
    """Add or replace a stored profile. Returns the config file's path."""
    validate_profile_name(profile.name)
    if profile.embedded:
        raise UsageError("A stored profile needs an http(s) endpoint, not 'embedded'.",
                         code="PROFILE_INVALID", hint="Pass --endpoint http(s)://HOST[:PORT].")
    doc = _read_config()
    entry: dict[str, Any]
    if profile.lark is not None:
        entry = profile.lark.to_config()
    else:
        entry = {"endpoint": profile.endpoint}
        if profile.token is not None:
            entry["token"] = profile.token
    doc["profiles"][profile.name] = entry
    return _write_config(doc)


def delete_profile(name: str) -> bool:
    """Remove a stored profile; False when it did not exist."""
    doc = _read_config()
    if name not in doc["profiles"]:
        return False
    del doc["profiles"][name]
    _write_config(doc)
    return True


def validate_profile_name(name: str) -> None:
    if name == LOCAL_PROFILE:
        raise UsageError(
            "The profile name 'local' is reserved for the embedded local platform.",
            code="PROFILE_INVALID", hint="Choose another name with --profile NAME.")
    if not PROFILE_NAME_RE.match(name):
        raise UsageError(
            f"Profile name {name!r} is not valid: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit.",
            code="PROFILE_INVALID", hint="Pass --profile with a name such as 'prod'.")


def normalize_endpoint(endpoint: str) -> str:
    """`https://host[:port][/prefix]` without a trailing slash or API prefix."""
    value = endpoint.strip().rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(
            f"--endpoint {endpoint!r} is not an http(s) URL.",
            code="ENDPOINT_INVALID",
            hint="Pass the platform's base URL, e.g. http://127.0.0.1:8787 for `basedb serve`.")
    if parts.query or parts.fragment:
        raise UsageError(f"--endpoint {endpoint!r} must not carry a query or fragment.",
                         code="ENDPOINT_INVALID", hint="Pass only scheme, host, port and path.")
    if value.endswith(paths.API_PREFIX):
        value = value[: -len(paths.API_PREFIX)]
    return value


def profile_token(profile: Profile, *, embedded: EmbeddedFactory | None = None) -> str | None:
    """The token a profile sends: stored, or for `local` the embedded platform's owner
    token (`embedded` opens it, as for `basedb.client.client.connect`)."""
    if profile.embedded:
        return embedded_platform(embedded).owner_token
    return profile.token


# --- the config file ---------------------------------------------------------------


def _empty_config() -> dict[str, Any]:
    return {"version": CONFIG_VERSION, "profiles": {}}


def _read_config() -> dict[str, Any]:
    path = config_path()
    if not path.exists() and not path.is_symlink():
        return _empty_config()
    label = str(path)
    fix = (f"Fix or delete {path}, then add profiles again with `{LOGIN_FIX}`.")
    try:
        doc = files.parse_json(files.read_text(path, label=label, limit=_CONFIG_LIMIT),
                               label=label)
    except files.FileProblem as problem:
        raise InputError(problem.message, code="CONFIG_INVALID", hint=fix) from None
    profiles = doc.get("profiles", {}) if isinstance(doc, dict) else None
    if not isinstance(profiles, dict):
        raise InputError(f"{path} must be an object with a \"profiles\" object.",
                         code="CONFIG_INVALID", hint=fix)
    for name, entry in profiles.items():
        if isinstance(entry, dict) and entry.get("kind") == "lark":
            if (entry.get("brand") not in BRANDS or entry.get("identity") not in IDENTITIES
                    or entry.get("via", "native") not in VIA
                    or not isinstance(entry.get("appId", ""), str)
                    or not isinstance(entry.get("larkProfile", ""), str)):
                raise InputError(
                    f"{path}: /profiles/{name} must be {{\"kind\": \"lark\", \"brand\": "
                    "feishu|lark, \"identity\": user|bot, \"via\": native|lark-cli, "
                    "\"appId\"?: string, \"larkProfile\"?: string}.",
                    code="CONFIG_INVALID", hint=fix)
        elif (not isinstance(entry, dict) or not isinstance(entry.get("endpoint"), str)
                or not isinstance(entry.get("token", ""), str)):
            raise InputError(
                f"{path}: /profiles/{name} must be {{\"endpoint\": string, \"token\": string}}.",
                code="CONFIG_INVALID", hint=fix)
    result = dict(doc)
    result["profiles"] = dict(profiles)
    return result


def _write_config(doc: dict[str, Any]) -> Path:
    path = config_path()
    doc = {"version": CONFIG_VERSION, **{k: v for k, v in doc.items() if k != "version"}}
    text = json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    try:
        ensure_private_dir(path.parent)
        write_file_atomically(path, text, mode=PRIVATE_FILE_MODE)
    except OSError as exc:
        raise InputError(f"Cannot write the profiles file {path}: {exc.strerror or exc}.",
                         code="CONFIG_NOT_WRITABLE",
                         hint=f"Make {path.parent} a writable directory, or point "
                              "$BASEDB_CONFIG_DIR at one.") from exc
    return path
