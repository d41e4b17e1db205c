"""AI Functions on the local platform, through an OpenAI-compatible endpoint.

The platform has no model of its own. An operator who has one (a local server such as
llama.cpp, Ollama or vLLM, or a hosted service) points the platform at it:

    BASEDB_AI_BASE_URL   the API root, e.g. http://127.0.0.1:11434/v1 (required)
    BASEDB_AI_API_KEY    sent as a bearer token, when the endpoint needs one
    BASEDB_AI_MODEL      the model name to ask for (default "default")
    BASEDB_AI_IMAGE_MODEL  the model for `image` AI Functions (default: BASEDB_AI_MODEL)

Without BASEDB_AI_BASE_URL every AI Function answers 800004011 "ai function feature is
not enabled", as upstream does for an account without AI, whichever way it is called
(aggregate, streamed, or as a media task). With it, a `text` AI Function becomes one
`POST {base}/chat/completions`: the function's prompt is the system message, with
`{{name}}` placeholders filled from the input's top-level properties, and the whole
input is the user message as JSON. The result is `{text, model, usage}`; the same
request with `"stream": true` answers it piece by piece (`ai_stream`). An `image` AI
Function starts a media task (`ai_media`). Failures of the endpoint are 800004005 with a
fixed message; what the endpoint said goes to the platform log with the log id.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from basedb.core import environment
from basedb.core.frozen import frozen_dataclass
from basedb.platform.storage import platform_log
from basedb.protocol import ApiFailure, Code, quote

BASE_URL_ENV = environment.AI_BASE_URL
API_KEY_ENV = environment.AI_API_KEY
MODEL_ENV = environment.AI_MODEL
IMAGE_MODEL_ENV = environment.AI_IMAGE_MODEL
DEFAULT_MODEL = "default"
REQUEST_TIMEOUT_S = 60.0
CONNECT_TIMEOUT_S = 10.0
TEXT_CAPABILITY = "text"
MEDIA_CAPABILITIES = ("image",)
SUPPORTED_CAPABILITIES = (TEXT_CAPABILITY, *MEDIA_CAPABILITIES)
MAX_LOGGED_BODY_CHARS = 2000

NOT_ENABLED = "ai function feature is not enabled"
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@frozen_dataclass
class AIEndpoint:
    """Where AI Functions are answered, read from the environment."""

    base_url: str
    api_key: str | None
    model: str
    image_model: str

    @property
    def chat_url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    @property
    def images_url(self) -> str:
        return self.base_url.rstrip("/") + "/images/generations"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}


def ai_endpoint() -> AIEndpoint | None:
    """The configured endpoint, or None when AI Functions are not enabled."""
    base_url = os.environ.get(BASE_URL_ENV, "").strip()
    if not base_url:
        return None
    model = os.environ.get(MODEL_ENV, "").strip() or DEFAULT_MODEL
    return AIEndpoint(base_url=base_url,
                      api_key=os.environ.get(API_KEY_ENV, "").strip() or None,
                      model=model,
                      image_model=os.environ.get(IMAGE_MODEL_ENV, "").strip() or model)


def require_endpoint() -> AIEndpoint:
    """The configured endpoint, or 800004011 with how to configure one."""
    endpoint = ai_endpoint()
    if endpoint is None:
        raise ApiFailure(Code.AI_FUNCTION_NOT_ENABLED, (
            f"{NOT_ENABLED}. Fix: to run AI Functions on the local platform, set "
            f"${BASE_URL_ENV} to an OpenAI-compatible API root (for example "
            f"http://127.0.0.1:11434/v1), and ${API_KEY_ENV} and ${MODEL_ENV} if it needs them, "
            "then restart the platform. Executed: no. Retry: retry after fixing."), status=400)
    return endpoint


def require_capability(declaration: Mapping[str, Any], allowed: tuple[str, ...],
                       how: str) -> str:
    """The declaration's capability when it is one of `allowed` (for the way it is
    called, `how`), else 800004011 (one the local platform cannot run) or 9499 (one it
    runs, called the wrong way)."""
    capability = declaration.get("capability")
    if capability not in SUPPORTED_CAPABILITIES:
        raise ApiFailure(Code.AI_FUNCTION_NOT_ENABLED, (
            f"{NOT_ENABLED} for capability {quote(capability)}: the local platform runs only "
            f"{', '.join(map(quote, SUPPORTED_CAPABILITIES))} AI Functions through "
            f"${BASE_URL_ENV}. Fix: use a text or image AI Function locally, or test this one "
            "on the Lark platform. Executed: no. Retry: do not retry."), status=400)
    if capability not in allowed:
        ways = ("callSiteAIFunction (or the media-task helpers)" if capability != "text"
                else "callSiteAIFunction or invokeSiteAIFunctionStream")
        raise ApiFailure(Code.BAD_REQUEST, (
            f"A {capability} AI Function cannot be {how}. Fix: call it with {ways}. "
            "Executed: no. Retry: retry after fixing."), status=400)
    return str(capability)


def chat_body(endpoint: AIEndpoint, declaration: Mapping[str, Any], input: Any, log_id: str,
              *, stream: bool = False) -> dict[str, Any]:
    """The chat completions request for a text AI Function."""
    scheme = urlsplit(endpoint.base_url).scheme
    if scheme not in ("http", "https"):
        raise failed(f"${BASE_URL_ENV} is not an http(s) URL",
                     f"set ${BASE_URL_ENV} to the endpoint's API root, such as "
                     "http://127.0.0.1:11434/v1", "retry after fixing", log_id)
    prompt = declaration.get("prompt")
    body: dict[str, Any] = {
        "model": endpoint.model,
        "messages": [
            {"role": "system", "content": fill_prompt(prompt if isinstance(prompt, str) else "",
                                                      input)},
            {"role": "user", "content": json.dumps(input, ensure_ascii=False)},
        ],
    }
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def run_ai(*, declaration: Mapping[str, Any], input: Any, log_id: str) -> Any:
    """Answer a text AI Function; returns `{text, model, usage}` or raises ApiFailure."""
    endpoint = require_endpoint()
    require_capability(declaration, (TEXT_CAPABILITY,), "answered at once")
    body = chat_body(endpoint, declaration, input, log_id)
    answer = post_json(endpoint, endpoint.chat_url, body, log_id)
    return _read_answer(answer, endpoint, log_id)


def names_placeholders(prompt: str) -> bool:
    return _PLACEHOLDER.search(prompt) is not None


def fill_prompt(prompt: str, input: Any) -> str:
    """`{{name}}` replaced by the input's property `name` (text as is, the rest as JSON;
    a missing or null property leaves it empty)."""
    values = input if isinstance(input, Mapping) else {}

    def value_of(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        if value is None:
            return ""
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    return _PLACEHOLDER.sub(value_of, prompt)


def post_json(endpoint: AIEndpoint, url: str, body: dict[str, Any], log_id: str) -> Any:
    """POST `body` to the endpoint; its JSON answer, or ApiFailure."""
    # Lazy: httpx loads only when an AI endpoint is configured.
    import httpx  # noqa: PLC0415

    timeout = httpx.Timeout(REQUEST_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    try:
        response = httpx.post(url, json=body, headers=endpoint.headers, timeout=timeout,
                              follow_redirects=False)
    except httpx.TimeoutException:
        raise failed(f"The AI endpoint did not answer within {REQUEST_TIMEOUT_S:g} s",
                      "check that the model server is running and not overloaded",
                      "retry later", log_id, status=504,
                      executed="unknown, the model may have answered too late") from None
    except httpx.HTTPError as error:
        raise unreachable(error, log_id) from None
    if response.status_code != 200:
        raise http_status_failure(response.status_code, response.text, log_id)
    try:
        return response.json()
    except ValueError:
        log(log_id, f"not JSON: {response.text[:MAX_LOGGED_BODY_CHARS]}")
        raise failed("The AI endpoint's answer is not JSON",
                      f"point ${BASE_URL_ENV} at an OpenAI-compatible API root",
                      "retry after fixing", log_id, status=502) from None


def _read_answer(answer: Any, endpoint: AIEndpoint, log_id: str) -> dict[str, Any]:
    text = None
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            text = message["content"]
    if text is None:
        log(log_id, f"unexpected answer: {json.dumps(answer)[:MAX_LOGGED_BODY_CHARS]}")
        raise failed("The AI endpoint's answer has no choices[0].message.content",
                      f"point ${BASE_URL_ENV} at an OpenAI-compatible chat completions API",
                      "retry after fixing", log_id, status=502)
    assert isinstance(answer, dict)
    model = answer.get("model")
    usage = answer.get("usage")
    return {"text": text, "model": model if isinstance(model, str) and model else endpoint.model,
            "usage": usage if isinstance(usage, dict) else {}}


def unreachable(error: Exception, log_id: str) -> ApiFailure:
    log(log_id, f"request failed: {type(error).__name__}: {error}")
    return failed(f"The AI endpoint (${BASE_URL_ENV}) could not be reached",
                  "start the model server or correct the URL", "retry later", log_id,
                  status=502)


def http_status_failure(status: int, text: str, log_id: str) -> ApiFailure:
    log(log_id, f"HTTP {status}: {text[:MAX_LOGGED_BODY_CHARS]}")
    fix = (f"check ${API_KEY_ENV}" if status in (401, 403) else
           f"check ${MODEL_ENV} and the endpoint's log")
    return failed(f"The AI endpoint answered HTTP {status}", fix,
                  "retry after fixing" if status < 500 else "retry later", log_id, status=502)


def failed(reason: str, fix: str, retry: str, log_id: str, *, status: int = 500,
           executed: str = "no") -> ApiFailure:
    return ApiFailure(Code.EXECUTION_FAILED, f"{reason}. Fix: {fix}. Executed: {executed}. "
                      f"Retry: {retry}. LogID: {log_id}", status=status)


def log(log_id: str, text: str) -> None:
    platform_log.write(f"basedb ai: (log_id {log_id}) {text}")
