"""The machine report: exactly `CheckResult.to_dict()`, pretty-printed (docs/json.md)."""

from __future__ import annotations

import json
from pathlib import Path

from basedb.check.result import CheckResult


def render(result: CheckResult, *, root: Path, color: bool = False) -> str:
    # Keys keep the order to_dict() gives them: `ok` first, as people and jq expect.
    return json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n"
