"""Attacks on every surface a stranger can reach, one module per surface. The platform
fixtures are those of the platform tests: a fresh data dir and the real app."""

from __future__ import annotations

from tests.platform.conftest import api, base, client, platform

__all__ = ["api", "base", "client", "platform"]
