"""`SqlProblem`, one error found in a main.sql.

Apart from the rest of the analysis model (`model.py`) so that a check answered from the
analysis cache, which rebuilds only problems, loads no more than it needs.
"""

from __future__ import annotations

import re

from basedb.core.frozen import frozen_dataclass


@frozen_dataclass
class SqlProblem:
    """One error in main.sql; line and column are 1-based when known."""

    code: str  # one of the SQL_* codes of basedb.protocol.findings.ERROR_CODES
    message: str
    fix: str | None = None
    line: int | None = None
    column: int | None = None

    def __post_init__(self) -> None:
        # Names quoted from hostile input must not carry control characters to a terminal.
        object.__setattr__(self, "message", _CONTROL.sub(_escape, self.message))


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"
