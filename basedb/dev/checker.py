"""The incremental check of a dev session.

`basedb check` loads the whole workspace and analyses every main.sql (with its on-disk
cache of unchanged queries). A dev session keeps both in memory: the declarations it has
read (`WorkspaceLoader` re-reads only the functions a save touched) and the SQL analysis
cache (a changed query is analysed again, the others are looked up). Cross-function rules
(duplicate ids, agent-tools.json, contracts) still see the whole workspace, so the result
is the one `basedb check` prints for the same files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from basedb.check.reporters.locations import Positions
from basedb.check.reporters.text import finding_lines
from basedb.check.result import CheckResult
from basedb.check.run import check_workspace
from basedb.check.sql.cache import AnalysisCache
from basedb.contracts import stale_findings
from basedb.core.frozen import frozen_dataclass
from basedb.dev.changes import Changes
from basedb.protocol.findings import Finding, Hint
from basedb.workspace.loader import WorkspaceLoader
from basedb.workspace.model import Workspace


@frozen_dataclass
class CheckRun:
    result: CheckResult
    workspace: Workspace
    reread: tuple[str, ...]  # the functions read from disk for this run
    errors: tuple[Finding, ...]  # the findings about what changed
    hints: tuple[Hint, ...]


class IncrementalChecker:
    def __init__(self, root: Path, *, skip_ai: bool = False) -> None:
        self.root = root
        self.skip_ai = skip_ai
        self._loader = WorkspaceLoader(root, skip_ai=skip_ai)
        self._cache: AnalysisCache | None = None

    def run(self, changes: Changes | None = None) -> CheckRun:
        """Check after `changes` (None: the first run, everything)."""
        changed = None if changes is None or changes.workspace else changes.functions
        ws = self._loader.load(changed)
        if self._cache is None or self._cache.catalog != ws.catalog:
            self._cache = AnalysisCache.open(ws.root, ws.catalog)
        result = check_workspace(ws, skip_ai=self.skip_ai, contracts=stale_findings,
                                 cache=self._cache)
        if changed is None:
            errors, hints = tuple(result.errors), tuple(result.hints)
        else:
            errors = tuple(f for f in result.errors if _about(f, changes))
            hints = tuple(h for h in result.hints if h.function_id in changed)
        return CheckRun(result=result, workspace=ws, reread=tuple(self._loader.reread),
                        errors=errors, hints=hints)


def _about(finding: Finding, changes: Changes | None) -> bool:
    if changes is None:
        return True
    if finding.function_id is not None and finding.function_id in changes.functions:
        return True
    return any(finding.file == path or finding.file.startswith(path.rstrip("/") + "/")
               for path in changes.paths)


def report_lines(run: CheckRun, root: Path, *, color: bool = False,
                 label: Sequence[str] = ()) -> list[str]:
    """The findings about what changed, as `basedb check` prints them, then one line on
    the whole workspace."""
    positions = Positions(root)
    lines: list[str] = []
    if run.errors:
        lines += finding_lines(list(run.errors), positions)
    if run.hints:
        lines += finding_lines(list(run.hints), positions)
    result = run.result
    errors, hints = len(result.errors), len(result.hints)
    functions = sum(result.counts.values())
    summary = (f"check: {_plural(errors, 'error')}, {_plural(hints, 'hint')} in "
               f"{_plural(functions, 'function')}")
    if label:
        summary += f" (re-checked {', '.join(label)})"
    lines.append(summary)
    return lines


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")
