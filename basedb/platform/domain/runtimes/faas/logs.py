"""A FaaS call's output in the platform log: every line tagged with the call's log id,
control characters escaped.

    basedb faas: function "addTask" (log_id 2026…AB) ended: failure (exception)
    basedb faas: 2026…AB stack | Error: boom
    basedb faas: 2026…AB out | created rec9x…
    basedb faas: 2026…AB out | \\x1b]0;pwned\\x07 forged: basedb platform: …

What a handler prints is text the platform did not write: printed raw, an escape
sequence would retitle or clear the operator's terminal, and a line of its own could
pass for one of the platform's. So every line starts with the platform's prefix and the
log id, and C0/C1 control characters (but tab), DEL and the Unicode format characters
that reorder or hide text are shown as `\\xNN` / `\\uNNNN`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from basedb.platform.domain.runtimes.faas.masking import hide_secrets
from basedb.platform.domain.runtimes.faas.outcome import Outcome
from basedb.platform.storage import platform_log
from basedb.protocol import quote

# C0 but tab and newline, DEL, C1, and bidi/zero-width/line-separator format characters.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                     "\u2060-\u2069\ufeff]")


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str) -> str:
    """`text` with every character that could drive a terminal made visible."""
    return _UNSAFE.sub(_escape_char, text)


def tagged_lines(log_id: str, label: str, text: str) -> list[str]:
    return [f"basedb faas: {log_id} {label} | {escape(line)}"
            for line in text.rstrip("\n").split("\n")]


def write_call_log(function_id: str, log_id: str, outcome: Outcome,
                   secret_values: Iterable[str] = ()) -> None:
    """The handler's output and any failure detail, as one platform log entry (the
    call's secret values shown as ***; the output was masked before it was cut)."""
    values = list(secret_values)
    output = hide_secrets(outcome.log.text().strip("\n"), values)
    detail = hide_secrets(outcome.detail, values)
    if not output.strip() and not detail:
        return
    lines = [f"basedb faas: function {escape(quote(function_id))} (log_id {log_id}) ended: "
             f"{outcome.kind}" + (f" ({escape(outcome.failure)})" if outcome.failure else "")]
    if detail:
        lines += tagged_lines(log_id, "detail", detail)
    if output.strip():
        lines += tagged_lines(log_id, "out", output)
    platform_log.write("\n".join(lines))


def write_note(log_id: str | None, text: str) -> None:
    """A one-line notice of the FaaS runtime (start-up, a worker that failed)."""
    tag = f" (log_id {log_id})" if log_id else ""
    platform_log.write(f"basedb faas{tag}: {escape(text)}")
