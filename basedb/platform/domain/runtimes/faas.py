"""FaaS runtime: run a site's `index.mjs` handler in a Node.js subprocess.

    data = run_faas(store=…, site=…, catalog=…, caller=user, function_id="managePeriod",
                    handler_source=source, input={…}, timeout_ms=10_000, log_id=…,
                    env="prod")

Each call starts `node faas_runner.mjs` in a private temporary directory holding the
handler as `index.mjs`. The runner calls `default(input, ctx)` and reports the result
over a dedicated pipe (a JSON document per line); `ctx.records` calls travel over the
same pipe and are answered on the child's stdin, executed here by
`faas_records.RecordRoutes` with the caller as the actor. Whatever the handler prints
(stdout, stderr, console.*) is a log: captured, capped, and written to the platform log
on stderr with the log id, never shown to the caller.

Limits, because a handler is code the platform did not write:
- time: `timeout_ms` (the declaration's timeoutMs; default 10 s, at most 300 s), after
  which the whole process group is killed;
- memory: V8's heap is capped (`--max-old-space-size`) and, on Linux, the address space
  (which bounds Buffers too);
- output: a result or a single record call of more than 8 MB is refused;
- environment: only a minimal PATH, HOME and TMPDIR pointing at the private directory,
  no NODE_OPTIONS, nothing of the platform's environment (tokens, data dir);
- files and processes: Node's permission model limits the handler to reading and writing
  its private directory and forbids child processes and worker threads.

Outcomes: code 0 returns the handler's `data`; any other code becomes 800004003 with
the author's message and code, except 500; a returned 500, a crash, timeout, memory
exhaustion or invalid return becomes 800004005 with a fixed message and the log id
(upstream agent-tool-design.md "FaaS 错误 msg": the caller sees only safe text; the
author's message or the stack goes to the log).
`$BASEDB_NODE` names the Node.js binary when `node` on PATH is not the one to use.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from basedb.core.node import (
    CHILD_PATH,
    MIN_NODE_MAJOR,
    node_executable,
    version_of,
    version_tuple,
)
from basedb.core.protocol import ApiFailure, Code, clip, quote
from basedb.core.redact import redact
from basedb.core.wording import plural
from basedb.platform.domain.identity import User
from basedb.platform.domain.runtimes.faas_records import RecordCallError, RecordRoutes
from basedb.platform.domain.sites import SiteRow
from basedb.platform.storage import platform_log
from basedb.platform.storage.store import Store
from basedb.workspace.declarations import FAAS_MAX_TIMEOUT_MS
from basedb.workspace.model import Catalog

RUNNER = Path(__file__).with_name("faas_runner.mjs")
DEFAULT_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = FAAS_MAX_TIMEOUT_MS
HEAP_LIMIT_MB = 128
# V8 reserves ~0.8 GB of address space up front; the rest bounds Buffers and the like.
ADDRESS_SPACE_LIMIT_BYTES = 2 * 1024**3
MAX_MESSAGE_BYTES = 8 * 1024 * 1024
MAX_LOG_HEAD_BYTES = 48 * 1024
MAX_LOG_TAIL_BYTES = 16 * 1024
MAX_AUTHOR_MSG_CHARS = 400
# A returned code that means "internal error": its msg often carries a stack or a query.
INTERNAL_ERROR_CODE = 500
MAX_MSG_CHARS = 500

NODE_REQUIRED = "Node.js 20+ is required to run FaaS functions"
# What V8 and Node print when memory runs out (matched lower-cased, in the detail and log).
_MEMORY_SIGNS = ("javascript heap out of memory", "fatal process out of memory",
                 "array buffer allocation failed")


# ------------------------------------------------------------------------- Node.js


def _require_node(log_id: str) -> tuple[str, tuple[int, int]]:
    executable = node_executable()
    version = None if executable is None else version_of(executable)
    if executable is None or version is None or version_tuple(version)[0] < MIN_NODE_MAJOR:
        found = f" (found Node.js {version})" if version else ""
        raise ApiFailure(Code.EXECUTION_FAILED, (
            f"{NODE_REQUIRED}{found}. Fix: install Node.js {MIN_NODE_MAJOR} or later where the "
            "platform runs and put `node` on PATH, or set $BASEDB_NODE to its path; "
            f"`basedb doctor` shows what is found. Executed: no. Retry: retry after fixing. "
            f"LogID: {log_id}"), status=500)
    return executable, version_tuple(version)


def _node_flags(version: tuple[int, int], workdir: str) -> list[str]:
    permission = "--permission" if version >= (22, 13) else "--experimental-permission"
    flags = [f"--max-old-space-size={HEAP_LIMIT_MB}", permission,
             f"--allow-fs-read={workdir}", f"--allow-fs-write={workdir}"]
    if version >= (20, 11):
        flags.append("--disable-warning=ExperimentalWarning")
    return flags


def _child_env(workdir: str) -> dict[str, str]:
    env = {"PATH": CHILD_PATH, "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8"}
    if os.environ.get("TZ"):
        env["TZ"] = os.environ["TZ"]  # datetime cells are in the platform's local time
    return env


# --------------------------------------------------------------------------- a run


@dataclass(slots=True)
class _Log:
    """The handler's output: the first bytes and the last bytes, with a count between."""

    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    def add(self, chunk: bytes) -> None:
        room = MAX_LOG_HEAD_BYTES - len(self.head)
        self.head += chunk[:room]
        rest = chunk[room:] if room > 0 else chunk
        if rest:
            self.tail += rest
            if len(self.tail) > MAX_LOG_TAIL_BYTES:
                cut = len(self.tail) - MAX_LOG_TAIL_BYTES
                self.dropped += cut
                del self.tail[:cut]

    def text(self) -> str:
        gap = f"\n… {self.dropped} bytes of output dropped …\n" if self.dropped else ""
        return (bytes(self.head).decode("utf-8", "replace") + gap
                + bytes(self.tail).decode("utf-8", "replace"))


@dataclass(slots=True)
class _Outcome:
    """How a run ended, before it is turned into data or an error."""

    kind: str = "exited"  # result | failure | timeout | too_large | exited
    value: Any = None  # the handler's return value (kind "result")
    failure: str = ""  # the runner's failure kind (kind "failure")
    detail: str = ""  # stack or reason, for the log only
    returncode: int | None = None
    log: _Log = field(default_factory=_Log)


def effective_timeout_ms(timeout_ms: int | None) -> int:
    """The declared timeoutMs, or the default when absent, capped at the maximum."""
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms <= 0:
        return DEFAULT_TIMEOUT_MS
    return min(timeout_ms, MAX_TIMEOUT_MS)


def run_faas(*, store: Store, site: SiteRow, catalog: Catalog, caller: User,
             function_id: str, handler_source: str, input: Any, timeout_ms: int,
             log_id: str, env: str, timezone: str = "UTC") -> Any:
    """Run a FaaS handler and return its `data`, or raise ApiFailure (800004003/5).

    Call it outside any store transaction: the handler's record calls commit one by one,
    on this thread's connection. `ctx.env` is `env` ("prod" or "preview"); record calls
    write datetimes in `timezone`, the deployment's, which `ctx.site.timezone` names."""
    if store.connection().in_transaction:
        raise RuntimeError("run_faas must be called outside a store transaction: each record "
                           "call of the handler commits on its own")
    executable, version = _require_node(log_id)
    limit_ms = effective_timeout_ms(timeout_ms)
    routes = RecordRoutes(store=store, catalog=catalog, actor=caller.user_id, log_id=log_id,
                          zone=timezone)
    start = {"type": "start", "input": input, "context": {
        "caller": {"userId": caller.user_id, "name": caller.name},
        "site": {"appToken": site.app_token, "timezone": timezone}, "env": env,
        "logId": log_id}}
    workdir = tempfile.mkdtemp(prefix="basedb-faas-")
    try:
        os.chmod(workdir, 0o700)
        handler = Path(workdir) / "index.mjs"
        handler.write_text(handler_source, encoding="utf-8")
        runner = Path(workdir) / RUNNER.name
        shutil.copyfile(RUNNER, runner)  # inside the one directory the handler may read
        command = [executable, *_node_flags(version, workdir), str(runner), str(handler)]
        outcome = _execute(command, workdir, start, routes, limit_ms / 1000)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    _hide_internal_error(outcome)
    _write_log(function_id, log_id, outcome)
    return _interpret(outcome, function_id=function_id, log_id=log_id,
                      writes=routes.writes, limit_ms=limit_ms)


def _hide_internal_error(outcome: _Outcome) -> None:
    """A result with code 500 becomes a failure whose author message goes to the log."""
    result = outcome.value if outcome.kind == "result" else None
    if isinstance(result, dict) and result.get("code") == INTERNAL_ERROR_CODE:
        author = result.get("msg")
        outcome.kind, outcome.failure = "failure", "internal_error"
        outcome.detail = f"returned code {INTERNAL_ERROR_CODE}: " + (
            author if isinstance(author, str) else json.dumps(author, default=str))


def _execute(command: list[str], workdir: str, start: dict[str, Any], routes: RecordRoutes,
             limit_s: float) -> _Outcome:
    channel_read, channel_write = os.pipe()
    try:
        process = subprocess.Popen(
            [*command, str(channel_write)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, cwd=workdir, env=_child_env(workdir),
            pass_fds=(channel_write,), start_new_session=True)
    except OSError as error:
        os.close(channel_read)
        return _Outcome(kind="failure", failure="spawn", detail=str(error))
    finally:
        os.close(channel_write)
    _limit_address_space(process.pid)
    # The watchdog also frees this thread if it blocks writing to a stuck child's stdin.
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _kill_group(process)

    watchdog = threading.Timer(limit_s, expire)
    watchdog.daemon = True
    watchdog.start()
    outcome = _Outcome()
    try:
        _converse(process, channel_read, start, routes, time.monotonic() + limit_s, outcome)
        if expired.is_set() and outcome.kind == "exited":
            outcome.kind = "timeout"  # the watchdog's kill closed the channel first
    finally:
        watchdog.cancel()
        watchdog.join()  # so that it cannot signal after the child is reaped
        _finish_process(process, outcome)
        os.close(channel_read)
    return outcome


def _converse(process: subprocess.Popen[bytes], channel: int, start: dict[str, Any],
              routes: RecordRoutes, deadline: float, outcome: _Outcome) -> None:
    """Serve the child until it reports a result or failure, exits, or runs out of time."""
    assert process.stdin is not None and process.stdout is not None
    _send(process, start)
    selector = selectors.DefaultSelector()
    selector.register(channel, selectors.EVENT_READ, "channel")
    selector.register(process.stdout.fileno(), selectors.EVENT_READ, "log")
    pending = bytearray()
    try:
        while any(key.data == "channel" for key in selector.get_map().values()):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                outcome.kind = "timeout"
                return
            for key, _ in selector.select(remaining):
                chunk = os.read(key.fd, 65536)
                if key.data == "log":
                    if chunk:
                        outcome.log.add(chunk)
                    else:
                        selector.unregister(key.fd)
                    continue
                if not chunk:
                    selector.unregister(key.fd)  # the child exited without a last word
                    continue
                pending += chunk
                if b"\n" not in chunk:  # a long message still arriving
                    if len(pending) > MAX_MESSAGE_BYTES:
                        outcome.kind = "too_large"
                        return
                    continue
                while (end := pending.find(b"\n")) >= 0:
                    line = bytes(pending[:end])
                    del pending[:end + 1]
                    if _handle_message(process, line, routes, outcome):
                        return
                if len(pending) > MAX_MESSAGE_BYTES:
                    outcome.kind = "too_large"
                    return
    finally:
        selector.close()


def _handle_message(process: subprocess.Popen[bytes], line: bytes, routes: RecordRoutes,
                    outcome: _Outcome) -> bool:
    """Act on one message from the runner; True when the run is over."""
    if len(line) > MAX_MESSAGE_BYTES:
        outcome.kind = "too_large"
        return True
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False  # not the runner's; a handler writing to the channel fd gains nothing
    if not isinstance(message, dict):
        return False
    kind = message.get("type")
    if kind == "result":
        outcome.kind, outcome.value = "result", message.get("value")
        return True
    if kind == "failure":
        outcome.kind, outcome.failure = "failure", str(message.get("kind") or "")
        outcome.detail = str(message.get("detail") or "")
        return True
    if kind == "call":
        reply: dict[str, Any] = {"type": "reply", "id": message.get("id")}
        try:
            reply |= {"ok": True, "value": routes.call(message.get("op"), message.get("args"))}
        except RecordCallError as refused:
            reply |= {"ok": False, "error": {"code": refused.code, "message": refused.message}}
        _send(process, reply)
    return False


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    with contextlib.suppress(BrokenPipeError, ValueError, OSError):
        process.stdin.write(data + b"\n")
        process.stdin.flush()


def _finish_process(process: subprocess.Popen[bytes], outcome: _Outcome) -> None:
    """Stop the child and whatever it left running, then keep the rest of its log.

    The group is killed before the child is reaped, so its id cannot have been reused;
    a child that already exited keeps its own exit status."""
    assert process.stdout is not None
    _kill_group(process)
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
    process.wait()
    outcome.returncode = process.returncode
    stdout = process.stdout.fileno()
    os.set_blocking(stdout, False)
    with contextlib.suppress(OSError):  # BlockingIOError once the pipe is empty
        while chunk := os.read(stdout, 65536):
            outcome.log.add(chunk)
    process.stdout.close()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _limit_address_space(pid: int) -> None:
    try:
        # Lazy: POSIX only, and used in the child between fork and exec.
        import resource  # noqa: PLC0415

        limit = (ADDRESS_SPACE_LIMIT_BYTES, ADDRESS_SPACE_LIMIT_BYTES)
        resource.prlimit(pid, resource.RLIMIT_AS, limit)
    except (ImportError, AttributeError, OSError, ValueError):
        pass  # not Linux, or the child is already gone: the heap cap still holds


# ------------------------------------------------------------------------- outcome


def _write_log(function_id: str, log_id: str, outcome: _Outcome) -> None:
    """The handler's output and any failure detail go to the platform log."""
    output = outcome.log.text().strip()
    if not output and not outcome.detail:
        return
    lines = [f"basedb faas: function {function_id} (log_id {log_id}) ended: {outcome.kind}"
             + (f" ({outcome.failure})" if outcome.failure else "")]
    if outcome.detail:
        lines.append(outcome.detail.rstrip())
    if output:
        lines.append("--- output ---\n" + output)
    platform_log.write("\n".join(lines))


def _interpret(outcome: _Outcome, *, function_id: str, log_id: str, writes: int,
               limit_ms: int) -> Any:
    if outcome.kind == "result":
        result = outcome.value
        code = result.get("code") if isinstance(result, dict) else None
        if isinstance(code, int) and not isinstance(code, bool):
            if code == 0:
                return result.get("data")
            raise _business_error(result, code, log_id)
        outcome.failure = "invalid_return"
    raise _execution_failed(outcome, function_id=function_id, log_id=log_id, writes=writes,
                            limit_ms=limit_ms)


def _business_error(result: dict[str, Any], code: int, log_id: str) -> ApiFailure:
    author = result.get("msg")
    text = author.strip() if isinstance(author, str) else ""
    tail = f" Business code: {code}. LogID: {log_id}"
    budget = min(MAX_AUTHOR_MSG_CHARS, MAX_MSG_CHARS - len(tail))
    text = clip(redact(text) or "The function reported an error without a message.", budget)
    return ApiFailure(Code.FUNCTION_BUSINESS_ERROR, text + tail, status=400,
                      data={"error": {"upstream_code": code}})


def _execution_failed(outcome: _Outcome, *, function_id: str, log_id: str, writes: int,
                      limit_ms: int) -> ApiFailure:
    name = f"FaaS function {quote(function_id)}"
    author_fix = "the site's developer should look up this LogID in the platform log"
    reason, fix = _failure_reason(outcome, name, limit_ms, author_fix)
    if writes:
        executed = (f"partly: {plural(writes, 'record write call')} completed before the "
                    "failure and were kept")
        retry = "do not retry before checking the records with a read-only function"
    else:
        executed = "no record was written"
        retry = "retry later" if outcome.kind == "timeout" else "retry after publishing"
    msg = f"{reason}. Fix: {fix}. Executed: {executed}. Retry: {retry}. LogID: {log_id}"
    data = ({"error": {"upstream_code": INTERNAL_ERROR_CODE}}
            if outcome.failure == "internal_error" else None)
    return ApiFailure(Code.EXECUTION_FAILED, msg, status=504 if outcome.kind == "timeout" else 500,
                      data=data)


def _failure_reason(outcome: _Outcome, name: str, limit_ms: int,
                    author_fix: str) -> tuple[str, str]:
    evidence = (outcome.detail + outcome.log.text()).lower()
    if outcome.kind == "timeout":
        return (f"{name} did not finish within {limit_ms} ms and was stopped",
                f"{author_fix}; make the handler faster or raise timeoutMs (at most "
                f"{MAX_TIMEOUT_MS})")
    if "too_large" in (outcome.kind, outcome.failure):
        return (f"{name} sent a result or record call larger than "
                f"{MAX_MESSAGE_BYTES // (1024 * 1024)} MB and was stopped",
                "return less data, for example one page at a time")
    if any(sign in evidence for sign in _MEMORY_SIGNS):
        return (f"{name} ran out of memory (heap limit {HEAP_LIMIT_MB} MB) and was stopped",
                f"{author_fix}; process the data in smaller pieces")
    if outcome.failure == "invalid_return":
        return (f"{name} returned an invalid result",
                "the handler must return an object {code, msg, data} whose code is an integer, "
                "0 for success")
    if outcome.failure == "unserializable":
        return (f"{name} returned a result that cannot be sent as JSON",
                "return plain objects, arrays, strings, numbers and booleans only")
    if outcome.failure in ("load_error", "no_default_export"):
        return (f"{name} could not be loaded",
                "index.mjs must parse and `export default async function (input, ctx)`")
    if outcome.failure == "spawn":
        return f"{name} could not be started", f"{author_fix}; check the Node.js installation"
    if outcome.failure == "exception":
        return f"{name} threw an uncaught error", author_fix
    if outcome.failure == "internal_error":
        return (f"{name} reported an internal error (code {INTERNAL_ERROR_CODE})",
                author_fix)
    return f"{name} ended without returning a result", f"{author_fix}; make sure the " \
        "handler's promise settles and it does not call process.exit"
