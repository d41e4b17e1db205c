"""The platform fixtures (a fresh data dir, the real app in-process, the owner's Api),
shared with tests/platform."""

from __future__ import annotations

from tests.platform.conftest import api, client, platform

__all__ = ["api", "client", "platform"]
