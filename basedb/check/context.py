"""State shared by the validators during one check run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from basedb.check.findings import Finding, Hint

if TYPE_CHECKING:
    from basedb.workspace.model import Workspace


@dataclass(slots=True)
class CheckContext:
    workspace: Workspace
    skip_ai: bool = False
    errors: list[Finding] = field(default_factory=list)
    hints: list[Hint] = field(default_factory=list)
    # Per-function analysis results that later validators reuse (e.g. SQL analyses).
    analyses: dict[str, Any] = field(default_factory=dict)

    def add(self, item: Finding | Hint) -> None:
        (self.errors if isinstance(item, Finding) else self.hints).append(item)

    def extend(self, items: list[Finding] | list[Hint] | list[Finding | Hint]) -> None:
        for item in items:
            self.add(item)
