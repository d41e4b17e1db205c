"""The protocol between the platform and its clients, and the one home of the wire.

    codes        every code, once: an enum per family
    messages     upstream's message template, built and parsed as one structure
    envelope     the Open API's `{code, msg, data}` and lark-cli's error envelope
    failures     `ApiFailure`, what the platform raises to refuse a request
    lark_errors  how lark-cli classifies Lark's codes into error types and exit codes
    findings     what `check` reports (and the platform answers for a refused draft)
    wire         how a request or response body is declared (a msgspec `WireModel`),
                 encoded, decoded and turned into the OpenAPI document's schemas
    deployments  the deployments routes' bodies

Nothing outside this package writes a code as a number, builds an envelope or defines a
wire shape (tests/unit/test_protocol_home.py). It sits just above `basedb.core`: it may
import the core only, and every other layer may import it.
"""

from basedb.protocol.codes import (
    CALLABLE_STATUSES,
    Code,
    ErrorCode,
    HintCode,
    RecordErrorCode,
    RefreshCode,
    SchemaStatus,
)
from basedb.protocol.envelope import (
    api_envelope,
    cli_error,
    cli_error_envelope,
    data_of,
    error_body,
    success_body,
)
from basedb.protocol.failures import ApiFailure, bad_request, not_found, permission_denied
from basedb.protocol.messages import (
    BUSY_MSG,
    INTERNAL_ERROR_MSG,
    MAX_CANDIDATE_CHARS,
    MAX_CANDIDATES,
    MAX_MSG_CHARS,
    MAX_PARAMETER_CHARS,
    MAX_RECEIVED_CHARS,
    FailureMessage,
    clip,
    quote,
    render_received,
    unexecuted_message,
)

__all__ = [
    "BUSY_MSG",
    "CALLABLE_STATUSES",
    "INTERNAL_ERROR_MSG",
    "MAX_CANDIDATES",
    "MAX_CANDIDATE_CHARS",
    "MAX_MSG_CHARS",
    "MAX_PARAMETER_CHARS",
    "MAX_RECEIVED_CHARS",
    "ApiFailure",
    "Code",
    "ErrorCode",
    "FailureMessage",
    "HintCode",
    "RecordErrorCode",
    "RefreshCode",
    "SchemaStatus",
    "api_envelope",
    "bad_request",
    "cli_error",
    "cli_error_envelope",
    "clip",
    "data_of",
    "error_body",
    "not_found",
    "permission_denied",
    "quote",
    "render_received",
    "success_body",
    "unexecuted_message",
]
