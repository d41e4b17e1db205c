"""Where the platform is reached: which `Host` names it answers, and each site's own
browser origin for its pages.

    API hosts    localhost, IP literals, the host of $BASEDB_PUBLIC_URL (and, for the
                 in-process app only, its private name): the Open API, /openapi.json,
                 the sign-in form (the platform token is typed there and nowhere else)
    page hosts   <site>.localhost and <site>.<public host>, where <site> is the app token
                 in lower case (host names are case-insensitive): that site's pages
                 under /sites/<appToken>/, the page runtime, the page sign-in session
                 and that site's invoke endpoint, nothing else

Every site's pages live in an origin of their own, so a page's script shares nothing
with another site's pages (cookies, storage, same-origin requests): browsers resolve
every `*.localhost` name to the loopback address, so no DNS set-up is needed on one
machine. A team server with a public URL needs a wildcard DNS record for its pages
(`*.basedb.example.com` next to `basedb.example.com`).

Any other name is refused before routing: a DNS-rebinding page (a hostile name that
resolves to 127.0.0.1) sends its own name as `Host`. IP literals are always accepted,
since rebinding needs a name.
"""

from __future__ import annotations

import ipaddress
import os
import re
from functools import lru_cache
from typing import Literal
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection

from basedb.core import environment
from basedb.core.frozen import frozen_dataclass

DEFAULT_PUBLIC_URL = "http://127.0.0.1:8787"
PUBLIC_URL_ENV = environment.PUBLIC_URL
PAGE_DOMAIN = "localhost"
_LABEL_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}\Z")

HostKind = Literal["api", "page"]


@frozen_dataclass
class PublicUrl:
    """$BASEDB_PUBLIC_URL split: where `basedb serve` is reached."""

    scheme: str
    host: str  # lower case, IPv6 without brackets
    port: int | None

    @property
    def is_name(self) -> bool:
        """Whether the host is a DNS name other than localhost (it can have page hosts)."""
        return self.host != PAGE_DOMAIN and not _is_ip(self.host)

    def origin(self, host: str | None = None) -> str:
        shown = host if host is not None else self.host
        if ":" in shown:
            shown = f"[{shown}]"
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.scheme}://{shown}{port}"


def public_url() -> PublicUrl:
    """$BASEDB_PUBLIC_URL (read at each call: tests and `basedb serve` set it), else the
    default address of `basedb serve`."""
    return parse_public_url(os.environ.get(PUBLIC_URL_ENV) or DEFAULT_PUBLIC_URL)


def serving_url(served: str) -> PublicUrl:
    """Where a server that listens at `served` is reached: $BASEDB_PUBLIC_URL when set
    (a proxy in front, another host name), else `served` itself."""
    return parse_public_url(os.environ.get(PUBLIC_URL_ENV) or served)


@lru_cache(maxsize=64)
def parse_public_url(text: str) -> PublicUrl:
    parts = urlsplit(text.strip())
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        raise ValueError(f"${PUBLIC_URL_ENV} must be an http(s) URL such as "
                         f"{DEFAULT_PUBLIC_URL}, not {text!r}")
    return PublicUrl(parts.scheme, host, parts.port)


def request_base(connection: HTTPConnection) -> PublicUrl:
    """The address page URLs are built on for an answer to this request:
    $BASEDB_PUBLIC_URL when set; else the loopback address and port the request came
    to (`basedb serve --port N`); else (in-process) the default address."""
    if os.environ.get(PUBLIC_URL_ENV):
        return public_url()
    host = request_host(connection)
    if host is not None and host.kind == "api" and (host.name == PAGE_DOMAIN
                                                    or _is_ip(host.name)):
        return PublicUrl(connection.url.scheme, host.name, host.port)
    return public_url()


def site_label(app_token: str) -> str:
    """The host label of a site's page origin."""
    return app_token.lower()


def has_page_host(app_token: str) -> bool:
    """Whether the token can name a page host at all (no site has one that cannot)."""
    return _LABEL_RE.match(site_label(app_token)) is not None


def page_origin(app_token: str, *, base: PublicUrl | None = None) -> str:
    """The browser origin of a site's pages: `<app>.localhost` for a loopback or IP
    address, `<app>.<public host>` for a public name."""
    base = base or public_url()
    domain = base.host if base.is_name else PAGE_DOMAIN
    return base.origin(f"{site_label(app_token)}.{domain}")


def platform_origin(connection: HTTPConnection) -> str:
    """The platform's own origin as seen from a request to a page host: the origin of
    $BASEDB_PUBLIC_URL when set, else the page host without its site label (the page
    host `<app>.localhost:8787` belongs to the platform at `localhost:8787`)."""
    if os.environ.get(PUBLIC_URL_ENV):
        return public_url().origin()
    host = request_host(connection)
    if host is None or host.kind == "api":
        return request_base(connection).origin()
    name = host.name.partition(".")[2]  # a site label holds no dot
    return RequestHost("api", name, host.port).origin(connection.url.scheme)


def page_url(app_token: str, env: str, *, base: PublicUrl | None = None) -> str:
    """A release's baseAppUrl: the site's page origin, path /sites/<app>/[preview/]."""
    suffix = "preview/" if env == "preview" else ""
    return f"{page_origin(app_token, base=base)}/sites/{app_token}/{suffix}"


# --------------------------------------------------------------------- the Host check


@frozen_dataclass
class RequestHost:
    """What a request's `Host` header names."""

    kind: HostKind
    name: str  # lower case, without the port
    port: int | None
    site: str | None = None  # the page host's site label

    def origin(self, scheme: str) -> str:
        shown = f"[{self.name}]" if ":" in self.name else self.name
        return f"{scheme}://{shown}" + (f":{self.port}" if self.port is not None else "")


def classify_host(header: str, *, private_names: frozenset[str] = frozenset(),
                  base: PublicUrl | None = None) -> RequestHost | None:
    """The kind of host a `Host` header names, or None when the platform does not answer
    to it. `private_names` are accepted as API hosts (the in-process app's name)."""
    return _classify_host(header, private_names, base or public_url())


@lru_cache(maxsize=1024)
def _classify_host(header: str, private_names: frozenset[str],
                   base: PublicUrl) -> RequestHost | None:
    """classify_host, once per distinct header (a request's host is one of a few)."""
    parsed = _split_host(header)
    if parsed is None:
        return None
    name, port = parsed
    if _is_ip(name) or name in (PAGE_DOMAIN, base.host) or name in private_names:
        return RequestHost("api", name, port)
    for domain in (PAGE_DOMAIN, base.host if base.is_name else None):
        if domain is not None and name.endswith("." + domain):
            label = name[: -len(domain) - 1]
            if _LABEL_RE.match(label):
                return RequestHost("page", name, port, site=label)
    return None


def request_host(connection: HTTPConnection) -> RequestHost | None:
    """The classified host of a request (set by the host guard)."""
    found = connection.scope.get(HOST_KEY)
    return found if isinstance(found, RequestHost) else None


HOST_KEY = "basedb.host"


def _split_host(header: str) -> tuple[str, int | None] | None:
    text = header.strip().lower()
    if not text or any(ch in text for ch in "/@?#\\ \t"):
        return None
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        name, rest = text[1:end], text[end + 1:]
        if not _is_ip(name):
            return None
    else:
        name, colon, port_text = text.partition(":")
        rest = colon + port_text
    if rest:
        if not rest.startswith(":") or not rest[1:].isdigit() or len(rest) > 6:
            return None
        port: int | None = int(rest[1:])
    else:
        port = None
    name = name.rstrip(".")  # a fully qualified name's trailing dot
    if not name:
        return None
    return name, port


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
