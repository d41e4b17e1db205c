"""Where basedb keeps its files. Each location can be moved by an environment variable,
which is also how tests isolate themselves."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from basedb.core import environment

APP_NAME = "basedb"


def _from_env(var: str) -> Path | None:
    value = os.environ.get(var)
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    """The local platform's data (SQLite database, owner token): $BASEDB_DATA_DIR."""
    found = _from_env(environment.DATA_DIR)
    if found is not None:
        return found

    return Path(platformdirs.user_data_dir(APP_NAME))


def config_dir() -> Path:
    """Profiles (config.json): $BASEDB_CONFIG_DIR."""
    found = _from_env(environment.CONFIG_DIR)
    if found is not None:
        return found

    return Path(platformdirs.user_config_dir(APP_NAME))


def state_dir() -> Path:
    """User-level state such as site Skill install summaries: $BASEDB_STATE_DIR."""
    found = _from_env(environment.STATE_DIR)
    if found is not None:
        return found

    return Path(platformdirs.user_state_dir(APP_NAME))


API_PREFIX = "/open-apis/base/v3"
