"""A request the platform refuses or cannot complete, and the usual refusals.

The platform raises `ApiFailure`; `basedb.platform.web.http` turns it into the envelope of
`basedb.protocol.envelope.error_body`. The client turns such an envelope into
`basedb.core.errors`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from basedb.protocol.codes import Code
from basedb.protocol.messages import MISSING, FailureMessage, unexecuted_message


class ApiFailure(Exception):
    """A request the platform refuses or cannot complete; becomes an error envelope."""

    def __init__(
        self,
        code: int,
        msg: str,
        *,
        status: int = 400,
        data: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(msg)
        self.code = code
        self.msg = msg
        self.status = status
        self.data = data
        self.headers = headers or {}


def bad_request(
    reason: str,
    *,
    parameter: str,
    fix: str,
    received: Any = MISSING,
    candidates: Iterable[Any] = (),
    code: int = Code.BAD_REQUEST,
    status: int = 400,
) -> ApiFailure:
    """A refused request (nothing executed), with a templated message."""
    return ApiFailure(code, unexecuted_message(reason, parameter=parameter, fix=fix,
                                               received=received, candidates=candidates),
                      status=status)


def not_found(what: str, parameter: str, value: str, fix: str) -> ApiFailure:
    """A path or body reference to something that does not exist (HTTP 404)."""
    return bad_request(f"{what} was not found", parameter=parameter, received=value, fix=fix,
                       status=404)


def permission_denied(reason: str, fix: str) -> ApiFailure:
    """The caller is known but may not do this (HTTP 403)."""
    msg = FailureMessage(reason, fix=fix, executed="no",
                         retry="retry after access is granted").render()
    return ApiFailure(Code.PERMISSION_DENIED, msg, status=403)
