"""Profiles: which platform a command talks to, and with which token.

A profile is a name, an endpoint and a token, stored in `<config dir>/config.json`:

    {"version": 1, "profiles": {"prod": {"endpoint": "https://…", "token": "…"}}}

The directory is created with mode 0700 and the file is written with mode 0600,
atomically (temporary file in the same directory, then `os.replace`), so a crash never
leaves half a file and other users never read a token.

`local` is implicit and never stored: it is the embedded platform (endpoint
"embedded"), whose token is the owner token kept in the platform's data dir and read
only when a request is about to be sent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from basedb.client.embedded import EmbeddedFactory, embedded_platform
from basedb.core import paths
from basedb.core.atomic import PRIVATE_FILE_MODE, ensure_private_dir, write_file_atomically
from basedb.core.errors import InputError, UsageError, WorkspaceNotFound
from basedb.workspace import files
from basedb.workspace.config import CONFIG_FILE as WORKSPACE_CONFIG
from basedb.workspace.loader import find_root

CONFIG_FILE = "config.json"
CONFIG_VERSION = 1
LOCAL_PROFILE = "local"
EMBEDDED_ENDPOINT = "embedded"
PROFILE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_CONFIG_LIMIT = 1024 * 1024

LOGIN_FIX = "basedb auth login --endpoint URL --token TOKEN --profile NAME"


@dataclass(frozen=True)
class Profile:
    """A named platform endpoint and the token used there; the token never appears in
    the repr."""

    name: str
    endpoint: str
    token: str | None = field(default=None, repr=False)

    @property
    def embedded(self) -> bool:
        """Whether this profile talks to the in-process local platform."""
        return self.endpoint == EMBEDDED_ENDPOINT

    @property
    def identity(self) -> str:
        return "user"

    def with_identity(self, identity: str) -> Profile:
        """This profile speaking as `identity` (`--as`)."""
        if identity == self.identity:
            return self
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
        profiles[name] = Profile(name, entry["endpoint"], entry.get("token"))
    return profiles


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
    known = ", ".join([LOCAL_PROFILE, *sorted(profiles)])
    login = LOGIN_FIX.replace("NAME", name)
    raise UsageError(
        f"Unknown profile {name!r} (named by {named_by}). Known profiles: {known}.",
        code="PROFILE_NOT_FOUND",
        hint=f"Create it with `{login}`, or use one of the known profiles.",
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
    entry: dict[str, Any] = {"endpoint": profile.endpoint}
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
        if (not isinstance(entry, dict) or not isinstance(entry.get("endpoint"), str)
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
