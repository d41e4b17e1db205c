"""The client keeps each path's absolute URL: it must be the URL httpx itself would join,
whatever the base URL and path look like, and the same on every use."""

from __future__ import annotations

import httpx
import pytest

from basedb.client.client import Client, api_path
from basedb.core.errors import UsageError

PATHS = ["/sites/app/functions", "sites/app", "/open-apis/base/v3/bases",
         "/open-apis/authen/v1/user_info", "/bases/b/tables?page_size=5",
         "https://elsewhere.test/open-apis/base/v3/sites?x=1", "/sites/%E4%B8%AD/x"]


@pytest.mark.parametrize("base_url", ["http://basedb.local", "https://example.test/prefix/",
                                      "http://127.0.0.1:8787"])
@pytest.mark.parametrize("path", PATHS)
def test_the_kept_url_is_the_one_httpx_joins(base_url: str, path: str) -> None:
    client = Client(base_url=base_url, token="t")
    reference = httpx.Client(base_url=base_url.rstrip("/"))
    expected = reference.build_request("GET", httpx.URL(api_path(path)),
                                       params={"a": "1"}).url
    for _ in range(2):  # built, then kept
        assert client.build_request("GET", path, params={"a": "1"}).url == expected


def test_an_invalid_path_is_still_a_usage_error() -> None:
    client = Client(base_url="http://basedb.local", token="t")
    for _ in range(2):
        with pytest.raises(UsageError) as refused:
            client.build_request("GET", "/sites/a\x00b")
        assert refused.value.code == "PATH_INVALID"
