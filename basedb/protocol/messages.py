"""Upstream's message template, built and parsed as one structure.

Messages never contain SQL or a stack. A call that was refused before doing anything says
so in upstream's fixed English template, so that a caller (often an AI agent) can locate
the parameter, fix it and know nothing ran:

    <Reason>. Parameter: <JSON Pointer> (received <value>). Fix: <…>; Candidates: <≤3>.
    Executed: no. Retry: <when>. LogID: <id>

`FailureMessage` is that template as data: `render()` writes it (the platform) and
`FailureMessage.parse(msg)` reads it back (the client), so neither side searches text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from basedb.core.frozen import frozen_dataclass
from basedb.core.redact import redact

MAX_MSG_CHARS = 500
MAX_RECEIVED_CHARS = 64
MAX_CANDIDATES = 3
MAX_PARAMETER_CHARS = 80
MAX_CANDIDATE_CHARS = 40

INTERNAL_ERROR_MSG = (
    "The platform hit an unexpected error and did not finish the request. "
    "Retry: retry later; if it persists, report it with the LogID."
)
BUSY_MSG = (
    "The platform database is busy with other writes. Executed: no. Retry: retry later."
)

MISSING = object()
"""A keyword argument left out (None is a value a caller may have sent)."""


# ---------------------------------------------------------------- the message template


@frozen_dataclass
class FailureMessage:
    """One error message in upstream's template; every part but the reason is optional.

    `received` and `candidates` hold the values as shown (already rendered as JSON and
    clipped: see `render_received`).
    """

    reason: str
    parameter: str | None = None
    received: str | None = None
    fix: str | None = None
    candidates: tuple[str, ...] = ()
    executed: str | None = None  # "no" when nothing ran
    retry: str | None = None
    log_id: str | None = None

    def render(self) -> str:
        """The message, at most 500 characters: reason and fix are clipped so that the
        parameter, candidates, executed, retry and log id always survive."""
        where = ""
        if self.parameter is not None:
            where = f" Parameter: {clip(self.parameter, MAX_PARAMETER_CHARS) or '/'}"
            if self.received is not None:
                where += f" (received {self.received})"
            where += "."
        candidates = f"; Candidates: {', '.join(self.candidates)}" if self.candidates else ""
        tail = ""
        if self.executed is not None:
            tail += f" Executed: {self.executed}."
        if self.retry is not None:
            tail += f" Retry: {self.retry}."
        if self.log_id is not None:
            tail += f" LogID: {self.log_id}"
        reason = self.reason.rstrip(". ")
        fix = self.fix.rstrip(". ") if self.fix is not None else None
        fixed = len(where) + len(tail) + len(".") + (
            len(" Fix: ") + len(candidates) + len(".") if fix is not None else 0)
        budget = MAX_MSG_CHARS - fixed
        if len(reason) + len(fix or "") > budget:
            if fix is not None:
                fix = clip(fix, max(budget // 2, budget - len(reason)))
            reason = clip(reason, max(budget - len(fix or ""), 1))
        fix_part = f" Fix: {fix}{candidates}." if fix is not None else ""
        return f"{reason}.{where}{fix_part}{tail}"

    @classmethod
    def parse(cls, msg: str) -> FailureMessage:
        """The parts of a message; a message outside the template is all reason."""
        match = _TEMPLATE.fullmatch(msg.strip())
        if match is None:  # the pattern matches any text; kept for the type checker
            return cls(reason=msg)
        parts = match.groupdict()
        candidates = tuple(c for c in (parts["candidates"] or "").split(", ") if c)
        return cls(reason=parts["reason"].strip(), parameter=parts["parameter"],
                   received=parts["received"], fix=parts["fix"], candidates=candidates,
                   executed=parts["executed"], retry=parts["retry"],
                   log_id=parts["log_id"])

    def with_log_id(self, log_id: str) -> FailureMessage:
        return FailureMessage(self.reason, self.parameter, self.received, self.fix,
                              self.candidates, self.executed, self.retry, log_id)


_TEMPLATE = re.compile(
    r"(?P<reason>.*?)\.?"
    r"(?: Parameter: (?P<parameter>\S*)(?: \(received (?P<received>.*?)\))?\.)?"
    r"(?: Fix: (?P<fix>.*?)(?:; Candidates: (?P<candidates>.*?))?\.)?"
    r"(?: Executed: (?P<executed>[^.]*)\.)?"
    r"(?: Retry: (?P<retry>.*?)\.)?"
    r"(?: LogID: (?P<log_id>\S+))?",
    re.DOTALL)


def quote(text: object) -> str:
    """A name as it appears in messages: JSON-quoted, so any quote inside stays readable."""
    return json.dumps(text, ensure_ascii=False)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_received(value: Any) -> str:
    """A caller-supplied value as JSON, redacted and clipped to 64 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(value)
    return clip(redact(text), MAX_RECEIVED_CHARS)


def unexecuted_message(
    reason: str,
    *,
    parameter: str,
    fix: str,
    received: Any = MISSING,
    candidates: Iterable[Any] = (),
    retry: str = "retry after fixing",
) -> str:
    """`<Reason>. Parameter: <pointer> (received <v>). Fix: <…>; Candidates: <≤3>.
    Executed: no. Retry: <…>.` — clipped to 500 characters, the tail always kept."""
    shown = tuple(render_received(c) if not isinstance(c, str) else clip(c, MAX_CANDIDATE_CHARS)
                  for c in list(candidates)[:MAX_CANDIDATES])
    return FailureMessage(
        reason, parameter=parameter,
        received=None if received is MISSING else render_received(received),
        fix=fix, candidates=shown, executed="no", retry=retry).render()
