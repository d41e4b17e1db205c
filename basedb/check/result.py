"""The one result object of `check`, rendered by every reporter."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from basedb.protocol.findings import Finding, Hint, sort_findings, sort_hints

SKIP_AI_NOTICE = (
    "AI Functions are not synced this time (--skip-ai-functions): the AI part of the "
    "agent-tools config did not take effect. "
    "AI Function 本次未同步，相关 agent-tools 配置未生效。"
)


@dataclass(slots=True)
class CheckResult:
    """What one check run found, sorted; the reporters render it and `to_dict` is the
    `--json` shape."""

    errors: list[Finding]
    hints: list[Hint]
    tools: list[str]  # ids open to external agents in the local plan
    exclude: list[str]  # ids excluded in the local plan
    counts: dict[str, int]  # declarations per kind
    notices: list[str] = field(default_factory=list)
    root: str = ""

    def __post_init__(self) -> None:
        self.errors = sort_findings(self.errors)
        self.hints = sort_hints(self.hints)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> dict[str, Any]:
        return {
            "errors": len(self.errors),
            "hints": len(self.hints),
            "functions": dict(self.counts),
        }

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON shape of `basedb check --json` (docs/json.md)."""
        out: dict[str, Any] = {
            "ok": self.ok,
            "errors": [f.to_dict() for f in self.errors],
            "functionHints": [h.to_dict() for h in self.hints],
            "agentTools": {"tools": list(self.tools), "exclude": list(self.exclude)},
            "summary": self.summary(),
        }
        if self.notices:
            out["notices"] = list(self.notices)
        return out
