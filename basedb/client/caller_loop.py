"""Event loops owned by the threads that call an in-process app, driven while they wait.

A thread that calls the app through `InProcessTransport` has nothing to do until the
answer comes, so it can run the app itself: each calling thread gets an event loop of
its own, which runs only while that thread waits for a message from the app
(`CallerLoop.wait_for`). A request then costs no thread switch at all unless the app
hands work to a worker thread, where a loop in another thread costs at least two (the
request in, the answer out) and usually more.

    loops = CallerLoops()
    caller = loops.current()           # this thread's loop, made on first use
    with caller.driving():             # the loop is this thread's until the block ends
        caller.spawn(exchange, serve)  # serve(exchange) puts the app's messages in it
        caller.wait_for(exchange, timeout)
    loops.close()                      # cancels what is left, closes every loop

Each loop holds one long-lived task (the keeper) that anyio takes for the loop's root:
anyio's worker threads (where Starlette runs sync handlers) live as long as that task,
so they are reused from request to request rather than started and stopped with each
one; closing the loop ends the keeper, and the worker threads with it.

Between two waits the loop stands still: an app may only run this way if nothing it
schedules on the loop has to progress between requests (see `InProcessTransport`).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import anyio

Message = tuple[str, Any, Any]
_CLOSED = "The in-process transport was closed."


class LoopClosed(RuntimeError):
    """The caller loop was closed (its transport was closed) while a call used it."""


class Exchange:
    """What the app has sent the caller in one request/response exchange, in order:
    ("start", status, headers), ("body", bytes, None), ("done", None, None) or
    ("error", exception, None). The app waits (`room`) once `max_pending` body chunks
    are waiting for the reader, so a slow reader holds back the app."""

    __slots__ = ("closed", "max_pending", "messages", "room", "task", "waiter")

    def __init__(self, max_pending: int) -> None:
        self.messages: deque[Message] = deque()
        self.max_pending = max_pending
        self.waiter: asyncio.Future[bool] | None = None  # the caller waits on it
        self.room: asyncio.Future[None] | None = None  # the app waits on it
        self.task: asyncio.Task[Any] | None = None
        self.closed = False  # the caller has gone away

    def put(self, message: Message) -> None:
        """A message for the caller (in the loop)."""
        self.messages.append(message)
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(True)

    async def wait_for_room(self) -> None:
        """Wait (in the loop) until the reader has taken enough chunks, or has gone."""
        while not self.closed and len(self.messages) >= self.max_pending:
            self.room = asyncio.get_running_loop().create_future()
            await self.room

    def take(self) -> Message:
        """The next message (in the caller's thread, the loop standing still)."""
        message = self.messages.popleft()
        room = self.room
        if room is not None and not room.done():
            room.set_result(None)
        return message


Serve = Callable[[Exchange], Awaitable[None]]


class CallerLoop:
    """One calling thread's event loop; anyone holding `driving()` may run it."""

    def __init__(self, owner: threading.Thread) -> None:
        self.owner = owner
        self.loop = asyncio.new_event_loop()
        self.closed = False
        self.stopping = False  # being closed: no new requests
        self._lock = threading.Lock()  # held while the loop runs
        self._tasks: set[asyncio.Task[None]] = set()  # the requests in the loop
        self._closing: asyncio.Future[None] = self.loop.create_future()
        self._keeper = self.loop.create_task(self._keep(), name="basedb-caller-loop")
        self._started = False
        with _open_lock:
            _open_loops.add(self)

    async def _keep(self) -> None:
        """The loop's root task, from its first run until it is closed. anyio takes the
        task that `run_until_complete` runs when it first starts a worker thread as the
        root that its worker threads live as long as: so this one does that first."""
        await anyio.to_thread.run_sync(_nothing)
        asyncio.get_running_loop().stop()  # back to `_start`, this task still waiting
        await self._closing

    def _start(self) -> None:
        try:
            self.loop.run_until_complete(self._keeper)
        except RuntimeError:
            if self._keeper.done():  # it failed: the loop cannot be used
                raise
        self._started = True

    @contextmanager
    def driving(self) -> Iterator[CallerLoop]:
        """Hold the loop (waiting for another thread that runs it)."""
        with self._lock:
            if self.closed or self.stopping:
                raise LoopClosed(_CLOSED)
            yield self

    def spawn(self, exchange: Exchange, serve: Serve) -> None:
        """Start `serve(exchange)` in the loop when it next runs (while `driving()`);
        it must answer the exchange even when cancelled."""
        if not self._started:
            self._start()
        task = self.loop.create_task(_run(exchange, serve))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def wait_for(self, exchange: Exchange, timeout: float | None) -> bool:
        """Run the loop (while `driving()`) until the exchange holds a message: True, or
        False when `timeout` seconds passed first."""
        loop = self.loop
        if not exchange.messages:
            # One turn of the loop first (`stop` before `run_forever` runs exactly one):
            # an app that waits on nothing outside the loop has answered by its end,
            # with no future or timer made for the wait.
            loop.stop()
            loop.run_forever()
        while not exchange.messages:
            waiter: asyncio.Future[bool] = loop.create_future()
            exchange.waiter = waiter
            timer = None if timeout is None else loop.call_later(
                timeout, _set_if_pending, waiter, False)
            try:
                loop.run_until_complete(waiter)
            finally:
                exchange.waiter = None
                if timer is not None:
                    timer.cancel()
            if not waiter.result():
                return bool(exchange.messages)
        return True

    def cancel(self, exchange: Exchange) -> None:
        """Stop the exchange's app task (from any thread): it ends when the loop next runs."""
        exchange.closed = True
        task = exchange.task
        if task is None or task.done() or self.closed:
            return
        with suppress(RuntimeError):  # closed meanwhile: the task was cancelled with it
            self.loop.call_soon_threadsafe(_cancel_exchange, exchange)

    def stop(self, exchange: Exchange) -> None:
        """Cancel the exchange's app task (from any thread) and, unless another thread
        is running the loop, run it until the task has ended."""
        self.cancel(exchange)
        if not self._lock.acquire(blocking=False):
            return  # the thread running the loop ends the task
        try:
            task = exchange.task
            if not self.closed and task is not None and not task.done():
                _cancel_exchange(exchange)
                self.loop.run_until_complete(asyncio.wait([task]))
        finally:
            self._lock.release()

    def close(self, *, wait: bool = True) -> bool:
        """Cancel the requests still running and close the loop; True once closed.
        Waits for a thread running the loop to stop first, unless `wait` is False
        (then a loop in use is left open, and False returned)."""
        if self.closed:
            return True
        if not self._lock.acquire(blocking=wait):
            return False
        try:
            if self.closed:
                return True
            self.closed = True
            loop = self.loop
            if loop.is_closed():
                return True
            # Finished tasks may still be listed: their callbacks run when the loop next
            # turns.
            tasks = list(self._tasks)
            for task in tasks:
                task.cancel()
            if tasks:
                loop.run_until_complete(asyncio.wait(tasks))
            if self._started:  # its end stops anyio's worker threads
                self._closing.set_result(None)
                loop.run_until_complete(self._keeper)
            else:
                self._keeper.cancel()
                with suppress(asyncio.CancelledError):
                    loop.run_until_complete(self._keeper)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()
            with _open_lock:
                _open_loops.discard(self)
            return True
        finally:
            self._lock.release()

    def interrupt(self) -> None:
        """Cancel the requests running in the loop (from another thread): the thread
        running them gets their errors and stops running the loop."""
        self.stopping = True
        if self.closed:
            return
        with suppress(RuntimeError):  # the loop was closed meanwhile
            self.loop.call_soon_threadsafe(self._cancel_all)

    def _cancel_all(self) -> None:
        for task in self._tasks:
            task.cancel()


async def _run(exchange: Exchange, serve: Serve) -> None:
    if exchange.closed:  # given up before it started
        exchange.put(("error", LoopClosed("The request was cancelled."), None))
        return
    exchange.task = asyncio.current_task()
    await serve(exchange)


def _nothing() -> None:
    pass


def _set_if_pending(future: asyncio.Future[bool], value: bool) -> None:
    if not future.done():
        future.set_result(value)


def _cancel_exchange(exchange: Exchange) -> None:
    exchange.closed = True
    room = exchange.room
    if room is not None and not room.done():
        room.set_result(None)
    task = exchange.task
    if task is not None and not task.done():
        task.cancel()


class CallerLoops:
    """The caller loops of one transport, one per calling thread; those of threads that
    have ended are closed when the next one is made, and all of them by `close()` or
    when the interpreter shuts down."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._loops: list[CallerLoop] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def current(self) -> CallerLoop:
        """The calling thread's loop (a new one after `close()`)."""
        found: CallerLoop | None = getattr(self._local, "loop", None)
        if found is not None and not found.stopping and self._pid == os.getpid():
            return found
        thread = threading.current_thread()
        with self._lock:
            if self._pid != os.getpid():
                # A forked child inherits loops whose threads it does not have.
                self._loops, self._pid = [], os.getpid()
            ended = [caller for caller in self._loops
                     if caller.stopping or not caller.owner.is_alive()]
            self._loops = [caller for caller in self._loops if caller not in ended]
            made = CallerLoop(thread)
            self._loops.append(made)
        self._local.loop = made
        for caller in ended:
            if not caller.close(wait=False):  # still run by another thread's stream
                with self._lock:
                    self._loops.append(caller)
        return made

    def close(self, *, wait: bool = True) -> None:
        """Close every loop, cancelling what still runs in them; with `wait`, first wait
        for the threads running them to get their answers (errors, once cancelled)."""
        with self._lock:
            loops, self._loops = self._loops, []
        current = threading.current_thread()
        kept: list[CallerLoop] = []
        for caller in loops:
            caller.interrupt()
        for caller in loops:
            # A thread cannot wait for the loop it is running itself (a close from
            # inside the app): that loop is closed when the next one is made.
            runs_it = caller.owner is current and caller.loop.is_running()
            if not caller.close(wait=wait and not runs_it):
                kept.append(caller)
        if kept:
            with self._lock:
                self._loops.extend(kept)


# Every caller loop not yet closed, closed when the interpreter shuts down. anyio's
# worker threads take the daemon flag of the thread that starts them, a caller's, so
# those of the main thread would keep the interpreter waiting for them: they end with
# their loop's keeper task. This runs before the interpreter waits for such threads,
# where `atexit` callbacks run only afterwards.
_open_loops: set[CallerLoop] = set()
_open_lock = threading.Lock()


def _close_at_shutdown() -> None:
    with _open_lock:
        loops = list(_open_loops)
    for caller in loops:
        caller.interrupt()
    for caller in loops:
        caller.close(wait=False)


_register_at_shutdown = getattr(threading, "_register_atexit", atexit.register)
_register_at_shutdown(_close_at_shutdown)
