"""The FaaS runtime's pool: which worker a call gets, spares, idle reaping, and what the
runtime does on a machine without an OS sandbox."""

from __future__ import annotations

import secrets
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from basedb.core.errors import InputError
from basedb.platform import LocalPlatform
from basedb.platform.domain import identity, sites
from basedb.platform.domain.runtimes.faas import FaasFunction, FaasLimits, FaasRuntime, memory
from basedb.platform.domain.runtimes.faas import pool as pool_module
from basedb.platform.domain.runtimes.faas import sandbox as sandbox_module
from basedb.platform.domain.runtimes.faas.workdirs import runtime_root
from basedb.protocol import ApiFailure, Code
from tests.platform.conftest import Api
from tests.platform.release_support import task_site
from tests.platform.test_faas_runtime import needs_node

COUNTER = """
let calls = 0;
export default async () => ({code: 0, data: {calls: ++calls, release: RELEASE}});
"""


@pytest.fixture
def root() -> Iterator[Path]:
    path = runtime_root() / f"test-{secrets.token_hex(4)}"
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Runner:
    def __init__(self, platform: LocalPlatform, api: Api, runtime: FaasRuntime) -> None:
        self.platform, self.runtime = platform, runtime
        self.app = task_site(api).app_token
        me = api.ok("GET", "/users/me")
        self.caller = identity.User(me["user_id"], me["name"])

    @property
    def scope(self) -> str:
        return str(self.platform.store.path)

    def run(self, source: str, *, deployment_id: str = "dplOne") -> Any:
        with self.platform.store.read() as conn:
            site = sites.get_site(conn, self.app)
            assert site is not None
            catalog = sites.site_catalog(conn, site)
        function = FaasFunction(scope=str(self.platform.store.path), app_token=self.app,
                                deployment_id=deployment_id, function_id="counter",
                                source=source)
        return self.runtime.run(store=self.platform.store, site=site, catalog=catalog,
                                caller=self.caller, function=function, input={},
                                log_id="20990101000000ABCDEF0123456789AA", env="prod")


@contextmanager
def runner_with(platform: LocalPlatform, api: Api, root: Path,
                **limits: Any) -> Iterator[Runner]:
    runtime = FaasRuntime(FaasLimits(**limits), root=root)
    try:
        yield Runner(platform, api, runtime)
    finally:
        runtime.close()


@pytest.fixture
def runner(platform: LocalPlatform, api: Api, root: Path) -> Iterator[Runner]:
    with runner_with(platform, api, root, spares=0) as found:
        yield found


def release(number: int) -> str:
    return COUNTER.replace("RELEASE", str(number))


@needs_node
def test_a_new_deployment_never_meets_a_worker_of_the_old_one(runner: Runner) -> None:
    assert runner.run(release(1)) == {"calls": 1, "release": 1}
    assert runner.run(release(1)) == {"calls": 2, "release": 1}  # warm
    assert runner.run(release(2), deployment_id="dplTwo") == {"calls": 1, "release": 2}
    assert runner.run(release(1)) == {"calls": 3, "release": 1}  # the old one, still warm
    # The same deployment id with other code (it cannot happen, deployments are
    # immutable) still gets a worker of its own.
    assert runner.run(release(3)) == {"calls": 1, "release": 3}


@needs_node
def test_idle_workers_are_stopped(platform: LocalPlatform, api: Api, root: Path) -> None:
    with runner_with(platform, api, root, spares=0, idle_seconds=1) as found:
        found.run(release(1))
        [worker] = found.runtime.idle_workers()
        deadline = time.monotonic() + 30
        # The reaper stops the worker on its own thread: wait until it has finished,
        # directory included.
        while ((found.runtime.idle_workers() or worker.paths.root.exists())
               and time.monotonic() < deadline):
            time.sleep(0.1)
        assert found.runtime.idle_workers() == [] and worker.stopped
        assert not worker.paths.root.exists()
        assert found.run(release(1)) == {"calls": 1, "release": 1}  # a fresh one


@needs_node
def test_a_first_call_takes_a_spare_and_the_spare_is_replaced(
        platform: LocalPlatform, api: Api, root: Path) -> None:
    with runner_with(platform, api, root, spares=1) as found:
        runtime = found.runtime
        runtime.start()
        _until(lambda: runtime.stats()["spares"] == 1)
        [spare] = runtime.idle_workers()
        assert found.run(release(1)) == {"calls": 1, "release": 1}
        assert spare in runtime.idle_workers(found.scope)
        _until(lambda: runtime.stats()["spares"] == 1)


@needs_node
def test_warm_workers_are_bounded_by_memory_not_concurrency(
        platform: LocalPlatform, api: Api, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "worker_memory_mb", lambda pid: 10.0)
    # Room for two warm workers of 10 MB, with one call at a time.
    with runner_with(platform, api, root, spares=0, global_concurrency=1,
                     warm_memory_mb=25) as found:
        for deployment in ("dplOne", "dplTwo"):
            assert found.run(release(1), deployment_id=deployment)["calls"] == 1
        assert found.runtime.stats()["idle"] == 2  # more than the concurrency
        # dplOne is used again, so dplTwo is the least recently used when a third
        # deployment needs room.
        assert found.run(release(1), deployment_id="dplOne")["calls"] == 2
        assert found.run(release(1), deployment_id="dplThree")["calls"] == 1
        assert found.runtime.stats()["idle"] == 2
        assert found.run(release(1), deployment_id="dplOne")["calls"] == 3  # still warm
        assert found.run(release(1), deployment_id="dplTwo")["calls"] == 1  # cold again


@needs_node
def test_a_warm_worker_is_counted_by_its_measured_memory(runner: Runner) -> None:
    runner.run(release(1))
    [worker] = runner.runtime.idle_workers()
    assert worker.memory_mb is not None
    # A Node.js process: more than a few pages, less than its resident limit.
    assert 1 < worker.memory_mb < runner.runtime.limits.memory_mb
    assert memory.worker_memory_mb(2 ** 22 + 7) == memory.ESTIMATED_MB  # no such process


def test_the_warm_budget_is_read_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BASEDB_FAAS_WARM_MB", "2048")
    assert FaasLimits.from_env().warm_memory_mb == 2048
    monkeypatch.setenv("BASEDB_FAAS_WARM_MB", "lots")
    with pytest.raises(InputError, match="BASEDB_FAAS_WARM_MB"):
        FaasLimits.from_env()


def _until(condition: Any) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.05)


# -------------------------------------------------------------- without a sandbox


@needs_node
def test_without_an_os_sandbox_the_runtime_says_so_and_still_runs(
        platform: LocalPlatform, api: Api, root: Path) -> None:
    with runner_with(platform, api, root, spares=0, sandbox="off") as found:
        line = found.runtime.describe()
        assert line.startswith("basedb faas: sandbox DEGRADED to a plain process")
        assert "can reach the network" in line and "BASEDB_FAAS_SANDBOX=off" in line
        assert found.run(release(1)) == {"calls": 1, "release": 1}


@needs_node
def test_require_refuses_to_run_without_an_os_sandbox(
        platform: LocalPlatform, api: Api, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_which = shutil.which

    def no_bubblewrap(name: str, *args: Any, **kwargs: Any) -> str | None:
        return None if name == "bwrap" else real_which(name, *args, **kwargs)

    monkeypatch.setattr(sandbox_module.shutil, "which", no_bubblewrap)
    with runner_with(platform, api, root, spares=0, sandbox="require") as found:
        with pytest.raises(ApiFailure) as refused:
            found.run(release(1))
        assert refused.value.code == Code.EXECUTION_FAILED
        assert "requires an OS sandbox for FaaS (BASEDB_FAAS_SANDBOX=require)" in \
            refused.value.msg
        assert "bubblewrap is not installed" in refused.value.msg
        assert "Executed: no" in refused.value.msg
        assert list(root.iterdir()) == []  # nothing was started


def test_bad_limits_in_the_environment_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from basedb.core.errors import InputError

    monkeypatch.setenv("BASEDB_FAAS_MEMORY_MB", "lots")
    with pytest.raises(InputError, match=r"\$BASEDB_FAAS_MEMORY_MB is 'lots'"):
        FaasLimits.from_env()
    monkeypatch.setenv("BASEDB_FAAS_MEMORY_MB", "512")
    monkeypatch.setenv("BASEDB_FAAS_SANDBOX", "strict")
    with pytest.raises(InputError, match="auto, require, off"):
        FaasLimits.from_env()
    monkeypatch.setenv("BASEDB_FAAS_SANDBOX", "require")
    assert FaasLimits.from_env().memory_mb == 512
