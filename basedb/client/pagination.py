"""Follow paginated list endpoints and concatenate their pages (`--page-all`).

Three shapes occur on the Open API:

- camelCase cursors (upstream's site endpoints): `{…, "hasMore": true, "pageToken": "…"}`,
  next page requested with `?pageToken=…`;
- snake_case cursors (Lark's Base endpoints): `{"items": […], "has_more": true,
  "page_token": "…"}`, next page with `?page_token=…`;
- offsets (record lists): `{"record_id_list": […], "data": [[…]], "has_more": true,
  "total": n}` without a token, next page with `?offset=<offset + rows so far>`.

The merged envelope is the first page's, with the list field(s) concatenated and the
last page's has-more flag, so a caller can tell a truncated result from a complete one.
When more pages remain, the last cursor is kept so the listing can be resumed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from basedb.core.errors import NetworkError, UsageError

MAX_PAGES = 1000
"""Hard cap on pages per listing, whatever the caller asks: a server that keeps saying
"more" must not keep a command running forever."""

# Column-oriented record lists carry two parallel lists that grow together.
_RECORD_LISTS = ("record_id_list", "data")

Fetch = Callable[[dict[str, Any]], dict[str, Any]]


class _Style:
    def __init__(self, more_key: str, token_key: str | None) -> None:
        self.more_key = more_key
        self.token_key = token_key  # None: offset-based


def _style_of(data: dict[str, Any]) -> _Style | None:
    if "hasMore" in data:
        return _Style("hasMore", "pageToken")
    if "has_more" in data:
        # Lark omits page_token on the last page; a first page that says "more" without
        # a token is an offset listing.
        if data.get("has_more") and not data.get("page_token"):
            return _Style("has_more", None)
        return _Style("has_more", "page_token")
    return None


def _list_fields(data: dict[str, Any], list_field: str | None) -> list[str]:
    if list_field is not None:
        if not isinstance(data.get(list_field), list):
            raise UsageError(f"The response has no list field {list_field!r} to paginate.",
                             code="PAGINATION_FIELD_MISSING",
                             hint=f"List fields in this response: {_lists_in(data) or 'none'}.")
        return [list_field]
    if all(isinstance(data.get(name), list) for name in _RECORD_LISTS):
        return list(_RECORD_LISTS)
    if isinstance(data.get("items"), list):
        return ["items"]
    lists = _lists_in(data)
    return lists[:1]


def _lists_in(data: dict[str, Any]) -> list[str]:
    return [key for key, value in data.items() if isinstance(value, list)]


def _offset_of(params: dict[str, Any]) -> int:
    value = params.get("offset", 0)
    try:
        offset = int(value)
    except (TypeError, ValueError):
        raise UsageError(f"Query parameter offset={value!r} is not an integer.",
                         code="PARAMS_INVALID", hint="Pass offset as a whole number.") from None
    if offset < 0:
        raise UsageError(f"Query parameter offset={offset} is negative.",
                         code="PARAMS_INVALID", hint="Pass offset >= 0.")
    return offset


def collect_pages(fetch: Fetch, params: dict[str, Any] | None = None, *,
                  list_field: str | None = None, max_pages: int | None = None) -> dict[str, Any]:
    """Fetch every page (at most `max_pages`, never more than MAX_PAGES) and merge them.

    `fetch(params)` returns one page's envelope (and raises on errors). A response that
    is not paginated is returned as it is.
    """
    limit = MAX_PAGES if not max_pages or max_pages <= 0 else min(max_pages, MAX_PAGES)
    base_params = dict(params or {})
    first = fetch(base_params)
    data = first.get("data")
    if not isinstance(data, dict):
        return first
    style = _style_of(data)
    fields = _list_fields(data, list_field) if style is not None else []
    if style is None or not fields:
        return first

    merged: dict[str, list[Any]] = {name: list(data[name]) for name in fields}
    last = data
    pages = 1
    seen_tokens: set[str] = set()
    offset = _offset_of(base_params) if style.token_key is None else 0
    while last.get(style.more_key) and pages < limit:
        next_params = dict(base_params)
        if style.token_key is not None:
            token = last.get(style.token_key)
            if not isinstance(token, str) or not token or token in seen_tokens:
                break  # a missing or repeated cursor would loop; stop, still "more"
            seen_tokens.add(token)
            next_params[style.token_key] = token
        else:
            step = len(last.get(fields[0]) or [])
            if step == 0:
                break  # "more" but an empty page: the offset would never advance
            offset += step
            next_params["offset"] = offset
        page = fetch(next_params).get("data")
        pages += 1
        if not isinstance(page, dict):
            raise NetworkError(
                f"Page {pages} of the listing has no data object; the listing cannot be "
                "completed.", code="PAGINATION_BROKEN",
                hint="Retry without --page-all and page with explicit parameters.")
        for name in fields:
            items = page.get(name, [])
            if not isinstance(items, list):
                raise NetworkError(
                    f"Page {pages} of the listing has a non-list {name!r}.",
                    code="PAGINATION_BROKEN",
                    hint="Retry without --page-all and page with explicit parameters.")
            merged[name].extend(items)
        last = page

    result = dict(data)
    result.update(merged)
    more = bool(last.get(style.more_key))
    result[style.more_key] = more
    if style.token_key is not None:
        if more and last.get(style.token_key):
            result[style.token_key] = last[style.token_key]
        else:
            result.pop(style.token_key, None)
    if "total" in last:
        result["total"] = last["total"]
    return {**first, "data": result}
