"""The exceptions basedb raises, and the exit code each one maps to.

    BasedbError                      exit 5 unless a subclass says otherwise
    ├── UsageError                   exit 2  wrong options, or input that cannot be used
    │   ├── WorkspaceNotFound        exit 2  no base-database.jsonc at or above a directory
    │   └── InputError               exit 2  a file or value given by the user is unusable
    ├── FindingsError                exit 1  check found errors; the result is attached
    ├── ConflictError                exit 1  local state disagrees with what a command needs
    ├── ApiError                     exit 1  the platform answered with a non-zero code
    │   ├── AuthError                exit 3  no usable identity: sign in (again)
    │   ├── PermissionDenied         exit 1  the identity lacks a scope or access
    │   ├── RateLimited              exit 1  still rate limited after bounded retries
    │   └── ServerError              exit 4  … with HTTP 5xx: it failed; outcome unknown
    ├── NetworkError                 exit 4  no usable answer came from the platform
    │   ├── ConnectionRefused        exit 4  no connection was made: nothing was sent
    │   ├── ConnectionLost           exit 4  sent, but no answer came: outcome unknown
    │   └── BadResponse              exit 4  an answer that is not a Lark envelope
    ├── Interrupted                  exit 130  the user pressed Ctrl-C
    └── InternalError                exit 5  a bug in basedb

An error is built complete and not changed afterwards: to add what a caller knows (a
hint, detail), raise `error.with_context(...)`, a copy. `outcome_unknown` says whether a
write that failed this way may still have taken effect.

`type` is lark-cli's error type (`internal/output`): `validation`, `auth`, `permission`,
`config`, `app_status`, `rate_limit`, `api_error`, `network`, `internal`, plus basedb's
own `check` and `conflict`. The CLI turns these into exit codes and stderr messages in one
place (`basedb.cli.common.run_guarded`), the JSON one built by
`basedb.protocol.envelope.error_envelope`; the core never prints.
"""

from __future__ import annotations

from typing import Any, TypeVar

E = TypeVar("E", bound="BasedbError")

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_AUTH = 3
EXIT_NETWORK = 4
EXIT_INTERNAL = 5
EXIT_INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as shells report it


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

    outcome_unknown = False
    """Whether a write that failed with this error may still have taken effect."""

    def with_context(self: E, *, hint: str | None = None,
                     detail: dict[str, Any] | None = None) -> E:
        """A copy with `hint` in place of the hint and `detail` merged into the detail."""
        # A bare instance of the same class with the same attributes: subclasses take
        # different constructor arguments, which a copy must not need to know.
        amended = type(self).__new__(type(self), *self.args)
        amended.__dict__.update(self.__dict__)
        if hint is not None:
            amended.hint = hint
        amended.detail = {**self.detail, **(detail or {})}
        return amended

    console_url: str | None = None
    """Where to fix it in the developer console (a missing scope), as lark-cli says."""


class UsageError(BasedbError):
    """Options or arguments that cannot be used together, or are malformed."""

    exit_code = EXIT_USAGE
    type = "validation"


class WorkspaceNotFound(UsageError):
    """No base-database.jsonc exists at or above the directory."""

    def __init__(self, start: str) -> None:
        super().__init__(
            f"No base-database.jsonc found in {start} or any parent directory.",
            code="WORKSPACE_NOT_FOUND",
            hint=WORKSPACE_HINT,
        )


# What to do without a workspace; the command line adds `-C/--workspace DIR` for the
# commands that take it (an option is only named where it exists).
WORKSPACE_HINT = ("Run inside a site workspace (the directory of base-database.jsonc or one "
                  "below it), or create one with `basedb init`.")
WORKSPACE_OPTION_HINT = ("Run inside a site workspace, pass -C/--workspace DIR, or create one "
                         "with `basedb init`.")


class InputError(UsageError):
    """A file or value supplied by the user is unusable; the message names it."""


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
    type = "api_error"

    def __init__(
        self,
        message: str,
        *,
        code: int | str,
        http_status: int | None = None,
        log_id: str | None = None,
        data: Any = None,
        hint: str | None = None,
        error: Any = None,
        error_type: str | None = None,
        console_url: str | None = None,
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
        self.error = error  # the envelope's `error` object as it came (log_id, violations)
        if error_type is not None:
            self.type = error_type
        self.console_url = console_url


class AuthError(ApiError):
    """No usable identity: the token is missing, invalid or expired, the app credentials
    are wrong (`config`) or the app is disabled (`app_status`): sign in again."""

    exit_code = EXIT_AUTH
    type = "auth"


class PermissionDenied(ApiError):
    """The identity lacks a scope (Lark's 99991672 …), or access to the resource."""

    type = "permission"

    @property
    def scopes(self) -> list[str]:
        """The scopes the platform said are missing (`permission_violations`)."""
        violations = self.error.get("permission_violations") if isinstance(
            self.error, dict) else None
        return [v["subject"] for v in violations or []
                if isinstance(v, dict) and isinstance(v.get("subject"), str)]


class RateLimited(ApiError):
    """Lark's 99991400 or HTTP 429, still after basedb's bounded retries."""

    type = "rate_limit"


class ServerError(ApiError):
    """The platform answered with HTTP 5xx and an error envelope: it failed while handling
    the request, so a write may or may not have taken effect."""

    exit_code = EXIT_NETWORK
    outcome_unknown = True


class NetworkError(BasedbError):
    """No usable answer came from the platform."""

    exit_code = EXIT_NETWORK
    type = "network"


class ConnectionRefused(NetworkError):
    """No connection was made (refused, unreachable, name not found, connect timeout):
    nothing was sent, so nothing changed."""


class ConnectionLost(NetworkError):
    """The request was sent, or may have been, and no answer came (timeout, reset)."""

    outcome_unknown = True


class BadResponse(NetworkError):
    """The platform answered, but not with a Lark envelope (a proxy page, an empty body)."""

    @property
    def outcome_unknown(self) -> bool:  # type: ignore[override]
        status = self.detail.get("http_status")
        return not isinstance(status, int) or status >= 500


class Interrupted(BasedbError):
    """The user stopped the command (Ctrl-C)."""

    exit_code = EXIT_INTERRUPTED
    type = "interrupted"


class InternalError(BasedbError):
    """Something basedb did not expect; please report it."""

    exit_code = EXIT_INTERNAL
    type = "internal"
