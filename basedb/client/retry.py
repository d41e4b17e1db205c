"""When a request is sent again, and how long basedb waits first.

    rate limited (Lark 99991400, HTTP 429)  any method  the gateway refused it unrun;
                                                        waits `x-ogw-ratelimit-reset`
    no connection made (refused, DNS, …)    any method  nothing was sent
    HTTP 5xx, timeout, connection lost      reads only  a write may have taken effect:
                                                        it is never sent blindly again
                                                        (the deploy pipeline reads back)

Attempts are bounded (`RetryPolicy.attempts`, 4 by default, so at most 3 retries) and
each wait is exponential backoff with full jitter, capped; a rate limit's reset header
replaces the backoff when it says longer, plus up to one base delay of jitter so that
many clients do not return in the same instant.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from basedb.core.frozen import frozen_dataclass

READ_METHODS = frozenset({"GET", "HEAD"})
RATE_LIMIT_RESET_HEADER = "x-ogw-ratelimit-reset"


def pause(seconds: float) -> None:
    """Wait (tests replace this to record the waits instead)."""
    time.sleep(seconds)


@frozen_dataclass
class RetryPolicy:
    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_reset_wait: float = 60.0
    """A reset header longer than this is not waited for: the error is reported."""
    jitter: Callable[[], float] = random.random

    def backoff(self, retry: int) -> float:
        """The wait before retry number `retry` (1, 2, …): full jitter."""
        ceiling = min(self.max_delay, self.base_delay * (2 ** (retry - 1)))
        return ceiling * self.jitter()

    def rate_limit_wait(self, retry: int, reset: float | None) -> float | None:
        """The wait before retrying a rate-limited request; None when the reset is too
        far off to wait for."""
        if reset is None:
            return self.backoff(retry)
        if reset > self.max_reset_wait:
            return None
        return max(reset, 0.0) + self.base_delay * self.jitter()

    def wait(self, seconds: float) -> None:
        if seconds > 0:
            pause(seconds)


def parse_reset(value: str | None) -> float | None:
    """`x-ogw-ratelimit-reset`: seconds until the limit resets (a number)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 and seconds == seconds else None


NO_RETRIES = RetryPolicy(attempts=1)
