"""`check` rules for Database Functions: SQL problems, binding rules, unused params."""

from __future__ import annotations

import gc
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from basedb.check.bindings import binding_rules
from basedb.check.context import CheckContext
from basedb.check.sql.cache import CACHE_DIR, CACHE_FILE, CachedAnalysis
from basedb.protocol.findings import Finding, Hint
from basedb.workspace.model import SQL_PARAM_KINDS, DatabaseFunction

if TYPE_CHECKING:
    from basedb.check.sql import workers
    from basedb.check.sql.cache import AnalysisCache
    from basedb.sql.model import SqlAnalysis


# Problems that leave the rest of the query understood: a misspelt field or an extra $n
# does not change what the other comparisons bind, so their enum and hint rules still
# run (one check reports every independent error). After a parse error, a write or an
# unknown table, the bindings are unknown or could be wrong, and nothing more is said.
BINDINGS_SURVIVE = frozenset({"SQL_UNKNOWN_FIELD", "SQL_PARAM_UNDECLARED"})
RELEASE_EVERY = 64
MAX_PROCESSES = 4
# Below this many queries to analyse, no worker is forked (workers.MIN_QUERIES_PER_PROCESS
# each for the parent and one worker).
MIN_EARLY_QUERIES = 96


def available_processes() -> int:
    """How many processes may analyse queries here: one per idle CPU this process may
    use (at most MAX_PROCESSES), or 1 where forking is not safe (other than Linux, or a
    process that runs threads of its own)."""
    if sys.platform != "linux" or threading.active_count() > 1:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    return processes_for(cpus, load, _running())


def _running() -> int | None:
    """Tasks runnable on the machine at this instant, this process included (Linux's
    /proc/loadavg), or None where that cannot be read."""
    try:
        with open("/proc/loadavg", encoding="ascii") as stats:
            return int(stats.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def processes_for(cpus: int, load: float, running: int | None = None) -> int:
    """Processes for `cpus` CPUs under a 1-minute load average of `load`, with `running`
    tasks runnable right now (this process included; None: unknown): one per CPU that
    other work leaves idle. One running task of the load is taken to be this check (or
    the previous run of it). The average trails the machine by a minute, so the
    previous runs of a check repeated back to back (their workers included) keep it
    above what other work takes; when nothing else is runnable right now, it is not
    counted. On a busy machine workers would only queue for the same CPUs and add the
    cost of forking (copied pages, a second collector), so the check stays in one
    process, as GNU make holds back jobs above a load limit."""
    others = max(0.0, load - 1.0)
    if running is not None:
        others = min(others, float(max(0, running - 1)))
    return max(1, min(cpus, MAX_PROCESSES, int(cpus - others)))


def start_early_worker(root: Path, *, cache: bool,
                       processes: int) -> workers.EarlyWorker | None:
    """A worker for the SQL analysis of the workspace at `root`, forked before the
    workspace is loaded (`workers.EarlyWorker`), or None where it would not pay: other
    than exactly two processes (more share the queries as `workers.analyse_in_processes`
    does), a workspace with too few Database Functions to split, or an analysis cache
    that probably answers most queries. Only a caller without threads of its own, that
    will pass the worker to `check_database_functions` (which closes it), may ask."""
    if processes != 2:
        return None
    if cache and (root / CACHE_DIR / CACHE_FILE).is_file():
        return None
    try:
        with os.scandir(root / "database-functions") as entries:
            folders = sum(1 for entry in entries if entry.is_dir())
    except OSError:
        return None
    if folders < MIN_EARLY_QUERIES:
        return None
    # Lazy: the worker machinery (pickle, mmap, signals) loads only for a large check.
    from basedb.check.sql.workers import EarlyWorker  # noqa: PLC0415

    return EarlyWorker.start()


def declared_param_count(decl: DatabaseFunction) -> int:
    """How many `$n` the declaration provides: every entry of meta.params counts, even one
    too broken to become a Param, because positions (not names) number placeholders."""
    meta = decl.raw.get("meta") if isinstance(decl.raw, dict) else None
    raw_params = meta.get("params") if isinstance(meta, dict) else None
    if isinstance(raw_params, list):
        return len(raw_params)
    return max((p.index + 1 for p in decl.params), default=0)


def declared_param_kinds(decl: DatabaseFunction, count: int) -> list[str | None]:
    """The kind of each `$n` (None where the declaration does not give a valid one)."""
    kinds: list[str | None] = [None] * count
    for param in decl.params:
        if 0 <= param.index < count and isinstance(param.kind, str) \
                and param.kind in SQL_PARAM_KINDS:
            kinds[param.index] = param.kind
    return kinds


def check_database_functions(ctx: CheckContext, *, cache: AnalysisCache | None = None,
                             processes: int = 1,
                             early: workers.EarlyWorker | None = None) -> None:
    """Analyse each Database Function's main.sql; store analyses in ctx.analyses when
    `ctx.keep_analyses`.

    With a `cache`, results of unchanged queries come from it (and such functions get no
    entry in ctx.analyses); new results are added to it. With `processes` above 1 and
    analyses not kept, a large batch is analysed by that many forked processes
    (`basedb.check.sql.workers`), with the same findings in the same order; an `early`
    worker (`start_early_worker`) takes part instead, and is closed in any case.
    """
    # Parse trees are reference cycles (children point at parents). Kept analyses keep
    # them, so the cyclic collector would re-traverse every tree kept so far again and
    # again during the batch; pausing it for the batch halves the cost of a large check.
    # Analyses that are not kept become garbage the collector must free: the young
    # generation is collected every RELEASE_EVERY queries, which holds memory flat
    # without ever traversing what lives longer. What exists before the batch (the
    # workspace, imported modules) is frozen out of the collector's sight for the
    # batch: with collection paused by the caller it would all still be young, and the
    # first collection would traverse it (it also keeps forked workers from touching,
    # and so copying, the parent's pages).
    paused = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        _check_all(ctx, cache, processes, early)
    finally:
        if early is not None:
            early.close()
        gc.unfreeze()
        if paused:
            gc.enable()


def _check_all(ctx: CheckContext, cache: AnalysisCache | None, processes: int,
               early: workers.EarlyWorker | None) -> None:
    ws = ctx.workspace
    todo: list[tuple[DatabaseFunction, int, list[str | None], str,
                     SqlAnalysis | CachedAnalysis | None]] = []
    for decl in ws.of_kind("database_function"):
        if not isinstance(decl, DatabaseFunction) or decl.sql is None:
            continue
        param_count = declared_param_count(decl)
        kinds = declared_param_kinds(decl, param_count)
        key = cache.key(decl.sql, param_count, ws.catalog_loaded, kinds) if cache else ""
        todo.append((decl, param_count, kinds, key, cache.get(key) if cache else None))
    ahead: dict[int, CachedAnalysis] = {}
    misses = [i for i, item in enumerate(todo) if item[4] is None]
    queries = [(str(todo[i][0].sql), todo[i][1], todo[i][2]) for i in misses]
    if early is not None and not ctx.keep_analyses and len(misses) >= MIN_EARLY_QUERIES:
        found = early.analyse(queries, ws.catalog, resolve=ws.catalog_loaded)
        ahead = dict(zip(misses, found, strict=True))
    elif processes > 1 and not ctx.keep_analyses and len(misses) > 1:
        # Lazy: sqlglot loads only when a query is not in the analysis cache.
        from basedb.check.sql import workers  # noqa: PLC0415

        found = workers.analyse_in_processes(queries, ws.catalog, resolve=ws.catalog_loaded,
                                             processes=processes)
        ahead = dict(zip(misses, found, strict=True))
    analysed = 0
    for position, (decl, param_count, kinds, key, cached) in enumerate(todo):
        analysis: SqlAnalysis | CachedAnalysis | None = cached or ahead.get(position)
        if analysis is None:
            # Lazy: sqlglot loads only when a query is not in the analysis cache.
            from basedb.sql.analysis import analyze_sql  # noqa: PLC0415

            analysis = analyze_sql(str(decl.sql), ws.catalog, param_count,
                                   resolve=ws.catalog_loaded, param_kinds=kinds)
            if ctx.keep_analyses:
                ctx.analyses[decl.function_id] = analysis
            else:
                analysed += 1
                if analysed % RELEASE_EVERY == 0:
                    gc.collect(0)
        if cache and cached is None:
            cache.put(key, analysis)
        for problem in analysis.problems:
            ctx.add(Finding(problem.code, problem.message, decl.sql_file, "",
                            decl.function_id, problem.fix, problem.line, problem.column))
        if any(problem.code not in BINDINGS_SURVIVE for problem in analysis.problems):
            continue
        ctx.extend(list(binding_rules(decl, analysis.bindings, ws)))
        for param in decl.params:
            number = param.index + 1
            if number in analysis.params:
                continue
            ctx.add(Hint(
                "param_unused", decl.function_id,
                f"Parameter {param.name_str!r} is declared as ${number} but main.sql never "
                f"uses ${number}; callers would pass a value that changes nothing. Use it in "
                "the query or remove it from meta.params.",
                decl.file, param.pointer, param.name_str))
