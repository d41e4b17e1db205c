"""The registered benchmarks; importing this package registers them, in table order."""

from __future__ import annotations

from bench.suites import check, contracts, startup

# isort: split
# Imported after the ones above: registration order is the order of the table.
from bench.suites import (
    agents,
    deploy,
    dev,
    faas,
    invoke,
    lark,
    records,
    scale,
    sql_bounds,
    sql_semantics,
)

__all__ = ["agents", "check", "contracts", "deploy", "dev", "faas", "invoke", "lark", "records",
           "scale", "sql_bounds", "sql_semantics", "startup"]
