"""Serving a deployment's static site: the `src/` files of its site.zip.

A page URL's path below `/sites/<app>/` (prod) or `/sites/<app>/preview/` maps to the
file `src/<path>` of the deployment's artifact; a directory (a path ending in `/`, or
the empty path) maps to its `index.html`. Paths are looked up by name in the archive, so
nothing outside it can ever be read; segments such as `..`, `.`, backslashes and control
characters are refused anyway, before any lookup. ETags are the SHA-256 digests of the
verified manifest.

Artifacts never change, so each deployment's archive and file index are cached (a few
of the most recently served deployments).
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import mimetypes
import re
import sqlite3
import threading
import zipfile

from basedb.core.frozen import frozen_dataclass
from basedb.core.memo import Memo
from basedb.core.site_zip import MANIFEST_PATH
from basedb.platform.domain.deployments import artifact_content

SITE_ROOT = "src/"
INDEX = "index.html"
SITES_KEPT = 4

# Types browsers must get right (module scripts are refused under a wrong type);
# anything else comes from the mimetypes table, else application/octet-stream.
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".wasm": "application/wasm",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".webmanifest": "application/manifest+json",
    ".ico": "image/x-icon",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
}
_UNSAFE_SEGMENT_RE = re.compile(r"[\x00-\x1f\x7f\\]")


@frozen_dataclass
class SiteFile:
    path: str  # below src/
    data: bytes
    sha256: str

    @property
    def content_type(self) -> str:
        return content_type(self.path)


class SiteFiles:
    """The `src/` files of one deployment's artifact."""

    def __init__(self, content: bytes) -> None:
        self._archive = zipfile.ZipFile(io.BytesIO(content))
        self._lock = threading.Lock()
        manifest = json.loads(self._archive.read(MANIFEST_PATH))
        self.digests: dict[str, str] = {
            entry["path"][len(SITE_ROOT):]: entry["sha256"]
            for entry in manifest["files"] if entry["path"].startswith(SITE_ROOT)}

    def has_file(self, path: str) -> bool:
        return path in self.digests

    def has_directory(self, path: str) -> bool:
        prefix = path.rstrip("/") + "/"
        return any(name.startswith(prefix) for name in self.digests)

    def read(self, path: str) -> SiteFile | None:
        digest = self.digests.get(path)
        if digest is None:
            return None
        with self._lock:
            data = self._archive.read(SITE_ROOT + path)
        return SiteFile(path, data, digest)


SiteFilesMemo = Memo[str, SiteFiles]
"""The files of deployed sites, by deployment id (an artifact never changes)."""


def site_files(conn: sqlite3.Connection, deployment_id: str,
               memo: SiteFilesMemo) -> SiteFiles | None:
    found = memo.get(deployment_id)
    if found is None:
        content = artifact_content(conn, deployment_id)
        if content is None:
            return None
        found = memo.get_or_build(deployment_id, lambda: SiteFiles(content))
    return found


def safe_path(path: str) -> str | None:
    """The request path below the site root if every segment is an ordinary name."""
    segments = path.split("/")
    for index, segment in enumerate(segments):
        if segment in (".", "..") or _UNSAFE_SEGMENT_RE.search(segment):
            return None
        if segment == "" and index not in (0, len(segments) - 1):
            return None  # `a//b`
    return path.lstrip("/")


@frozen_dataclass
class Resolved:
    """A page path's outcome: a file to serve, or a redirect to the directory URL."""

    file: SiteFile | None = None
    redirect_to_directory: bool = False


def resolve(files: SiteFiles, path: str) -> Resolved | None:
    """What to answer for `path` (already safe): None means not found."""
    if path == "" or path.endswith("/"):
        found = files.read(path + INDEX)
        return Resolved(file=found) if found else None
    found = files.read(path)
    if found is not None:
        return Resolved(file=found)
    if files.has_file(path + "/" + INDEX) or files.has_directory(path):
        return Resolved(redirect_to_directory=True)
    return None


def content_type(path: str) -> str:
    dot = path.rfind(".")
    extension = path[dot:].lower() if dot > path.rfind("/") else ""
    known = CONTENT_TYPES.get(extension)
    if known:
        return known
    guessed, _ = mimetypes.guess_type(path)
    return guessed or "application/octet-stream"


# ---------------------------------------------------------------------- HTML pages


_STYLE = ("body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;"
          "padding:0 1rem;color:#1f2329}code{background:#f2f3f5;padding:0 .25rem}"
          "input{width:100%;box-sizing:border-box;font:inherit;padding:.5rem}"
          "button{font:inherit;padding:.5rem 1rem;margin-top:.75rem}"
          ".error{color:#d83931}")


def _csp_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


SITE_FILE_HEADERS = {
    # A site's pages may frame each other, never be framed by another origin
    # (clickjacking a page whose buttons call Mutations as the viewer).
    "Content-Security-Policy": "frame-ancestors 'self'",
    "X-Frame-Options": "SAMEORIGIN",
    "X-Content-Type-Options": "nosniff",
}
_PLATFORM_PAGE_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def platform_page_headers(*, script: str | None = None) -> dict[str, str]:
    """Headers of the platform's own HTML pages (sign-in, messages): nothing but their
    own inline style and script may run, nothing may frame them, and a form posts
    nowhere."""
    scripts = f"script-src {_csp_hash(script)}; connect-src 'self'; " if script else ""
    policy = (f"default-src 'none'; style-src {_csp_hash(_STYLE)}; {scripts}"
              "img-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'")
    return {"Content-Security-Policy": policy, **_PLATFORM_PAGE_HEADERS}


def message_page(title: str, paragraphs: list[str]) -> str:
    """A small HTML page; paragraphs are plain text (escaped here)."""
    body = "".join(f"<p>{html.escape(text)}</p>" for text in paragraphs)
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
            f"<body><h1>{html.escape(title)}</h1>{body}</body></html>")


def index_page(user_name: str, rows: list[tuple[str, str, str, bool, str]]) -> str:
    """The platform's `/`: the sites `user_name` may open, as (appToken, title, role,
    preview allowed, production page URL) rows, each with its production link and, for
    managers, preview."""
    items = []
    for app_token, title, role, preview, url in rows:
        token = html.escape(app_token)
        links = f"<a href=\"{html.escape(url)}\">{html.escape(title)}</a>"
        if preview:
            links += f" · <a href=\"{html.escape(url)}preview/\">preview</a>"
        items.append(f"<li>{links} <small>({html.escape(role)}, {token})</small></li>")
    listing = (f"<ul>{''.join(items)}</ul>" if items else
               "<p>You belong to no site yet. Create one with <code>basedb init</code>.</p>")
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>basedb sites</title><style>{_STYLE}</style></head>"
            f"<body><h1>Your sites</h1><p>Signed in as {html.escape(user_name)}.</p>"
            f"{listing}</body></html>")


SIGN_IN_SCRIPT = """
// The platform's sign-in form: the token goes to this origin only; the answer is the
// page origin's URL with a one-time code for the site named in this page's address.
const form = document.getElementById("sign-in");
const error = document.getElementById("error");
const asked = new URLSearchParams(location.search);
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.textContent = "";
  try {
    const response = await fetch("/_basedb/sign-in", {
      method: "POST", credentials: "omit",
      headers: {"Content-Type": "application/json", "X-Basedb-Page": "1"},
      body: JSON.stringify({token: form.elements.token.value.trim(),
                            site: asked.get("site") || "", state: asked.get("state") || "",
                            next: asked.get("next") || ""}),
    });
    const body = await response.json().catch(() => ({}));
    if (body.code !== 0) throw new Error(body.msg || `HTTP ${response.status}`);
    location.assign(body.data.redirect);
  } catch (failure) {
    error.textContent = failure.message;
  }
});
"""


def sign_in_page(page_origin: str) -> str:
    """The platform's sign-in form, on its own origin only, for the pages of the site at
    `page_origin` (it names no site title: who may not sign in may not learn it)."""
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>Sign in</title><style>{_STYLE}</style></head><body>"
        "<h1>Sign in</h1>"
        f"<p>To open the pages at <code>{html.escape(page_origin)}</code>, paste your "
        "platform token. Print it with <code>basedb auth token</code>. Type it on this "
        "address only: a site's own pages never ask for it.</p>"
        "<form id=\"sign-in\"><label for=\"token\">Token</label>"
        "<input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"off\" required>"
        "<button type=\"submit\">Sign in</button></form>"
        "<p id=\"error\" class=\"error\" role=\"alert\"></p>"
        f"<script type=\"module\">{SIGN_IN_SCRIPT}</script></body></html>")


SIGNED_OUT_SCRIPT = """
// A link from another site arrives without the SameSite=Strict cookie: if a session
// exists after all, load the page again from here (a same-origin navigation carries
// it); else sign in on the platform's origin.
const here = location.pathname + location.search;
const start = "/_basedb/session/start?next=" + encodeURIComponent(here);
const retried = sessionStorage.getItem("basedb-session-reload") === here;
fetch("/_basedb/session", {credentials: "same-origin", headers: {"X-Basedb-Page": "1"}})
  .then((response) => response.json())
  .then((body) => {
    if (body.code === 0 && !retried) {
      sessionStorage.setItem("basedb-session-reload", here);
      location.replace(here);
    } else {
      sessionStorage.removeItem("basedb-session-reload");
      location.replace(start);
    }
  })
  .catch(() => location.replace(start));
"""


def signed_out_page(start_url: str) -> str:
    """What a page origin shows a browser that is not signed in: no form, only the way
    to the platform's sign-in (a site's scripts may run on this origin)."""
    link = html.escape(start_url)
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>Sign in</title><style>{_STYLE}</style></head><body>"
        "<h1>Sign in</h1>"
        f"<p>This page needs you signed in. <a id=\"sign-in\" href=\"{link}\">Sign in on "
        "the platform</a>; you come back here afterwards.</p>"
        f"<script type=\"module\">{SIGNED_OUT_SCRIPT}</script></body></html>")


SIGNED_IN_SCRIPT = """
// Leave the code's URL for the page (replace: it stays out of the history).
location.replace(document.getElementById("next").getAttribute("href"));
"""


def signed_in_page(next_path: str) -> str:
    """The page origin's answer to a redeemed code: on to the page asked for, by a
    navigation from this origin (which carries the new SameSite=Strict cookie)."""
    link = html.escape(next_path)
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>Signed in</title><style>{_STYLE}</style></head><body>"
        f"<p>Signed in. <a id=\"next\" href=\"{link}\">Continue</a></p>"
        f"<script type=\"module\">{SIGNED_IN_SCRIPT}</script></body></html>")
