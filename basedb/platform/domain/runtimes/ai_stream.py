"""A text AI Function's answer streamed as it is written, end to end: the endpoint's
chat completions stream (`"stream": true`, Server-Sent Events of `choices[0].delta`)
is read as it arrives and passed on to the page as Server-Sent Events of its own:

    event: delta   data: {"delta": "…"}                       one per piece of text
    event: done    data: {"text": "…", "model": "…", "usage": {…}}   the whole answer
    event: error   data: {"code": 800004005, "msg": "…", "logId": "…"}   a failure midway

`open_stream` makes the request and waits for the endpoint's status, so a refusal or an
endpoint that cannot be reached still answers as every call does (an envelope with its
code); only what fails once text has started to flow is an `error` event.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from basedb.core.frozen import frozen_dataclass
from basedb.platform.domain.runtimes import ai
from basedb.protocol import ApiFailure

STREAM_IDLE_TIMEOUT_S = ai.REQUEST_TIMEOUT_S


@frozen_dataclass
class OpenStream:
    """An endpoint stream whose status was 200: `events()` relays it, then closes it."""

    client: Any  # httpx.AsyncClient
    response: Any  # httpx.Response, streaming
    model: str
    log_id: str

    async def events(self) -> AsyncIterator[bytes]:
        pieces: list[str] = []
        model, usage = self.model, {}
        try:
            async for data in _sse_data(self.response.aiter_lines()):
                if data == "[DONE]":
                    break
                chunk = _json(data)
                if chunk is None:
                    ai.log(self.log_id, f"not JSON in the stream: {data[:200]}")
                    raise ai.failed("The AI endpoint's stream is not JSON",
                                    f"point ${ai.BASE_URL_ENV} at an OpenAI-compatible chat "
                                    "completions API", "retry after fixing", self.log_id,
                                    executed="partly, the answer was cut short")
                named = chunk.get("model")
                model = named if isinstance(named, str) and named else model
                if isinstance(chunk.get("usage"), dict):
                    usage = chunk["usage"]
                delta = _delta(chunk)
                if delta:
                    pieces.append(delta)
                    yield event("delta", {"delta": delta})
            yield event("done", {"text": "".join(pieces), "model": model, "usage": usage})
        except ApiFailure as failure:
            yield event("error", {"code": int(failure.code), "msg": failure.msg,
                                  "logId": self.log_id})
        except Exception as error:  # the endpoint went away midway
            lost = ai.unreachable(error, self.log_id)
            yield event("error", {"code": int(lost.code), "msg": lost.msg,
                                  "logId": self.log_id})
        finally:
            await self.response.aclose()
            await self.client.aclose()


async def open_stream(declaration: Mapping[str, Any], input: Any, log_id: str) -> OpenStream:
    """Start the endpoint's stream for a text AI Function; ApiFailure (800004011 when no
    endpoint is configured) before anything is sent to the page."""
    endpoint = ai.require_endpoint()
    ai.require_capability(declaration, (ai.TEXT_CAPABILITY,), "streamed")
    body = ai.chat_body(endpoint, declaration, input, log_id, stream=True)
    # Lazy: httpx loads only when an AI endpoint is configured.
    import httpx  # noqa: PLC0415

    client = httpx.AsyncClient(timeout=httpx.Timeout(STREAM_IDLE_TIMEOUT_S,
                                                     connect=ai.CONNECT_TIMEOUT_S),
                               follow_redirects=False)
    try:
        request = client.build_request("POST", endpoint.chat_url, json=body,
                                       headers={**endpoint.headers,
                                                "Accept": "text/event-stream"})
        response = await client.send(request, stream=True)
    except httpx.TimeoutException:
        await client.aclose()
        raise ai.failed(f"The AI endpoint did not answer within {STREAM_IDLE_TIMEOUT_S:g} s",
                        "check that the model server is running and not overloaded",
                        "retry later", log_id, status=504) from None
    except httpx.HTTPError as error:
        await client.aclose()
        raise ai.unreachable(error, log_id) from None
    if response.status_code != 200:
        text = (await response.aread()).decode("utf-8", "replace")
        await response.aclose()
        await client.aclose()
        raise ai.http_status_failure(response.status_code, text, log_id)
    return OpenStream(client=client, response=response, model=endpoint.model, log_id=log_id)


def event(name: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


async def _sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The `data` of each event of a Server-Sent Events stream."""
    data: list[str] = []
    async for line in lines:
        if line == "":
            if data:
                yield "\n".join(data)
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield "\n".join(data)


def _json(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _delta(chunk: Mapping[str, Any]) -> str:
    choices = chunk.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    delta = choices[0].get("delta")
    content = delta.get("content") if isinstance(delta, dict) else None
    return content if isinstance(content, str) else ""
