"""What tests that start basedb (or Chromium) in another process share: stopping a
server as Ctrl-C does, and finding the browser."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

# Headless Chromium for the browser tests: $BASEDB_TEST_CHROMIUM, else Debian's name or
# the other common one; None skips those tests.
CHROMIUM = (os.environ.get("BASEDB_TEST_CHROMIUM") or shutil.which("chromium")
            or shutil.which("chromium-browser"))
NO_CHROMIUM = ("Chromium is not installed (apt-get install chromium, or set "
               "BASEDB_TEST_CHROMIUM)")


def interrupt(process: subprocess.Popen[str], timeout: float = 15) -> None:
    """Stop a server as Ctrl-C does; kill it if it has not ended within `timeout`."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
