"""What `basedb serve` prints on stderr (its access log and the platform log), capped.

A server's stderr usually ends in a file or a journal that nobody prunes, and what goes
there is partly up to its callers: every request adds an access line, every FaaS call
what its handler printed. So stderr gets a budget: at most `bytes_per_minute` (a token
bucket that holds one minute's worth), and no entry longer than `ENTRY_CHARS`. What is
over the budget is counted, not printed; the next line that fits is preceded by one
saying how much was left out. Nothing is lost that anyone reads: every entry of the
platform log is kept in its table (`basedb logs`, capped in bytes per owner and in all,
see `basedb.platform.storage.platform_log`).

    server_output.STDERR.write(line)          # a line or an entry, ending in "\\n"
    server_output.STDERR.configure(bytes_per_minute=…)  # basedb serve --output-kib-per-minute
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

KIB = 1024
BYTES_PER_MINUTE = 1024 * KIB
ENTRY_CHARS = 4 * KIB


class CappedOutput:
    """A stream with a byte budget per minute; safe to share between threads."""

    def __init__(self, *, bytes_per_minute: int = BYTES_PER_MINUTE,
                 stream: Callable[[], TextIO] = lambda: sys.stderr,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream  # looked up at each write: tests and tools replace stderr
        self._clock = clock
        self._lock = threading.Lock()
        self.configure(bytes_per_minute=bytes_per_minute)

    def configure(self, *, bytes_per_minute: int) -> None:
        with self._lock:
            self.bytes_per_minute = bytes_per_minute
            self._tokens = float(bytes_per_minute)
            self._at = self._clock()
            self.dropped_lines = 0
            self.dropped_bytes = 0

    def write(self, text: str) -> bool:
        """Print `text` (clipped to `ENTRY_CHARS`) if the budget allows; whether it was."""
        if len(text) > ENTRY_CHARS:
            cut = len(text) - ENTRY_CHARS
            text = (text[:ENTRY_CHARS] + f"… ({cut} more characters not printed; the "
                    "platform log keeps the entry: basedb logs)\n")
        size = len(text.encode("utf-8", "replace"))
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.bytes_per_minute),
                               self._tokens + (now - self._at) * self.bytes_per_minute / 60)
            self._at = now
            # The note of what was left out comes first, and is paid for like a line.
            shown = self._dropped_note() + text if self.dropped_lines else text
            shown_size = size if shown is text else len(shown.encode("utf-8", "replace"))
            if shown_size > self._tokens:
                self.dropped_lines += 1
                self.dropped_bytes += size
                return False
            self._tokens -= shown_size
            text = shown
            self.dropped_lines = self.dropped_bytes = 0
            stream = self._stream()
            stream.write(text)
            stream.flush()
        return True

    def _dropped_note(self) -> str:
        return (f"basedb platform: {self.dropped_lines} lines ({self.dropped_bytes} bytes) of "
                f"this server's output were not printed: it prints at most "
                f"{self.bytes_per_minute // KIB} KiB a minute (basedb serve "
                "--output-kib-per-minute). The platform log keeps every entry: basedb logs "
                "LOGID, basedb logs --platform.\n")


STDERR = CappedOutput()
"""The process's stderr, as the platform writes to it."""
