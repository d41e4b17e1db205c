"""The FaaS sandbox attacked by a hostile site author, each attack refused or contained
and the platform answering normally afterwards (a follow-up request proves it).

Against a real `basedb serve` in a subprocess: killing the server or any other process,
reaching the server over loopback, private networks and DNS, raw escape sequences on the
server's terminal, and the server itself crashing with workers running. In-process,
with a runtime of their own (its worker directories in a directory of their own):
memory, disk, process and timer floods, a worker killed mid-call, the concurrency caps
and what a warm worker may carry from one call to the next.

The OS-level attacks need bubblewrap (apt-get install bubblewrap; .ci/run installs it)
and skip without it, saying so.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from basedb.core.node import node_version
from basedb.core.paths import API_PREFIX
from basedb.platform import LocalPlatform
from basedb.platform.domain import identity, sites
from basedb.platform.domain.runtimes.faas import FaasFunction, FaasLimits, FaasRuntime
from basedb.platform.domain.runtimes.faas.sandbox import Sandbox
from basedb.platform.domain.runtimes.faas.workdirs import clean_stale, runtime_root
from basedb.protocol import ApiFailure, Code
from tests.platform.conftest import Api
from tests.platform.release_support import TaskSite, deploy, functions_body, task_site
from tests.processes import interrupt

HAS_NODE = int((node_version() or "0").split(".")[0]) >= 20
# Detected once: the skips below and the test of what it says ask the same sandbox.
SANDBOX = Sandbox.detect(FaasLimits())
ISOLATED = HAS_NODE and SANDBOX.isolated
needs_node = pytest.mark.skipif(not HAS_NODE, reason="Node.js 20+ is not installed")
needs_sandbox = pytest.mark.skipif(
    not ISOLATED, reason="the OS sandbox needs bubblewrap and user namespaces "
                         "(apt-get install bubblewrap); `basedb doctor` says what is missing")
READY_S = 60


# ===================================================================== a real server


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    url: str
    log: Path
    api: Api
    app_token: str

    def invoke(self, function_id: str, params: dict[str, Any]) -> httpx.Response:
        return self.api.client.post(  # type: ignore[no-any-return]
            f"{API_PREFIX}/sites/{self.app_token}/functions/{function_id}/invoke",
            json={"params": params}, headers={"Authorization": f"Bearer {self.api.token}"})

    def healthy(self) -> None:
        """The follow-up request: the server answers, and a FaaS call still works."""
        assert self.process.poll() is None, "basedb serve died"
        assert self.api.ok("GET", "/users/me")["user_id"]
        answer = self.invoke("ping", {})
        assert answer.status_code == 200 and answer.json()["data"] == "pong", answer.text


def _wait_for(log: Path, text: str, process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        content = log.read_text(encoding="utf-8", errors="replace")
        if text in content:
            return content
        if process.poll() is not None:
            raise AssertionError(f"basedb serve exited: {content[-2000:]}")
        time.sleep(0.05)
    raise AssertionError(f"basedb serve did not print {text!r}")


def _function(function_id: str, source: str) -> dict[str, Any]:
    return {"functionId": function_id, "handler": source, "declaration": {
        "name": function_id, "description": f"{function_id}: an attack on the sandbox",
        "timeoutMs": 20_000, "inputSchema": {
            "type": "object", "additionalProperties": True, "properties": {
                "pid": {"type": "integer", "description": "a process id to attack"},
                "port": {"type": "integer", "description": "the server's port"}}}}}


ATTACK_PROCESSES = """
import fs from "node:fs";
export default async (input) => {
  const out = {};
  const attempt = (name, fn) => { try { fn(); out[name] = "allowed"; }
                                  catch (e) { out[name] = e.code || e.message; } };
  attempt("parent", () => process.kill(process.ppid, "SIGKILL"));
  attempt("server", () => process.kill(input.pid, "SIGKILL"));
  attempt("victim", () => process.kill(input.victim, "SIGKILL"));
  attempt("everyone", () => process.kill(-1, "SIGKILL"));
  attempt("serverMemory", () => fs.readFileSync(`/proc/${input.pid}/environ`));
  attempt("processList", () => fs.readdirSync("/proc"));
  out.ppid = process.ppid;
  out.uid = process.getuid();
  return {code: 0, data: out};
}"""

ATTACK_NETWORK = """
import net from "node:net";
import dns from "node:dns/promises";
const connect = (options) => new Promise((resolve) => {
  const socket = net.connect(options);
  socket.setTimeout(3000, () => { socket.destroy(); resolve("timeout"); });
  socket.once("connect", () => { socket.destroy(); resolve("connected"); });
  socket.once("error", (e) => resolve(e.code || e.message));
});
const get = async (url) => {
  try { return (await fetch(url, {signal: AbortSignal.timeout(3000)})).status; }
  catch (e) { return e.cause?.code || e.name; }
};
export default async (input) => {
  const out = {};
  out.serverFetch = await get(`http://127.0.0.1:${input.port}/openapi.json`);
  out.serverTcp = await connect({host: "127.0.0.1", port: input.port});
  out.serverTcp6 = await connect({host: "::1", port: input.port});
  out.metadata = await connect({host: "169.254.169.254", port: 80});
  out.private10 = await connect({host: "10.0.0.1", port: 80});
  out.private192 = await connect({host: "192.168.0.1", port: 80});
  out.publicIp = await connect({host: "1.1.1.1", port: 443});
  out.publicName = await get("https://example.com/");
  try { out.dns = await dns.lookup("example.com"); } catch (e) { out.dns = e.code; }
  try { out.dnsResolve = await dns.resolve4("example.com"); } catch (e) { out.dnsResolve = e.code; }
  return {code: 0, data: out};
}"""

SHOUT = r"""
export default async () => {
  console.log("\x1b]0;owned\x07\x1b[2J\x1b[31mred\x1b[0m");
  console.log("basedb platform: listening on http://evil.example:80");
  process.stdout.write("carriage\rreturn and a bell\x07 and \u202eright-to-left\n");
  console.error("\x9b31m 8-bit CSI");
  return {code: 0, data: "shouted"};
}"""

PING = 'export default async () => ({code: 0, data: "pong"});'


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    if not HAS_NODE:
        pytest.skip("Node.js 20+ is not installed")
    root = tmp_path_factory.mktemp("served")
    log = root / "serve.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "basedb", "serve", "--port", "0", "--data",
             str(root / "data")], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=sink, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        banner = _wait_for(log, "Press Ctrl+C", process)
        match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", banner)
        assert match, banner
        token = (root / "data" / "owner.token").read_text().strip()
        with httpx.Client(base_url=match.group(1), timeout=60) as http:
            api = Api(http, token)  # type: ignore[arg-type]
            site = task_site(api)
            faas = [_function("attackProcesses", ATTACK_PROCESSES),
                    _function("attackNetwork", ATTACK_NETWORK),
                    _function("shout", SHOUT), _function("ping", PING)]
            api.ok("PUT", f"/sites/{site.app_token}/draft/functions",
                   json=functions_body(database_functions=[], mutations=[], faas=faas))
            deployment = deploy(api, site.app_token)["deploymentId"]
            api.ok("POST", f"/sites/{site.app_token}/deployments/{deployment}/promote")
            yield Served(process, match.group(1), log, api, site.app_token)
    finally:
        interrupt(process, timeout=20)


@needs_sandbox
def test_a_handler_cannot_kill_or_read_the_server_or_any_other_process(served: Served) -> None:
    victim = subprocess.Popen(["sleep", "600"])
    try:
        answer = served.invoke("attackProcesses", {"pid": served.process.pid,
                                                   "victim": victim.pid})
        assert answer.status_code == 200, answer.text
        out = answer.json()["data"]
        # Its parent is outside its PID namespace (ppid 0); neither the server nor any
        # other process of the machine exists for it; /proc is not readable.
        assert out["ppid"] == 0
        assert out["server"] == out["victim"] == out["everyone"] == "ESRCH"
        assert out["serverMemory"] in ("ENOENT", "ERR_ACCESS_DENIED")
        assert out["processList"] == "ERR_ACCESS_DENIED"
        if os.geteuid() == 0:
            assert out["uid"] != 0  # and it runs as a user of its own
        assert victim.poll() is None
        served.healthy()
    finally:
        victim.kill()
        victim.wait()


@needs_sandbox
def test_a_handler_reaches_neither_loopback_nor_private_networks_nor_dns(
        served: Served) -> None:
    port = int(served.url.rsplit(":", 1)[1])
    answer = served.invoke("attackNetwork", {"port": port})
    assert answer.status_code == 200, answer.text
    out = answer.json()["data"]
    assert out["serverFetch"] != 200 and out["serverTcp"] != "connected", out
    for key in ("serverTcp6", "metadata", "private10", "private192", "publicIp"):
        assert out[key] in ("ECONNREFUSED", "ENETUNREACH", "EHOSTUNREACH",
                            "EADDRNOTAVAIL"), (key, out[key])
    assert out["publicName"] != 200
    assert out["dns"] in ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED")
    assert out["dnsResolve"] in ("ECONNREFUSED", "ETIMEOUT", "ENOTFOUND", "EAI_AGAIN")
    served.healthy()


@needs_node
def test_nothing_a_handler_prints_reaches_the_terminal_raw(served: Served) -> None:
    answer = served.invoke("shout", {})
    assert answer.status_code == 200 and answer.json()["data"] == "shouted"
    log_id = answer.headers["x-tt-logid"]
    served.healthy()
    text = served.log.read_bytes().decode("utf-8")
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert "\x9b" not in text and "\u202e" not in text
    assert f"basedb faas: {log_id} out | \\x1b]0;owned\\x07\\x1b[2J" in text
    assert "\\u202eright-to-left" in text and "\\x9b31m" in text
    forged = [line for line in text.splitlines()
              if line.startswith("basedb platform: listening on http://evil")]
    assert forged == []  # the forged line is there only behind the log id's prefix
    assert (f"basedb faas: {log_id} out | basedb platform: listening on http://evil"
            in text)


@needs_sandbox
def test_when_the_server_dies_its_workers_die_and_their_directories_go_at_next_start(
        tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "basedb", "serve", "--port", "0", "--data",
             str(tmp_path / "data")], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=sink, env={**os.environ, "PYTHONUNBUFFERED": "1",
                              "BASEDB_FAAS_SPARES": "2"})
    try:
        _wait_for(log, "Press Ctrl+C", process)
        prefix = f"{process.pid}-"
        deadline = time.monotonic() + READY_S
        while len(_worker_dirs(prefix)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # the spares are being started
        directories = _worker_dirs(prefix)
        assert len(directories) == 2
        _until(lambda: len(_nodes_of(directories)) == 2)
        nodes = _nodes_of(directories)  # the spares' Node.js processes
    finally:
        process.kill()  # no clean shutdown: the platform crashes
        process.wait()
    deadline = time.monotonic() + READY_S
    while _alive(nodes) and time.monotonic() < deadline:
        time.sleep(0.05)  # the kernel delivers --die-with-parent's SIGKILL
    assert not _alive(nodes)  # no worker outlives its platform
    assert all(d.exists() for d in directories)  # nobody was left to remove them …
    clean_stale(runtime_root())  # … until a platform starts again, which also stops a
    deadline = time.monotonic() + READY_S  # sandbox caught mid-start
    while _processes_using(directories) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _processes_using(directories)
    assert not any(d.exists() for d in directories)


def _worker_dirs(prefix: str) -> list[Path]:
    return [d for d in runtime_root().iterdir() if d.name.startswith(prefix)]


def _nodes_of(directories: list[Path]) -> list[int]:
    """The Node.js processes of those workers: children of the bubblewrap processes whose
    command line names their directories."""
    nodes = []
    for pid in _processes_using(directories):
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{pid}/task").iterdir():
                for child in (task / "children").read_text().split():
                    if Path(f"/proc/{child}/exe").resolve().name.startswith("node"):
                        nodes.append(int(child))
    return nodes


def _alive(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z":
                alive.append(pid)
    return alive


def _processes_using(directories: list[Path]) -> list[int]:
    """Processes whose command line names one of the directories (bubblewrap binds them)."""
    names = [str(d).encode() for d in directories]
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if any(name in command for name in names):
            found.append(int(entry.name))
    return found


# ================================================================= in-process


@pytest.fixture
def root() -> Iterator[Path]:
    """Worker directories of one test's runtime (inside the shared root, which the
    workers' users can pass through)."""
    path = runtime_root() / f"test-{secrets.token_hex(4)}"
    yield path
    if path.exists():
        path.rmdir()  # only if empty: a leftover is a failure of the test itself


@dataclass
class Target:
    platform: LocalPlatform
    api: Api
    runtime: FaasRuntime
    site: TaskSite
    caller: identity.User

    @property
    def app_token(self) -> str:
        return self.site.app_token

    def run(self, source: str, input: Any = None, *, function_id: str = "attack",
            app_token: str | None = None, caller: identity.User | None = None,
            timeout_ms: int = 10_000) -> Any:
        app = app_token or self.app_token
        with self.platform.store.read() as conn:
            site = sites.get_site(conn, app)
            assert site is not None
            catalog = sites.site_catalog(conn, site)
        function = FaasFunction(scope=str(self.platform.store.path), app_token=app,
                                deployment_id="dplAttack", function_id=function_id,
                                source=source, timeout_ms=timeout_ms)
        return self.runtime.run(store=self.platform.store, site=site, catalog=catalog,
                                caller=caller or self.caller, function=function, input=input,
                                log_id="20990101000000ABCDEF0123456789EF", env="prod")

    def fails(self, source: str, code: int = Code.EXECUTION_FAILED, **kwargs: Any) -> str:
        with pytest.raises(ApiFailure) as caught:
            self.run(source, **kwargs)
        assert caught.value.code == code, caught.value.msg
        return caught.value.msg

    def healthy(self) -> None:
        assert self.api.ok("GET", "/users/me")["user_id"]
        assert self.run(PING, function_id="ping") == "pong"


def _target(platform: LocalPlatform, api: Api, root: Path, **limits: Any) -> Iterator[Target]:
    runtime = FaasRuntime(FaasLimits(spares=0, **limits), root=root)
    me = api.ok("GET", "/users/me")
    try:
        yield Target(platform, api, runtime, task_site(api),
                     identity.User(me["user_id"], me["name"]))
    finally:
        runtime.close()


@pytest.fixture
def target(platform: LocalPlatform, api: Api, root: Path) -> Iterator[Target]:
    yield from _target(platform, api, root)


@needs_node
@pytest.mark.parametrize("bomb", [
    "const hoard = []; for (;;) hoard.push(new Array(1e6).fill(Math.random()));",
    "const hoard = []; for (let i = 0; i < 64; i++) hoard.push(Buffer.alloc(64 * 2 ** 20, 1));",
    "const a = new Uint8Array(2 ** 31 - 1); a.fill(7);",
])
def test_memory_bombs_are_stopped(target: Target, bomb: str) -> None:
    # A generous timeout: what stops the bomb must be its memory limit.
    msg = target.fails(f"export default async () => {{ {bomb} return {{code: 0}}; }}",
                       timeout_ms=120_000)
    assert "ran out of memory" in msg
    target.healthy()


@needs_node
@pytest.mark.slow
def test_memory_bombs_at_once_are_each_stopped(target: Target) -> None:
    source = ("export default async () => { const h = []; "
              "for (let i = 0; i < 64; i++) h.push(Buffer.alloc(64 * 2 ** 20, 1)); "
              "return {code: 0}; }")
    with ThreadPoolExecutor(4) as pool:
        messages = list(pool.map(lambda n: target.fails(source, function_id=f"bomb{n}",
                                                        timeout_ms=120_000), range(4)))
    assert all("ran out of memory" in msg for msg in messages), messages
    target.healthy()


@needs_sandbox
def test_the_work_directory_has_a_quota_and_nothing_else_is_writable(target: Target) -> None:
    out = target.run("""
        import fs from "node:fs";
        export default async () => {
          const out = {};
          const chunk = Buffer.alloc(8 * 2 ** 20, 1);
          let written = 0;
          try { for (let i = 0; i < 128; i++) { fs.writeFileSync(`f${i}`, chunk); written += 8; } }
          catch (e) { out.fill = e.code; }
          out.writtenMb = written;
          try { fs.writeFileSync("/code/index.mjs", "hijack"); out.code = "allowed"; }
          catch (e) { out.code = e.code; }
          try { fs.writeFileSync("/tmp/x", "x"); out.tmp = "allowed"; }
          catch (e) { out.tmp = e.code; }
          return {code: 0, data: out};
        }""")
    assert out["fill"] in ("ENOSPC", "EFBIG") and out["writtenMb"] <= 64
    assert out["code"] in ("ERR_ACCESS_DENIED", "EROFS", "EACCES")
    assert out["tmp"] in ("ERR_ACCESS_DENIED", "ENOENT", "EROFS", "EACCES")
    target.healthy()


@needs_node
def test_processes_and_threads_cannot_be_started(target: Target) -> None:
    out = target.run("""
        export default async () => {
          const out = {};
          const tryIt = async (name, fn) => { try { await fn(); out[name] = "allowed"; }
                                              catch (e) { out[name] = e.code || e.message; } };
          await tryIt("exec", async () => (await import("node:child_process")).execSync("id"));
          await tryIt("spawn", async () => (await import("node:child_process")).spawn("sh"));
          await tryIt("fork", async () => (await import("node:child_process")).fork("x.mjs"));
          await tryIt("thread", async () => {
            const {Worker} = await import("node:worker_threads");
            new Worker("for(;;){}", {eval: true});
          });
          await tryIt("binding", () => process.binding("spawn_sync").spawn({file: "/bin/sh",
                                                                             args: ["sh"]}));
          return {code: 0, data: out};
        }""")
    assert set(out.values()) == {"ERR_ACCESS_DENIED"}, out
    target.healthy()


@needs_node
def test_a_timer_flood_inside_a_call_ends_at_the_timeout(target: Target) -> None:
    msg = target.fails("""
        export default async () => {
          for (let i = 0; i < 100000; i++) setInterval(() => {}, 0);
          await new Promise(() => setInterval(() => {}, 1));
        }""", timeout_ms=1500)
    assert "did not finish within 1500 ms" in msg
    target.healthy()


@needs_node
def test_a_call_that_leaves_timers_behind_retires_its_worker(target: Target) -> None:
    source = """
        let calls = 0;
        export default async (input) => {
          calls += 1;
          if (input.flood) for (let i = 0; i < 10000; i++) setInterval(() => {}, 1);
          return {code: 0, data: calls};
        }"""
    assert target.run(source, {"flood": False}) == 1
    assert target.run(source, {"flood": False}) == 2  # warm: its module state is kept
    assert target.run(source, {"flood": True}) == 3
    # That worker left 10,000 timers running: it was stopped, and the next call starts
    # fresh instead of sharing a worker with them.
    assert target.run(source, {"flood": False}) == 1
    target.healthy()


@needs_node
def test_a_worker_that_dies_leaves_no_directory_and_the_next_call_works(
        target: Target, root: Path) -> None:
    for source in ("export default async () => { process.exit(3); }",
                   "export default async () => { for (;;) {} }",
                   "export default async () => { const h = []; "
                   "for (;;) h.push(Buffer.alloc(2 ** 26, 1)); }"):
        msg = target.fails(source, timeout_ms=1500)
        assert "LogID:" in msg
        assert list(root.iterdir()) == []  # no worker left, and nothing of it remains
    target.healthy()
    [warm] = target.runtime.idle_workers()  # the follow-up's worker, and its directory
    assert list(root.iterdir()) == [warm.paths.root]
    target.runtime.close()
    assert list(root.iterdir()) == []


@needs_node
def test_a_worker_killed_from_outside_mid_call(target: Target, root: Path) -> None:
    failures: list[str] = []

    def call() -> None:
        failures.append(target.fails(SLOW, input={"ms": 30_000}, timeout_ms=60_000))

    caller = threading.Thread(target=call)
    caller.start()
    _until(lambda: target.runtime.busy_workers())
    [busy] = target.runtime.busy_workers()
    os.kill(busy.pid, signal.SIGKILL)  # the kernel's OOM killer, or an operator
    caller.join()
    assert "ended without returning a result" in failures[0]
    assert list(root.iterdir()) == []
    target.healthy()


@needs_node
def test_stale_directories_of_a_dead_platform_are_removed_at_start(root: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that belonged to a platform that is gone
    root.mkdir(mode=0o711)
    stale = root / f"{dead.pid}-0-abcdef01"
    (stale / "code").mkdir(parents=True)
    (stale / "code" / "index.mjs").write_text("left behind")
    mine = root / f"{os.getpid()}-9-live0000"
    mine.mkdir()
    runtime = FaasRuntime(FaasLimits(spares=0), root=root)
    try:
        assert not stale.exists() and mine.exists()
    finally:
        runtime.close()
        mine.rmdir()


# ------------------------------------------------------------------- caps


@pytest.fixture
def capped(platform: LocalPlatform, api: Api, root: Path) -> Iterator[Target]:
    yield from _target(platform, api, root, site_concurrency=2, global_concurrency=3)


SLOW = """
export default async (input) => {
  await new Promise((resolve) => setTimeout(resolve, input.ms));
  return {code: 0, data: "slow"};
}"""

# Runs until the test sets its gate record's Status to Done: a call that stays running
# for exactly as long as the test needs, whatever the machine's speed.
GATED = """
export default async (input, ctx) => {
  for (;;) {
    const gate = await ctx.records.get("Tasks", input.gate);
    if (gate.fields.Status === "Done") return {code: 0, data: "released"};
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}"""


@needs_node
def test_concurrency_caps_answer_retry_later(capped: Target) -> None:
    other = task_site(capped.api)
    tasks = f"/bases/{capped.site.base_token}/tables/{capped.site.table_id}/records"
    gate = capped.api.ok("POST", tasks, json={"Title": "gate", "Status": "Open"})["record_id"]
    other_gate = capped.api.ok("POST", f"/bases/{other.base_token}/tables/{other.table_id}"
                               "/records", json={"Title": "gate", "Status": "Open"})["record_id"]
    results: list[Any] = []

    def gated(site: TaskSite, record: str) -> None:
        try:
            results.append(capped.run(GATED, {"gate": record}, app_token=site.app_token,
                                      timeout_ms=120_000))
        except ApiFailure as failure:
            results.append(failure)

    threads = [threading.Thread(target=gated, args=(site, record)) for site, record in
               ((capped.site, gate), (capped.site, gate), (other, other_gate))]
    threads[0].start()
    threads[1].start()
    _until(lambda: capped.runtime.stats()["active"] == 2)
    with pytest.raises(ApiFailure) as site_full:
        capped.run(PING, function_id="ping")
    threads[2].start()
    _until(lambda: capped.runtime.stats()["active"] == 3)
    third = task_site(capped.api).app_token
    with pytest.raises(ApiFailure) as platform_full:
        capped.run(PING, function_id="ping", app_token=third)
    capped.api.ok("PATCH", f"{tasks}/{gate}", json={"Status": "Done"})
    capped.api.ok("PATCH", f"/bases/{other.base_token}/tables/{other.table_id}/records/"
                  f"{other_gate}", json={"Status": "Done"})
    for thread in threads:
        thread.join()
    assert results == ["released", "released", "released"]
    for refused, why in ((site_full.value, "already runs 2 FaaS calls, its limit"),
                         (platform_full.value, "the platform already runs 3 FaaS calls")):
        assert refused.code == Code.PLATFORM_BUSY and refused.status == 503
        assert refused.headers == {"Retry-After": "1"}
        assert why in refused.msg
        assert "Executed: no. Retry: retry later." in refused.msg
    capped.healthy()


def _until(condition: Any) -> None:
    deadline = time.monotonic() + READY_S
    while not condition():
        assert time.monotonic() < deadline, "the calls did not start"
        time.sleep(0.01)


# ------------------------------------------------------- between calls of a worker


@needs_node
def test_nothing_of_one_call_reaches_the_next(target: Target, api: Api) -> None:
    mia = api.ok("POST", "/users", json={"name": "Mia"})
    api.ok("POST", f"/sites/{target.app_token}/members", json={"userId": mia["user_id"]})
    source = """
        import fs from "node:fs";
        let stolen = null;
        export default async (input, ctx) => {
          const seen = {caller: ctx.caller.userId, input, files: fs.readdirSync(".")};
          if (stolen) {
            try { await stolen.records.create("Tasks", {Title: "as someone else"});
                  seen.stale = "allowed"; }
            catch (e) { seen.stale = e.code; }
          }
          stolen = ctx;
          fs.writeFileSync("secret-of-" + ctx.caller.userId, JSON.stringify(input));
          return {code: 0, data: seen};
        }"""
    first = target.run(source, {"card": "4111"})
    second = target.run(source, {"card": "5500"},
                        caller=identity.User(mia["user_id"], "Mia"))
    assert first == {"caller": target.caller.user_id, "input": {"card": "4111"}, "files": []}
    # The same warm worker: its module kept the first ctx, which no longer works; the
    # second call sees its own caller and input, and none of the first call's files.
    assert second == {"caller": mia["user_id"], "input": {"card": "5500"}, "files": [],
                      "stale": "invalid_argument"}
    records = api.ok("GET", f"/bases/{target.site.base_token}/tables/{target.site.table_id}"
                            "/records")
    assert records["total"] == 0  # the stale ctx wrote nothing
    target.healthy()


@needs_node
def test_a_forged_record_call_for_another_call_is_ignored(target: Target) -> None:
    out = target.run("""
        import fs from "node:fs";
        export default async () => {
          const channel = Number(process.argv[2]);  // the runner's own pipe
          fs.writeSync(channel, JSON.stringify({type: "record", call: 999999, id: 1, op: "create",
                                          args: ["Tasks", {Title: "forged"}]}) + "\\n");
          fs.writeSync(channel, JSON.stringify({type: "result", call: 999999, value: {code: 0},
                                          quiet: true}) + "\\n");
          return {code: 0, data: "own result"};
        }""")
    assert out == "own result"
    target.healthy()


def test_the_sandbox_says_what_it_enforces() -> None:
    line = SANDBOX.describe()
    assert line.startswith("basedb faas: ")
    if SANDBOX.isolated:
        assert "bubblewrap" in line and "network" in line
    else:
        assert "DEGRADED" in line or "unavailable" in line
    json.dumps(line)
