"""The platform log: what callers are never shown (stacks, FaaS handler output, the raw
errors of SQLite or an AI endpoint), each entry tagged with its request's log id.

    platform_log.write(f"basedb faas: … (log_id {log_id}) …")

`basedb serve` writes it to stderr, beside its access log. A platform embedded in a CLI
command (the `local` profile, see `LocalPlatform.log_to_file`) appends it to
`platform.log` in its data dir instead: that command's stderr carries the command's own
error envelope, which agents read as one JSON document, and an entry printed there would
be gone with the command, while error messages send the site's developer to look the
log id up later. The destination is per request (a context variable the request layer
sets), so an embedded platform and a served one can live in one process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from basedb.core.redact import redact

FILE_NAME = "platform.log"

_destination: ContextVar[Path | None] = ContextVar("basedb_platform_log", default=None)


def write(text: str) -> None:
    """Append one entry (redacted) to this request's platform log."""
    entry = redact(text.rstrip("\n")) + "\n"
    path = _destination.get()
    if path is not None:
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(descriptor, "a", encoding="utf-8") as log:
                log.write(entry)
            return
        except OSError:
            pass  # an unwritable log file must not lose the entry: stderr still has it
    sys.stderr.write(entry)
    sys.stderr.flush()


def destination() -> Path | None:
    """Where this request's entries go (None: stderr), for work done on its behalf on
    another thread."""
    return _destination.get()


@contextmanager
def logging_to(path: Path | None) -> Iterator[None]:
    """Within the block, entries go to `path` (None: stderr)."""
    token = _destination.set(path)
    try:
        yield
    finally:
        _destination.reset(token)
