"""Request bodies: read as they stream in, never buffered past the endpoint's limit
(HTTP 413 as soon as a body declares or grows past it), and parsed as one JSON document
with an error that says what is wrong with it. A body larger than
`LOOP_PARSE_BYTES` is parsed in a worker thread (`parsed_json_body`): parsing takes about
20 ms a MiB, and the limits allow bodies of 4 MiB (invoke) to 32 MiB (record batches),
which the server's event loop would spend answering no one else.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.types import Receive

from basedb import protocol
from basedb.protocol import ApiFailure, bad_request


def too_large(limit: int) -> ApiFailure:
    return ApiFailure(protocol.Code.BODY_TOO_LARGE, f"The request body is larger than {limit} "
                      "bytes. Fix: send a smaller body. Executed: no. Retry: retry after "
                      "fixing.", status=413, headers={"Connection": "close"})


def _refuse_declared_over(request: Request, limit: int) -> None:
    """HTTP 413 for a body whose Content-Length is over `limit` bytes, before reading it."""
    refuse_declared_over(request.headers.get("content-length", ""), limit)


def refuse_declared_over(declared: str, limit: int) -> None:
    """`_refuse_declared_over` of a Content-Length header's value ("" if none)."""
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise too_large(limit)


async def body_chunks(request: Request, limit: int) -> AsyncGenerator[bytes, None]:
    """The request body as it arrives, refused with HTTP 413 once it grows past `limit`
    bytes (or declares more up front)."""
    _refuse_declared_over(request, limit)
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        yield chunk


async def read_body(request: Request, limit: int) -> bytes:
    """The whole request body (at most `limit` bytes): `body_chunks` joined, reading the
    messages straight from `receive` (most bodies are one message)."""
    _refuse_declared_over(request, limit)
    return await receive_body(request.receive, limit)


async def receive_body(receive: Receive, limit: int) -> bytes:
    """`read_body` once the declared length has been checked."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


# The largest body parsed on the event loop (a fraction of a millisecond); larger ones
# are parsed in a worker thread.
LOOP_PARSE_BYTES = 64 * 1024


async def parsed_json_body(raw: bytes) -> Any:
    """`parse_json_body(raw)`, in a worker thread when `raw` is over LOOP_PARSE_BYTES."""
    if len(raw) <= LOOP_PARSE_BYTES:
        return parse_json_body(raw)
    return await run_in_threadpool(parse_json_body, raw)


def parse_json_body(raw: bytes) -> Any:
    """The JSON document of a body; None when there is none (no bytes at all: a body of
    only whitespace is not a JSON document, and is refused like any other)."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        raise bad_request("The request body is not UTF-8 text", parameter="/",
                          fix="send a UTF-8 encoded JSON document") from None
    except json.JSONDecodeError as exc:
        raise bad_request(f"The request body is not valid JSON: {exc.msg} at line {exc.lineno} "
                          f"column {exc.colno}", parameter="/",
                          fix="send one JSON document (check quotes, commas and brackets)"
                          ) from None
    except RecursionError:
        raise bad_request("The request body nests arrays or objects too deeply", parameter="/",
                          fix="send a flatter JSON document") from None
