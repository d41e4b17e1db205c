"""One data dir's platform: its store, owner token and app, opened once per process."""


from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from basedb.core import environment
from basedb.core.atomic import ensure_private_dir
from basedb.core.errors import InputError
from basedb.core.paths import data_dir as default_data_dir
from basedb.platform.domain.identity import OWNER_TOKEN_FILE, ensure_owner_token
from basedb.platform.storage.platform_log import FILE_NAME
from basedb.platform.storage.read_only import close_read_only_pool
from basedb.platform.storage.store import DATABASE_FILE, Store
from basedb.platform.web.app import build_app

if TYPE_CHECKING:
    from starlette.applications import Starlette


IN_PROCESS_HOST = "basedb.local"
"""The host name the in-process client sends (its base URL, basedb.client.client
EMBEDDED_BASE_URL); only this app, which no socket serves, answers to it."""


class LocalPlatform:
    """One data dir's platform: its store, owner token and app."""

    def __init__(self, *, data_dir: Path, store: Store, app: Starlette, owner_token: str) -> None:
        self.data_dir = data_dir
        self.store = store
        self.app = app
        self.owner_token = owner_token

    @property
    def owner_token_file(self) -> Path:
        return self.data_dir / OWNER_TOKEN_FILE

    def log_to_file(self) -> Path:
        """Send the platform log to `platform.log` in the data dir instead of stderr: for
        a platform embedded in a command whose stderr is the command's own (see
        basedb.platform.storage.platform_log). Returns the file's path."""
        path = self.data_dir / FILE_NAME
        self.app.state.context.log_file = path
        return path

    def close(self) -> None:
        """Close the database and forget this platform (a later open starts afresh)."""
        with _lock:
            if _platforms.get(self.data_dir) is self:
                del _platforms[self.data_dir]
        self.app.state.context.faas.forget(str(self.store.path))
        self.app.state.context.log_writer.flush()  # entries handed over are saved first
        close_read_only_pool(self.store)
        self.store.close()

    def __repr__(self) -> str:
        return f"LocalPlatform(data_dir={str(self.data_dir)!r})"


_platforms: dict[Path, LocalPlatform] = {}
_lock = threading.Lock()


def open_platform(data_dir: Path | None = None) -> LocalPlatform:
    """The platform over `data_dir` (default $BASEDB_DATA_DIR, else the user data dir),
    created on first use and cached for the rest of the process."""
    directory = (data_dir if data_dir is not None else default_data_dir()).expanduser()
    directory = directory.resolve()
    with _lock:
        found = _platforms.get(directory)
        if found is None:
            found = _platforms[directory] = _open(directory)
        return found


def _open(directory: Path) -> LocalPlatform:

    try:
        ensure_private_dir(directory)  # it holds the owner token
    except OSError as exc:
        raise InputError(f"Cannot use {directory} as the platform data dir: {exc.strerror}.",
                         code="PLATFORM_DATA_DIR",
                         hint="Pick a writable directory with --data or $BASEDB_DATA_DIR.") from exc
    try:
        store = Store(directory / DATABASE_FILE)
    except sqlite3.Error as exc:
        raise InputError(f"Cannot open the platform database {directory / DATABASE_FILE}: "
                         f"{exc}.", code="PLATFORM_DATABASE",
                         hint="Check that it is a basedb platform database and is writable, "
                              "or use another data dir.") from exc
    try:
        owner_token = ensure_owner_token(store, directory)
    except OSError as exc:
        store.close()
        token_file = directory / OWNER_TOKEN_FILE
        raise InputError(f"Cannot write the platform owner token {token_file}: "
                         f"{exc.strerror or exc}.", code="PLATFORM_DATA_DIR",
                         hint=f"Make {token_file} a writable regular file (or remove it), "
                              "or use another data dir.") from exc
    except BaseException:
        store.close()
        raise
    access_log = os.environ.get(environment.ACCESS_LOG, "") not in ("", "0")
    # A command calls a few routes of its platform: each group loads on first use.
    app = build_app(store, data_dir=directory, access_log=access_log,
                    private_hosts=frozenset({IN_PROCESS_HOST}), lazy_routes=True)
    return LocalPlatform(data_dir=directory, store=store, app=app, owner_token=owner_token)
