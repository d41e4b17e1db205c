"""Run every validator over a workspace and collect one `CheckResult`.

    result = check_directory(root, cache=True)      # `basedb check`, as a library call
    result = check_workspace(load_workspace(root))  # a workspace already loaded
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from basedb.check import agent_lint, agent_tools, declarations, faas, faas_deps, mutations
from basedb.check.context import CheckContext
from basedb.check.result import SKIP_AI_NOTICE, CheckResult
from basedb.check.sql import rules as sql_rules
from basedb.check.sql.cache import AnalysisCache
from basedb.core.errors import InputError, WorkspaceNotFound
from basedb.protocol.findings import Finding
from basedb.workspace.inputs import check_inputs
from basedb.workspace.loader import load_workspace
from basedb.workspace.model import FUNCTION_KINDS, Workspace

if TYPE_CHECKING:
    from basedb.check.sql.workers import EarlyWorker

ContractsCheck = Callable[[Workspace], Iterable[Finding]]
"""Finds stale generated contracts (`basedb.contracts.stale_findings`). The contracts
layer sits above check, so a caller that has generated files to compare hands it in."""


def check_directory(root: Path, *, skip_ai: bool = False,
                    contracts: ContractsCheck | None = None, cache: bool = True,
                    ) -> CheckResult:
    """Load the workspace at `root` and check it, as `basedb check` does (the files as
    a whole included, as a deploy collects them: `check_workspace`'s `inputs`): the SQL
    analysis runs in as many processes as the machine has idle CPUs for
    (`sql.rules.available_processes`), one of them started before the workspace loads so
    that its start overlaps the loading. It forks: call it from a process without
    threads of its own. Never raises on bad input: problems become findings."""
    # What check builds (the workspace, its findings) lives until the result is returned
    # and holds no garbage cycles to speak of: the cyclic collector would only traverse
    # it again and again (a tenth of a large check). The SQL analyses, which do leave
    # cycles behind, free them as they go (basedb.check.sql.rules).
    collecting = gc.isenabled()
    gc.disable()
    try:
        processes = sql_rules.available_processes()
        early = sql_rules.start_early_worker(root, cache=cache, processes=processes)
        try:
            workspace = load_workspace(root, skip_ai=skip_ai)
        except BaseException:
            if early is not None:
                early.close()
            raise
        return check_workspace(workspace, skip_ai=skip_ai, contracts=contracts,
                               cache=cache, processes=processes, early=early, inputs=True)
    finally:
        if collecting:
            gc.enable()


def check_workspace(ws: Workspace, *, skip_ai: bool = False,
                    contracts: ContractsCheck | None = None,
                    cache: bool | AnalysisCache = False, processes: int = 1,
                    early: EarlyWorker | None = None, inputs: bool = False) -> CheckResult:
    """Validate a loaded workspace. Never raises on bad input: problems become findings.

    `inputs` also applies the rules a deploy applies to the workspace's files as a whole
    (names, count, total size, symlinks; `basedb.workspace.inputs.check_inputs`), so
    that a workspace that passes check can be deployed.

    `contracts`, when given, compares generated contract files on disk with what
    `contracts generate` would write; it runs only when nothing else is wrong (stale
    contracts of broken declarations would only repeat those errors). `cache` reuses SQL
    analyses of unchanged queries from the workspace's local cache (same results); an
    `AnalysisCache` passed in is used and kept in memory across runs (`basedb dev`).
    `processes` above 1 lets a large batch of queries be analysed by that many forked
    processes (same results); only a caller without threads of its own may ask for it.
    `early`, a worker started before the workspace was loaded
    (`basedb.check.sql.rules.start_early_worker`), takes part in the SQL analysis; it is
    closed before this returns, whatever happens.
    """
    try:
        ctx = _check_declarations_and_sql(ws, skip_ai, cache, processes, early)
    finally:
        if early is not None:
            early.close()
    if inputs:
        # A file the loader already found fault with (a declaration that is a symlink
        # loop) is reported once.
        reported = {finding.file for finding in ctx.errors}
        ctx.extend(f for f in input_findings(ws.root) if f.file not in reported)
    mutations.check_mutations(ctx)
    faas.check_faas(ctx)
    faas_deps.check_faas_dependencies(ctx)
    agent_tools.check_agent_tools(ctx)
    agent_lint.check_agent_lint(ctx)
    # Only a workspace with generated files can have stale ones.
    if contracts is not None and not ctx.errors and (ws.root / "src" / "generated").is_dir():
        ctx.extend(contracts(ws))
    tools, exclude = agent_tools.plan(ws, skip_ai=skip_ai)
    counts: dict[str, int] = {kind: len(ws.of_kind(kind)) for kind in FUNCTION_KINDS}
    notices = [SKIP_AI_NOTICE] if skip_ai else []
    return CheckResult(errors=ctx.errors, hints=ctx.hints, tools=tools, exclude=exclude,
                       counts=counts, notices=notices, root=str(ws.root))


def _check_declarations_and_sql(ws: Workspace, skip_ai: bool, cache: bool | AnalysisCache,
                                processes: int, early: EarlyWorker | None) -> CheckContext:
    ctx = CheckContext(workspace=ws, skip_ai=skip_ai, keep_analyses=False)
    ctx.extend(ws.load_findings)
    declarations.check_declarations(ctx)
    if cache:
        analysis_cache = (cache if isinstance(cache, AnalysisCache)
                          else AnalysisCache.open(ws.root, ws.catalog))
        analysis_cache.start_run()
        sql_rules.check_database_functions(ctx, cache=analysis_cache,
                                           processes=processes, early=early)
        analysis_cache.save()
    else:
        sql_rules.check_database_functions(ctx, processes=processes, early=early)
    return ctx


def input_findings(root: Path) -> list[Finding]:
    """What a deploy would refuse about the workspace's files, as findings."""
    try:
        check_inputs(root)
    except WorkspaceNotFound:
        return []  # the config's own finding says so
    except InputError as error:
        path = error.detail.get("path")
        return [Finding(str(error.code or "INPUT_INVALID"), error.message,
                        path if isinstance(path, str) else ".", "", None, error.hint)]
    return []
