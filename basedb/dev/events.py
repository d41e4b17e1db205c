"""The live-reload channel: events published by the session, streamed to every open
page as Server-Sent Events.

    events = Broadcaster()
    events.publish("reload", {"reason": "listTasks"})   # from any thread
    async for chunk in events.stream(stop): …            # one page's text/event-stream
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

HEARTBEAT_S = 15.0
QUEUE_SIZE = 64
MAX_SUBSCRIBERS = 64


class Broadcaster:
    def __init__(self) -> None:
        self._subscribers: set[asyncio.Queue[str | None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.published = 0

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop the streams run on (the server's)."""
        self._loop = loop

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def publish(self, event: str, data: Any) -> None:
        """Send `event` to every open page (safe from any thread)."""
        message = f"id: {next(self._ids)}\nevent: {event}\ndata: {json.dumps(data)}\n\n"
        self.published += 1
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with self._lock:
            queues = list(self._subscribers)
        for queue in queues:
            loop.call_soon_threadsafe(_offer, queue, message)

    def close(self) -> None:
        """End every stream (the server is stopping)."""
        loop = self._loop
        with self._lock:
            queues = list(self._subscribers)
        if loop is None or loop.is_closed():
            return
        for queue in queues:
            loop.call_soon_threadsafe(_offer, queue, None)

    def full(self) -> bool:
        return self.subscribers >= MAX_SUBSCRIBERS

    async def stream(self, hello: dict[str, Any],
                     stopping: Callable[[], bool]) -> AsyncIterator[str]:
        """One page's stream: `hello` first, then every event, a comment now and then
        (so proxies and browsers keep the connection), until the server stops."""
        queue: asyncio.Queue[str | None] = asyncio.Queue(QUEUE_SIZE)
        with self._lock:
            self._subscribers.add(queue)
        try:
            yield f"retry: 500\nevent: hello\ndata: {json.dumps(hello)}\n\n"
            while not stopping():
                try:
                    message = await asyncio.wait_for(queue.get(), timeout=HEARTBEAT_S)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if message is None:
                    return
                yield message
        finally:
            with self._lock:
                self._subscribers.discard(queue)


def _offer(queue: asyncio.Queue[str | None], message: str | None) -> None:
    if queue.full():
        # A page that does not read its events gets the newest only: drop the oldest.
        queue.get_nowait()
    queue.put_nowait(message)
