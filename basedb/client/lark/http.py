"""The plain HTTP calls of Lark's sign-in endpoints (they answer flat JSON, not the
`{code, msg, data}` envelope), with the client's network errors and --verbose trace."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import httpx

from basedb import __version__
from basedb.client.trace import RequestTrace
from basedb.core.errors import BadResponse, ConnectionLost, ConnectionRefused


class AuthHttp:
    """POSTs to Lark's auth endpoints; one attempt, a refused connection tried twice."""

    def __init__(self, *, timeout: float = 30.0, transport: httpx.BaseTransport | None = None,
                 trace: RequestTrace | None = None) -> None:
        self._http = httpx.Client(timeout=timeout, transport=transport, follow_redirects=False,
                                  headers={"User-Agent": f"basedb/{__version__}"})
        self.timeout = timeout
        self.trace = trace

    def close(self) -> None:
        self._http.close()

    def post(self, url: str, *, form: dict[str, str] | None = None,
             body: dict[str, Any] | None = None,
             auth: tuple[str, str] | None = None) -> tuple[int, dict[str, Any], httpx.Headers]:
        """(HTTP status, the JSON object answered, headers); a body that is not a JSON
        object is a BadResponse."""
        return self._send("POST", url, form=form, body=body, auth=auth)

    def get(self, url: str, *, token: str) -> tuple[int, dict[str, Any], httpx.Headers]:
        return self._send("GET", url, bearer=token)

    def _send(self, method: str, url: str, *, form: dict[str, str] | None = None,
              body: dict[str, Any] | None = None, auth: tuple[str, str] | None = None,
              bearer: str | None = None) -> tuple[int, dict[str, Any], httpx.Headers]:
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
        if auth is not None:
            pair = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode("ascii")
            headers["Authorization"] = f"Basic {pair}"
        request = self._http.build_request(method, url, data=form, json=body,
                                           headers=headers or None)
        for attempt in (1, 2):
            if self.trace is not None:
                self.trace.request(request, attempt)
            started = time.monotonic()
            try:
                response = self._http.send(request)
                break
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if self.trace is not None:
                    self.trace.failure(request, exc, time.monotonic() - started)
                if attempt == 2:
                    raise ConnectionRefused(
                        f"Could not reach {request.url.host} for {method} {request.url.path}: "
                        f"{exc or type(exc).__name__}.", code="CONNECTION_FAILED",
                        hint="Check the network (or $BASEDB_LARK_OPEN_URL / "
                             "$BASEDB_LARK_ACCOUNTS_URL when pointing at a stand-in).") from exc
            except httpx.TransportError as exc:
                if self.trace is not None:
                    self.trace.failure(request, exc, time.monotonic() - started)
                raise ConnectionLost(
                    f"{method} {request.url.path} on {request.url.host} got no answer: "
                    f"{exc or type(exc).__name__}.", code="CONNECTION_FAILED",
                    hint="Retry; raise --timeout if the network is slow.") from exc
        if self.trace is not None:
            self.trace.response(response, time.monotonic() - started)
        try:
            data = json.loads(response.content) if response.content else None
        except (ValueError, UnicodeDecodeError):
            data = None
        if not isinstance(data, dict):
            raise BadResponse(f"{method} {request.url.path} on {request.url.host} answered HTTP "
                              f"{response.status_code} without a JSON object.",
                              code=f"HTTP_{response.status_code}",
                              hint="Check $BASEDB_LARK_OPEN_URL / $BASEDB_LARK_ACCOUNTS_URL, "
                                   "or retry later.",
                              detail={"http_status": response.status_code})
        return response.status_code, data, response.headers
