"""`basedb dev` as a user runs it: started, asked for a page, stopped with Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from tests.cli.deploy_support import init_site, local_client

WAIT_S = 60


def test_ctrl_c_stops_dev_cleanly_and_nothing_is_deployed(tmp_path: Path) -> None:
    root = init_site(tmp_path / "site")
    process = subprocess.Popen(
        [sys.executable, "-m", "basedb", "dev", "-C", str(root), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line.rstrip("\n"))
            if line.startswith("basedb dev: http://"):
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert ready.wait(WAIT_S), "\n".join(lines)
        url = next(line for line in lines if line.startswith("basedb dev: http://"))
        page = httpx.get(url.removeprefix("basedb dev: "), timeout=WAIT_S)
        assert page.status_code == 200 and "/_basedb/dev/client.js" in page.text
        process.send_signal(signal.SIGINT)
        assert process.wait(WAIT_S) == 0
    finally:
        if process.poll() is None:
            process.kill()
    reader.join(WAIT_S)
    assert "No problems found in 13 functions" in lines
    assert any(line.startswith("dev draft: 13 functions sent") for line in lines)
    assert lines[-1] == "basedb dev stopped; the development draft was discarded."
    assert not any("Traceback" in line for line in lines), "\n".join(lines)
    with local_client() as client:  # the same data dir: nothing was released
        token = _app_token(root)
        assert client.request("GET", f"/sites/{token}/deployments")["data"]["deployments"] \
            == []


def test_dev_refuses_to_listen_beyond_loopback(tmp_path: Path) -> None:
    root = init_site(tmp_path / "site")
    done = subprocess.run([sys.executable, "-m", "basedb", "dev", "-C", str(root), "--host",
                           "0.0.0.0"], capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 2
    assert "--allow-remote" in done.stderr and "Traceback" not in done.stderr


def _app_token(root: Path) -> str:
    from basedb.workspace.config import workspace_app_token

    return workspace_app_token(root)
