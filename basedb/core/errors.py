"""The exceptions basedb raises, and the exit code each one maps to.

    BasedbError                      exit 5 unless a subclass says otherwise
    ├── UsageError                   exit 2  wrong options, or input that cannot be used
    │   ├── WorkspaceNotFound        exit 2  no base-database.jsonc at or above a directory
    │   └── InputError               exit 2  a file or value given by the user is unusable
    ├── FindingsError                exit 1  check found errors; the result is attached
    ├── ConflictError                exit 1  local state disagrees with what a command needs
    ├── ApiError                     exit 1  the platform answered with a non-zero code
    │   └── AuthError                exit 3  the token is missing, invalid or lacks access
    ├── NetworkError                 exit 4  the platform could not be reached, or answered 5xx
    └── InternalError                exit 5  a bug in basedb

The CLI turns these into exit codes and stderr messages in one place
(`basedb.cli.common.run_guarded`); the core never prints.
"""

from __future__ import annotations

from typing import Any

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_AUTH = 3
EXIT_NETWORK = 4
EXIT_INTERNAL = 5


class BasedbError(Exception):
    """Base class of every error basedb reports to a user."""

    exit_code = EXIT_INTERNAL
    type = "internal"

    def __init__(
        self,
        message: str,
        *,
        code: str | int | None = None,
        hint: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.hint = hint
        self.detail = dict(detail or {})

    def to_envelope(self) -> dict[str, Any]:
        """The lark-cli style error envelope written to stderr in JSON mode."""
        error: dict[str, Any] = {"type": self.type, "code": self.code, "message": self.message}
        if self.hint:
            error["hint"] = self.hint
        if self.detail:
            error["detail"] = self.detail
        return {"ok": False, "error": error}


class UsageError(BasedbError):
    """Options or arguments that cannot be used together, or are malformed."""

    exit_code = EXIT_USAGE
    type = "usage"


class WorkspaceNotFound(UsageError):
    """No base-database.jsonc exists at or above the directory."""

    type = "workspace"

    def __init__(self, start: str) -> None:
        super().__init__(
            f"No base-database.jsonc found in {start} or any parent directory.",
            code="WORKSPACE_NOT_FOUND",
            hint="Run inside a site workspace, pass --workspace DIR, "
            "or create one with `basedb init`.",
        )


class InputError(UsageError):
    """A file or value supplied by the user is unusable; the message names it."""

    type = "input"


class FindingsError(BasedbError):
    """`check` (or a command that runs it first) found blocking errors."""

    exit_code = EXIT_FINDINGS
    type = "check"

    def __init__(self, message: str, *, result: Any = None, **kwargs: Any) -> None:
        super().__init__(message, code=kwargs.pop("code", "CHECK_FAILED"), **kwargs)
        self.result = result


class ConflictError(BasedbError):
    """Local state and the requested operation disagree (stale preview, local edits)."""

    exit_code = EXIT_FINDINGS
    type = "conflict"


class ApiError(BasedbError):
    """The platform answered with a non-zero business code."""

    exit_code = EXIT_FINDINGS
    type = "api"

    def __init__(
        self,
        message: str,
        *,
        code: int,
        http_status: int | None = None,
        log_id: str | None = None,
        data: Any = None,
        hint: str | None = None,
    ) -> None:
        detail: dict[str, Any] = {}
        if log_id:
            detail["log_id"] = log_id
        if http_status is not None:
            detail["http_status"] = http_status
        super().__init__(message, code=code, hint=hint, detail=detail)
        self.http_status = http_status
        self.log_id = log_id
        self.data = data


class AuthError(ApiError):
    """The token is missing or invalid, or the caller lacks access."""

    exit_code = EXIT_AUTH
    type = "auth"


class NetworkError(BasedbError):
    """The platform could not be reached, timed out, or answered with a 5xx."""

    exit_code = EXIT_NETWORK
    type = "network"


class InternalError(BasedbError):
    """Something basedb did not expect; please report it."""

    exit_code = EXIT_INTERNAL
    type = "internal"
