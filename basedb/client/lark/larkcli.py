"""A transport that sends each request through an installed lark-cli, as upstream's CLI
does, so lark-cli's own sign-in (profiles, `--as`, device flow, refresh, keychain) is used:

    lark-cli --profile P api METHOD RAW_PATH --as user|bot --params '{…}' --data -  (body on stdin)
             … --file artifact=site.zip --data '{"fingerprint": …}'                  uploads
             … --output body                                                       downloads

lark-cli reads `--file` and writes `--output` only at relative paths inside its working
directory (`internal/vfs/localfileio/path.go`), and takes one `--file` per call
(`cmd/api/api.go`): each call runs in a private temporary directory of its own, the file
named relative to it. A multipart form without a file (a redeploy that leaves site.zip
out) is sent as the JSON object of its text fields, which lark-cli can carry. The path is
passed as it goes on the wire, percent-encoded, so a segment holding `%2F`, a space or
CJK keeps its meaning.

lark-cli's answers are read back as HTTP responses (`internal/output/`): exit 0 prints
the response body on stdout; otherwise stderr holds its error envelope `{ok: false,
identity, error: {type, code, message, hint, detail}}`, which becomes the Lark envelope it
came from (`code`, the message without lark-cli's `API error: [code] ` prefix, `error` =
detail), so basedb's own error classes apply. What lark-cli reports about its own setup
becomes a basedb error naming the lark-cli command that fixes it (`basedb.client.lark.
larkcli_states`): an unknown profile, "not configured", no token, a refused app secret —
lark-cli types a failure to get a token as `network`, and only the rest of its `network`
errors are a transport failure whose outcome is unknown.

$BASEDB_LARK_CLI names the executable (default: `lark-cli` on PATH).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import httpx

from basedb.client.lark import policy
from basedb.client.lark.larkcli_states import (
    login_command,
    state_error,
    tenant_token_unreachable,
)
from basedb.client.trace import RequestTrace
from basedb.core import environment
from basedb.core.errors import UsageError
from basedb.core.redact import redact
from basedb.protocol import api_envelope

EXECUTABLE_ENV = environment.LARK_CLI
MULTIPART_KEY = "basedb.multipart"
DOWNLOAD_KEY = "basedb.download"
OUTPUT_NAME = "body"
_PREFIX = re.compile(r"^API error: \[(\d+)\] ?")


def find_lark_cli() -> str | None:
    """The lark-cli executable: $BASEDB_LARK_CLI, else `lark-cli` on PATH."""
    named = os.environ.get(EXECUTABLE_ENV, "").strip()
    if named:
        return named if Path(named).is_file() else shutil.which(named)
    return shutil.which("lark-cli")


def not_installed() -> UsageError:
    return UsageError("lark-cli is not installed (no `lark-cli` on PATH).",
                      code="LARK_CLI_NOT_FOUND",
                      hint="Install it (npm install -g @larksuite/cli), put it on PATH or set "
                           f"${EXECUTABLE_ENV}; or sign in natively with `basedb auth login "
                           "--brand feishu`.")


def run_lark_cli(args: list[str], *, stdin: bytes | None = None, timeout: float = 60.0,
                 trace: RequestTrace | None = None,
                 cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    executable = find_lark_cli()
    if executable is None:
        raise not_installed()
    if trace is not None:
        trace.note("run " + redact(shlex.join(["lark-cli", *args])))
    try:
        return subprocess.run([executable, *args], input=stdin, capture_output=True,
                              timeout=timeout, check=False, cwd=cwd)
    except OSError as exc:
        raise UsageError(f"Could not run {executable}: {exc.strerror or exc}.",
                         code="LARK_CLI_FAILED",
                         hint="Check that lark-cli is installed and executable.") from None


def error_envelope(stderr: bytes) -> dict[str, Any] | None:
    """lark-cli's error envelope at the end of its stderr (other lines may come first)."""
    text = stderr.decode("utf-8", errors="replace")
    for start in [m.start() for m in re.finditer(r"(?m)^\{", text)]:
        try:
            found = json.loads(text[start:])
        except ValueError:
            continue
        if isinstance(found, dict) and isinstance(found.get("error"), dict):
            return found
    return None


class LarkCliTransport(httpx.BaseTransport):
    """httpx requests carried by `lark-cli api`."""

    def __init__(self, *, profile: str | None, identity: str, timeout: float = 30.0,
                 trace: RequestTrace | None = None) -> None:
        self.profile = profile
        self.identity = identity
        self.timeout = timeout
        self.trace = trace

    def __repr__(self) -> str:
        return f"LarkCliTransport(profile={self.profile!r}, identity={self.identity!r})"

    @property
    def login(self) -> str:
        return login_command(self.profile)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        args = ["--profile", self.profile] if self.profile else []
        args += ["api", request.method, wire_path(request), "--as", self.identity]
        params = _params(request)
        if params:
            args += ["--params", json.dumps(params, ensure_ascii=False, separators=(",", ":"))]
        stdin: bytes | None = None
        # lark-cli reads and writes files only below its working directory: a private
        # one per call, every path relative to it.
        with tempfile.TemporaryDirectory(prefix="basedb-lark-cli-") as scratch:
            multipart = request.extensions.get(MULTIPART_KEY)
            if multipart:
                args += _upload_args(multipart, Path(scratch))
            else:
                body = request.read()
                if body:
                    args += ["--data", "-"]
                    stdin = body
            download = bool(request.extensions.get(DOWNLOAD_KEY))
            if download:
                args += ["--output", OUTPUT_NAME]
            try:
                done = run_lark_cli(args, stdin=stdin, timeout=self.timeout, trace=self.trace,
                                    cwd=Path(scratch))
            except subprocess.TimeoutExpired:
                raise httpx.ReadTimeout(f"lark-cli did not answer in {self.timeout:g}s.",
                                        request=request) from None
            output = Path(scratch) / OUTPUT_NAME
            return self._response(request, done, output if download else None)

    def _response(self, request: httpx.Request, done: subprocess.CompletedProcess[bytes],
                  output: Path | None) -> httpx.Response:
        if done.returncode == 0:
            if output is not None and output.exists():
                meta = _json(done.stdout) or {}
                return httpx.Response(200, content=output.read_bytes(), headers={
                    "Content-Type": str(meta.get("content_type") or
                                        "application/octet-stream")}, request=request)
            return httpx.Response(200, content=done.stdout,
                                  headers={"Content-Type": "application/json"},
                                  request=request)
        envelope = error_envelope(done.stderr)
        state = state_error(done.stderr, envelope, lark_profile=self.profile)
        if state is not None:
            raise state
        error = envelope.get("error") if envelope else None
        if not isinstance(error, dict):
            text = done.stderr.decode("utf-8", errors="replace").strip()[-500:]
            if text.startswith("Error:"):  # cobra refused the command line: nothing sent
                raise UsageError(f"lark-cli refused the command line: {text[6:].strip()}",
                                 code="LARK_CLI_USAGE",
                                 hint="Update lark-cli (npm install -g @larksuite/cli).")
            raise httpx.ReadError(f"lark-cli exited {done.returncode}: {text}",
                                  request=request)
        kind = error.get("type")
        message = str(error.get("message") or "")
        blocked = policy.LARK_CLI_CODES.get(str(error.get("code")))
        if kind == "auth_error" and blocked is not None:  # lark-cli's own policy envelope
            return httpx.Response(403, json=api_envelope(blocked, message, data={
                "challenge_url": error.get("challenge_url"), "cli_hint": error.get("hint")}),
                request=request)
        if kind == "network":
            if tenant_token_unreachable(message):  # no token: the request was not sent
                raise httpx.ConnectError(f"lark-cli: {message}", request=request)
            raise httpx.ReadError(f"lark-cli: {message}", request=request)  # outcome unknown
        if kind == "http_error":
            number, _, text = message.removeprefix("HTTP ").partition(": ")
            return httpx.Response(int(number) if number.isdigit() else 502,
                                  content=text.encode(), headers={"Content-Type": "text/plain"},
                                  request=request)
        if kind in ("validation", "file_error"):
            raise UsageError(f"lark-cli refused the request: {message}",
                             code="LARK_CLI_VALIDATION", hint=error.get("hint"))
        code = error.get("code")
        if not isinstance(code, int):
            raise httpx.ReadError(f"lark-cli: {message}", request=request)
        http_status = 429 if kind == "rate_limit" else 401 if kind == "auth" else 400
        answer = api_envelope(code, _PREFIX.sub("", message), error=error.get("detail") or {})
        return httpx.Response(http_status, json=answer, request=request)


def wire_path(request: httpx.Request) -> str:
    """The request's path as sent on the wire: percent-encoded, without the query."""
    return request.url.raw_path.split(b"?", 1)[0].decode("ascii")


def _params(request: httpx.Request) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in request.url.params.multi_items():
        if key in found:
            current = found[key]
            found[key] = [*current, value] if isinstance(current, list) else [current, value]
        else:
            found[key] = value
    return found


def _upload_args(multipart: dict[str, Any], scratch: Path) -> list[str]:
    """`--file` and `--data` for a multipart form: its one file written into `scratch`
    under a plain name, its text fields as the JSON object lark-cli turns into form
    fields. A form without a file is sent as that JSON object alone."""
    fields: dict[str, str] = {}
    uploads: list[tuple[str, str, bytes]] = []
    for field, spec in (multipart.get("files") or {}).items():
        name, content = spec[0], spec[1]
        raw = content if isinstance(content, bytes) else \
            content.encode() if isinstance(content, str) else content.read()
        if name is None:  # a text part
            fields[field] = raw.decode()
        else:
            uploads.append((field, str(name), raw))
    for field, value in (multipart.get("data") or {}).items():
        fields[field] = str(value)
    if len(uploads) > 1:
        raise UsageError(f"lark-cli uploads one file per call; this request has "
                         f"{len(uploads)} ({', '.join(u[0] for u in uploads)}).",
                         code="LARK_CLI_ONE_FILE",
                         hint="Sign in natively (`basedb auth login --brand feishu`) for this "
                              "request.")
    args: list[str] = []
    if uploads:
        field, name, raw = uploads[0]
        local = _plain_name(name)
        (scratch / local).write_bytes(raw)
        args += ["--file", f"{field}={local}"]
    if fields or not uploads:
        args += ["--data", json.dumps(fields, ensure_ascii=False, separators=(",", ":"))]
    return args


def _plain_name(name: str) -> str:
    """A file name for the upload that stays in the working directory and that lark-cli
    reads as one path (no directory part, no `=`)."""
    base = Path(name).name.replace("=", "_").lstrip(".")
    return base if base and base.isprintable() else "upload.bin"


def _json(raw: bytes) -> dict[str, Any] | None:
    try:
        found = json.loads(raw)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None
