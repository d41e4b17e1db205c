"""`--verbose` / `BASEDB_DEBUG`: one line per request and per response on stderr, with
every credential redacted (`basedb.core.redact`), as `curl -v` would show them:

    > POST https://open.feishu.cn/open-apis/base/v3/sites/create  (attempt 1)
    > Authorization: Bearer ***
    > {"title":"Leave"}
    < 200 OK  0.21s  X-Tt-Logid: 2024…
    < {"code":0,"msg":"success","data":{…}}

Bodies are shown up to `BODY_LIMIT` characters; binary bodies by their size only.
"""

from __future__ import annotations

import sys
from typing import TextIO

import httpx

from basedb.core.redact import redact

BODY_LIMIT = 2000
_SHOWN_HEADERS = ("authorization", "content-type", "x-tt-logid", "x-ogw-ratelimit-reset",
                  "retry-after")


class RequestTrace:
    """Writes request and response lines to `stream` (stderr by default)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def _write(self, line: str) -> None:
        stream = self._stream or sys.stderr
        stream.write(redact(line) + "\n")
        stream.flush()

    def request(self, request: httpx.Request, attempt: int) -> None:
        self._write(f"> {request.method} {request.url}  (attempt {attempt})")
        for name, value in request.headers.items():
            if name.lower() in _SHOWN_HEADERS:
                self._write(f"> {name.title()}: {value}")
        self._body(">", request.headers.get("content-type", ""), _request_bytes(request))

    def response(self, response: httpx.Response, seconds: float) -> None:
        self._write(f"< {response.status_code} {response.reason_phrase}  {seconds:.2f}s")
        for name, value in response.headers.items():
            if name.lower() in _SHOWN_HEADERS:
                self._write(f"< {name.title()}: {value}")
        self._body("<", response.headers.get("content-type", ""), response.content)

    def failure(self, request: httpx.Request, error: Exception, seconds: float) -> None:
        self._write(f"< {request.method} {request.url.path} failed after {seconds:.2f}s: "
                    f"{type(error).__name__}: {error}")

    def note(self, text: str) -> None:
        self._write(f"* {text}")

    def _body(self, mark: str, content_type: str, body: bytes | None) -> None:
        if not body:
            return
        textual = any(kind in content_type for kind in ("json", "text", "form-urlencoded"))
        if not textual:
            self._write(f"{mark} [{len(body)} bytes of {content_type or 'data'}]")
            return
        text = body.decode("utf-8", errors="replace")
        if len(text) > BODY_LIMIT:
            text = text[:BODY_LIMIT] + f"… [{len(body)} bytes]"
        self._write(f"{mark} {text}")


def _request_bytes(request: httpx.Request) -> bytes | None:
    try:
        return request.content
    except httpx.RequestNotRead:
        return None

