"""State shared by the validators during one check run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from basedb.protocol.findings import Finding, Hint

if TYPE_CHECKING:
    from basedb.workspace.model import Workspace


@dataclass(slots=True)
class CheckContext:
    """The workspace under check and the findings the validators add to it."""

    workspace: Workspace
    skip_ai: bool = False
    errors: list[Finding] = field(default_factory=list)
    hints: list[Hint] = field(default_factory=list)
    # Per-function analysis results for a caller that reuses them (the platform plans a
    # function from its SQL analysis). A whole-workspace check reads only the findings, so
    # it keeps none: an analysis holds the parse tree and the resolved names of its query.
    analyses: dict[str, Any] = field(default_factory=dict)
    keep_analyses: bool = True

    def add(self, item: Finding | Hint) -> None:
        if isinstance(item, Finding):
            self.errors.append(item)
        else:
            self.hints.append(item)

    def extend(self, items: Iterable[Finding | Hint]) -> None:
        for item in items:
            self.add(item)
