"""The dev server: the workspace's page from disk, the live-reload channel, and the
page's function calls sent to the site's development draft.

    GET  /                                   → /sites/<app>/
    GET  /sites/<app>/<path>                 src/<path> from disk (HTML gets the page
                                             SDK's import map and the live-reload script)
    GET  /_basedb/runtime.js                 the page SDK, as the platform serves it
    GET  /_basedb/dev/client.js              the live-reload script
    GET  /_basedb/dev/events                 Server-Sent Events: hello, reload, status
    POST /open-apis/base/v3/sites/<app>/functions/<id>/invoke
                                             the call, made with env=dev as the developer
    POST /open-apis/base/v3/sites/<app>/functions/<key>/stream
    GET  /open-apis/base/v3/sites/<app>/ai-tasks/<taskId>
                                             an AI stream (relayed once complete) and a
                                             media task, likewise
    GET|DELETE /_basedb/session              the developer, as a page sees its viewer

It listens on loopback and answers only requests whose `Host` names it (a DNS-rebinding
page sends its own name) and, when a browser says where a request comes from (`Origin`,
`Sec-Fetch-Site`), only its own pages: same-origin, not merely same-site, since every
port of localhost is the same site. A call also needs the page runtime's header
`X-Basedb-Page: 1`, which no other site's page can send without a CORS preflight that
this server never grants. The page runs with the developer's rights, so nothing else
may reach it.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from basedb.core import page_sdk
from basedb.core.frozen import frozen_dataclass
from basedb.dev import files
from basedb.dev.events import Broadcaster
from basedb.protocol import Code, api_envelope

API_PREFIX = "/open-apis/base/v3"
PAGE_HEADER = "x-basedb-page"
MAX_CALL_BODY_BYTES = 2 * 1024 * 1024
_BODY_CLOSE_RE = re.compile(rb"</body\s*>", re.IGNORECASE)
_SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
                     "Referrer-Policy": "no-referrer", "X-Frame-Options": "SAMEORIGIN"}

CLIENT_SCRIPT = """// basedb dev: reloads the page when a saved change is ready; shows check errors.
const events = new EventSource("/_basedb/dev/events");
let session = null;
let banner = null;
function show(text) {
  if (!banner) {
    banner = document.createElement("div");
    banner.setAttribute("role", "alert");
    banner.style.cssText = "position:fixed;left:0;right:0;bottom:0;z-index:2147483647;" +
      "padding:.5rem 1rem;font:14px/1.4 ui-monospace,monospace;background:#d83931;" +
      "color:#fff;white-space:pre-wrap";
    document.documentElement.appendChild(banner);
  }
  banner.textContent = text;
}
function hide() {
  if (banner) { banner.remove(); banner = null; }
}
events.addEventListener("hello", (event) => {
  const data = JSON.parse(event.data);
  if (session !== null && data.session !== session) location.reload();
  session = data.session;
  if (data.errors > 0) show(data.message); else hide();
});
events.addEventListener("reload", () => location.reload());
events.addEventListener("status", (event) => {
  const data = JSON.parse(event.data);
  if (data.errors > 0) show(data.message); else hide();
});
"""


@frozen_dataclass
class CallAnswer:
    """What the platform answered a proxied call."""

    status: int
    body: bytes
    log_id: str
    content_type: str = "application/json"


Invoker = Callable[[str, Any], CallAnswer]
"""(functionId, the call's JSON body) → the platform's answer; runs in a worker thread."""
Forwarder = Callable[[str, str, Any], CallAnswer]
"""(method, path below /sites/<app>/, JSON body or None) → the platform's answer, for the
page SDK's other calls (an AI stream, a media task); runs in a worker thread."""


@dataclass(slots=True)
class DevServerConfig:
    app_token: str
    page_root: Path
    invoke: Invoker
    viewer: Callable[[], dict[str, Any]]  # the developer: {userId, name}
    events: Broadcaster
    status: Callable[[], dict[str, Any]]  # the latest check: {errors, message}
    session_id: str
    hosts: set[str] = field(default_factory=set)  # allowed Host values (host:port)
    stopping: Callable[[], bool] = lambda: False
    forward: Forwarder | None = None


def allowed_hosts(host: str, port: int) -> set[str]:
    """The Host values a browser on this machine sends for the dev server."""
    names = {host, "127.0.0.1", "localhost"} if host in ("127.0.0.1", "localhost") else {host}
    if host in ("::1", "[::1]"):
        names = {"[::1]", "localhost"}
    return {f"{name}:{port}" for name in names}


# Sec-Fetch-Site values of requests the dev server's own pages make, or the developer
# makes by opening a URL ("none"); a request without the header is not a browser's.
_OWN_REQUESTS = frozenset({"same-origin", "none"})


class GuardMiddleware:
    """Refuses requests for another Host, and cross-site requests."""

    def __init__(self, app: ASGIApp, *, hosts: set[str]) -> None:
        self.app = app
        self.hosts = {h.lower() for h in hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        host = headers.get("host", "").lower()
        refusal = None
        if host not in self.hosts:
            refusal = (421, "This dev server answers only requests for "
                       + ", ".join(sorted(self.hosts)) + ".")
        else:
            origin = headers.get("origin")
            if origin is not None and _origin_host(origin) not in self.hosts:
                refusal = (403, "Cross-origin requests are refused: only the dev server's "
                           "own pages may call it.")
            elif headers.get("sec-fetch-site", "same-origin") not in _OWN_REQUESTS:
                # "same-site" too: a page on another port of localhost is same-site, and
                # a script or image tag sends no Origin.
                refusal = (403, "Requests from other origins are refused: only the dev "
                           "server's own pages may use it.")
        if refusal is not None:
            response = PlainTextResponse(refusal[1], status_code=refusal[0],
                                         headers=_SECURITY_HEADERS)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _origin_host(origin: str) -> str:
    parts = urlsplit(origin)
    if parts.scheme != "http" or not parts.netloc:
        return ""
    return parts.netloc.lower()


def build_dev_app(config: DevServerConfig) -> Starlette:
    site_prefix = f"/sites/{quote(config.app_token, safe='')}/"

    async def root(request: Request) -> Response:
        return RedirectResponse(site_prefix, status_code=307, headers=_SECURITY_HEADERS)

    async def page(request: Request) -> Response:
        if request.path_params["app_token"] != config.app_token:
            return _text(404, f"This dev server serves site {config.app_token} at "
                         f"{site_prefix}.")
        path = request.path_params["path"]
        found = await asyncio.to_thread(files.lookup, config.page_root, path)
        if found.redirect_to_directory:
            return RedirectResponse(request.url.path + "/", status_code=307,
                                    headers=_SECURITY_HEADERS)
        if found.file is None:
            return _text(404, f"src/{path} is not a page file of this workspace.")
        data = found.file.data
        if found.file.is_html:
            data = inject_client(page_sdk.inject_import_map(data))
        return Response(data, media_type=found.file.content_type, headers=_SECURITY_HEADERS)

    async def runtime(request: Request) -> Response:
        return Response(page_sdk.runtime_source(), media_type="text/javascript; charset=utf-8",
                        headers=_SECURITY_HEADERS)

    async def client_script(request: Request) -> Response:
        return Response(CLIENT_SCRIPT, media_type="text/javascript; charset=utf-8",
                        headers=_SECURITY_HEADERS)

    async def events(request: Request) -> Response:
        if config.events.full():
            return _text(503, "Too many open pages.")
        hello = {"session": config.session_id, **config.status()}
        stream = config.events.stream(hello, config.stopping)
        return StreamingResponse(stream, media_type="text/event-stream",
                                 headers={**_SECURITY_HEADERS, "X-Accel-Buffering": "no"})

    async def invoke(request: Request) -> Response:
        if request.path_params["app_token"] != config.app_token:
            return _envelope(404, Code.FUNCTION_NOT_FOUND,
                             f"This dev server calls site {config.app_token} only.")
        if request.headers.get(PAGE_HEADER) != "1":
            return _envelope(400, Code.BAD_REQUEST, "A call needs the header X-Basedb-Page: 1 "
                             "(the page runtime sends it).")
        body = await _read_body(request)
        if body is None:
            return _envelope(413, Code.BAD_REQUEST,
                             f"The call's body is over {MAX_CALL_BODY_BYTES} bytes.")
        try:
            document = json.loads(body) if body.strip() else None
        except ValueError:
            return _envelope(400, Code.BAD_REQUEST, "The call's body is not JSON: send "
                             "{\"params\": {…}}.")
        answer = await asyncio.to_thread(config.invoke, request.path_params["function_id"],
                                         document)
        return Response(answer.body, status_code=answer.status,
                        media_type=answer.content_type,
                        headers={**_SECURITY_HEADERS, "X-Tt-Logid": answer.log_id})

    async def forwarded(request: Request) -> Response:
        if request.path_params["app_token"] != config.app_token or config.forward is None:
            return _envelope(404, Code.FUNCTION_NOT_FOUND,
                             f"This dev server calls site {config.app_token} only.")
        if request.headers.get(PAGE_HEADER) != "1":
            return _envelope(400, Code.BAD_REQUEST, "A call needs the header X-Basedb-Page: 1 "
                             "(the page runtime sends it).")
        document = None
        if request.method == "POST":
            body = await _read_body(request)
            if body is None:
                return _envelope(413, Code.BAD_REQUEST,
                                 f"The call's body is over {MAX_CALL_BODY_BYTES} bytes.")
            try:
                document = json.loads(body) if body.strip() else {}
            except ValueError:
                return _envelope(400, Code.BAD_REQUEST, "The call's body is not JSON: send "
                                 "{\"params\": {…}}.")
        suffix = request.url.path.split(f"/sites/{request.path_params['app_token']}/", 1)[1]
        answer = await asyncio.to_thread(config.forward, request.method, suffix, document)
        return Response(answer.body, status_code=answer.status,
                        media_type=answer.content_type,
                        headers={**_SECURITY_HEADERS, "X-Tt-Logid": answer.log_id})

    async def session(request: Request) -> Response:
        if request.method == "DELETE":
            return _envelope(200, Code.SUCCESS, "success", {"signedOut": False})
        return _envelope(200, Code.SUCCESS, "success", await asyncio.to_thread(config.viewer))

    routes = [
        Route("/", root, methods=["GET"]),
        Route("/sites/{app_token}/{path:path}", page, methods=["GET"]),
        Route("/_basedb/runtime.js", runtime, methods=["GET"]),
        Route("/_basedb/dev/client.js", client_script, methods=["GET"]),
        Route("/_basedb/dev/events", events, methods=["GET"]),
        Route("/_basedb/session", session, methods=["GET", "DELETE"]),
        Route(API_PREFIX + "/sites/{app_token}/functions/{function_id}/invoke", invoke,
              methods=["POST"]),
        Route(API_PREFIX + "/sites/{app_token}/functions/{function_id}/stream", forwarded,
              methods=["POST"]),
        Route(API_PREFIX + "/sites/{app_token}/ai-tasks/{task_id}", forwarded,
              methods=["GET"]),
    ]
    app = Starlette(routes=routes)
    return GuardMiddleware(app, hosts=config.hosts)  # type: ignore[return-value]


async def _read_body(request: Request) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_CALL_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def inject_client(html: bytes) -> bytes:
    """The page with the live-reload script before its closing </body> (or at the end)."""
    tag = b'<script type="module" src="/_basedb/dev/client.js"></script>'
    matches = list(_BODY_CLOSE_RE.finditer(html))
    if not matches:
        return html + tag
    at = matches[-1].start()
    return html[:at] + tag + html[at:]


def _text(status: int, text: str) -> Response:
    return PlainTextResponse(text, status_code=status, headers=_SECURITY_HEADERS)


def _envelope(status: int, code: int, msg: str, data: Any = None) -> Response:
    return Response(json.dumps(api_envelope(code, msg, data=data), ensure_ascii=False),
                    status_code=status, media_type="application/json", headers=_SECURITY_HEADERS)
