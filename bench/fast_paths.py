"""What each fast path of basedb buys: one workload run with it and without it, in the
same run, counted in instructions (valgrind's callgrind) or, without valgrind, in CPU
seconds. docs/performance.md lists the fast paths and the figures this prints.

    python -m bench.fast_paths [--only frozen,gc] [--json]

Each workload runs as a fresh process (`--child`), once as basedb is and once for each
fast path measured on it with that path switched off (`SWITCHES`): the switch replaces
the shortcut with the plain code it stands in for (a plain frozen dataclass, the
router's own walk, jsonschema's validator, a worker thread), so both runs do the same
work and answer the same. Instruction counts do not depend on what else the machine
runs, so one run of each is enough; CPU seconds do, so read them with care.

Workloads: `deploy-dry` (`basedb deploy --dry-run` of a generated 200-function workspace
(`--deploy-functions`),
the whole process), `redeploy` (a no-change `basedb deploy` of it to the embedded
platform, the whole process), `api` (`basedb api GET /users/me`: one request to the
embedded platform, the whole process), `check` (checking a 500-function workspace without the SQL
cache, in one process), `invoke` (300 Database Function invokes in-process, after 20 to
warm up) and `read` (300 GETs of a table's fields).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import gc
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

WORKLOADS = ("deploy-dry", "redeploy", "api", "check", "invoke", "read")
WHOLE = ("deploy-dry", "redeploy", "api")  # counted as whole processes
DEPLOY_FUNCTIONS = 200
CHECK_FUNCTIONS = 500
INVOKES, WARM_INVOKES = 300, 20
_LOOPS = [1]  # 0: a run of the set-up alone, to subtract (see `measure`)
ORDERS = 2_000
_COLLECTED_RE = re.compile(r"Collected : (\d+)")


# --------------------------------------------------------------------------- switches


def _no_gc_tuning() -> None:
    setattr(gc, "disable", lambda: None)  # noqa: B010 (a module's function replaced)
    setattr(gc, "freeze", lambda: None)  # noqa: B010


def _eager_routes() -> None:
    from basedb.platform.web import app

    build = app.build_app

    def eager(*args: Any, **kwargs: Any) -> Any:
        return build(*args, **{**kwargs, "lazy_routes": False})

    _replace_build_app(eager)


def _no_route_index() -> None:
    from basedb.platform.web.app import IndexedRouter

    setattr(IndexedRouter, "candidates", lambda self, path: [])  # noqa: B010


def _no_direct_routes() -> None:
    from basedb.platform.web import app

    _replace_build_app(functools.partial(app.build_app, direct_routes=False))


def _replace_build_app(build: Callable[..., Any]) -> None:
    from basedb.platform import local
    from basedb.platform.web import app

    setattr(app, "build_app", build)  # noqa: B010
    setattr(local, "build_app", build)  # noqa: B010 (local imported it by name)


def _no_answer_in_memory() -> None:
    from basedb.client.transport import InProcessTransport

    # What the transport answers when it cannot: the client then builds an httpx
    # Request and sends it through the transport as any other.
    setattr(InProcessTransport, "answer_in_memory",  # noqa: B010
            lambda self, *args, **kwargs: None)


def _no_caller_loop() -> None:
    from basedb.platform.web.app import PlatformApp

    PlatformApp.runs_on_caller_loop = False


def _no_fast_schema() -> None:
    from basedb.platform.domain import fast_schema

    setattr(fast_schema, "compile_is_valid", lambda schema: None)  # noqa: B010


def _no_sql_on_loop() -> None:
    from basedb.platform.domain import invoke
    from basedb.platform.web.routes import functions

    setattr(functions, "start_on_loop",  # noqa: B010
            lambda call, chars: invoke.Pending(functools.partial(invoke.finish, call)))


_HTTPX_ASGI = False


def _httpx_asgi() -> None:
    global _HTTPX_ASGI
    _HTTPX_ASGI = True


@dataclasses.dataclass(frozen=True)
class Switch:
    name: str
    workload: str
    off: Callable[[], None]
    what: str


SWITCHES: tuple[Switch, ...] = (
    Switch("gc", "redeploy", _no_gc_tuning,
           "gc.disable/gc.freeze in cli/, check/, deploy and the platform"),
    Switch("gc@check", "check", _no_gc_tuning, "the same, on a check"),
    Switch("lazy-routes", "redeploy", _eager_routes,
           "platform/web/routes/index.py: route groups imported on first call"),
    Switch("lazy-routes@api", "api", _eager_routes,
           "the same, on a one-request command"),
    Switch("route-index", "read", _no_route_index,
           "platform/web/app.py IndexedRouter: routes tried by path shape"),
    Switch("direct-routes", "invoke", _no_direct_routes,
           "platform/web/app.py DirectRoutes: invoke matched ahead of the router"),
    Switch("answer-in-memory", "invoke", _no_answer_in_memory,
           "client/client.py _answer_in_memory: no httpx Request/Response in-process"),
    Switch("caller-loop", "invoke", _no_caller_loop,
           "client/caller_loop.py: the app runs on the calling thread's own loop"),
    Switch("httpx-asgi", "invoke", _httpx_asgi,
           "client/transport.py + caller_loop.py replaced by httpx.ASGITransport, "
           "driven from sync code by one event loop"),
    Switch("fast-schema", "invoke", _no_fast_schema,
           "platform/domain/fast_schema.py: inputSchema checks as compiled closures"),
    Switch("sql-on-loop", "invoke", _no_sql_on_loop,
           "domain/invoke.py start_on_loop: cheap calls answered on the event loop"),
)
BY_NAME = {switch.name: switch for switch in SWITCHES}


# --------------------------------------------------------------------------- child


class _Counter:
    """The CPU seconds of the measured part (of the whole process, for a whole one)."""

    def __init__(self, whole: bool) -> None:
        self.whole = whole
        self.cpu = 0.0
        self._started = 0.0

    def __enter__(self) -> None:
        self._started = time.process_time()

    def __exit__(self, *exc: object) -> None:
        self.cpu = time.process_time() - (0.0 if self.whole else self._started)


def _cli(args: list[str]) -> None:
    from basedb.cli import main

    try:
        main(args)
    except SystemExit as done:
        if done.code not in (0, None):
            raise


def child(workload: str, scratch: Path, without: str | None, loops: int) -> None:
    _LOOPS[0] = loops
    if without is not None:
        BY_NAME[without].off()
    counter = _Counter(whole=workload in WHOLE)
    if workload == "deploy-dry":
        with counter:
            _cli(["deploy", "--dry-run", "--json", "-C", str(scratch / "deploy-ws")])
    elif workload == "redeploy":
        with counter:
            _cli(["deploy", "--json", "-C", str(scratch / "deploy-ws")])
    elif workload == "api":
        with counter:
            _cli(["api", "GET", "/users/me"])
    elif workload == "check":
        from basedb.check.run import check_directory
        from basedb.check.sql import rules

        rules.available_processes = lambda: 1  # one process: the count is this one's
        with counter:
            if _LOOPS[0]:
                check_directory(scratch / "check-ws", cache=False)
            else:
                from basedb.workspace.loader import load_workspace

                load_workspace(scratch / "check-ws")  # what is measured is the check
    elif workload == "invoke":
        _invoke(scratch, counter)
    elif workload == "read":
        _read(scratch, counter)
    print(json.dumps({"cpu": counter.cpu}))


def _embedded(data_dir: Path) -> Any:
    from basedb.client.client import EMBEDDED_BASE_URL, Client
    from basedb.client.transport import InProcessTransport
    from basedb.platform import open_platform

    platform = open_platform(data_dir)
    return platform, Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                            transport=InProcessTransport(platform.app))


def _invoke(scratch: Path, counter: _Counter) -> None:
    from bench.orders_site import FUNCTION_ID, OrdersSite

    site = json.loads((scratch / "orders.json").read_text(encoding="utf-8"))
    params = OrdersSite.params_sequence(INVOKES + WARM_INVOKES, seed=7)
    path = f"/sites/{site['app_token']}/functions/{FUNCTION_ID}/invoke"
    platform, client = _embedded(scratch / "orders-data")
    send: Callable[[dict[str, Any]], Any] = lambda each: client.request(  # noqa: E731
        "POST", path, json={"params": each})
    if _HTTPX_ASGI:
        send = _httpx_sender(platform, path)
    try:
        for each in params[:WARM_INVOKES]:
            send(each)
        with counter:
            for each in params[WARM_INVOKES:] * _LOOPS[0]:
                send(each)
    finally:
        client.close()
        platform.close()


def _httpx_sender(platform: Any, path: str) -> Callable[[dict[str, Any]], Any]:
    """Invokes through httpx's own ASGI transport, from synchronous code: an
    AsyncClient on one event loop that each call runs until its answer."""
    import asyncio

    import httpx

    from basedb.client.client import EMBEDDED_BASE_URL, api_path

    loop = asyncio.new_event_loop()
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=platform.app),
                               base_url=EMBEDDED_BASE_URL,
                               headers={"Authorization": f"Bearer {platform.owner_token}"})
    url = api_path(path)

    def send(each: dict[str, Any]) -> Any:
        response = loop.run_until_complete(client.post(url, json={"params": each}))
        envelope = response.json()
        if envelope.get("code") != 0:
            raise RuntimeError(f"invoke failed: {envelope}")
        return envelope

    return send


def _read(scratch: Path, counter: _Counter) -> None:
    from bench.orders_site import FIELDS, TABLE, order_rows

    platform, client = _embedded(scratch / "read-data")
    try:
        base = client.request("POST", "/bases", json={"name": "r"})["data"]["base_token"]
        table = client.request("POST", f"/bases/{base}/tables", json={
            "name": TABLE, "fields": FIELDS})["data"]["id"]
        client.request("POST", f"/bases/{base}/tables/{table}/records/batch_create", json={
            "fields": [f["name"] for f in FIELDS],
            "rows": next(order_rows(50, random.Random(7)))})
        path = f"/bases/{base}/tables/{table}/fields"
        for _ in range(WARM_INVOKES):
            client.request("GET", path)
        with counter:
            for _ in range(INVOKES * _LOOPS[0]):
                client.request("GET", path)
    finally:
        client.close()
        platform.close()


# --------------------------------------------------------------------------- parent


def _setup(scratch: Path, workloads: set[str], env: dict[str, str], deploy_functions: int,
           check_functions: int) -> None:
    from bench.deploy_artifact import write_generated_workspace

    if workloads & {"deploy-dry", "redeploy"}:
        from bench.suites.deploy import point_workspace_at, provision

        root = write_generated_workspace(scratch / "deploy-ws", deploy_functions)
        os.environ["BASEDB_DATA_DIR"] = env["BASEDB_DATA_DIR"]
        [app] = provision(type("Context", (), {"env": env})(), root, count=1)
        point_workspace_at(root, app)
        subprocess.run([sys.executable, "-m", "basedb", "deploy", "--json", "-C", str(root)],
                       env=env, check=True, capture_output=True)
    if "check" in workloads:
        write_generated_workspace(scratch / "check-ws", check_functions)
    if "invoke" in workloads:
        from bench.orders_site import build_orders_site

        site = build_orders_site(scratch / "orders-data", records=ORDERS, seed=7)
        (scratch / "orders.json").write_text(json.dumps({"app_token": site.app_token}),
                                             encoding="utf-8")


def measure(workload: str, scratch: Path, env: dict[str, str], without: str | None,
            callgrind: bool, *, loops: int = 1) -> float:
    """Instructions (callgrind) or CPU seconds of one run of `workload`. Callgrind counts
    the whole process; `loops` 0 runs the set-up alone, which `main` subtracts from an
    in-process workload's count."""
    command = [sys.executable, "-m", "bench.fast_paths", "--child", workload,
               "--scratch", str(scratch), "--loops", str(loops)] + (
                   ["--without", without] if without else [])
    if callgrind:
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                   *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{workload} without {without}: {done.stderr[-2000:]}")
    if callgrind:
        return float(sum(int(n) for n in _COLLECTED_RE.findall(done.stderr)))
    return float(json.loads(done.stdout.strip().splitlines()[-1])["cpu"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fast_paths", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated fast paths: " + ", ".join(BY_NAME))
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--deploy-functions", type=int, default=DEPLOY_FUNCTIONS,
                        help=f"functions of the deploy workloads (default {DEPLOY_FUNCTIONS})")
    parser.add_argument("--check-functions", type=int, default=CHECK_FUNCTIONS,
                        help=f"functions of the check workload (default {CHECK_FUNCTIONS})")
    parser.add_argument("--cpu", action="store_true",
                        help="count CPU seconds even when valgrind is installed")
    parser.add_argument("--child", choices=WORKLOADS, help=argparse.SUPPRESS)
    parser.add_argument("--scratch", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--without", choices=list(BY_NAME), help=argparse.SUPPRESS)
    parser.add_argument("--loops", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.scratch, args.without, args.loops)
        return 0
    chosen = [BY_NAME[name.strip()] for name in args.only.split(",")] if args.only else list(
        SWITCHES)
    callgrind = not args.cpu and shutil.which("valgrind") is not None
    unit = "instructions" if callgrind else "CPU seconds"
    from bench.registry import isolated_env

    rows = []
    with tempfile.TemporaryDirectory(prefix="basedb-fast-paths-") as folder:
        scratch = Path(folder)
        env = isolated_env(scratch)
        env["PYTHONHASHSEED"] = "0"
        workloads = {switch.workload for switch in chosen}
        _setup(scratch, workloads, env, args.deploy_functions, args.check_functions)
        for workload in sorted(workloads):  # fills the bytecode cache: compiling counts not
            measure(workload, scratch, env, None, callgrind=False)
        with_it = {workload: measure(workload, scratch, env, None, callgrind)
                   for workload in sorted(workloads)}
        # Under callgrind, an in-process workload's set-up (imports, opening the
        # platform) is counted too: a run without the loop is subtracted from each count.
        setup = {workload: (measure(workload, scratch, env, None, callgrind, loops=0)
                            if callgrind and workload not in WHOLE else 0.0)
                 for workload in sorted(workloads)}
        for switch in chosen:
            base = setup[switch.workload]
            mine = with_it[switch.workload] - base
            without = measure(switch.workload, scratch, env, switch.name, callgrind) - base
            rows.append({"fastPath": switch.name, "workload": switch.workload,
                         "with": mine, "without": without,
                         "buys": (without - mine) / without if without else 0.0,
                         "what": switch.what})
            print(f"[fast-paths] {switch.name}: {mine:,.4f} with, {without:,.4f} without: "
                  f"{rows[-1]['buys']:+.1%}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"unit": unit, "figures": rows}, indent=2))
        return 0
    print(f"{'fast path':<22} {'workload':<11} {'with':>15} {'without':>15} {'buys':>7}"
          f"   ({unit})")
    for row in rows:
        shown = ((f"{row['with']:>15,.0f} {row['without']:>15,.0f}") if callgrind
                 else f"{row['with']:>15.4f} {row['without']:>15.4f}")
        print(f"{row['fastPath']:<22} {row['workload']:<11} {shown} {row['buys']:>+7.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
