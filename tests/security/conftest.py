"""Attacks on each surface a stranger can reach, one module per surface. The platform
fixtures are the platform tests' own (a fresh data dir, the real app in-process)."""

from __future__ import annotations

from tests.platform.conftest import api, base, client, platform

__all__ = ["api", "base", "client", "platform"]
