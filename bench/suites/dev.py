"""`basedb dev`: save-to-reload of a one-function edit on the example site, against a
page-only edit measured in the same run.

A round saves a file of the workspace and waits for the page's `reload` event on the
live-reload channel (Server-Sent Events over a loopback socket), as a browser tab of
`basedb dev` receives it:

- function: a new line in listMembers/main.sql (a different query text every round, so
  its analysis is never a cache hit): watcher, incremental check, development draft sent
  to the platform, reload (target ≤ 300 ms);
- floor: a new line in src/style.css: the same watcher and channel, with no check and
  no sync. The ratio is what checking and syncing a function add to a bare reload.

Rounds alternate between the two edits. The platform is embedded in this process, as
`basedb dev` on the local profile has it.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.registry import BenchContext, BenchError, BenchResult, Figure, Target, register
from bench.timing import Samples

TARGET = Target(0.300, "seconds")
WAIT_S = 30.0
SETTLE_S = 0.2  # between rounds: lets the watcher's previous batch end


@register("dev", "basedb dev: save-to-reload of a one-function edit vs. a page-only edit")
def dev_benchmark(ctx: BenchContext) -> BenchResult:
    rounds = 5 if ctx.settings.quick else 15
    root = ctx.scratch / "dev-site"
    ctx.log("dev: initialising the example site …")
    subprocess.run([*ctx.basedb, "init", str(root), "--template", "example"], env=ctx.env,
                   check=True, capture_output=True)
    function = Samples("one-function edit → reload")
    floor = Samples("page-only edit → reload")
    sql = root / "database-functions" / "listMembers" / "main.sql"
    css = root / "src" / "style.css"
    with _environment(ctx.env), _dev(root) as (port, lines):
        stream = _EventStream(port)
        try:
            stream.next()  # hello
            ctx.log(f"dev: {rounds} rounds of each edit …")
            for number in range(rounds):
                for path, samples, suffix in ((sql, function, f"-- edit {number}\n"),
                                              (css, floor, f"/* edit {number} */\n")):
                    time.sleep(SETTLE_S)
                    started = time.perf_counter()
                    with path.open("a", encoding="utf-8") as handle:
                        handle.write(suffix)
                    stream.wait_for("reload")
                    samples.seconds.append(time.perf_counter() - started)
        finally:
            stream.close()
    synced = sum(1 for line in lines if line.startswith("dev draft:") and "sent" in line)
    if synced < rounds + 1:
        raise BenchError(f"dev: only {synced} development drafts were sent for {rounds} "
                         "function edits; the rounds did not measure what they say")
    return BenchResult("dev", [Figure("save-to-reload", function, floor, TARGET)],
                       details={"rounds": rounds, "draftsSent": synced})


@contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update({k: v for k, v in env.items() if k.startswith("BASEDB_")})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def _dev(root: Path) -> Iterator[tuple[int, list[str]]]:
    from basedb.cli.serve import bind_socket
    from basedb.client.client import connect
    from basedb.client.profiles import LOCAL
    from basedb.client.sites import SiteApi
    from basedb.dev.run import DevRunner
    from basedb.dev.session import DevSession
    from basedb.platform import open_platform
    from basedb.workspace.config import workspace_app_token

    lines: list[str] = []
    with connect(LOCAL, embedded=open_platform) as client:
        session = DevSession(root=root, site=SiteApi(client, workspace_app_token(root)),
                             out=lines.append)
        sock = bind_socket("127.0.0.1", 0)
        runner = DevRunner(session, sock=sock, host="127.0.0.1")
        session.start()
        thread = threading.Thread(target=asyncio.run, args=(runner.serve(),), daemon=True)
        thread.start()
        try:
            yield runner.port, lines
        finally:
            runner.stop()
            thread.join(WAIT_S)
            sock.close()
            session.close()


class _EventStream:
    def __init__(self, port: int) -> None:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise BenchError("dev: the dev server did not start") from None
                time.sleep(0.02)
        self.sock.sendall(f"GET /_basedb/dev/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                          "Accept: text/event-stream\r\n\r\n".encode())
        self.buffer = b""
        self._until(b"\r\n\r\n")

    def _until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise BenchError("dev: the live-reload channel closed")
            self.buffer += chunk
        found, self.buffer = self.buffer.split(marker, 1)
        return found

    def next(self) -> tuple[str, object]:
        while True:
            block = self._until(b"\n\n").decode()
            name = data = None
            for line in block.splitlines():
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
            if name is not None:
                return name, data

    def wait_for(self, event: str) -> None:
        while True:
            name, data = self.next()
            if name == event:
                return
            if name == "status":
                raise BenchError(f"dev: a round ended without a reload: {data}")

    def close(self) -> None:
        self.sock.close()
