"""AI Functions: not enabled by default; with an OpenAI-compatible endpoint configured,
one chat completion per call (the endpoint is mocked with respx: the local platform has
no model of its own)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from basedb.platform.domain.runtimes.ai import fill_prompt, run_ai
from basedb.protocol import ApiFailure, Code

BASE_URL = "http://127.0.0.1:9/v1"
CHAT_URL = BASE_URL + "/chat/completions"
LOG_ID = "20990101000000FEDCBA9876543210AB"

SUMMARY = {
    "name": "summarizeLeave",
    "description": "Summarise the leave plans of one period for the weekly report",
    "capability": "text",
    "prompt": "Period {{periodTitle}}:\n{{submissions}}\nMissing: [{{note}}]",
    "inputSchema": {"type": "object", "properties": {
        "periodTitle": {"type": "string", "description": "title"},
        "submissions": {"type": "array", "description": "rows"}}},
}
INPUT = {"periodTitle": "春节", "submissions": [{"member_name": "Ann", "days": 2}]}


def completion(text: str = "两人休假。", **extra: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "qwen-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49}} | extra


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.setenv("BASEDB_AI_BASE_URL", BASE_URL)
    monkeypatch.setenv("BASEDB_AI_API_KEY", "sk-local-test")
    monkeypatch.setenv("BASEDB_AI_MODEL", "qwen-test")
    with respx.mock(assert_all_called=False) as router:
        yield router


def fail(code: int, declaration: dict[str, Any] = SUMMARY) -> ApiFailure:
    with pytest.raises(ApiFailure) as caught:
        run_ai(declaration=declaration, input=INPUT, log_id=LOG_ID)
    assert caught.value.code == code, caught.value.msg
    assert len(caught.value.msg) <= 500
    return caught.value


# ------------------------------------------------------------------ not enabled


def test_without_configuration_ai_is_not_enabled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BASEDB_AI_BASE_URL", raising=False)
    monkeypatch.setenv("BASEDB_AI_API_KEY", "sk-ignored-without-a-url")
    with respx.mock() as router:  # and nothing is sent anywhere
        failure = fail(Code.AI_FUNCTION_NOT_ENABLED)
        assert not router.calls
    assert failure.msg.startswith("ai function feature is not enabled. Fix: ")
    assert "$BASEDB_AI_BASE_URL" in failure.msg and "Executed: no" in failure.msg
    assert "sk-ignored" not in failure.msg


def test_blank_base_url_counts_as_not_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BASEDB_AI_BASE_URL", "   ")
    fail(Code.AI_FUNCTION_NOT_ENABLED)


def test_capabilities_the_platform_cannot_run_are_not_enabled(
        configured: respx.MockRouter) -> None:
    route = configured.post(CHAT_URL).respond(json=completion())
    failure = fail(Code.AI_FUNCTION_NOT_ENABLED, SUMMARY | {"capability": "video"})
    assert 'capability "video"' in failure.msg and not route.called


def test_a_media_function_is_not_answered_at_once(configured: respx.MockRouter) -> None:
    route = configured.post(CHAT_URL).respond(json=completion())
    failure = fail(Code.BAD_REQUEST, SUMMARY | {"capability": "image"})
    assert "callSiteAIFunction" in failure.msg and not route.called


# -------------------------------------------------------------------- configured


def test_chat_completion_with_prompt_and_input(configured: respx.MockRouter) -> None:
    route = configured.post(CHAT_URL).respond(json=completion())
    result = run_ai(declaration=SUMMARY, input=INPUT, log_id=LOG_ID)
    assert result == {"text": "两人休假。", "model": "qwen-test",
                      "usage": {"prompt_tokens": 42, "completion_tokens": 7,
                                "total_tokens": 49}}
    request = route.calls.last.request
    assert request.headers["authorization"] == "Bearer sk-local-test"
    body = json.loads(request.content)
    assert body["model"] == "qwen-test"
    system, user = body["messages"]
    assert system == {"role": "system", "content": (
        'Period 春节:\n[{"member_name": "Ann", "days": 2}]\nMissing: []')}
    assert user["role"] == "user" and json.loads(user["content"]) == INPUT


def test_defaults_without_key_and_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BASEDB_AI_BASE_URL", BASE_URL + "/")
    monkeypatch.delenv("BASEDB_AI_API_KEY", raising=False)
    monkeypatch.delenv("BASEDB_AI_MODEL", raising=False)
    with respx.mock() as router:
        route = router.post(CHAT_URL).respond(json=completion(model=None, usage=None))
        result = run_ai(declaration=SUMMARY, input={}, log_id=LOG_ID)
    assert result == {"text": "两人休假。", "model": "default", "usage": {}}
    request = route.calls.last.request
    assert "authorization" not in request.headers
    assert json.loads(request.content)["model"] == "default"


@pytest.mark.parametrize(("status", "retry"), [(401, "retry after fixing"),
                                                (503, "retry later")])
def test_endpoint_errors_are_safe_execution_failures(
        configured: respx.MockRouter, capsys: pytest.CaptureFixture[str], status: int,
        retry: str) -> None:
    configured.post(CHAT_URL).respond(status, json={"error": {"message": "internal detail"}})
    failure = fail(Code.EXECUTION_FAILED)
    assert f"answered HTTP {status}" in failure.msg and f"Retry: {retry}" in failure.msg
    assert failure.msg.endswith(f"LogID: {LOG_ID}") and "internal detail" not in failure.msg
    assert "internal detail" in capsys.readouterr().err


def test_timeout_is_an_execution_failure(configured: respx.MockRouter) -> None:
    configured.post(CHAT_URL).mock(side_effect=httpx.ReadTimeout("slow"))
    failure = fail(Code.EXECUTION_FAILED)
    assert "did not answer within 60 s" in failure.msg and failure.status == 504
    assert "Executed: unknown" in failure.msg


def test_unreachable_endpoint(configured: respx.MockRouter) -> None:
    configured.post(CHAT_URL).mock(side_effect=httpx.ConnectError("refused"))
    failure = fail(Code.EXECUTION_FAILED)
    assert "could not be reached" in failure.msg and "127.0.0.1" not in failure.msg


@pytest.mark.parametrize("answer", [
    {"choices": []},
    {"choices": [{"message": {"content": None}}]},
    ["not", "an", "object"],
])
def test_malformed_answers(configured: respx.MockRouter, answer: Any) -> None:
    configured.post(CHAT_URL).respond(json=answer)
    failure = fail(Code.EXECUTION_FAILED)
    assert "choices[0].message.content" in failure.msg


def test_non_json_answer(configured: respx.MockRouter) -> None:
    configured.post(CHAT_URL).respond(text="<html>proxy login</html>")
    assert "is not JSON" in fail(Code.EXECUTION_FAILED).msg


def test_base_url_must_be_http(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BASEDB_AI_BASE_URL", "file:///etc/passwd")
    failure = fail(Code.EXECUTION_FAILED)
    assert "is not an http(s) URL" in failure.msg


def test_the_api_key_never_reaches_the_log(
        configured: respx.MockRouter, capsys: pytest.CaptureFixture[str]) -> None:
    configured.post(CHAT_URL).respond(401, text="bad key bdb_abcdefghijklmnopqrstuvwxyz012345")
    fail(Code.EXECUTION_FAILED)
    assert "bdb_abcdefghijklmnopqrstuvwxyz012345" not in capsys.readouterr().err


def test_fill_prompt() -> None:
    assert fill_prompt("a {{x}} b {{ y }} c {{z}} {{not-a-name}}",
                       {"x": "text", "y": {"k": [1, None]}, "z": None}) == \
        'a text b {"k": [1, null]} c  {{not-a-name}}'
    assert fill_prompt("{{x}}", ["not", "a", "mapping"]) == ""
