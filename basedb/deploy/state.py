"""A workspace's local deployment state, in `<workspace>/.base-database-cli/state/`:

    .gitignore          "*": nothing here belongs in version control
    stages.jsonl        one JSON object per pipeline stage event, appended
    deployments.json    the deployments made from this workspace, oldest first
    artifacts/<hex>.zip site.zip of a fingerprint, cached
    content-hashes.json function content hashes by the digests of their files, cached

Everything here is a local record that can be rebuilt or dropped: the platform keeps the
real deployment history. So a corrupt file is reported (InputError naming the file, with
"delete it" as the fix) rather than guessed at, and a cached artifact whose contents do
not match its name is dropped and treated as absent. Tokens never reach these files:
stage details pass through `basedb.core.redact`, and secret-named keys are masked.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import struct
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from basedb.core.atomic import write_file_atomically
from basedb.core.content_hash import CONTENT_HASH_RE, DEFINITION
from basedb.core.errors import InputError
from basedb.core.frozen import frozen_dataclass
from basedb.core.redact import REDACTED, redact
from basedb.core.site_zip import MANIFEST_PATH, fingerprint_hex, read_manifest
from basedb.protocol.deployments import DeploymentCreated
from basedb.workspace import files

STATE_DIR = Path(".base-database-cli") / "state"
STAGES_FILE = "stages.jsonl"
DEPLOYMENTS_FILE = "deployments.json"
ARTIFACTS_DIR = "artifacts"
CONTENT_HASHES_FILE = "content-hashes.json"
GITIGNORE_TEXT = "*\n"

StageStatus = Literal["started", "ok", "failed", "unknown"]
STAGE_STATUSES: tuple[StageStatus, ...] = get_args(StageStatus)

DEPLOYMENTS_VERSION = 1
MAX_DEPLOYMENT_RECORDS = 200
MAX_CACHED_ARTIFACTS = 10
# The stage log is for diagnosing recent runs; past this size only the newest half stays.
MAX_STAGE_LOG_BYTES = 1 * files.MIB
_LIMIT_STATE_FILE = 16 * files.MIB
# Keys whose values are credentials wherever they appear in a stage detail. appToken and
# baseToken identify resources and are not secret.
_SECRET_KEYS = frozenset({"token", "accesstoken", "refreshtoken", "ownertoken",
                          "authorization", "secret", "password", "apikey"})


def utc_now() -> str:
    """The current time as ISO 8601 UTC with milliseconds, e.g. 2025-01-31T08:00:00.123Z."""
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def new_attempt_id() -> str:
    """A fresh id for one run of the deploy pipeline: sortable by time, unique."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


class LocalState:
    """The state directory of the workspace at `workspace_root`."""

    def __init__(self, workspace_root: Path) -> None:
        self.workspace_root = workspace_root
        self.directory = workspace_root / STATE_DIR
        self.stages = StageLog(self)
        self.deployments = DeploymentHistory(self)

    def label(self, name: str) -> str:
        """A state file's path as shown to users (workspace-relative)."""
        return (STATE_DIR / name).as_posix()

    def ensure(self) -> Path:
        """Create the state directory (and its .gitignore) if needed; return it."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                write_file_atomically(ignore, GITIGNORE_TEXT.encode("utf-8"))
        except OSError as exc:
            raise InputError(
                f"Cannot create {STATE_DIR.as_posix()}/ in {self.workspace_root}: "
                f"{exc.strerror or exc}.",
                code="STATE_UNWRITABLE",
                hint="Make the workspace writable; if .base-database-cli is a file, "
                     "remove it.",
            ) from None
        return self.directory

    # --------------------------------------------------------------------- artifacts

    def artifact_path(self, fingerprint: str) -> Path:
        return self.directory / ARTIFACTS_DIR / f"{fingerprint_hex(fingerprint)}.zip"

    def save_artifact(self, fingerprint: str, zip_bytes: bytes) -> Path:
        """Cache a site.zip under its fingerprint; keep only the newest few."""
        path = self.artifact_path(fingerprint)
        self.ensure()
        try:
            path.parent.mkdir(exist_ok=True)
            if not (path.is_file() and path.read_bytes() == zip_bytes):
                write_file_atomically(path, zip_bytes)
            else:
                os.utime(path)  # still the newest, as far as pruning is concerned
        except OSError as exc:
            raise InputError(f"Cannot write {self.label(ARTIFACTS_DIR)}/{path.name}: "
                             f"{exc.strerror or exc}.", code="STATE_UNWRITABLE",
                             hint="Make the workspace writable.") from None
        self._prune_artifacts(keep=path)
        return path

    def load_artifact(self, fingerprint: str) -> bytes | None:
        """The cached site.zip of `fingerprint`, or None when absent or not intact."""
        path = self.artifact_path(fingerprint)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        try:
            intact = read_manifest(data)["fingerprint"] == fingerprint
        except InputError:
            intact = False
        if not intact:
            path.unlink(missing_ok=True)
            return None
        return data

    def cached_artifact_size(self, fingerprint: str) -> int | None:
        """The size of the cached site.zip of `fingerprint`, or None when absent or not
        intact; a copy found is marked newest, so pruning keeps it.

        Cheaper than `load_artifact`, for a caller that only reports the size and builds
        site.zip anew when it must send it: the archive is whole (its end record closes
        the central directory at the end of the file) and its first entry is a manifest
        naming this fingerprint; the other entries are not read."""
        path = self.artifact_path(fingerprint)
        try:
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                intact = _whole_zip_of(handle, size, fingerprint)
        except OSError:
            return None
        if not intact:
            path.unlink(missing_ok=True)
            return None
        with contextlib.suppress(OSError):  # only the pruning order depends on it
            os.utime(path)
        return size

    # ------------------------------------------------------------- content hashes

    def load_content_hashes(self) -> dict[str, str]:
        """Function content hashes remembered by what they were computed from
        (`basedb.deploy.payloads.content_hashes`); empty when none are, or the file is
        unreadable or of another definition: it is a cache, rebuilt by the next deploy."""
        try:
            document = json.loads(self.read_state_text(CONTENT_HASHES_FILE) or "{}")
        except (InputError, ValueError):
            return {}
        if not isinstance(document, dict) or document.get("definition") != DEFINITION:
            return {}
        hashes = document.get("hashes")
        if not isinstance(hashes, dict):
            return {}
        return {key: value for key, value in hashes.items()
                if isinstance(value, str) and CONTENT_HASH_RE.match(value)}

    def save_content_hashes(self, hashes: Mapping[str, str]) -> None:
        """Remember `hashes` (only these: the functions of the last deploy)."""
        document = {"definition": DEFINITION, "hashes": dict(sorted(hashes.items()))}
        with contextlib.suppress(InputError, OSError):  # a cache: the next deploy rebuilds it
            self.ensure()
            write_file_atomically(self.directory / CONTENT_HASHES_FILE,
                                  json.dumps(document, indent=0).encode("utf-8"))

    def _prune_artifacts(self, *, keep: Path) -> None:
        folder = keep.parent
        try:
            cached = [p for p in folder.iterdir() if p.suffix == ".zip" and p != keep]
            cached.sort(key=lambda p: p.stat().st_mtime, reverse=True)
            for stale in cached[MAX_CACHED_ARTIFACTS - 1:]:
                stale.unlink(missing_ok=True)
        except OSError:
            pass  # pruning is housekeeping; a leftover file costs only disk space

    # ------------------------------------------------------------------------ reading

    def read_state_text(self, name: str) -> str | None:
        """A state file's text, or None when it does not exist."""
        path = self.directory / name
        if not os.path.lexists(path):
            return None
        try:
            return files.read_text(path, label=self.label(name), limit=_LIMIT_STATE_FILE)
        except files.FileProblem as problem:
            raise self.corrupt(name, problem.message) from None

    def corrupt(self, name: str, what: str) -> InputError:
        label = self.label(name)
        return InputError(
            f"{label} is corrupt: {what.rstrip('.')}.",
            code="STATE_CORRUPT",
            hint=f"Delete {label}; it is a local record only (the platform keeps the "
                 "deployments), and basedb starts a new one.",
            detail={"file": label},
        )


# ------------------------------------------------------------------------ stage log


@frozen_dataclass
class StageEntry:
    ts: str
    attempt_id: str
    stage: str
    status: StageStatus
    detail: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"ts": self.ts, "attemptId": self.attempt_id, "stage": self.stage,
                "status": self.status, "detail": self.detail}


class StageLog:
    """stages.jsonl: what each deploy attempt did, stage by stage."""

    def __init__(self, state: LocalState) -> None:
        self.state = state
        self.path = state.directory / STAGES_FILE

    def append(self, attempt_id: str, stage: str, status: StageStatus,
               detail: str | Mapping[str, Any] | None = None) -> StageEntry:
        if status not in STAGE_STATUSES:
            raise ValueError(f"unknown stage status {status!r}")
        entry = StageEntry(ts=utc_now(), attempt_id=attempt_id, stage=stage, status=status,
                           detail=scrub(detail))
        line = (json.dumps(entry.to_dict(), ensure_ascii=False, sort_keys=True) + "\n")
        self.state.ensure()
        try:
            # One write on an O_APPEND descriptor: concurrent runs interleave whole lines.
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)
            if self.path.stat().st_size > MAX_STAGE_LOG_BYTES:
                self._trim()
        except OSError as exc:
            raise InputError(f"Cannot write {self.state.label(STAGES_FILE)}: "
                             f"{exc.strerror or exc}.", code="STATE_UNWRITABLE",
                             hint="Make the workspace writable.") from None
        return entry

    def entries(self) -> list[StageEntry]:
        text = self.state.read_state_text(STAGES_FILE)
        if text is None:
            return []
        found: list[StageEntry] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                found.append(self._parse(line, number))
        return found

    def attempt(self, attempt_id: str) -> list[StageEntry]:
        return [entry for entry in self.entries() if entry.attempt_id == attempt_id]

    def latest_attempt(self) -> list[StageEntry]:
        """The entries of the most recently started attempt (empty when none)."""
        entries = self.entries()
        return self.attempt(entries[-1].attempt_id) if entries else []

    def _parse(self, line: str, number: int) -> StageEntry:
        try:
            doc = json.loads(line)
        except ValueError:
            raise self.state.corrupt(STAGES_FILE, f"line {number} is not JSON") from None
        if not isinstance(doc, dict):
            raise self.state.corrupt(STAGES_FILE, f"line {number} is not a JSON object")
        values = [doc.get(key) for key in ("ts", "attemptId", "stage", "status")]
        if not all(isinstance(v, str) for v in values) or doc["status"] not in STAGE_STATUSES:
            raise self.state.corrupt(STAGES_FILE, f"line {number} lacks ts, attemptId, stage "
                                                  "or a known status")
        return StageEntry(ts=doc["ts"], attempt_id=doc["attemptId"], stage=doc["stage"],
                          status=doc["status"], detail=doc.get("detail"))

    def _trim(self) -> None:
        data = self.path.read_bytes()
        lines = data.splitlines(keepends=True)
        kept: list[bytes] = []
        size = 0
        for line in reversed(lines):
            if size + len(line) > MAX_STAGE_LOG_BYTES // 2:
                break
            kept.append(line)
            size += len(line)
        write_file_atomically(self.path, b"".join(reversed(kept)))


def scrub(value: Any) -> Any:
    """`value` with credentials masked: secret-named keys and token-shaped strings."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {str(key): REDACTED if _is_secret_key(str(key)) else scrub(item)
                for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(item) for item in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return redact(str(value))


def _is_secret_key(key: str) -> bool:
    folded = key.replace("_", "").replace("-", "").lower()
    return folded in _SECRET_KEYS or folded.endswith(("secret", "password"))


# ---------------------------------------------------------------------- deployments


_RECORD_KEYS = ("deploymentId", "env", "fingerprint", "baseAppUrl", "createdAt", "appToken")


@frozen_dataclass
class DeploymentRecord:
    """One deployment made from this workspace, as the platform reported it."""

    deployment_id: str
    env: str
    fingerprint: str
    base_app_url: str
    created_at: str
    app_token: str

    def to_dict(self) -> dict[str, str]:
        return dict(zip(_RECORD_KEYS, (self.deployment_id, self.env, self.fingerprint,
                                     self.base_app_url, self.created_at, self.app_token),
                        strict=True))

    @classmethod
    def from_api(cls, created: DeploymentCreated, *, app_token: str) -> DeploymentRecord:
        """From the answer of POST /sites/:app/deployments."""
        return cls(deployment_id=created.deployment_id, env=created.env,
                   fingerprint=created.fingerprint, base_app_url=created.base_app_url,
                   created_at=created.created_at or utc_now(), app_token=app_token)


class DeploymentHistory:
    """deployments.json: {"version": 1, "deployments": [record, …]} oldest first."""

    def __init__(self, state: LocalState) -> None:
        self.state = state
        self.path = state.directory / DEPLOYMENTS_FILE

    def all(self) -> list[DeploymentRecord]:
        text = self.state.read_state_text(DEPLOYMENTS_FILE)
        if text is None:
            return []
        try:
            doc = files.parse_json(text, label=self.state.label(DEPLOYMENTS_FILE))
        except files.FileProblem as problem:
            raise self.state.corrupt(DEPLOYMENTS_FILE, problem.message) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("deployments"), list):
            raise self.state.corrupt(DEPLOYMENTS_FILE, 'it has no "deployments" list')
        if doc.get("version") != DEPLOYMENTS_VERSION:
            raise self.state.corrupt(DEPLOYMENTS_FILE,
                                     f"version {doc.get('version')!r} is not "
                                     f"{DEPLOYMENTS_VERSION}")
        return [self._parse(item, index) for index, item in enumerate(doc["deployments"])]

    def record(self, entry: DeploymentRecord) -> None:
        """Add `entry` as the newest record (replacing an older one of the same deployment
        and env), keeping the newest MAX_DEPLOYMENT_RECORDS."""
        fingerprint_hex(entry.fingerprint)
        kept = [r for r in self.all()
                if (r.deployment_id, r.env) != (entry.deployment_id, entry.env)]
        kept.append(entry)
        doc = {"version": DEPLOYMENTS_VERSION,
               "deployments": [r.to_dict() for r in kept[-MAX_DEPLOYMENT_RECORDS:]]}
        data = (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
        self.state.ensure()
        try:
            write_file_atomically(self.path, data)
        except OSError as exc:
            raise InputError(f"Cannot write {self.state.label(DEPLOYMENTS_FILE)}: "
                             f"{exc.strerror or exc}.", code="STATE_UNWRITABLE",
                             hint="Make the workspace writable.") from None

    def latest(self, app_token: str, env: str | None = None) -> DeploymentRecord | None:
        for entry in reversed(self.all()):
            if entry.app_token == app_token and (env is None or entry.env == env):
                return entry
        return None

    def latest_preview(self, app_token: str) -> DeploymentRecord | None:
        """The most recently recorded preview deployment of the site `app_token`."""
        return self.latest(app_token, "preview")

    def _parse(self, item: Any, index: int) -> DeploymentRecord:
        if not isinstance(item, dict) or not all(
                isinstance(item.get(key), str) for key in _RECORD_KEYS):
            raise self.state.corrupt(
                DEPLOYMENTS_FILE,
                f"deployments[{index}] needs the strings {', '.join(_RECORD_KEYS)}")
        values = [item[key] for key in _RECORD_KEYS]
        return DeploymentRecord(*values)


_END_RECORD = struct.Struct("<4s4H2LH")  # end of central directory, no comment
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")


def _whole_zip_of(handle: Any, size: int, fingerprint: str) -> bool:
    """Whether the open file is a whole site.zip (as `build_site_zip` writes it) whose
    manifest names `fingerprint`."""
    if size < _LOCAL_HEADER.size + _END_RECORD.size:
        return False
    handle.seek(size - _END_RECORD.size)
    signature, _, _, _, _, directory_size, directory_offset, comment = _END_RECORD.unpack(
        handle.read(_END_RECORD.size))
    if (signature != b"PK\x05\x06" or comment
            or directory_offset + directory_size + _END_RECORD.size != size):
        return False
    handle.seek(0)
    (signature, _, _, method, _, _, crc, compressed, _, name_size,
     extra_size) = _LOCAL_HEADER.unpack(handle.read(_LOCAL_HEADER.size))
    if (signature != b"PK\x03\x04" or method != 8
            or handle.read(name_size) != MANIFEST_PATH.encode()):
        return False
    handle.seek(extra_size, os.SEEK_CUR)
    try:
        text = zlib.decompress(handle.read(compressed), -zlib.MAX_WBITS)
        if zlib.crc32(text) != crc:
            return False
        document = json.loads(text)
    except (zlib.error, ValueError):
        return False
    return isinstance(document, dict) and document.get("fingerprint") == fingerprint
