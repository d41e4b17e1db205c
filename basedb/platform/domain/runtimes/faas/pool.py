"""The FaaS runtime of one platform process: warm workers per deployed function, spare
workers for first calls, concurrency caps, and the sandbox they all run in.

    runtime = shared_runtime()                # one per process (or FaasRuntime(limits))
    runtime.start()                           # a server: probe the sandbox, keep spares
    data = runtime.run(store=…, site=…, catalog=…, caller=…, function=FaasFunction(…),
                       input={…}, log_id=…, env="prod", secret_values={…})

Workers are keyed by everything that decides what they run: the platform (its data
dir), the site, the deployment, the function, a hash of its code, its secrets and its
hosts. A new deployment therefore never meets a worker of an old one, and a worker is
reused only by calls of the same function of the same deployment. A worker that
crashed, timed out, left something running after a call, or used up its CPU budget is
stopped, never reused; the next call gets another. Idle workers stop after
`idle_seconds`, and the least recently used first once the warm ones of all sites hold
more than `warm_memory_mb` (memory.py). Once `start()` was called (by `basedb serve`),
spares (started, bound to nothing) make a deployment's first call cheap; a one-shot
command keeps none.

Workers are started from one long-lived thread: bubblewrap's `--die-with-parent` ties a
sandbox to the *thread* that started it, and the server's request threads come and go.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import itertools
import os
import secrets
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from basedb.core import environment
from basedb.core.frozen import frozen_dataclass
from basedb.core.node import MIN_NODE_MAJOR, node_executable, version_of, version_tuple
from basedb.platform.domain.identity import User
from basedb.platform.domain.runtimes.faas.egress import EgressGrant, EgressProxy
from basedb.platform.domain.runtimes.faas.limits import FaasLimits
from basedb.platform.domain.runtimes.faas.logs import write_call_log, write_note
from basedb.platform.domain.runtimes.faas.memory import worker_memory_mb
from basedb.platform.domain.runtimes.faas.outcome import (
    CallLog,
    Outcome,
    hide_internal_error,
    interpret,
)
from basedb.platform.domain.runtimes.faas.records import RecordRoutes
from basedb.platform.domain.runtimes.faas.sandbox import Sandbox
from basedb.platform.domain.runtimes.faas.workdirs import clean_stale, runtime_root
from basedb.platform.domain.runtimes.faas.worker import EGRESS_NAME, Worker, WorkerFailed
from basedb.platform.domain.sites import SiteRow
from basedb.platform.storage import platform_log
from basedb.platform.storage.store import Store
from basedb.protocol import ApiFailure, Code, FailureMessage, quote
from basedb.workspace.faas_access import host_rules
from basedb.workspace.model import Catalog

NODE_REQUIRED = "Node.js 20+ is required to run FaaS functions"
JANITOR_PERIOD_S = 1.0
CPU_CHECK_EVERY = 16  # calls between looks at a worker's CPU time (a /proc read)


@frozen_dataclass
class FaasFunction:
    """One deployed FaaS function, as the runtime needs it."""

    scope: str  # the platform it belongs to (its data dir)
    app_token: str
    deployment_id: str
    function_id: str
    source: str
    timeout_ms: int | None = None
    network: tuple[str, ...] = ()  # declared host rules
    secrets: tuple[str, ...] = ()  # declared secret names

    def pool_key(self, secret_values: Mapping[str, str]) -> tuple[str, ...]:
        digest = hashlib.sha256()
        for part in (self.source, *self.network, "\0",
                     *(f"{k}={v}" for k, v in sorted(secret_values.items()))):
            digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
        return (self.scope, self.app_token, self.deployment_id, self.function_id,
                digest.hexdigest())


class FaasRuntime:
    def __init__(self, limits: FaasLimits | None = None, *, egress: EgressProxy | None = None,
                 root: Path | None = None) -> None:
        """`root`: where worker directories go (default `workdirs.runtime_root()`), a
        directory workers' users can pass through; stale ones in it are removed first."""
        self.limits = limits if limits is not None else FaasLimits.from_env()
        self.egress = egress if egress is not None else EgressProxy()
        self._root = root
        if root is not None:
            root.mkdir(mode=0o711, parents=True, exist_ok=True)
            clean_stale(root)
        self._lock = threading.Lock()
        self._sandbox: Sandbox | None = None
        self._announced = False
        self._active = 0
        self._active_by_site: Counter[tuple[str, str]] = Counter()
        self._active_by_owner: Counter[tuple[str, str]] = Counter()  # (scope, owner id)
        self._idle: dict[tuple[str, ...], list[Worker]] = {}
        # Least recently used first: a worker goes back to the end when a call releases it.
        self._idle_order: OrderedDict[Worker, tuple[str, ...]] = OrderedDict()
        self._warm_mb = 0.0  # the memory_mb of the workers in _idle_order
        self._spares: list[Worker] = []
        self._busy: set[Worker] = set()
        self._call_ids = itertools.count(1)
        self._want_spares = False
        self._slots: set[int] = set()
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="basedb-faas-spawn")
        self._janitor: threading.Thread | None = None
        self._wake = threading.Event()
        self._closed = False

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> str:
        """Probe the sandbox now and keep spares ready; the line describing the sandbox."""
        sandbox = self._current_sandbox()
        with self._lock:
            self._want_spares = True
            self._announced = True
        self._ensure_janitor()
        return sandbox.describe()

    def describe(self) -> str:
        return self._current_sandbox().describe()

    def forget(self, scope: str) -> None:
        """Stop the idle workers of one platform (it is closing)."""
        with self._lock:
            doomed = [w for w, key in self._idle_order.items() if key[0] == scope]
            for worker in doomed:
                self._unidle(worker)
        for worker in doomed:
            worker.stop()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            doomed = [*self._idle_order, *self._spares]
            self._idle.clear()
            self._idle_order.clear()
            self._warm_mb = 0.0
            self._spares.clear()
        self._wake.set()
        for worker in doomed:
            worker.stop()
        if self._janitor is not None and self._janitor is not threading.current_thread():
            self._janitor.join(timeout=10)
        self._spawner.shutdown(wait=False)
        self.egress.close()

    def idle_workers(self, scope: str | None = None) -> list[Worker]:
        """The started workers not running a call: the warm ones of one platform, or
        (scope None) all warm ones and the spares."""
        with self._lock:
            if scope is not None:
                return [w for w, key in self._idle_order.items() if key[0] == scope]
            return [*self._idle_order, *self._spares]

    def busy_workers(self) -> list[Worker]:
        """The workers running a call right now."""
        with self._lock:
            return list(self._busy)

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"active": self._active, "idle": len(self._idle_order),
                    "spares": len(self._spares), "slots": len(self._slots)}

    # ----------------------------------------------------------------------- run

    def run(self, *, store: Store, site: SiteRow, catalog: Catalog, caller: User,
            function: FaasFunction, input: Any, log_id: str, env: str,
            secret_values: Mapping[str, str] | None = None, timezone: str = "UTC",
            owner_limit: int | None = None) -> Any:
        """Run one call and return its `data`, or raise ApiFailure (800004003/5, 503).

        `owner_limit`: how many calls of the sites of `site`'s owner may run at once
        (basedb.platform.domain.quotas), below the global and per-site caps.

        Call it outside any store transaction: the handler's record calls commit one by
        one, on this thread's connection. `ctx.env` is `env` ("prod" or "preview"); record
        calls write datetimes in `timezone`, the deployment's, which `ctx.site.timezone`
        names."""
        if store.connection().in_transaction:
            raise RuntimeError("a FaaS call must run outside a store transaction: each "
                               "record call of the handler commits on its own")
        sandbox = self._sandbox_for_call(function, log_id)
        values = dict(secret_values or {})
        limit_ms = self.limits.effective_timeout_ms(function.timeout_ms)
        routes = RecordRoutes(store=store, catalog=catalog, actor=caller.user_id, log_id=log_id,
                              zone=timezone)
        # projectId is upstream's name for the site's app token (the same value as
        # site.appToken), so a handler written for upstream reads it unchanged.
        context = {"caller": {"userId": caller.user_id, "name": caller.name},
                   "site": {"appToken": site.app_token, "timezone": timezone}, "env": env,
                   "logId": log_id, "projectId": site.app_token}
        log = CallLog(self.limits.log_head_bytes, self.limits.log_tail_bytes,
                      tuple(values.values()))
        key = function.pool_key(values)
        with self._admitted(function, log_id, site.owner_id, owner_limit):
            try:
                worker = self._acquire(sandbox, function, values, key)
            except WorkerFailed as failure:
                outcome = Outcome(log=log, kind="failure", failure="spawn", detail=str(failure))
            else:
                if worker.grant is not None:
                    worker.grant.log_id = log_id
                    worker.grant.log_file = platform_log.destination()
                deadline = time.monotonic() + limit_ms / 1000
                with self._lock:
                    self._busy.add(worker)
                try:
                    outcome = worker.call(next(self._call_ids), input, context, routes,
                                          deadline, log)
                finally:
                    with self._lock:
                        self._busy.discard(worker)
                self._release(worker, key, outcome.quiet)
        hide_internal_error(outcome)
        write_call_log(function.function_id, log_id, outcome, values.values())
        return interpret(outcome, function_id=function.function_id, log_id=log_id,
                         limit_ms=limit_ms, limits=self.limits)

    # ----------------------------------------------------------------- admission

    @contextlib.contextmanager
    def _admitted(self, function: FaasFunction, log_id: str, owner_id: str,
                  owner_limit: int | None) -> Iterator[None]:
        site = (function.scope, function.app_token)
        owner = (function.scope, owner_id)
        with self._lock:
            if self._closed:
                raise _busy(function, log_id, "the platform is shutting down", "")
            if self._active_by_site[site] >= self.limits.site_concurrency:
                raise _busy(function, log_id, f"site {function.app_token} already runs "
                            f"{self._active_by_site[site]} FaaS calls, its limit",
                            "raise $BASEDB_FAAS_SITE_CONCURRENCY where the platform runs")
            if owner_limit is not None and self._active_by_owner[owner] >= owner_limit:
                raise _busy(function, log_id, f"the sites of its owner already run "
                            f"{self._active_by_owner[owner]} FaaS calls, the limit per "
                            "owner", "ask the platform's owner to raise `basedb serve "
                            "--faas-per-owner`")
            if self._active >= self.limits.global_concurrency:
                raise _busy(function, log_id, f"the platform already runs {self._active} "
                            "FaaS calls, its limit",
                            "raise $BASEDB_FAAS_CONCURRENCY where the platform runs")
            self._active += 1
            self._active_by_site[site] += 1
            self._active_by_owner[owner] += 1
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                for counts, key in ((self._active_by_site, site),
                                    (self._active_by_owner, owner)):
                    counts[key] -= 1
                    if not counts[key]:
                        del counts[key]

    # ------------------------------------------------------------------- workers

    def _acquire(self, sandbox: Sandbox, function: FaasFunction, values: Mapping[str, str],
                 key: tuple[str, ...]) -> Worker:
        dead: list[Worker] = []
        found: Worker | None = None
        with self._lock:
            idle = self._idle.get(key, [])
            while idle and found is None:
                worker = idle[-1]
                self._unidle(worker)
                if worker.alive:
                    found = worker
                else:
                    dead.append(worker)
            spare = None
            if found is None and self._spares:
                spare = self._spares.pop()
        for worker in dead:
            worker.stop()
        self._ensure_janitor()  # it stops idle workers
        if spare is not None:
            self._wake.set()  # to start the next spare
        if found is not None:
            return found
        worker = spare if spare is not None and spare.alive else self._spawn(sandbox)
        try:
            worker.grant = self._grant(sandbox, worker, function)
            worker.load(function.source, env=dict(values), egress=worker.grant is not None)
        except OSError as error:
            worker.stop()
            raise WorkerFailed(f"cannot prepare the worker: {error}") from None
        return worker

    def _grant(self, sandbox: Sandbox, worker: Worker,
               function: FaasFunction) -> EgressGrant | None:
        rules = host_rules(function.network)
        if not rules or not sandbox.isolated:
            return None  # no declared hosts; or no network namespace to enforce them in
        grant = self.egress.grant(worker.paths.code / EGRESS_NAME, rules,
                                  owner=sandbox.user_for(worker.slot))
        worker.on_stop.append(grant.close)
        return grant

    def _spawn(self, sandbox: Sandbox) -> Worker:
        with self._lock:
            slot = next(n for n in itertools.count() if n not in self._slots)
            self._slots.add(slot)
        group = None
        try:
            if sandbox.cgroups is not None:
                try:
                    group = sandbox.cgroups.create(
                        f"{os.getpid()}-{slot}-{secrets.token_hex(3)}", self.limits)
                except OSError as error:
                    raise WorkerFailed(f"cannot create the worker's cgroup: {error}") from None
            worker = Worker.start(sandbox, slot=slot, root=self._root or runtime_root(),
                                  spawn=self._spawner.submit, group=group)
        except BaseException:
            if group is not None:
                group.remove()
            with self._lock:
                self._slots.discard(slot)
            raise
        worker.on_stop.append(lambda: self._free_slot(slot))
        return worker

    def _free_slot(self, slot: int) -> None:
        with self._lock:
            self._slots.discard(slot)

    def _release(self, worker: Worker, key: tuple[str, ...], quiet: bool) -> None:
        keep = (quiet and worker.alive and not self._closed and worker.restore()
                and (worker.calls % CPU_CHECK_EVERY
                     or worker.cpu_seconds() < self.limits.worker_cpu_seconds))
        if not keep:
            worker.stop()
            return
        if worker.memory_mb is None:  # once, warm: what keeping it costs
            worker.memory_mb = worker_memory_mb(worker.pid)
        evicted: list[Worker] = []
        with self._lock:
            self._idle.setdefault(key, []).append(worker)
            self._idle_order[worker] = key
            self._warm_mb += worker.memory_mb
            while (self._warm_mb > self.limits.warm_memory_mb
                   and len(self._idle_order) > 1):
                oldest = next(iter(self._idle_order))
                self._unidle(oldest)
                evicted.append(oldest)
        for old in evicted:
            old.stop()

    def _unidle(self, worker: Worker) -> None:
        """Take `worker` out of the idle structures (the lock is held)."""
        key = self._idle_order.pop(worker, None)
        if key is not None:
            self._warm_mb -= worker.memory_mb or 0.0
            idle = self._idle.get(key, [])
            if worker in idle:
                idle.remove(worker)
            if not idle:
                self._idle.pop(key, None)

    # ------------------------------------------------------------------- janitor

    def _ensure_janitor(self) -> None:
        with self._lock:
            if self._janitor is not None or self._closed:
                return
            self._janitor = threading.Thread(target=self._janitor_loop, daemon=True,
                                             name="basedb-faas-janitor")
        self._janitor.start()

    def _janitor_loop(self) -> None:
        while not self._closed:
            self._wake.wait(JANITOR_PERIOD_S)
            self._wake.clear()
            if self._closed:
                return
            now = time.monotonic()
            with self._lock:
                expired = [w for w in self._idle_order
                           if now - w.last_used > self.limits.idle_seconds or not w.alive]
                for worker in expired:
                    self._unidle(worker)
                dead = [w for w in self._spares if not w.alive]
                self._spares = [w for w in self._spares if w.alive]
                missing = (self.limits.spares - len(self._spares)) if self._want_spares else 0
            for worker in (*expired, *dead):
                worker.stop()
            if missing > 0:
                self._add_spare()

    def _add_spare(self) -> None:
        sandbox = self._sandbox
        if sandbox is None or sandbox.kind == "none":
            return
        try:
            worker = self._spawn(sandbox)
        except WorkerFailed as failure:
            if not self._closed:
                write_note(None, f"a spare worker could not be started: {failure}")
                time.sleep(JANITOR_PERIOD_S)
            return
        with self._lock:
            if self._closed or self._sandbox is not sandbox:
                stale = True
            else:
                self._spares.append(worker)
                stale = False
        if stale:
            worker.stop()

    # ------------------------------------------------------------------- sandbox

    def _current_sandbox(self) -> Sandbox:
        node = _node_executable()
        with self._lock:
            sandbox = self._sandbox
        if sandbox is not None and sandbox.node == node:
            return sandbox
        fresh = Sandbox.detect(self.limits)
        with self._lock:
            if self._sandbox is None or self._sandbox.node != node:
                old_spares, self._spares = self._spares, []
                self._sandbox, self._announced = fresh, False
            else:
                old_spares = []
            sandbox = self._sandbox
        for worker in old_spares:
            worker.stop()
        return sandbox

    def _sandbox_for_call(self, function: FaasFunction, log_id: str) -> Sandbox:
        _require_node(log_id)
        sandbox = self._current_sandbox()
        with self._lock:
            announce, self._announced = not self._announced, True
        if announce:
            write_note(None, sandbox.describe().removeprefix("basedb faas: "))
        if self.limits.sandbox == "require" and not sandbox.isolated:
            raise ApiFailure(Code.EXECUTION_FAILED, FailureMessage(
                f"FaaS function {quote(function.function_id)} was not run: this platform "
                "requires an OS sandbox for FaaS (BASEDB_FAAS_SANDBOX=require) and has none "
                f"({'; '.join(sandbox.problems) or 'unavailable'})",
                fix="install bubblewrap where the platform runs (apt-get install bubblewrap), "
                    "or unset BASEDB_FAAS_SANDBOX", executed="no",
                retry="retry after fixing", log_id=log_id).render(), status=500)
        return sandbox


@functools.lru_cache(maxsize=4)
def _node_lookup(configured: str, path: str) -> str | None:
    del configured, path  # the cache key: what node_executable() depends on
    return node_executable()


def _node_executable() -> str | None:
    """`node_executable()`, looked up again only when $BASEDB_NODE or $PATH change."""
    return _node_lookup(os.environ.get(environment.NODE, ""), os.environ.get("PATH", ""))


def _require_node(log_id: str) -> None:
    executable = _node_executable()
    version = None if executable is None else version_of(executable)
    if executable is None or version is None or version_tuple(version)[0] < MIN_NODE_MAJOR:
        found = f" (found Node.js {version})" if version else ""
        raise ApiFailure(Code.EXECUTION_FAILED, (
            f"{NODE_REQUIRED}{found}. Fix: install Node.js {MIN_NODE_MAJOR} or later where the "
            "platform runs and put `node` on PATH, or set $BASEDB_NODE to its path; "
            f"`basedb doctor` shows what is found. Executed: no. Retry: retry after fixing. "
            f"LogID: {log_id}"), status=500)


def _busy(function: FaasFunction, log_id: str, why: str, raise_it: str) -> ApiFailure:
    fix = "wait for the running calls to finish" + (f", or {raise_it}" if raise_it else "")
    msg = FailureMessage(f"FaaS function {quote(function.function_id)} was not started: {why}",
                         fix=fix, executed="no", retry="retry later", log_id=log_id).render()
    return ApiFailure(Code.PLATFORM_BUSY, msg, status=503, headers={"Retry-After": "1"})


# ------------------------------------------------------------------ one per process

_shared: FaasRuntime | None = None
_shared_lock = threading.Lock()


def shared_runtime() -> FaasRuntime:
    """The process's runtime: every platform app in the process shares its workers,
    caps and sandbox (the machine's limits are the process's)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = FaasRuntime()
            atexit.register(_shared.close)
        return _shared
