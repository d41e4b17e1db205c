"""Where FaaS workers' directories live, and the clean-up of what a dead platform left.

    root = runtime_root()        # <tmp>/basedb-faas-<uid>/, made once per process

Each worker has `<root>/<platform pid>-<slot>-<random>/`, removed when the worker stops
(however it stopped: the platform removes it, not the worker). A bubblewrap worker's
work directory is a tmpfs inside its sandbox, gone with the sandbox. If the platform
itself dies, its workers die with it (`--die-with-parent`) and the next platform process
removes the directories whose owner process is gone (`clean_stale`), once, at start,
stopping whatever still names one: a sandbox that was being set up when its platform
died never runs a handler, but bubblewrap leaves it waiting.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
import threading
from pathlib import Path

_root: Path | None = None
_lock = threading.Lock()


def _owner_alive(name: str) -> bool:
    owner = name.split("-", 1)[0]
    if not owner.isdigit():
        return True  # not ours: leave it
    try:
        os.kill(int(owner), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale(root: Path) -> int:
    """Remove worker directories whose platform process is gone, and stop any process
    still naming one (bubblewrap caught mid-start when its platform died waits forever
    for it); how many directories."""
    stale: list[Path] = []
    with contextlib.suppress(OSError):
        stale = [entry for entry in root.iterdir() if entry.is_dir()
                 and not entry.is_symlink() and not _owner_alive(entry.name)]
    if stale:
        _kill_processes_naming(stale)
    for entry in stale:
        shutil.rmtree(entry, ignore_errors=True)
    return len(stale)


def _kill_processes_naming(directories: list[Path]) -> None:
    names = [os.fsencode(directory) + b"/" for directory in directories]
    proc = Path("/proc")
    if not proc.is_dir():
        return
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if any(name in command for name in names):
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)


def runtime_root() -> Path:
    """`<tmp>/basedb-faas-<uid>`: this user's, private to it (root's is traversable, not
    listable: a worker that is a plain process under a user of its own reaches its own
    directories by path; bubblewrap gets them as open descriptors)."""
    global _root
    with _lock:
        if _root is None:
            _root = _make_root()
            clean_stale(_root)
        return _root


def _make_root() -> Path:
    uid = os.geteuid() if hasattr(os, "geteuid") else 0
    mode = 0o711 if uid == 0 else 0o700
    root = Path(tempfile.gettempdir()) / f"basedb-faas-{uid}"
    try:
        root.mkdir(mode=mode)
    except FileExistsError:
        info = os.lstat(root)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid:
            # Someone else's, or a symlink planted in a shared /tmp: use a fresh one.
            root = Path(tempfile.mkdtemp(prefix=f"basedb-faas-{uid}-"))
    os.chmod(root, mode)
    return root
