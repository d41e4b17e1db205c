"""Files replaced in one step, and directories only their owner can enter.

Every file basedb rewrites in place (profiles, the owner token, install records,
deployment state, generated contracts, restored sources) goes through
`write_file_atomically`, so a reader or a crash never sees half a file, and a failed
write leaves the previous version and no temporary file behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def write_file_atomically(path: Path, data: bytes | str, *, mode: int = 0o644) -> None:
    """Write `data` (text is written as UTF-8) to a temporary file beside `path`, flush
    it to disk, give it `mode`, then rename it over `path`.

    Raises OSError; the temporary file never outlives a failure. The temporary file is
    created with mode 0600 and only then given `mode`, so a secret is never readable by
    others, not even for a moment.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    # A short fixed prefix: the final name may already be at the filesystem's limit.
    fd, temp = tempfile.mkstemp(prefix=".basedb-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and its parents) if needed and make it mode 0700; returns it.

    The mode is set even on a directory that already exists: mkdir's mode is masked by
    the umask, and the directory may predate basedb. Raises OSError.
    """
    try:
        path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    except FileExistsError:  # mkdir's "File exists" would not say what is wrong
        raise NotADirectoryError(errno.ENOTDIR, f"{path} is a file, not a directory",
                                 str(path)) from None
    os.chmod(path, PRIVATE_DIR_MODE)
    return path
