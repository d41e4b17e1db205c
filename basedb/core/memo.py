"""A thread-safe, size-bounded memo of values derived from keys that never change.

    plans: Memo[tuple[str, str, int], FunctionPlan] = Memo(4096)
    plan = plans.get_or_build((deployment_id, function_id, revision), build)

The key must name everything the value depends on (an id of an immutable row, a revision
counter): a memo is never invalidated, only trimmed, least recently used first. Values
are built outside the lock, so a slow build never blocks readers of other keys; two
threads that miss the same key may both build it, and the first value stored is the one
every caller gets from then on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from cachetools import LRUCache

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


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
