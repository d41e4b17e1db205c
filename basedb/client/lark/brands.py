"""Brands and their hosts, as lark-cli resolves them (`internal/core/types.go`):

    feishu   https://open.feishu.cn        https://accounts.feishu.cn
    lark     https://open.larksuite.com    https://accounts.larksuite.com

`BASEDB_LARK_OPEN_URL` and `BASEDB_LARK_ACCOUNTS_URL` point either brand's hosts
anywhere (a stand-in such as `basedb serve`, in tests and offline set-ups).
"""

from __future__ import annotations

import os
from urllib.parse import quote, urlsplit

from basedb.core import environment
from basedb.core.errors import UsageError
from basedb.core.frozen import frozen_dataclass

BRANDS = ("feishu", "lark")
IDENTITIES = ("user", "bot")
OPEN_URL_ENV = environment.LARK_OPEN_URL
ACCOUNTS_URL_ENV = environment.LARK_ACCOUNTS_URL

_HOSTS = {
    "feishu": ("https://open.feishu.cn", "https://accounts.feishu.cn"),
    "lark": ("https://open.larksuite.com", "https://accounts.larksuite.com"),
}


@frozen_dataclass
class Hosts:
    open: str  # the Open API: base/v3, authen, auth/v3 …
    accounts: str  # the OAuth device authorization


def parse_brand(value: str) -> str:
    brand = value.strip().lower()
    if brand not in BRANDS:
        raise UsageError(f"--brand {value!r} is not a Lark brand.", code="BRAND_INVALID",
                         hint="Use --brand feishu (open.feishu.cn) or --brand lark "
                              "(open.larksuite.com).")
    return brand


def hosts(brand: str) -> Hosts:
    """The brand's hosts, each overridden by its environment variable when set."""
    open_url, accounts_url = _HOSTS[parse_brand(brand)]
    return Hosts(_override(OPEN_URL_ENV) or open_url,
                 _override(ACCOUNTS_URL_ENV) or accounts_url)


def _override(name: str) -> str | None:
    value = os.environ.get(name, "").strip().rstrip("/")
    if not value:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query:
        raise UsageError(f"${name} {value!r} is not an http(s) base URL.",
                         code="ENDPOINT_INVALID",
                         hint=f"Set {name} to a scheme and host, e.g. http://127.0.0.1:8787, "
                              "or unset it to use the brand's own host.")
    return value


def console_url(brand: str, app_id: str | None, scope: str) -> str:
    """Where an app's admin applies for `scope` (lark-cli's `enrichPermissionError`)."""
    return (f"{hosts(brand).open}/page/scope-apply?clientID={quote(app_id or '', safe='')}"
            f"&scopes={quote(scope, safe='')}")
