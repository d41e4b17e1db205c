"""The Open API client: one request, one Lark envelope, one typed error.

Every response is the envelope `{"code", "msg", "data"?, "error": {"log_id"}}`.
`Client.request` returns it when `code` is 0 and otherwise raises the error of
`basedb.client.responses` (lark-cli's classification of Lark's codes):

    auth codes                             AuthError          exit 3
    scope codes                            PermissionDenied   exit 1
    rate limited, after retries            RateLimited        exit 1
    any other non-zero code                ApiError           exit 1
    … answered with HTTP 5xx               ServerError        exit 4
    no connection made                     ConnectionRefused  exit 4  nothing was sent
    timeout or reset after connecting      ConnectionLost     exit 4  outcome unknown
    a body that is not a Lark envelope     BadResponse        exit 4, names the HTTP status

Requests are retried as `basedb.client.retry` says (rate limits; reads on 5xx and lost
connections; any method when no connection was made), and a token the platform rejects
is renewed once when the credentials can renew it. `trace` logs every request and
response line (`--verbose`), credentials redacted.

Tokens live only in the Authorization header: never in URLs, reprs or messages.
"""

from __future__ import annotations

import json as jsonlib
import time
from collections.abc import Callable
from datetime import timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from basedb import __version__
from basedb.client import endpoints
from basedb.client.credentials import Credentials, StaticToken
from basedb.client.embedded import EmbeddedFactory, embedded_platform
from basedb.client.pagination import collect_pages
from basedb.client.responses import (
    WRITE_METHODS,
    ErrorContext,
    envelope_or_raise,
    is_json,
    parse_body,
    parse_content,
    rate_limit_reset,
    where,
)
from basedb.client.retry import READ_METHODS, RetryPolicy
from basedb.client.trace import RequestTrace
from basedb.client.transport import InProcessTransport
from basedb.core.errors import (
    AuthError,
    BadResponse,
    BasedbError,
    ConnectionLost,
    ConnectionRefused,
    RateLimited,
    ServerError,
    UsageError,
)
from basedb.core.paths import API_PREFIX
from basedb.protocol import lark_errors

if TYPE_CHECKING:
    from basedb.client.profiles import Profile

EMBEDDED_BASE_URL = "http://basedb.local"
"""The base URL the embedded platform is addressed by (it never leaves the process)."""

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
DEFAULT_TIMEOUT = 30.0
MULTIPART_KEY = "basedb.multipart"
DOWNLOAD_KEY = "basedb.download"
"""Request extensions a transport that re-encodes requests may read (lark-cli's)."""
_URLS_KEPT = 256


def api_path(path: str) -> str:
    """The request path for `path`, given with or without the /open-apis/base/v3 prefix.

    `/sites/x`, `sites/x` and `/open-apis/base/v3/sites/x` all become the latter; any
    other `/open-apis/…` path is kept; of a full URL only the path and query are kept, so
    a pasted link never sends the token to another host.
    """
    value = path.strip()
    if value.startswith(("http://", "https://")):
        parts = urlsplit(value)
        value = parts.path + (f"?{parts.query}" if parts.query else "")
    if not value.startswith("/"):
        value = "/" + value
    if value.startswith("/open-apis/") or value == "/open-apis":
        return value
    return API_PREFIX + value


class Client:
    """A synchronous client for one platform endpoint.

    `base_url` is the platform's root (`http://127.0.0.1:8787`, `https://open.feishu.cn`);
    paths are joined under /open-apis/base/v3 unless they name another /open-apis path.
    `token` (or `credentials`, which may renew it) authorizes requests; `transport` lets
    the embedded profile serve requests in-process, or lark-cli carry them.
    """

    def __init__(self, *, base_url: str, token: str | None = None,
                 credentials: Credentials | None = None,
                 transport: httpx.BaseTransport | None = None,
                 timeout: float = DEFAULT_TIMEOUT, retry: RetryPolicy | None = None,
                 trace: RequestTrace | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.trace = trace
        self.credentials: Credentials = credentials or StaticToken(token)
        self.profile_name: str | None = None
        # How to ask "who am I": "basedb" (GET /users/me), "lark_user" or "bot".
        self.whoami = "basedb"
        self.error_context = ErrorContext(endpoint_label=self._endpoint_label())
        headers = {"User-Agent": f"basedb/{__version__}", "Accept": "application/json"}
        self._http = httpx.Client(base_url=self.base_url, transport=transport,
                                  timeout=timeout, headers=headers, follow_redirects=False)
        # The in-process transport is sent to directly (`_send_in_process`).
        self._in_process = transport if isinstance(transport, InProcessTransport) else None
        # Each request path's absolute URL: joining and parsing URLs costs a request
        # more than anything else the client does for it.
        self._urls: dict[str, httpx.URL] = {}
        # For requests answered in memory (`_answer_in_memory`): each path's ASGI scope
        # without its method and headers, and the headers httpx would send, by method and
        # whether a body is sent.
        self._scopes: dict[str, dict[str, Any]] = {}
        self._heads: dict[tuple[str, bool], tuple[list[tuple[bytes, bytes]], int]] = {}

    def __repr__(self) -> str:
        return f"Client(base_url={self.base_url!r}, profile={self.profile_name!r})"

    def __enter__(self) -> Client:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    @property
    def identity(self) -> str:
        """`user` or `bot`: who this client's requests speak for."""
        return self.credentials.identity

    # --- requests ------------------------------------------------------------------

    def build_request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                      json: Any = None, files: Any = None,
                      data: dict[str, Any] | None = None) -> httpx.Request:
        """The request `request()` would send, without its Authorization (--dry-run)."""
        verb = method.upper()
        if verb not in METHODS:
            raise UsageError(f"HTTP method {method!r} is not supported.", code="METHOD_INVALID",
                             hint=f"Use one of {', '.join(METHODS)}.")
        query = {key: _query_value(value) for key, value in (params or {}).items()
                 if value is not None}
        kwargs: dict[str, Any] = {"params": query or None}
        if files is not None or data is not None:
            kwargs.update(files=files, data=data,
                          extensions={MULTIPART_KEY: {"files": files, "data": data}})
        elif json is not None:
            kwargs["content"] = _json_bytes(json)
            kwargs["headers"] = {"Content-Type": "application/json; charset=utf-8"}
        return self._http.build_request(verb, self._url(path), **kwargs)

    def _url(self, path: str) -> httpx.URL:
        """The absolute URL of `path` below the base URL (as httpx joins them)."""
        url = self._urls.get(path)
        if url is not None:
            return url
        try:
            relative = httpx.URL(api_path(path))
        except (ValueError, httpx.InvalidURL) as exc:
            raise UsageError(f"The request path {path!r} is not a valid URL path: {exc}.",
                             code="PATH_INVALID",
                             hint="Pass a path such as /sites/APP_TOKEN/functions; "
                                  "percent-encode special characters.") from None
        url = self._http.build_request("GET", relative).url
        if len(self._urls) >= _URLS_KEPT:
            self._urls.clear()
        self._urls[path] = url
        return url

    def request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                json: Any = None, files: Any = None, data: dict[str, Any] | None = None,
                loads: Callable[[bytes], Any] | None = None) -> dict[str, Any]:
        """Send one request and return its envelope (code 0), or raise a basedb error.
        `loads` parses the body (json.loads by default)."""
        def build() -> httpx.Request:
            return self.build_request(method, path, params=params, json=json, files=files,
                                      data=data)

        first: _First | None = None
        if (self._in_process is not None and self.trace is None and not params
                and files is None and data is None and method in METHODS
                and not self._http.cookies):
            def first(token: str | None) -> dict[str, Any] | tuple[httpx.Request,
                                                                   httpx.Response]:
                assert self._in_process is not None
                return self._answer_in_memory(self._in_process, method, path, json, token,
                                              build, loads)

        request, response, body = self._attempts(build, loads, first)
        if request is None or response is None:
            return body  # answered in memory with a success envelope
        return envelope_or_raise(request, response, self.error_context, body=body)

    def exchange(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                 json: Any = None, files: Any = None,
                 data: dict[str, Any] | None = None) -> tuple[httpx.Request, httpx.Response]:
        """Send one request (with retries and renewal) and return the final request and
        its response as they are, whatever the response says."""
        def build() -> httpx.Request:
            return self.build_request(method, path, params=params, json=json, files=files,
                                      data=data)

        request, response, _ = self._exchange(build)
        return request, response

    def download(self, path: str, *, params: dict[str, Any] | None = None) -> bytes:
        """GET a binary resource (an artifact); errors arrive as envelopes and raise."""
        def build() -> httpx.Request:
            request = self.build_request("GET", path, params=params)
            request.extensions[DOWNLOAD_KEY] = True
            return request

        request, response, _ = self._exchange(build)
        if response.is_success and not is_json(response):
            return response.content
        envelope_or_raise(request, response, self.error_context)
        return response.content

    def paginate(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                 json: Any = None, list_field: str | None = None,
                 max_pages: int | None = None,
                 loads: Callable[[bytes], Any] | None = None,
                 page_delay: float = 0.0) -> dict[str, Any]:
        """Fetch every page of a listing and return one merged envelope, waiting
        `page_delay` seconds before each page after the first (`api --page-delay`).

        See `basedb.client.pagination`: camelCase and snake_case cursors and offset
        listings are followed; a truncated result keeps has-more true.
        """
        fetched = 0

        def page(page_params: dict[str, Any]) -> dict[str, Any]:
            nonlocal fetched
            if fetched and page_delay > 0:
                self.retry.wait(page_delay)
            fetched += 1
            return self.request(method, path, params=page_params, json=json, loads=loads)

        return collect_pages(page, params, list_field=list_field, max_pages=max_pages)

    def current_user_id(self) -> str | None:
        """The calling user's id: `GET /users/me` on a basedb platform, the `open_id` of
        `authen/v1/user_info` for a Lark user, None for a bot (which is no user)."""
        if self.whoami == "bot":
            return None
        if self.whoami == "lark_user":
            data = self.request("GET", endpoints.USER_INFO).get("data")
            found = data.get("open_id") if isinstance(data, dict) else None
        else:
            data = self.request("GET", endpoints.USERS_ME).get("data")
            found = data.get("user_id") if isinstance(data, dict) else None
        return str(found) if isinstance(found, str) and found else None

    # --- the exchange: retries, renewal ---------------------------------------------

    def _exchange(self, build: Callable[[], httpx.Request],
                  loads: Callable[[bytes], Any] | None = None,
                  ) -> tuple[httpx.Request, httpx.Response, Any]:
        """Send the request `build()` makes, retrying as `basedb.client.retry` says; the
        final request, its response and its body as parsed (by `loads`) to judge it."""
        request, response, body = self._attempts(build, loads)
        assert request is not None and response is not None
        return request, response, body

    def _attempts(self, build: Callable[[], httpx.Request],
                  loads: Callable[[bytes], Any] | None = None, first: _First | None = None,
                  ) -> tuple[httpx.Request | None, httpx.Response | None, Any]:
        """`_exchange`, whose first attempt `first(token)` makes instead, when given: it
        may answer with a success envelope at once (then no request or response is
        returned, only the envelope) or with the request it sent and its response."""
        renewed = False
        attempt = 0
        while True:
            attempt += 1
            token = self.credentials.token()
            last = attempt >= self.retry.attempts
            try:
                if first is not None and attempt == 1:
                    sent = first(token)
                    if isinstance(sent, dict):
                        return None, None, sent
                    request, response = sent
                else:
                    request = build()
                    if token:
                        request.headers["Authorization"] = f"Bearer {token}"
                    response = self._send(request, attempt)
            except _TransportFailed as failure:
                request, error = failure.request, failure.error
                if isinstance(error, ConnectionRefused):
                    # Nothing was sent: safe to try again, whatever the method.
                    if last:
                        raise error from failure.__cause__
                    self._wait(self.retry.backoff(attempt), request, "no connection")
                    continue
                if last or request.method not in READ_METHODS:
                    raise error from failure.__cause__
                self._wait(self.retry.backoff(attempt), request, "connection lost")
                continue
            body = parse_body(response, loads)
            retry = self._retry_reason(request, response, body, attempt, last, token,
                                       renewed)
            if retry is None:
                return request, response, body
            reason, wait = retry
            if reason == "renew":
                renewed = True
                attempt -= 1  # a renewal is not a retry
                if self.trace is not None:
                    self.trace.note("the token was rejected; trying a renewed one")
                continue
            self._wait(wait, request, reason)

    def _retry_reason(self, request: httpx.Request, response: httpx.Response, body: Any,
                      attempt: int, last: bool, token: str | None,
                      renewed: bool) -> tuple[str, float] | None:
        """Why and after how long to send `request` again, or None to keep `response`
        (whose parsed `body` is judged)."""
        read = request.method in READ_METHODS
        try:
            envelope_or_raise(request, response, self.error_context, body=body)
        except RateLimited:
            wait = self.retry.rate_limit_wait(attempt, rate_limit_reset(response))
            return None if last or wait is None else ("rate limited", wait)
        except ServerError:
            return None if last or not read else ("server error", self.retry.backoff(attempt))
        except AuthError as error:
            # A revoked or expired token that the credentials can replace: once.
            if (renewed or not token or error.code not in lark_errors.RENEWABLE_CODES
                    or not self.credentials.renew(token)):
                return None
            return ("renew", 0.0)
        except BadResponse as error:
            status = error.detail.get("http_status")
            if last or not read or not isinstance(status, int) or status < 500:
                return None
            return (f"HTTP {status}", self.retry.backoff(attempt))
        except BasedbError:
            return None
        return None

    def _wait(self, seconds: float, request: httpx.Request, reason: str) -> None:
        if self.trace is not None:
            self.trace.note(f"{where(request)}: {reason}; retrying in {seconds:.2f}s")
        self.retry.wait(seconds)

    def _send(self, request: httpx.Request, attempt: int) -> httpx.Response:
        """Send `request`; _TransportFailed (carrying a ConnectionRefused or
        ConnectionLost) when the transport failed."""
        if self.trace is not None:
            self.trace.request(request, attempt)
        started = time.monotonic()
        try:
            response = (self._http.send(request) if self._in_process is None
                        else self._send_in_process(request, self._in_process))
        except httpx.TransportError as exc:
            raise self._transport_failed(request, exc, started) from exc
        if self.trace is not None:
            response.read()
            self.trace.response(response, time.monotonic() - started)
        return response

    def _transport_failed(self, request: httpx.Request, exc: httpx.TransportError,
                          started: float) -> _TransportFailed:
        """The basedb error for a transport's failure to send `request` or receive its
        response."""
        self._trace_failure(request, exc, started)
        unknown = (" The outcome of this write is unknown: read the resource back before "
                   "retrying." if request.method in WRITE_METHODS else "")
        if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
            # No connection was made, so nothing was sent: the outcome is known.
            return _TransportFailed(request, ConnectionRefused(
                f"Could not reach {self._endpoint_label()} for {where(request)}: "
                f"{_reason(exc)}.",
                code="CONNECTION_FAILED",
                hint="Check that the platform is running (e.g. `basedb serve`) and that "
                     "the profile's endpoint is right (`basedb auth status`)."
                     + (" Nothing was sent, so retrying is safe." if unknown else ""),
            ))
        if isinstance(exc, httpx.TimeoutException):
            return _TransportFailed(request, ConnectionLost(
                f"{where(request)} timed out after {self.timeout:g}s.",
                code="TIMEOUT",
                hint="Retry later, raise --timeout (or $BASEDB_TIMEOUT), or check that the "
                     f"platform at {self._endpoint_label()} is responsive.{unknown}",
            ))
        return _TransportFailed(request, ConnectionLost(
            f"Could not reach {self._endpoint_label()} for {where(request)}: "
            f"{_reason(exc)}.",
            code="CONNECTION_FAILED",
            hint="Check that the platform is running (e.g. `basedb serve`) and that "
                 f"the profile's endpoint is right (`basedb auth status`).{unknown}",
        ))

    def _send_in_process(self, request: httpx.Request,
                         transport: InProcessTransport) -> httpx.Response:
        """What `httpx.Client.send` does for the in-process transport, without the steps
        that do nothing there (auth flows and redirects are off, no event hooks) and
        with cookies taken only from a response that sets some."""
        if self._http.is_closed:
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        started = time.perf_counter()
        return self._received(request, transport.handle_request(request), started)

    def _received(self, request: httpx.Request, response: httpx.Response,
                  started: float) -> httpx.Response:
        response.request = request
        try:
            response.read()
        except BaseException:
            response.close()
            raise
        response.elapsed = timedelta(seconds=time.perf_counter() - started)
        if "set-cookie" in response.headers:
            self._http.cookies.extract_cookies(response)
        return response

    def _answer_in_memory(self, transport: InProcessTransport, method: str, path: str,
                          json: Any, token: str | None, build: Callable[[], httpx.Request],
                          loads: Callable[[bytes], Any] | None,
                          ) -> dict[str, Any] | tuple[httpx.Request, httpx.Response]:
        """Send a request without parameters, files or form data to the in-process
        transport as its ASGI scope and body, without the httpx Request and Response
        that `_send` goes through: the app sees the same scope, headers and body. A
        success envelope is returned as it is; any other answer (or a failure) as the
        request and response `_send` would have given, the request made by `build()`,
        for `_attempts` to judge."""
        if self._http.is_closed:
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        content = b"" if json is None else _json_bytes(json)
        scope = self._scope(path)
        headers = self._headers(method, json is not None, len(content))
        if token:
            headers.append((b"authorization", f"Bearer {token}".encode("ascii")))
        started = time.perf_counter()
        request: httpx.Request | None = None
        try:
            answer = transport.answer_in_memory(
                {**scope, "method": method, "headers": headers, "asgi": dict(scope["asgi"]),
                 "extensions": {}}, content,
                self._http.timeout.read)
            if answer is None:  # not on this thread's loop: nothing was sent
                request = self._built(build, token)
                return request, self._send(request, 1)
            if isinstance(answer, httpx.Response):  # its body streams
                request = self._built(build, token)
                return request, self._received(request, answer, started)
            status, response_headers, body = answer
            if status != 429 and not any(name.lower() == b"set-cookie"
                                         for name, _ in response_headers):
                envelope = parse_content(body, loads)
                code = envelope.get("code") if isinstance(envelope, dict) else None
                if code == 0 and isinstance(code, int) and not isinstance(code, bool):
                    assert isinstance(envelope, dict)
                    return envelope
            request = self._built(build, token)
            return request, self._received(request, httpx.Response(
                status, headers=response_headers, content=body,
                extensions={"http_version": b"HTTP/1.1"}), started)
        except httpx.TransportError as exc:
            failed = request or self._built(build, token)
            raise self._transport_failed(failed, exc, started) from exc

    def _built(self, build: Callable[[], httpx.Request], token: str | None) -> httpx.Request:
        request = build()
        if token:
            request.headers["Authorization"] = f"Bearer {token}"
        return request

    def _scope(self, path: str) -> dict[str, Any]:
        """The ASGI scope of a request to `path`, but its method and headers, as the
        in-process transport makes it (`InProcessTransport.scope_of`)."""
        scope = self._scopes.get(path)
        if scope is None:
            assert self._in_process is not None
            scope = self._in_process.scope_of(self._http.build_request("GET",
                                                                        self._url(path)))
            del scope["method"], scope["headers"]
            if len(self._scopes) >= _URLS_KEPT:
                self._scopes.clear()
            self._scopes[path] = scope
        return scope

    def _headers(self, method: str, has_body: bool, length: int) -> list[tuple[bytes, bytes]]:
        """The headers httpx sends (lower-cased, as in an ASGI scope) for a request of
        `method` with or without a JSON body of `length` bytes, before Authorization:
        the client's own, fixed when it is made."""
        kept = self._heads.get((method, has_body))
        if kept is None:
            assert self._in_process is not None
            sample = self.build_request(method, "/", json={} if has_body else None)
            headers = self._in_process.scope_of(sample)["headers"]
            at = next((i for i, (name, _) in enumerate(headers) if name == b"content-length"),
                      -1)
            kept = self._heads[(method, has_body)] = (headers, at)
        template, at = kept
        headers = list(template)
        if at >= 0:
            headers[at] = (b"content-length", str(length).encode("ascii"))
        return headers

    def _trace_failure(self, request: httpx.Request, error: Exception, started: float) -> None:
        if self.trace is not None:
            self.trace.failure(request, error, time.monotonic() - started)

    def _endpoint_label(self) -> str:
        return "the embedded platform" if self.base_url == EMBEDDED_BASE_URL else self.base_url


class _TransportFailed(Exception):
    """The transport failed: `error` (ConnectionRefused or ConnectionLost) for `request`."""

    def __init__(self, request: httpx.Request, error: ConnectionRefused | ConnectionLost) -> None:
        super().__init__(str(error))
        self.request = request
        self.error = error


_First = Callable[[str | None], "dict[str, Any] | tuple[httpx.Request, httpx.Response]"]
"""A request's first attempt, made another way than `build` and `_send` (`_attempts`)."""


def _json_bytes(value: Any) -> bytes:
    """Compact, UTF-8 JSON: what Lark's own SDKs send."""
    return jsonlib.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _reason(exc: httpx.TransportError) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.rstrip(".")


def _query_value(value: Any) -> Any:
    """Query values as lark-cli sends them: booleans lowercase, lists repeated."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return [_query_value(item) for item in value]
    return value


def connect(profile: Profile, *, embedded: EmbeddedFactory | None = None,
            timeout: float = DEFAULT_TIMEOUT, retry: RetryPolicy | None = None,
            trace: RequestTrace | None = None,
            transport: httpx.BaseTransport | None = None) -> Client:
    """A client for `profile`: over HTTP, in-process through `embedded` for the local
    profile, or through an installed lark-cli for a Lark profile that says so.
    `transport` replaces the HTTP transport (tests)."""
    lark = profile.lark
    if lark is not None:
        # Lazy: only a Lark profile needs its token store (filelock) and OAuth flows;
        # the embedded and plain HTTP profiles start without them.
        from basedb.client.lark.accounts import credentials_for  # noqa: PLC0415
        from basedb.client.lark.larkcli import LarkCliTransport  # noqa: PLC0415
    if profile.embedded:
        platform = embedded_platform(embedded)
        client = Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                        transport=InProcessTransport(platform.app), timeout=timeout,
                        retry=retry, trace=trace)
    elif lark is not None and lark.via == "lark-cli":
        client = Client(base_url=profile.endpoint, credentials=credentials_for(profile),
                        transport=transport or LarkCliTransport(
                            profile=lark.lark_profile, identity=lark.identity,
                            timeout=timeout, trace=trace),
                        timeout=timeout, retry=retry, trace=trace)
    elif lark is not None:
        client = Client(base_url=profile.endpoint,
                        credentials=credentials_for(profile, timeout=timeout, trace=trace,
                                                    transport=transport),
                        transport=transport, timeout=timeout, retry=retry, trace=trace)
    else:
        client = Client(base_url=profile.endpoint, token=profile.token, timeout=timeout,
                        retry=retry, trace=trace, transport=transport)
    client.profile_name = profile.name
    client.whoami = ("basedb" if lark is None else "bot" if lark.identity == "bot"
                     else "lark_user")
    client.error_context = ErrorContext(
        profile_name=profile.name, embedded=profile.embedded,
        login_command=None if lark is None and not profile.embedded
        else profile.login_command,
        brand=lark.brand if lark is not None else None,
        app_id=lark.app_id if lark is not None else None, identity=profile.identity,
        endpoint_label=client.error_context.endpoint_label)
    return client
