"""The registered benchmarks; importing this package registers them, in table order."""

from __future__ import annotations

from bench.suites import check, contracts, startup

__all__ = ["check", "contracts", "startup"]
