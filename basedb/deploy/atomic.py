"""Replace a file in one step, so a reader (or a crash) never sees half of it."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_file_atomically(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write `data` to a temporary file beside `path`, flush it to disk, then rename it
    over `path`. Raises OSError; the temporary file never outlives a failure."""
    # A short fixed prefix: the final name may already be at the filesystem's limit.
    fd, temp = tempfile.mkstemp(prefix=".basedb-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
