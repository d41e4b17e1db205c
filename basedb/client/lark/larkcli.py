"""A transport that sends each request through an installed lark-cli, as upstream's CLI
does, so lark-cli's own sign-in (profiles, `--as`, device flow, refresh, keychain) is used:

    lark-cli --profile P api METHOD PATH --as user|bot --params '{…}' --data -   (body on stdin)
             … --file artifact=<tmp>/site.zip --data '{"fingerprint": …}'          uploads
             … --output <tmp>/body                                                downloads

lark-cli's answers are read back as HTTP responses (`cmd/api/api.go`,
`internal/output/`): exit 0 prints the response body on stdout; otherwise stderr holds
its error envelope `{ok: false, identity, error: {type, code, message, hint, detail}}`,
which becomes the Lark envelope it came from (`code`, the message without lark-cli's
`API error: [code] ` prefix, `error` = detail), so basedb's own error classes apply.
States lark-cli reports without a Lark code become basedb errors directly: "not
configured" (`not_configured`), no token (`token_missing`), `need_user_authorization`.
A `network` error may have happened after the request was sent: its outcome is unknown.

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

from basedb.client.trace import RequestTrace
from basedb.core import environment
from basedb.core.errors import AuthError, UsageError
from basedb.core.redact import redact
from basedb.protocol import api_envelope

EXECUTABLE_ENV = environment.LARK_CLI
MULTIPART_KEY = "basedb.multipart"
DOWNLOAD_KEY = "basedb.download"
_PREFIX = re.compile(r"^API error: \[(\d+)\] ?")
NOT_CONFIGURED = "not_configured"
TOKEN_MISSING = "token_missing"
NEED_USER_AUTHORIZATION = "need_user_authorization"


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
                 trace: RequestTrace | None = None) -> subprocess.CompletedProcess[bytes]:
    executable = find_lark_cli()
    if executable is None:
        raise not_installed()
    if trace is not None:
        trace.note("run " + redact(shlex.join(["lark-cli", *args])))
    try:
        return subprocess.run([executable, *args], input=stdin, capture_output=True,
                              timeout=timeout, check=False)
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


def state_error(stderr: bytes, envelope: dict[str, Any] | None, *,
                login: str) -> AuthError | None:
    """The sign-in state lark-cli reported without a Lark code, as an AuthError."""
    text = stderr.decode("utf-8", errors="replace")
    error = envelope.get("error") if envelope else None
    message = str(error.get("message", "")) if isinstance(error, dict) else text.strip()
    kind = error.get("type") if isinstance(error, dict) else None
    state = None
    if "need_user_authorization" in text:
        state = NEED_USER_AUTHORIZATION
    elif kind == "config" or "not configured" in message:
        state = NOT_CONFIGURED
    elif kind == "auth" and not (isinstance(error, dict) and error.get("code")):
        state = TOKEN_MISSING
    if state is None:
        return None
    found = AuthError(f"lark-cli: {message or state}", code=0,
                      error_type="config" if state == NOT_CONFIGURED else "auth",
                      hint=f"Sign in with `{login}`.")
    return found.with_context(detail={"state": state})


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
        return "lark-cli auth login" + (f" --profile {self.profile}" if self.profile else "")

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        args = ["--profile", self.profile] if self.profile else []
        args += ["api", request.method, request.url.path, "--as", self.identity]
        params = _params(request)
        if params:
            args += ["--params", json.dumps(params, ensure_ascii=False, separators=(",", ":"))]
        stdin: bytes | None = None
        with tempfile.TemporaryDirectory(prefix="basedb-lark-cli-") as scratch:
            multipart = request.extensions.get(MULTIPART_KEY)
            if multipart:
                args += _upload_args(multipart, Path(scratch))
            else:
                body = request.read()
                if body:
                    args += ["--data", "-"]
                    stdin = body
            output = Path(scratch) / "body"
            if request.extensions.get(DOWNLOAD_KEY):
                args += ["--output", str(output)]
            try:
                done = run_lark_cli(args, stdin=stdin, timeout=self.timeout, trace=self.trace)
            except subprocess.TimeoutExpired:
                raise httpx.ReadTimeout(f"lark-cli did not answer in {self.timeout:g}s.",
                                        request=request) from None
            return self._response(request, done, output)

    def _response(self, request: httpx.Request, done: subprocess.CompletedProcess[bytes],
                  output: Path) -> httpx.Response:
        if done.returncode == 0:
            if request.extensions.get(DOWNLOAD_KEY) and output.exists():
                meta = _json(done.stdout) or {}
                return httpx.Response(200, content=output.read_bytes(), headers={
                    "Content-Type": str(meta.get("content_type") or
                                        "application/octet-stream")}, request=request)
            return httpx.Response(200, content=done.stdout,
                                  headers={"Content-Type": "application/json"},
                                  request=request)
        envelope = error_envelope(done.stderr)
        state = state_error(done.stderr, envelope, login=self.login)
        if state is not None:
            raise state
        error = envelope.get("error") if envelope else None
        if not isinstance(error, dict):
            text = done.stderr.decode("utf-8", errors="replace").strip()[-500:]
            raise httpx.ReadError(f"lark-cli exited {done.returncode}: {text}",
                                  request=request)
        kind = error.get("type")
        message = str(error.get("message") or "")
        if kind == "network":  # it may have been sent: the outcome is unknown
            raise httpx.ReadError(f"lark-cli: {message}", request=request)
        if kind == "http_error":
            number, _, text = message.removeprefix("HTTP ").partition(": ")
            return httpx.Response(int(number) if number.isdigit() else 502,
                                  content=text.encode(), headers={"Content-Type": "text/plain"},
                                  request=request)
        if kind == "validation":
            raise UsageError(f"lark-cli refused the request: {message}",
                             code="LARK_CLI_VALIDATION", hint=error.get("hint"))
        code = error.get("code")
        if not isinstance(code, int):
            raise httpx.ReadError(f"lark-cli: {message}", request=request)
        http_status = 429 if kind == "rate_limit" else 401 if kind == "auth" else 400
        answer = api_envelope(code, _PREFIX.sub("", message), error=error.get("detail") or {})
        return httpx.Response(http_status, json=answer, request=request)


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
    args: list[str] = []
    for field, spec in (multipart.get("files") or {}).items():
        name, content = spec[0], spec[1]
        path = scratch / Path(str(name)).name
        path.write_bytes(content if isinstance(content, bytes) else content.read())
        args += ["--file", f"{field}={path}"]
    data = multipart.get("data")
    if data:
        args += ["--data", json.dumps(data, ensure_ascii=False, separators=(",", ":"))]
    return args


def _json(raw: bytes) -> dict[str, Any] | None:
    try:
        found = json.loads(raw)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None
