"""A real `basedb serve` on 127.0.0.1 standing in for Feishu: it serves the Base
Database Open API and Lark's sign-in endpoints, and the client reaches it through
BASEDB_LARK_OPEN_URL / BASEDB_LARK_ACCOUNTS_URL, exactly as it would reach Lark."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from basedb.core.paths import API_PREFIX
from tests.processes import interrupt

LISTENING = re.compile(r"basedb platform listening on (http://127\.0\.0\.1:\d+)")


@dataclass
class StandIn:
    url: str
    owner_token: str
    data_dir: Path
    log: Path

    def call(self, method: str, path: str, *, token: str | None = None,
             json: Any = None) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token or self.owner_token}"}
        full = path if path.startswith("/_basedb") or path.startswith("/open-apis/") \
            else API_PREFIX + path
        with httpx.Client(base_url=self.url, timeout=30) as http:
            answer = http.request(method, full, json=json, headers=headers)
        body: dict[str, Any] = answer.json()
        return body

    def register_app(self, name: str = "Site builder") -> tuple[str, str]:
        data = self.call("POST", "/_basedb/lark/apps", json={"name": name})["data"]
        return data["app_id"], data["app_secret"]

    def create_user(self, name: str) -> tuple[str, str]:
        data = self.call("POST", "/users", json={"name": name})["data"]
        return data["user_id"], data["token"]

    def approve(self, user_code: str, token: str, *, approve: bool = True) -> dict[str, Any]:
        return self.call("POST", "/_basedb/lark/device/approve", token=token,
                         json={"user_code": user_code, "approve": approve})

    def env(self) -> dict[str, str]:
        return {"BASEDB_LARK_OPEN_URL": self.url, "BASEDB_LARK_ACCOUNTS_URL": self.url}

    def access_log(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@contextmanager
def serve_stand_in(root: Path, *, device_interval: int = 1) -> Iterator[StandIn]:
    """`basedb serve --port 0` in a subprocess, its stderr (access log) in a file."""
    data = root / "stand-in-data"
    log = root / "stand-in.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "BASEDB_DATA_DIR": str(data),
           "BASEDB_LARK_DEVICE_INTERVAL": str(device_interval)}
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "basedb", "serve", "--port", "0", "--data", str(data)],
            stdout=subprocess.DEVNULL, stderr=sink, env=env)
    try:
        deadline = time.monotonic() + 30
        url = None
        while url is None:
            found = LISTENING.search(log.read_text(errors="replace"))
            if found:
                url = found.group(1)
            elif process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"basedb serve did not start: {log.read_text()}")
            else:
                time.sleep(0.05)
        token = (data / "owner.token").read_text().strip()
        yield StandIn(url, token, data, log)
    finally:
        interrupt(process)


def device_sign_in(stand_in: StandIn, app_id: str, secret: str, approver: str) -> dict[str, Any]:
    """A user's OAuth device sign-in done by hand (start, approve, poll): the token answer."""
    with httpx.Client(base_url=stand_in.url, timeout=30) as http:
        started = http.post("/oauth/v1/device_authorization", auth=(app_id, secret),
                            data={"client_id": app_id, "scope": "offline_access"}).json()
        stand_in.approve(started["user_code"], approver)
        answer: dict[str, Any] = http.post("/open-apis/authen/v2/oauth/token", data={
            "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
            "device_code": started["device_code"], "client_id": app_id,
            "client_secret": secret}).json()
    return answer


def install_fake_lark_cli(bin_dir: Path) -> Path:
    """An executable `lark-cli` in `bin_dir` running tests/fake_lark_cli.py."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "lark-cli"
    fake = Path(__file__).resolve().parent / "fake_lark_cli.py"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{fake}" "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return script
