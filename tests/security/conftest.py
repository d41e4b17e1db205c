"""Attacks on each surface a stranger can reach, one module per surface. The platform
fixtures are the platform tests' own (a fresh data dir, the real app in-process).

Every test here runs under the event loop's watchdog (`loop_watchdog`): a test whose
requests hold any event loop of the process for more than 50 ms of CPU time in one
callback fails, whatever else it asserts (tests/security/support.py `LoopWatchdog`).
A stretch that is not an attack (building a site through the API) may be left out
with `loop_watchdog.paused()`."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator

import pytest

from basedb.platform.web import routes
from tests.platform.conftest import api, base, client, platform
from tests.security.support import LoopWatchdog

__all__ = ["api", "base", "client", "loop_watchdog", "platform"]


@pytest.fixture(autouse=True)
def loop_watchdog() -> Iterator[LoopWatchdog]:
    # The app imports a route group's modules on its first request, on the loop: once
    # per process, whichever test comes first, and never again whatever a caller sends.
    for module in pkgutil.iter_modules(routes.__path__):
        importlib.import_module(f"{routes.__name__}.{module.name}")
    watchdog = LoopWatchdog()
    with watchdog.installed():
        yield watchdog
    # A test that ran no event loop has nothing to hold it; one that asserted itself
    # has been told.
    if watchdog.callbacks and not (watchdog.asserted and watchdog.stalls):
        watchdog.assert_no_stall()
