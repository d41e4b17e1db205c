"""The Open API client: one request, one Lark envelope, one typed error.

Every response is the envelope `{"code", "msg", "data"?, "error": {"log_id"}}`.
`Client.request` returns it when `code` is 0 and otherwise raises:

    code 99991661 / 99991663 / 99991672   AuthError          exit 3
    any other non-zero code                ApiError           exit 1
    … answered with HTTP 5xx               ServerError        exit 4
    no connection made                     ConnectionRefused  exit 4  nothing was sent
    timeout or reset after connecting      ConnectionLost     exit 4  outcome unknown
    a body that is not a Lark envelope     BadResponse        exit 4, names the HTTP status

A 5xx that still carries an envelope is a ServerError, an ApiError (the platform's code
and message are the most useful thing to show) whose exit code is 4 like other server
and network failures: for scripts, "the server failed, the outcome of a write is
unknown, retry later" is one class, distinct from "the request was refused" (1).

Tokens live only in the Authorization header: never in URLs, reprs or messages.
"""

from __future__ import annotations

import json as jsonlib
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from basedb import __version__
from basedb.client import endpoints
from basedb.client.embedded import EmbeddedFactory, embedded_platform
from basedb.client.pagination import collect_pages
from basedb.client.transport import InProcessTransport
from basedb.core.errors import (
    ApiError,
    AuthError,
    BadResponse,
    ConnectionLost,
    ConnectionRefused,
    ServerError,
    UsageError,
)
from basedb.core.paths import API_PREFIX
from basedb.core.protocol import AUTH_CODES, Code, FailureMessage

if TYPE_CHECKING:
    from basedb.client.profiles import Profile

EMBEDDED_BASE_URL = "http://basedb.local"
"""The base URL the embedded platform is addressed by (it never leaves the process)."""

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOG_ID_HEADER = "X-Tt-Logid"


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

    `base_url` is the platform's root (`http://127.0.0.1:8787`); paths are joined under
    /open-apis/base/v3 unless they name another /open-apis path. `transport` lets the
    embedded profile serve requests in-process.
    """

    def __init__(self, *, base_url: str, token: str | None,
                 transport: httpx.BaseTransport | None = None, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.profile_name: str | None = None
        # How to ask "who am I": "basedb" (GET /users/me), "lark_user" or "bot".
        self.whoami = "basedb"
        self._has_token = bool(token)
        headers = {"User-Agent": f"basedb/{__version__}", "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(base_url=self.base_url, transport=transport,
                                  timeout=timeout, headers=headers, follow_redirects=False)

    def __repr__(self) -> str:
        return f"Client(base_url={self.base_url!r}, profile={self.profile_name!r})"

    def __enter__(self) -> Client:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- requests ------------------------------------------------------------------

    def build_request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                      json: Any = None, files: Any = None,
                      data: dict[str, Any] | None = None) -> httpx.Request:
        """The request `request()` would send (used by --dry-run)."""
        verb = method.upper()
        if verb not in METHODS:
            raise UsageError(f"HTTP method {method!r} is not supported.", code="METHOD_INVALID",
                             hint=f"Use one of {', '.join(METHODS)}.")
        query = {key: _query_value(value) for key, value in (params or {}).items()
                 if value is not None}
        kwargs: dict[str, Any] = {"params": query or None}
        if files is not None or data is not None:
            kwargs.update(files=files, data=data)
        elif json is not None:
            # Compact, UTF-8 JSON: what Lark's own SDKs send.
            kwargs["content"] = jsonlib.dumps(json, ensure_ascii=False,
                                              separators=(",", ":")).encode("utf-8")
            kwargs["headers"] = {"Content-Type": "application/json; charset=utf-8"}
        try:
            url = httpx.URL(api_path(path))
        except (ValueError, httpx.InvalidURL) as exc:
            raise UsageError(f"The request path {path!r} is not a valid URL path: {exc}.",
                             code="PATH_INVALID",
                             hint="Pass a path such as /sites/APP_TOKEN/functions; "
                                  "percent-encode special characters.") from None
        return self._http.build_request(verb, url, **kwargs)

    def request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                json: Any = None, files: Any = None,
                data: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its envelope (code 0), or raise a basedb error."""
        request = self.build_request(method, path, params=params, json=json, files=files,
                                     data=data)
        return self._envelope(request, self._send(request))

    def download(self, path: str, *, params: dict[str, Any] | None = None) -> bytes:
        """GET a binary resource (an artifact); errors arrive as envelopes and raise."""
        request = self.build_request("GET", path, params=params)
        response = self._send(request)
        if response.is_success and not _is_json(response):
            return response.content
        self._envelope(request, response)
        return response.content

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

    def paginate(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                 json: Any = None, list_field: str | None = None,
                 max_pages: int | None = None) -> dict[str, Any]:
        """Fetch every page of a listing and return one merged envelope.

        See `basedb.client.pagination`: camelCase and snake_case cursors and offset
        listings are followed; a truncated result keeps has-more true.
        """
        return collect_pages(
            lambda page_params: self.request(method, path, params=page_params, json=json),
            params, list_field=list_field, max_pages=max_pages)

    # --- plumbing --------------------------------------------------------------------

    def _where(self, request: httpx.Request) -> str:
        return f"{request.method} {request.url.path}"

    def _send(self, request: httpx.Request) -> httpx.Response:
        unknown = (" The outcome of this write is unknown: read the resource back before "
                   "retrying." if request.method in _WRITE_METHODS else "")
        try:
            return self._http.send(request)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            # No connection was made, so nothing was sent: the outcome is known.
            raise ConnectionRefused(
                f"Could not reach {self._endpoint_label()} for {self._where(request)}: "
                f"{_reason(exc)}.",
                code="CONNECTION_FAILED",
                hint="Check that the platform is running (e.g. `basedb serve`) and that "
                     "the profile's endpoint is right (`basedb auth status`)."
                     + (" Nothing was sent, so retrying is safe." if unknown else ""),
            ) from exc
        except httpx.TimeoutException as exc:
            raise ConnectionLost(
                f"{self._where(request)} timed out after {self.timeout:g}s.",
                code="TIMEOUT",
                hint="Retry later, or check that the platform at "
                     f"{self._endpoint_label()} is responsive.{unknown}",
            ) from exc
        except httpx.TransportError as exc:
            raise ConnectionLost(
                f"Could not reach {self._endpoint_label()} for {self._where(request)}: "
                f"{_reason(exc)}.",
                code="CONNECTION_FAILED",
                hint="Check that the platform is running (e.g. `basedb serve`) and that "
                     f"the profile's endpoint is right (`basedb auth status`).{unknown}",
            ) from exc

    def _endpoint_label(self) -> str:
        return "the embedded platform" if self.base_url == EMBEDDED_BASE_URL else self.base_url

    def _envelope(self, request: httpx.Request, response: httpx.Response) -> dict[str, Any]:
        status = response.status_code
        header_log_id = response.headers.get(LOG_ID_HEADER)
        try:
            body = jsonlib.loads(response.content) if response.content else None
        except (ValueError, UnicodeDecodeError):
            body = None
        code = body.get("code") if isinstance(body, dict) else None
        if not isinstance(body, dict) or not isinstance(code, int) or isinstance(code, bool):
            raise self._not_an_envelope(request, response, header_log_id)
        if code == 0:
            return body
        error = body.get("error")
        log_id = (error.get("log_id") if isinstance(error, dict) else None) or header_log_id
        msg = body.get("msg")
        message = msg if isinstance(msg, str) and msg.strip() else (
            f"{self._where(request)} failed with code {code} (HTTP {status}).")
        cls = AuthError if code in AUTH_CODES else ServerError if status >= 500 else ApiError
        raise cls(message, code=code, http_status=status,
                  log_id=str(log_id) if log_id else None, data=body.get("data"),
                  hint=self._hint_for(code, status, request, FailureMessage.parse(message)))

    def _not_an_envelope(self, request: httpx.Request, response: httpx.Response,
                         log_id: str | None) -> BadResponse:
        status = response.status_code
        ctype = response.headers.get("Content-Type", "").split(";")[0].strip()
        if not response.content:
            what = "an empty body"
        elif _is_json(response):
            what = "JSON that is not a Lark envelope (no integer \"code\")"
        else:
            what = f"a non-JSON body ({ctype or 'no Content-Type'})"
        if status >= 500:
            hint = "The platform failed; retry later."
        elif status in (301, 302, 303, 307, 308, 404):
            hint = ("Check the profile's endpoint: it must be the platform's base URL, "
                    "e.g. http://127.0.0.1:8787 for `basedb serve` (`basedb auth status`).")
        else:
            hint = "Check the endpoint of the profile and the request path."
        detail: dict[str, Any] = {"http_status": status}
        if log_id:
            detail["log_id"] = log_id
        return BadResponse(f"{self._where(request)} answered HTTP {status} with {what}.",
                           code=f"HTTP_{status}", hint=hint, detail=detail)

    def _hint_for(self, code: int, status: int, request: httpx.Request,
                  message: FailureMessage) -> str | None:
        profile = self.profile_name or "NAME"
        if code == Code.TOKEN_MISSING:
            return ("No token was sent. Log in with `basedb auth login --endpoint URL "
                    f"--token TOKEN --profile {profile}`.")
        if code == Code.TOKEN_INVALID:
            if self.profile_name == "local":
                return ("The local platform rejected its owner token; check $BASEDB_DATA_DIR "
                        "points at the data dir the platform was created in.")
            return (f"The token of profile {profile!r} is invalid or expired. Log in again with "
                    f"`basedb auth login --endpoint URL --token TOKEN --profile {profile}`.")
        if code == Code.PERMISSION_DENIED:
            return ("The token's user lacks access to this resource. Ask a site admin to "
                    "grant it, or use a profile with access (--profile).")
        if code == Code.BAD_REQUEST and message.fix is None:
            # The platform's own messages carry a fix; only a bare one needs ours.
            return ("The request is malformed: check that the query parameters and body are "
                    "valid JSON with value types the endpoint expects.")
        if status >= 500:
            if message.executed is not None and message.retry is not None:
                # The platform said what ran and when to retry (e.g. a FaaS that failed
                # before writing: "Retry: retry after publishing"); a generic "retry
                # later, outcome unknown" would contradict it.
                return None
            suffix = (" The outcome of this write is unknown: read the resource back before "
                      "retrying." if request.method in _WRITE_METHODS else "")
            return "The platform failed while handling the request; retry later." + suffix
        return None


def _is_json(response: httpx.Response) -> bool:
    ctype = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    return ctype == "application/json" or ctype.endswith("+json")


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
            timeout: float = 30.0) -> Client:
    """A client for `profile`: over HTTP, or in-process through `embedded` for the local
    profile."""
    if profile.embedded:
        platform = embedded_platform(embedded)
        client = Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                        transport=InProcessTransport(platform.app), timeout=timeout)
    else:
        client = Client(base_url=profile.endpoint, token=profile.token, timeout=timeout)
    client.profile_name = profile.name
    return client
