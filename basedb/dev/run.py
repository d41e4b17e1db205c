"""Running a dev session: the HTTP server and the file watcher on one event loop.

    runner = DevRunner(session, sock=sock, host="127.0.0.1")
    asyncio.run(runner.serve())      # until Ctrl-C (uvicorn's signal handling) or stop()

Saved files arrive from `watchfiles` (the OS's file events, batched: a save that writes
several files is one round); each round runs in a worker thread, one at a time, while
the server keeps answering the page.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import uvicorn
import watchfiles

from basedb.dev.changes import PAGE_DIR, classify, relevant, settled_paths
from basedb.dev.server import DevServerConfig, allowed_hosts, build_dev_app
from basedb.dev.session import DevSession

# watchfiles yields a batch once no event arrived for STEP_MS (at most DEBOUNCE_MS after
# the first): short enough for a quick reload, long enough that an editor's
# write-rename-chmod of one save is one batch.
STEP_MS = 30
DEBOUNCE_MS = 1_600
SHUTDOWN_S = 2


class DevRunner:
    def __init__(self, session: DevSession, *, sock: socket.socket, host: str) -> None:
        self.session = session
        self.sock = sock
        self.port = int(sock.getsockname()[1])
        self.host = host
        self.root = session.root
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        config = DevServerConfig(
            app_token=session.site.app_token, page_root=self.root / PAGE_DIR,
            invoke=session.invoke, forward=session.forward, viewer=session.viewer,
            events=session.events,
            status=session.status, session_id=session.session_id,
            hosts=allowed_hosts(host, self.port), stopping=self._stopping)
        self.server = uvicorn.Server(uvicorn.Config(
            build_dev_app(config), log_level="warning", access_log=False, lifespan="off",
            timeout_graceful_shutdown=SHUTDOWN_S))
        self.rounds_done = 0

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}/sites/{self.session.site.app_token}/"

    def _stopping(self) -> bool:
        return bool(self.server.should_exit)

    def stop(self) -> None:
        """Ask the runner to stop (safe from any thread)."""
        self.server.should_exit = True
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        self.session.events.close()

    async def serve(self) -> None:
        """Serve until stopped; in the main thread, Ctrl-C stops it (uvicorn then raises
        the KeyboardInterrupt it caught, once everything here has ended)."""
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self.session.events.bind(self._loop)
        watcher = asyncio.create_task(self._watch())
        try:
            await self.server.serve(sockets=[self.sock])
        finally:
            self._stop.set()
            self.session.events.close()
            await asyncio.gather(watcher, return_exceptions=True)

    async def _watch(self) -> None:
        assert self._stop is not None
        root = self.root

        def wanted(_change: Any, path: str) -> bool:
            return relevant(root, path) is not None

        async for batch in watchfiles.awatch(root, watch_filter=wanted, step=STEP_MS,
                                             debounce=DEBOUNCE_MS, stop_event=self._stop,
                                             recursive=True):
            changes = classify(root, [Path(path) for path in settled_paths(batch)])
            if changes:
                await asyncio.to_thread(self.session.apply, changes)
            self.rounds_done += 1
