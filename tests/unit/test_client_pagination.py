"""Client.paginate: cursors (camelCase, snake_case), offsets, caps and loop guards."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from basedb.client.client import EMBEDDED_BASE_URL, Client
from basedb.client.pagination import MAX_PAGES
from basedb.client.transport import InProcessTransport
from basedb.core.errors import ApiError, UsageError

ENDPOINT = "http://127.0.0.1:8787"
PREFIX = "/open-apis/base/v3"


@pytest.fixture
def mock() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=ENDPOINT + PREFIX, assert_all_called=False) as router:
        yield router


@pytest.fixture
def client() -> Iterator[Client]:
    with Client(base_url=ENDPOINT, token="t", timeout=2.0) as c:
        yield c


def ok(data: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json={"code": 0, "msg": "success", "data": data})


def camel_pages(request: httpx.Request) -> httpx.Response:
    token = request.url.params.get("pageToken")
    assert request.url.params.get("env") == "prod"  # the caller's params ride along
    page = {None: (["f1", "f2"], "p2"), "p2": (["f3"], "p3"), "p3": (["f4"], None)}[token]
    items, next_token = page
    data: dict[str, Any] = {"functions": [{"functionId": i} for i in items],
                            "hasMore": next_token is not None}
    if next_token:
        data["pageToken"] = next_token
    return ok(data)


def test_camel_case_cursor(mock: respx.MockRouter, client: Client) -> None:
    route = mock.get("/sites/a/functions").mock(side_effect=camel_pages)
    merged = client.paginate("GET", "/sites/a/functions", params={"env": "prod"})
    assert [f["functionId"] for f in merged["data"]["functions"]] == ["f1", "f2", "f3", "f4"]
    assert merged["data"]["hasMore"] is False
    assert "pageToken" not in merged["data"]
    assert merged["code"] == 0 and merged["msg"] == "success"
    assert route.call_count == 3


def test_page_limit_truncates_and_keeps_the_cursor(mock: respx.MockRouter,
                                                   client: Client) -> None:
    mock.get("/sites/a/functions").mock(side_effect=camel_pages)
    merged = client.paginate("GET", "/sites/a/functions", params={"env": "prod"}, max_pages=2)
    assert len(merged["data"]["functions"]) == 3
    assert merged["data"]["hasMore"] is True
    assert merged["data"]["pageToken"] == "p3"


def test_snake_case_cursor(mock: respx.MockRouter, client: Client) -> None:
    def pages(request: httpx.Request) -> httpx.Response:
        token = request.url.params.get("page_token")
        if token is None:
            return ok({"items": [1, 2], "has_more": True, "page_token": "n2", "total": 3})
        assert token == "n2"
        return ok({"items": [3], "has_more": False, "total": 3})

    mock.get("/bases/b/tables").mock(side_effect=pages)
    merged = client.paginate("GET", "/bases/b/tables")
    assert merged["data"] == {"items": [1, 2, 3], "has_more": False, "total": 3}


def test_offset_record_lists_concatenate_parallel_lists(mock: respx.MockRouter,
                                                        client: Client) -> None:
    rows = [[f"r{i}", i] for i in range(7)]

    def pages(request: httpx.Request) -> httpx.Response:
        offset = int(request.url.params.get("offset", "0"))
        limit = int(request.url.params["limit"])
        chunk = rows[offset:offset + limit]
        return ok({"fields": ["Name", "N"], "field_id_list": ["f1", "f2"],
                   "record_id_list": [f"rec{offset + i}" for i in range(len(chunk))],
                   "data": chunk, "has_more": offset + limit < len(rows), "total": len(rows)})

    route = mock.get("/bases/b/tables/t/records").mock(side_effect=pages)
    merged = client.paginate("GET", "/bases/b/tables/t/records", params={"limit": 3})
    data = merged["data"]
    assert data["data"] == rows
    assert data["record_id_list"] == [f"rec{i}" for i in range(7)]
    assert data["fields"] == ["Name", "N"] and data["field_id_list"] == ["f1", "f2"]
    assert data["has_more"] is False and data["total"] == 7
    assert [c.request.url.params.get("offset") for c in route.calls] == [None, "3", "6"]


@pytest.mark.slow
def test_an_endless_server_stops_at_the_hard_cap(mock: respx.MockRouter,
                                                 client: Client) -> None:
    counter = {"n": 0}

    def endless(request: httpx.Request) -> httpx.Response:
        counter["n"] += 1
        return ok({"items": [counter["n"]], "hasMore": True, "pageToken": f"t{counter['n']}"})

    mock.get("/things").mock(side_effect=endless)
    merged = client.paginate("GET", "/things", max_pages=0)
    assert counter["n"] == MAX_PAGES
    assert merged["data"]["hasMore"] is True
    counter["n"] = 0
    client.paginate("GET", "/things", max_pages=10 * MAX_PAGES)
    assert counter["n"] == MAX_PAGES


def test_a_repeated_cursor_stops_the_loop(mock: respx.MockRouter, client: Client) -> None:
    route = mock.get("/things").respond(
        json={"code": 0, "data": {"items": [1], "hasMore": True, "pageToken": "same"}})
    merged = client.paginate("GET", "/things")
    assert route.call_count == 2  # the first page, then "same" once; never again
    assert merged["data"]["items"] == [1, 1]
    assert merged["data"]["hasMore"] is True


def test_an_empty_offset_page_stops_the_loop(mock: respx.MockRouter, client: Client) -> None:
    route = mock.get("/rows").respond(
        json={"code": 0, "data": {"record_id_list": [], "data": [], "has_more": True}})
    merged = client.paginate("GET", "/rows")
    assert route.call_count == 1
    assert merged["data"]["has_more"] is True


def test_unpaginated_response_is_returned_as_is(mock: respx.MockRouter, client: Client) -> None:
    mock.get("/sites/a").respond(json={"code": 0, "data": {"appToken": "a", "title": "T"}})
    assert client.paginate("GET", "/sites/a") == {"code": 0,
                                                  "data": {"appToken": "a", "title": "T"}}


def test_an_error_on_a_later_page_raises(mock: respx.MockRouter, client: Client) -> None:
    def pages(request: httpx.Request) -> httpx.Response:
        if request.url.params.get("pageToken"):
            return httpx.Response(403, json={"code": 99991672, "msg": "permission denied"})
        return ok({"items": [1], "hasMore": True, "pageToken": "p2"})

    mock.get("/things").mock(side_effect=pages)
    with pytest.raises(ApiError, match="permission denied"):
        client.paginate("GET", "/things")


def test_explicit_list_field_and_bad_offset(mock: respx.MockRouter, client: Client) -> None:
    mock.get("/things").respond(json={"code": 0, "data": {"a": [1], "b": [2], "hasMore": False}})
    assert client.paginate("GET", "/things", list_field="b")["data"]["b"] == [2]
    with pytest.raises(UsageError, match="no list field 'c'"):
        client.paginate("GET", "/things", list_field="c")
    mock.get("/rows").respond(json={"code": 0, "data": {"items": [1], "has_more": True}})
    with pytest.raises(UsageError, match="offset"):
        client.paginate("GET", "/rows", params={"offset": "abc"})


def records_app(total: int) -> Starlette:
    async def records(request: Request) -> JSONResponse:
        offset = int(request.query_params.get("offset", "0"))
        limit = min(int(request.query_params.get("limit", "200")), 200)
        ids = [f"rec{i}" for i in range(offset, min(offset + limit, total))]
        return JSONResponse({"code": 0, "msg": "success", "data": {
            "fields": ["N"], "field_id_list": ["fld1"], "record_id_list": ids,
            "data": [[int(i[3:])] for i in ids], "has_more": offset + limit < total,
            "total": total}})

    return Starlette(routes=[Route(PREFIX + "/bases/b/tables/t/records", records)])


def test_pagination_through_the_in_process_transport() -> None:
    transport = InProcessTransport(records_app(450))
    with Client(base_url=EMBEDDED_BASE_URL, token="t", transport=transport) as c:
        merged = c.paginate("GET", "/bases/b/tables/t/records", params={"limit": 200})
    data = merged["data"]
    assert len(data["record_id_list"]) == 450
    assert [row[0] for row in data["data"]] == list(range(450))
    assert data["has_more"] is False
