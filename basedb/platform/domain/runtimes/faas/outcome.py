"""How a FaaS call ended, and what the caller is told about it.

Outcomes: code 0 returns the handler's `data`; any other code becomes 800004003 with the
author's message and code, except 500; a returned 500, a crash, timeout, memory
exhaustion or invalid return becomes 800004005 with a fixed message and the log id
(upstream agent-tool-design.md "FaaS 错误 msg": the caller sees only safe text; the
author's message or the stack goes to the log).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from basedb.core.redact import redact
from basedb.core.wording import plural
from basedb.platform.domain.runtimes.faas.limits import FaasLimits
from basedb.platform.domain.runtimes.faas.masking import hide_secrets, longest_bytes
from basedb.protocol import ApiFailure, Code, clip, quote

MAX_AUTHOR_MSG_CHARS = 400
MAX_MSG_CHARS = 500
# A returned code that means "internal error": its msg often carries a stack or a query.
INTERNAL_ERROR_CODE = 500
# What V8 and Node print when memory runs out (matched lower-cased, in the detail and log).
_MEMORY_SIGNS = ("javascript heap out of memory", "fatal process out of memory",
                 "array buffer allocation failed", "allocation failed - process out of memory")


@dataclass(slots=True)
class CallLog:
    """The handler's output during one call: the first bytes and the last bytes, with a
    count of what was dropped between, and the call's secret values shown as ***.

    Each end keeps as many bytes beyond its cap as the longest secret has, so a secret
    printed across a cut is still whole when masked; the cut comes after."""

    head_limit: int
    tail_limit: int
    secrets: tuple[str, ...] = ()
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    dropped: int = 0  # bytes between what head and tail hold
    slack: int = field(init=False)

    def __post_init__(self) -> None:
        self.slack = longest_bytes(self.secrets)

    def add(self, chunk: bytes) -> None:
        room = self.head_limit + self.slack - len(self.head)
        self.head += chunk[:max(room, 0)]
        rest = chunk[room:] if room > 0 else chunk
        if rest:
            self.tail += rest
            keep = self.tail_limit + self.slack
            if len(self.tail) > keep:
                cut = len(self.tail) - keep
                self.dropped += cut
                del self.tail[:cut]

    def text(self) -> str:
        if not self.dropped:
            return hide_secrets(bytes(self.head + self.tail).decode("utf-8", "replace"),
                                self.secrets)
        head = hide_secrets(bytes(self.head).decode("utf-8", "replace"), self.secrets)
        tail = hide_secrets(bytes(self.tail).decode("utf-8", "replace"), self.secrets)
        head_bytes, tail_bytes = head.encode("utf-8"), tail.encode("utf-8")
        kept_head = head_bytes[:self.head_limit].decode("utf-8", "ignore")
        kept_tail = tail_bytes[max(len(tail_bytes) - self.tail_limit, 0):].decode(
            "utf-8", "ignore")
        gone = (len(self.head) + self.dropped + len(self.tail)
                - min(len(self.head), self.head_limit) - min(len(self.tail), self.tail_limit))
        return f"{kept_head}\n… {gone} bytes of output dropped …\n{kept_tail}"


@dataclass(slots=True)
class Outcome:
    """How a call ended, before it is turned into data or an error."""

    log: CallLog
    # result | failure | timeout | too_large | exited (the worker died without a word)
    kind: str = "exited"
    value: Any = None  # the handler's return value (kind "result")
    failure: str = ""  # the runner's failure kind (kind "failure"), or "spawn"
    detail: str = ""  # stack or reason, for the log only
    quiet: bool = False  # the worker left nothing running and may take another call
    out_of_memory: bool = False  # the worker was killed by its memory limit
    writes: int = 0  # record write calls that completed


def hide_internal_error(outcome: Outcome) -> None:
    """A result with code 500 becomes a failure whose author message goes to the log."""
    result = outcome.value if outcome.kind == "result" else None
    if isinstance(result, dict) and result.get("code") == INTERNAL_ERROR_CODE:
        author = result.get("msg")
        outcome.kind, outcome.failure = "failure", "internal_error"
        outcome.detail = f"returned code {INTERNAL_ERROR_CODE}: " + (
            author if isinstance(author, str) else json.dumps(author, default=str))


def interpret(outcome: Outcome, *, function_id: str, log_id: str, limit_ms: int,
              limits: FaasLimits) -> Any:
    """The call's data, or the ApiFailure (800004003 or 800004005) it ended in."""
    if outcome.kind == "result":
        result = outcome.value
        code = result.get("code") if isinstance(result, dict) else None
        if isinstance(code, int) and not isinstance(code, bool):
            if code == 0:
                return result.get("data")
            raise _business_error(result, code, log_id)
        outcome.failure = "invalid_return"
    raise _execution_failed(outcome, function_id=function_id, log_id=log_id,
                            limit_ms=limit_ms, limits=limits)


def _business_error(result: dict[str, Any], code: int, log_id: str) -> ApiFailure:
    author = result.get("msg")
    text = author.strip() if isinstance(author, str) else ""
    tail = f" Business code: {code}. LogID: {log_id}"
    budget = min(MAX_AUTHOR_MSG_CHARS, MAX_MSG_CHARS - len(tail))
    text = clip(redact(text) or "The function reported an error without a message.", budget)
    return ApiFailure(Code.FUNCTION_BUSINESS_ERROR, text + tail, status=400,
                      data={"error": {"upstream_code": code}})


def _execution_failed(outcome: Outcome, *, function_id: str, log_id: str, limit_ms: int,
                      limits: FaasLimits) -> ApiFailure:
    name = f"FaaS function {quote(function_id)}"
    author_fix = (f"the site's developer should read the function's log with `basedb logs "
                  f"{log_id}` in the site's workspace")
    reason, fix = _failure_reason(outcome, name, limit_ms, author_fix, limits)
    if outcome.writes:
        executed = (f"partly: {plural(outcome.writes, 'record write call')} completed "
                    "before the failure and were kept")
        retry = "do not retry before checking the records with a read-only function"
    else:
        executed = "no record was written"
        retry = "retry later" if outcome.kind == "timeout" else "retry after publishing"
    msg = f"{reason}. Fix: {fix}. Executed: {executed}. Retry: {retry}. LogID: {log_id}"
    data = ({"error": {"upstream_code": INTERNAL_ERROR_CODE}}
            if outcome.failure == "internal_error" else None)
    return ApiFailure(Code.EXECUTION_FAILED, msg, status=504 if outcome.kind == "timeout" else 500,
                      data=data)


def _failure_reason(outcome: Outcome, name: str, limit_ms: int, author_fix: str,
                    limits: FaasLimits) -> tuple[str, str]:
    evidence = (outcome.detail + outcome.log.text()).lower()
    if outcome.kind == "timeout":
        return (f"{name} did not finish within {limit_ms} ms and was stopped",
                f"{author_fix}; make the handler faster or raise timeoutMs (at most "
                f"{limits.max_timeout_ms})")
    if "too_large" in (outcome.kind, outcome.failure):
        return (f"{name} sent a result or record call larger than "
                f"{limits.max_message_bytes // (1024 * 1024)} MB and was stopped",
                "return less data, for example one page at a time")
    if outcome.out_of_memory or any(sign in evidence for sign in _MEMORY_SIGNS):
        return (f"{name} ran out of memory (limit {limits.memory_mb} MB, JavaScript heap "
                f"{limits.heap_mb} MB) and was stopped",
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
        return (f"{name} could not be started",
                f"{author_fix}; check the Node.js installation and the FaaS sandbox line "
                "of the platform log")
    if outcome.failure == "exception":
        return f"{name} threw an uncaught error", author_fix
    if outcome.failure == "internal_error":
        return (f"{name} reported an internal error (code {INTERNAL_ERROR_CODE})",
                author_fix)
    return f"{name} ended without returning a result", f"{author_fix}; make sure the " \
        "handler's promise settles and it does not call process.exit"
