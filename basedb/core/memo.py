"""A thread-safe, size-bounded memo of values derived from keys that never change.

    plans: Memo[tuple[str, str, int], FunctionPlan] = Memo(4096)
    plan = plans.get_or_build((deployment_id, function_id, revision), build)

The key must name everything the value depends on (an id of an immutable row, a revision
counter): a memo is never invalidated, only trimmed, least recently used first. Values
are built outside the lock, so a slow build never blocks readers of other keys; two
threads that miss the same key may both build it, and the first value stored is the one
every caller gets from then on.

Code that must stay cheap — a turn of the server's event loop — runs inside
`memos_only()`: there a miss raises `NotBuilt` instead of building, and the caller
hands the work to a thread that may build.

    try:
        with memos_only():
            plan = plans.get_or_build(key, build)   # NotBuilt on a miss
    except NotBuilt:
        ...  # do it in a worker thread
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Generic, TypeVar

from cachetools import LRUCache

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


_builds_off: ContextVar[bool] = ContextVar("basedb_memo_builds_off", default=False)


class NotBuilt(Exception):
    """A memo missed inside `memos_only()`, where nothing may be built."""


@contextmanager
def memos_only() -> Iterator[None]:
    """Within the block (in this thread or task), a memo miss raises NotBuilt."""
    token = _builds_off.set(True)
    try:
        yield
    finally:
        _builds_off.reset(token)


def require_builds() -> None:
    """Raise NotBuilt inside `memos_only()`: for work outside a memo (a read of many
    rows, say) that must not happen there either."""
    if _builds_off.get():
        raise NotBuilt


class Memo(Generic[K, V]):
    """An LRU map from keys to the values built for them, safe to share between threads."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._items: LRUCache[K, V] = LRUCache(maxsize)
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            return self._items.get(key)

    def get_or_build(self, key: K, build: Callable[[], V]) -> V:
        with self._lock:
            found = self._items.get(key)
        if found is not None:
            return found
        require_builds()
        built = build()
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                return found
            self._items[key] = built
        return built

    def held(self) -> list[K]:
        """The keys held now, least recently used first."""
        with self._lock:
            return list(self._items.keys())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
