"""What a FaaS worker runs inside, and the command that starts it.

    sandbox = Sandbox.detect(limits)         # once per process; probes this machine
    sandbox.describe()                       # the line the platform logs at start
    launch = sandbox.launch(paths, slot, channel_fd=…, info_fd=…, block_fd=…)

Two kinds, strongest first:

- **bubblewrap** (Linux, `bwrap` installed and user namespaces allowed): the worker gets
  its own user, PID, network, mount, IPC, UTS and cgroup namespaces. It sees only the
  system's read-only /usr (and Node.js), its code directory read-only at /code, and a
  size-limited tmpfs at /work; no other process (it is PID 1 of its namespace), and no
  network but a loopback of its own, plus the platform's egress socket when its function
  declares hosts. `--die-with-parent` ends it with the platform; `--disable-userns` and
  no_new_privs (which bubblewrap always sets) keep it from gaining privileges.
- **process** (macOS, or Linux without bubblewrap): a plain child process in its own
  session with Node.js's permission model (files limited to its directories, no child
  processes or worker threads). The network and other processes of the same user stay
  reachable: `describe()` says so, and `BASEDB_FAAS_SANDBOX=require` refuses to run.

In both, where the platform runs as root each worker runs as a user of its own
(`UID_BASE + slot`, no supplementary groups), and rlimits cap file size, open files,
CPU time and (with a worker user) tasks. With a writable cgroup tree (as root) the
worker's resident memory and tasks are capped there (`cgroups`); otherwise its address
space is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from basedb.core.frozen import frozen_dataclass
from basedb.core.node import CHILD_PATH, node_executable, version_of, version_tuple
from basedb.platform.domain.runtimes.faas.cgroups import CgroupDriver, find_cgroups
from basedb.platform.domain.runtimes.faas.limits import FaasLimits

UID_BASE = 1_800_000_000
PROCESS_RANGES = 16_384  # uids UID_BASE … UID_BASE + 2**24, by platform pid and slot
SLOTS_PER_PROCESS = 1_024
ADDRESS_SPACE_BYTES = 2 * 1024**3  # without a memory cgroup; V8 reserves ~0.8 GB up front
# Host paths the sandbox sees read-only, as they are on the host (symlinks stay symlinks).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
CODE_DIR = "/code"
WORK_DIR = "/work"
PROBE_TIMEOUT_S = 20.0


@frozen_dataclass
class WorkerPaths:
    """A worker's directories on the host: `code` (runner, handler, egress socket) and,
    for a process sandbox, `work` (a bubblewrap worker's /work is a tmpfs instead)."""

    root: Path
    code: Path
    work: Path | None


@frozen_dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    user: int | None  # run as this uid and gid (the platform is root)
    code_dir: str  # as the worker sees it
    uses_info_fd: bool


@frozen_dataclass
class Sandbox:
    kind: str  # "bubblewrap" | "process" | "none" (no usable Node.js)
    node: str | None
    node_version: tuple[int, int]
    limits: FaasLimits
    bwrap: str | None = None
    prlimit: str | None = None
    worker_users: bool = False  # the platform is root: each worker gets its own uid
    cgroups: CgroupDriver | None = None
    problems: tuple[str, ...] = ()  # why it is weaker than the strongest kind

    @property
    def isolated(self) -> bool:
        return self.kind == "bubblewrap"

    # ------------------------------------------------------------------ detection

    @classmethod
    def detect(cls, limits: FaasLimits) -> Sandbox:
        node = node_executable()
        version = None if node is None else version_of(node)
        if node is None or version is None:
            return cls("none", node, (0, 0), limits, problems=("Node.js was not found",))
        parsed = version_tuple(version)
        prlimit = shutil.which("prlimit", path=CHILD_PATH) if sys.platform == "linux" else None
        root = hasattr(os, "geteuid") and os.geteuid() == 0
        problems: list[str] = []
        cgroups = find_cgroups() if root else None
        if cgroups is not None:
            try:
                cgroups.prepare()
                cgroups.clean_stale()
            except OSError as error:
                problems.append(f"the cgroup tree is not writable ({error.strerror})")
                cgroups = None
        elif root and sys.platform == "linux":
            problems.append("no cgroup memory controller")
        base = cls("process", node, parsed, limits, prlimit=prlimit, worker_users=root,
                   cgroups=cgroups)
        if limits.sandbox == "off":
            return base.weaker("BASEDB_FAAS_SANDBOX=off", *problems)
        bwrap = shutil.which("bwrap", path=CHILD_PATH) if sys.platform == "linux" else None
        if bwrap is None:
            reason = ("bubblewrap is not installed (apt-get install bubblewrap)"
                      if sys.platform == "linux" else f"no OS sandbox on {sys.platform}")
            return base.weaker(reason, *problems)
        candidate = Sandbox("bubblewrap", node, parsed, limits, bwrap=bwrap, prlimit=prlimit,
                            worker_users=root, cgroups=cgroups, problems=tuple(problems))
        failure = candidate.probe()
        if failure:
            return base.weaker(f"bubblewrap could not start a worker ({failure})", *problems)
        return candidate

    def weaker(self, *problems: str) -> Sandbox:
        return Sandbox(self.kind, self.node, self.node_version, self.limits,
                       bwrap=self.bwrap, prlimit=self.prlimit, worker_users=self.worker_users,
                       cgroups=self.cgroups, problems=(*self.problems, *problems))

    def probe(self) -> str:
        """Start Node.js in this sandbox once; what went wrong, or ""."""
        scratch = Path(tempfile.gettempdir())
        paths = WorkerPaths(scratch, scratch, None)
        launch = self.launch(paths, slot=0, channel_fd=None, info_fd=None, block_fd=None,
                             script=["-e", ""])
        try:
            done = subprocess.run(launch.argv, env=launch.env, cwd="/",
                                  user=launch.user, group=launch.user,
                                  extra_groups=[] if launch.user is not None else None,
                                  capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
        except (OSError, subprocess.SubprocessError) as error:
            return str(error)
        if done.returncode != 0:
            text = (done.stderr or done.stdout).decode("utf-8", "replace").strip()
            return text.splitlines()[-1][:200] if text else f"exit status {done.returncode}"
        return ""

    # --------------------------------------------------------------------- launch

    def user_for(self, slot: int) -> int | None:
        """The uid (and gid) of the worker in `slot`; None: the platform's own. Two
        platform processes (a server and a command's embedded platform) get different
        ranges, so that no two live workers share a user."""
        if not self.worker_users:
            return None
        return UID_BASE + ((os.getpid() % PROCESS_RANGES) * SLOTS_PER_PROCESS
                           + slot % SLOTS_PER_PROCESS)

    def code_dir(self, paths: WorkerPaths) -> str:
        """The worker's code directory as the worker sees it."""
        return CODE_DIR if self.isolated else str(paths.code)

    def launch(self, paths: WorkerPaths, *, slot: int, channel_fd: int | None,
               info_fd: int | None, block_fd: int | None,
               script: list[str] | None = None) -> Launch:
        """The command for one worker. `script` replaces the runner (for the probe).
        bubblewrap runs as the worker's user, so that user must be able to pass through
        the directories above `paths.code` (`workdirs` makes them 0711)."""
        assert self.node is not None
        user = self.user_for(slot)
        inside = self.isolated
        code = self.code_dir(paths)
        work = WORK_DIR if inside else str(paths.work or paths.code)
        env = {"PATH": CHILD_PATH, "HOME": work, "TMPDIR": work, "LANG": "C.UTF-8"}
        if os.environ.get("TZ"):
            env["TZ"] = os.environ["TZ"]  # datetime cells are in the platform's local time
        node = [self.node, *self._node_flags(code, work)]
        node += script if script is not None else [f"{code}/runner.mjs", str(channel_fd)]
        argv = self._rlimits(user) + (self._bubblewrap(paths, env, info_fd, block_fd)
                                      if inside else []) + node
        return Launch(argv=argv, env={} if inside else env, cwd=work if not inside else "/",
                      user=user, code_dir=code, uses_info_fd=inside and info_fd is not None)

    def _node_flags(self, code: str, work: str) -> list[str]:
        permission = ("--permission" if self.node_version >= (22, 13)
                      else "--experimental-permission")
        flags = [f"--max-old-space-size={self.limits.heap_mb}", permission,
                 f"--allow-fs-read={code}", f"--allow-fs-read={work}",
                 f"--allow-fs-write={work}"]
        if self.node_version >= (20, 11):
            flags.append("--disable-warning=ExperimentalWarning")
        return flags

    def _rlimits(self, user: int | None) -> list[str]:
        if self.prlimit is None:
            return []
        limits = self.limits
        cpu = limits.worker_cpu_seconds * 2
        argv = [self.prlimit, "--core=0", f"--fsize={limits.disk_mb * 1024 * 1024}",
                f"--nofile={limits.open_files}", f"--cpu={cpu}:{cpu + 5}"]
        if user is not None:
            argv.append(f"--nproc={limits.max_tasks}")  # counted per user: its own
        if self.cgroups is None:
            argv.append(f"--as={ADDRESS_SPACE_BYTES}")
        return [*argv, "--"]

    def _bubblewrap(self, paths: WorkerPaths, env: dict[str, str], info_fd: int | None,
                    block_fd: int | None) -> list[str]:
        assert self.bwrap is not None and self.node is not None
        argv = [self.bwrap, "--unshare-all", "--unshare-user", "--disable-userns",
                "--die-with-parent", "--as-pid-1", "--new-session", "--clearenv"]
        for name, value in env.items():
            argv += ["--setenv", name, value]
        for path in SYSTEM_PATHS:
            if os.path.islink(path):
                argv += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                argv += ["--ro-bind", path, path]
        node_home = Path(os.path.realpath(self.node)).parent.parent
        if not any(node_home.is_relative_to(p) for p in SYSTEM_PATHS):
            argv += ["--ro-bind", str(node_home), str(node_home)]
        argv += ["--ro-bind-try", "/etc/localtime", "/etc/localtime",
                 "--proc", "/proc", "--dev", "/dev",
                 "--size", str(self.limits.disk_mb * 1024 * 1024), "--perms", "0700",
                 "--tmpfs", WORK_DIR, "--ro-bind", str(paths.code), CODE_DIR,
                 "--chdir", WORK_DIR]
        if info_fd is not None and block_fd is not None:
            argv += ["--info-fd", str(info_fd), "--block-fd", str(block_fd)]
        return [*argv, "--"]

    # ------------------------------------------------------------------- reporting

    def describe(self) -> str:
        """One line: what is enforced, and what is not, for the platform log at start."""
        limits = self.limits
        if self.kind == "none":
            return "basedb faas: sandbox unavailable: Node.js 20+ was not found; FaaS calls " \
                   "fail until it is installed"
        users = (f"workers run as their own users (uid {UID_BASE}+)" if self.worker_users
                 else "workers run as the platform's user")
        memory = (f"{self.cgroups.describe()}: memory {limits.memory_mb} MB, tasks "
                  f"{limits.max_tasks}" if self.cgroups is not None
                  else f"address space {ADDRESS_SPACE_BYTES // 1024**3} GB (no memory cgroup)")
        rlimits = ("rlimits: file size, open files, CPU time"
                   + (", tasks" if self.worker_users else "") if self.prlimit
                   else "no rlimits (prlimit not found)")
        common = (f"{users}; {memory}; {rlimits}; V8 heap {limits.heap_mb} MB; Node.js "
                  f"permission model; timeouts ≤ {limits.max_timeout_ms // 1000} s; "
                  f"{limits.global_concurrency} calls at once ({limits.site_concurrency} per "
                  "site)")
        if self.kind == "bubblewrap":
            line = ("basedb faas: sandbox bubblewrap: own user, PID, network, mount and IPC "
                    "namespaces; no network but declared hosts (egress proxy); /work tmpfs "
                    f"{limits.disk_mb} MB; {common}")
        else:
            line = ("basedb faas: sandbox DEGRADED to a plain process: handlers can reach "
                    "the network (loopback and the platform included) and signal processes "
                    "of the same user; no disk quota; enforced: " + common)
        if self.problems:
            line += f" [{'; '.join(self.problems)}]"
        return line
