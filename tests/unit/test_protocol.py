"""The protocol (basedb.protocol): one enum of codes, and upstream's message template built
and parsed as one structure."""

from __future__ import annotations

import json
import string

from hypothesis import given
from hypothesis import strategies as st

from basedb.client.api_output import from_exception
from basedb.core.errors import (
    ApiError,
    AuthError,
    BadResponse,
    BasedbError,
    UsageError,
    WorkspaceNotFound,
)
from basedb.protocol import (
    MAX_MSG_CHARS,
    Code,
    FailureMessage,
    error_body,
    permission_denied,
    unexecuted_message,
)
from basedb.protocol.envelope import error_envelope


def test_every_code_is_defined_once_with_its_documented_value() -> None:
    values = [code.value for code in Code]
    assert len(values) == len(set(values))
    assert Code.PARAMETER_INVALID == 800004002 and Code.TOKEN_INVALID == 99991663
    assert (Code.TOKEN_MISSING, Code.PERMISSION_DENIED) == (99991661, 99991672)


def test_a_code_serialises_as_its_number() -> None:
    body = error_body(Code.BAD_REQUEST, "Bad. Executed: no.", "L1")
    assert json.dumps(body).startswith('{"code": 9499,')


def test_the_template_parses_back_into_its_parts() -> None:
    msg = unexecuted_message("Function \"x\" is not published", parameter="/path/function_id",
                             received="x", fix="use a functionId from GET /sites/A/functions",
                             candidates=["listA", "listB"])
    parsed = FailureMessage.parse(msg + " LogID: 2024L1")
    assert parsed == FailureMessage(
        reason="Function \"x\" is not published", parameter="/path/function_id",
        received='"x"', fix="use a functionId from GET /sites/A/functions",
        candidates=("listA", "listB"), executed="no", retry="retry after fixing",
        log_id="2024L1")
    assert parsed.render() == msg + " LogID: 2024L1"


def test_messages_outside_the_template_are_all_reason() -> None:
    assert FailureMessage.parse("Something broke") == FailureMessage("Something broke")
    denied = FailureMessage.parse(permission_denied("User u is a member", "ask the owner").msg)
    assert denied.fix == "ask the owner" and denied.executed == "no"
    assert denied.parameter is None and denied.retry == "retry after access is granted"


def test_render_keeps_the_tail_within_the_cap() -> None:
    msg = FailureMessage("r" * 900, parameter="/params/x", received='"v"', fix="f" * 900,
                         candidates=('"a"',), executed="no", retry="retry after fixing",
                         log_id="LOG1").render()
    assert len(msg) <= MAX_MSG_CHARS
    assert msg.endswith("; Candidates: \"a\". Executed: no. Retry: retry after fixing. "
                        "LogID: LOG1")
    parsed = FailureMessage.parse(msg)
    assert parsed.parameter == "/params/x" and parsed.log_id == "LOG1"


_WORDS = st.text(alphabet=string.ascii_letters + string.digits + " -_/\"'", min_size=1,
                 max_size=40).map(str.strip).filter(bool)


@given(reason=_WORDS, parameter=st.from_regex(r"/[a-z]{1,8}(/[a-z0-9]{1,8}){0,2}",
                                              fullmatch=True),
       fix=_WORDS, candidates=st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True),
                                       max_size=3),
       log_id=st.from_regex(r"[0-9A-Z]{6,20}", fullmatch=True))
def test_any_templated_message_round_trips(reason: str, parameter: str, fix: str,
                                           candidates: list[str], log_id: str) -> None:
    message = FailureMessage(reason, parameter=parameter, received='"v"', fix=fix,
                             candidates=tuple(candidates), executed="no",
                             retry="retry after fixing", log_id=log_id)
    parsed = FailureMessage.parse(message.render())
    assert parsed.parameter == parameter and parsed.log_id == log_id
    assert parsed.executed == "no" and parsed.candidates == tuple(candidates)
    assert parsed.render() == message.render()


def test_with_context_returns_a_new_error_and_leaves_the_original_alone() -> None:
    original = ApiError("refused", code=9499, http_status=400, log_id="L1", hint="old")
    amended = original.with_context(hint="new", detail={"stage": "deploy"})
    assert (original.hint, original.detail) == ("old", {"log_id": "L1", "http_status": 400})
    assert amended.hint == "new" and amended.detail["stage"] == "deploy"
    assert type(amended) is ApiError and amended.code == 9499 and amended.log_id == "L1"
    assert WorkspaceNotFound("/x").with_context(hint="h").message.startswith("No base-")


def test_a_bad_response_knows_whether_a_write_may_have_happened() -> None:
    assert BadResponse("proxy page", detail={"http_status": 502}).outcome_unknown
    assert not BadResponse("not found", detail={"http_status": 404}).outcome_unknown


def test_an_error_envelope_leaves_out_an_absent_code_as_lark_cli_does() -> None:
    """lark-cli's ErrDetail writes `code` with omitempty: JSON mode and `basedb api` both
    leave out a code of none or 0, and keep basedb's string codes and Lark's numbers."""
    def keys(error: BasedbError) -> list[str]:
        return list(error_envelope(error, "user")["error"])

    assert keys(UsageError("bad option")) == ["type", "message"]
    assert keys(AuthError("not signed in", code=0)) == ["type", "message"]
    assert keys(WorkspaceNotFound("/tmp"))[:3] == ["type", "code", "message"]
    assert error_envelope(ApiError("refused", code=Code.BAD_REQUEST))["error"]["code"] == 9499
    api = json.loads(from_exception(UsageError("bad option")).envelope_text("user"))
    assert api == error_envelope(UsageError("bad option"), "user")
    assert list(api) == ["ok", "identity", "error"]
