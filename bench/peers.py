"""The invoke benchmark's peers, each a server of its own answering the same query on the
same SQLite file as `basedb serve`:

- the floor: a minimal Starlette + uvicorn app (bench/peer_app.py) that does nothing but
  parse, bind, run and serialise;
- Datasette (a bench-only dependency: `pip install -e '.[bench]'`) with the query as a
  canned query, the way Datasette publishes a parameterised query over HTTP.

    with minimal_app(site, scratch, cpus={0}) as floor: floor.post(body) …
    with datasette(site, scratch, cpus={0}) as peer: peer.get_path(params) …

Each says how to ask it for one set of parameters (`Peer.request`) and checks an answer
against the raw query's rows, so that no peer is timed doing less work than the others.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from bench.orders_site import PARAMS, OrdersSite
from bench.serve_process import pin_process, wait_until_listening
from bench.timing import BenchError

DATASETTE_QUERY = "orders_of_customer"
FLOOR_PATH = "/invoke"
_PLACEHOLDER_RE = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|\?""")


@dataclass(frozen=True, slots=True)
class Peer:
    name: str
    process: subprocess.Popen[bytes]
    port: int
    method: str  # "POST" (a JSON body, like invoke) or "GET" (a query string)
    path: str
    log: Path
    started_at: float  # perf_counter() when the process was started
    ready_at: float  # perf_counter() when it said it was listening

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(self, params: Mapping[str, str]) -> tuple[str, bytes | None]:
        """(path, body) asking this peer for one set of parameters."""
        if self.method == "POST":
            return self.path, json.dumps({"params": dict(params)}).encode("utf-8")
        separator = "&" if "?" in self.path else "?"
        return f"{self.path}{separator}{urlencode(dict(params))}", None

    def rows(self, content: bytes) -> list[str]:
        """The order numbers an answer holds, in order (BenchError when it failed)."""
        try:
            body = json.loads(content)
        except ValueError:
            body = None
        if self.method == "POST":
            if not isinstance(body, dict) or body.get("code") != 0:
                raise BenchError(f"{self.name} answered {content[:300]!r}")
            return [row["订单号"] for row in body["data"]["rows"]]
        if not isinstance(body, list):
            raise BenchError(f"{self.name} answered {content[:300]!r}")
        return [row["订单号"] for row in body]


def datasette_available() -> bool:
    return importlib.util.find_spec("datasette") is not None


def named_sql(sql: str, slots: list[int]) -> str:
    """The compiled query with each `?` named after its parameter (`:customer`), for a
    server that binds by name; quoted text is left alone."""
    names = [param["name"] for param in PARAMS]
    numbered = iter(slots)

    def name(match: re.Match[str]) -> str:
        if match.group(0) != "?":
            return match.group(0)
        slot = next(numbered)
        return f":{names[slot - 1]}"

    renamed = _PLACEHOLDER_RE.sub(name, sql)
    if next(numbered, None) is not None:
        raise BenchError(f"the compiled query has fewer placeholders than slots: {sql}")
    return renamed


@contextmanager
def minimal_app(site: OrdersSite, scratch: Path, *, env: Mapping[str, str],
                cpus: set[int] | None) -> Iterator[Peer]:
    config = scratch / "peer-app.json"
    config.write_text(json.dumps({
        "database": str(site.database), "sql": site.compiled.sql,
        "slots": _slots(site), "names": [param["name"] for param in PARAMS],
        "path": FLOOR_PATH,
    }, ensure_ascii=False), encoding="utf-8")
    argv = [sys.executable, "-m", "bench.peer_app", str(config)]
    with _started("minimal Starlette app", argv, env=_with_bench_path(env),
                  log=scratch / "peer-app.log", ready=_LISTENING_RE, cpus=cpus) as (
            process, port, started, ready):
        yield Peer("minimal Starlette app", process, port, "POST", FLOOR_PATH,
                   scratch / "peer-app.log", started, ready)


@contextmanager
def datasette(site: OrdersSite, scratch: Path, *, env: Mapping[str, str],
              cpus: set[int] | None) -> Iterator[Peer]:
    """Datasette serving the platform's file read-only, the query as a canned query."""
    if not datasette_available():
        raise BenchError("Datasette is not installed (pip install -e '.[bench]')")
    database = site.database
    metadata = scratch / "datasette-metadata.json"
    metadata.write_text(json.dumps({"databases": {database.stem: {"queries": {
        DATASETTE_QUERY: {"sql": named_sql(site.compiled.sql, _slots(site))},
    }}}}, ensure_ascii=False), encoding="utf-8")
    port = _free_port()
    argv = [sys.executable, "-m", "datasette", "serve", str(database), "--metadata",
            str(metadata), "--host", "127.0.0.1", "--port", str(port),
            "--setting", "num_sql_threads", "3"]
    log = scratch / "datasette.log"
    with _started("Datasette", argv, env=env, log=log, ready=_UVICORN_RE, cpus=cpus) as (
            process, _, started, ready):
        path = f"/{database.stem}/{DATASETTE_QUERY}.json"
        yield Peer("Datasette", process, port, "GET", path + "?_shape=array", log, started,
                   ready)


# -------------------------------------------------------------------------- processes

_LISTENING_RE = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")
_UVICORN_RE = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


@contextmanager
def _started(name: str, argv: list[str], *, env: Mapping[str, str], log: Path,
             ready: re.Pattern[str], cpus: set[int] | None,
             ) -> Iterator[tuple[subprocess.Popen[bytes], int, float, float]]:
    with log.open("wb") as sink:
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink,
                                   env=dict(env))
    try:
        if cpus is not None:
            pin_process(process.pid, cpus)
        port = wait_until_listening(name, process, log, ready)
        ready_at = time.perf_counter()
        if cpus is not None:
            pin_process(process.pid, cpus)
        yield process, port, started, ready_at
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _slots(site: OrdersSite) -> list[int]:
    slots = list(site.compiled.slots)
    if not all(isinstance(slot, int) for slot in slots):
        raise BenchError("the benchmark's query reads current_user: a peer cannot bind it")
    return [int(slot) for slot in slots]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _with_bench_path(env: Mapping[str, str]) -> dict[str, Any]:
    """`python -m bench.peer_app` from any directory: the checkout on PYTHONPATH."""
    root = str(Path(__file__).resolve().parent.parent)
    existing = env.get("PYTHONPATH", "")
    return {**env, "PYTHONPATH": root + (os.pathsep + existing if existing else "")}
