"""Fixtures shared by the CLI tests (a module may define its own `site` instead)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from basedb.platform import LocalPlatform, open_platform
from tests.cli.deploy_support import init_site


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """The example site, initialised on the embedded platform (not deployed)."""
    return init_site(tmp_path / "site")


@pytest.fixture
def platform(isolated_dirs: dict[str, Path]) -> Iterator[LocalPlatform]:
    """The embedded platform of the test's data dir, closed afterwards."""
    opened = open_platform(isolated_dirs["data"])
    yield opened
    opened.close()
