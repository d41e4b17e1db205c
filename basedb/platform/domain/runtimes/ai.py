"""AI Functions on the local platform, through an OpenAI-compatible endpoint.

The platform has no model of its own. An operator who has one (a local server such as
llama.cpp, Ollama or vLLM, or a hosted service) points the platform at it:

    BASEDB_AI_BASE_URL   the API root, e.g. http://127.0.0.1:11434/v1 (required)
    BASEDB_AI_API_KEY    sent as a bearer token, when the endpoint needs one
    BASEDB_AI_MODEL      the model name to ask for (default "default")

Without BASEDB_AI_BASE_URL every AI Function answers 800004011 "ai function feature is
not enabled", as upstream does for an account without AI. With it, a `text` AI
Function becomes one `POST {base}/chat/completions`: the function's prompt is the system
message, with `{{name}}` placeholders filled from the input's top-level properties, and
the whole input is the user message as JSON. The result is `{text, model, usage}`.
Failures of the endpoint are 800004005 with a fixed message; what the endpoint said
goes to the platform log with the log id.
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
DEFAULT_MODEL = "default"
REQUEST_TIMEOUT_S = 60.0
CONNECT_TIMEOUT_S = 10.0
SUPPORTED_CAPABILITIES = ("text",)
MAX_LOGGED_BODY_CHARS = 2000

NOT_ENABLED = "ai function feature is not enabled"
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@frozen_dataclass
class AIEndpoint:
    """Where AI Functions are answered, read from the environment."""

    base_url: str
    api_key: str | None
    model: str

    @property
    def chat_url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


def ai_endpoint() -> AIEndpoint | None:
    """The configured endpoint, or None when AI Functions are not enabled."""
    base_url = os.environ.get(BASE_URL_ENV, "").strip()
    if not base_url:
        return None
    return AIEndpoint(base_url=base_url,
                      api_key=os.environ.get(API_KEY_ENV, "").strip() or None,
                      model=os.environ.get(MODEL_ENV, "").strip() or DEFAULT_MODEL)


def run_ai(*, declaration: Mapping[str, Any], input: Any, log_id: str) -> Any:
    """Answer an AI Function; returns `{text, model, usage}` or raises ApiFailure."""
    endpoint = ai_endpoint()
    if endpoint is None:
        raise ApiFailure(Code.AI_FUNCTION_NOT_ENABLED, (
            f"{NOT_ENABLED}. Fix: to run AI Functions on the local platform, set "
            f"${BASE_URL_ENV} to an OpenAI-compatible API root (for example "
            f"http://127.0.0.1:11434/v1), and ${API_KEY_ENV} and ${MODEL_ENV} if it needs them, "
            "then restart the platform. Executed: no. Retry: retry after fixing."), status=400)
    capability = declaration.get("capability")
    if capability not in SUPPORTED_CAPABILITIES:
        raise ApiFailure(Code.AI_FUNCTION_NOT_ENABLED, (
            f"{NOT_ENABLED} for capability {quote(capability)}: the local platform runs only "
            f"{', '.join(map(quote, SUPPORTED_CAPABILITIES))} AI Functions through "
            f"${BASE_URL_ENV}. Fix: use a text AI Function locally, or test this one on the "
            "Lark platform. Executed: no. Retry: do not retry."), status=400)
    scheme = urlsplit(endpoint.base_url).scheme
    if scheme not in ("http", "https"):
        raise _failed(f"${BASE_URL_ENV} is not an http(s) URL",
                      f"set ${BASE_URL_ENV} to the endpoint's API root, such as "
                      "http://127.0.0.1:11434/v1", "retry after fixing", log_id)
    prompt = declaration.get("prompt")
    body = {
        "model": endpoint.model,
        "messages": [
            {"role": "system", "content": fill_prompt(prompt if isinstance(prompt, str) else "",
                                                      input)},
            {"role": "user", "content": json.dumps(input, ensure_ascii=False)},
        ],
    }
    answer = _post(endpoint, body, log_id)
    return _read_answer(answer, endpoint, log_id)


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


def _post(endpoint: AIEndpoint, body: dict[str, Any], log_id: str) -> Any:
    # Lazy: httpx loads only when an AI endpoint is configured.
    import httpx  # noqa: PLC0415

    headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
    timeout = httpx.Timeout(REQUEST_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    try:
        response = httpx.post(endpoint.chat_url, json=body, headers=headers, timeout=timeout,
                              follow_redirects=False)
    except httpx.TimeoutException:
        raise _failed(f"The AI endpoint did not answer within {REQUEST_TIMEOUT_S:g} s",
                      "check that the model server is running and not overloaded",
                      "retry later", log_id, status=504,
                      executed="unknown, the model may have answered too late") from None
    except httpx.HTTPError as error:
        _log(log_id, f"request failed: {type(error).__name__}: {error}")
        raise _failed(f"The AI endpoint (${BASE_URL_ENV}) could not be reached",
                      "start the model server or correct the URL", "retry later", log_id,
                      status=502) from None
    if response.status_code != 200:
        _log(log_id, f"HTTP {response.status_code}: {response.text[:MAX_LOGGED_BODY_CHARS]}")
        fix = (f"check ${API_KEY_ENV}" if response.status_code in (401, 403) else
               f"check ${MODEL_ENV} and the endpoint's log")
        raise _failed(f"The AI endpoint answered HTTP {response.status_code}", fix,
                      "retry after fixing" if response.status_code < 500 else "retry later",
                      log_id, status=502)
    try:
        return response.json()
    except ValueError:
        _log(log_id, f"not JSON: {response.text[:MAX_LOGGED_BODY_CHARS]}")
        raise _failed("The AI endpoint's answer is not JSON",
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
        _log(log_id, f"unexpected answer: {json.dumps(answer)[:MAX_LOGGED_BODY_CHARS]}")
        raise _failed("The AI endpoint's answer has no choices[0].message.content",
                      f"point ${BASE_URL_ENV} at an OpenAI-compatible chat completions API",
                      "retry after fixing", log_id, status=502)
    assert isinstance(answer, dict)
    model = answer.get("model")
    usage = answer.get("usage")
    return {"text": text, "model": model if isinstance(model, str) and model else endpoint.model,
            "usage": usage if isinstance(usage, dict) else {}}


def _failed(reason: str, fix: str, retry: str, log_id: str, *, status: int = 500,
            executed: str = "no") -> ApiFailure:
    return ApiFailure(Code.EXECUTION_FAILED, f"{reason}. Fix: {fix}. Executed: {executed}. "
                      f"Retry: {retry}. LogID: {log_id}", status=status)


def _log(log_id: str, text: str) -> None:
    platform_log.write(f"basedb ai: (log_id {log_id}) {text}")
