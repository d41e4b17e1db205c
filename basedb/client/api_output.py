"""What `basedb api` prints, byte for byte as lark-cli's `api` command prints it for the
same response (lark-cli `cmd/api/api.go`, `internal/client/response.go`,
`internal/output/`):

- success: the response body re-encoded as Go's `json.MarshalIndent(v, "", "  ")` does:
  keys sorted, two-space indent, `<`, `>`, `&`, U+2028 and U+2029 escaped, numbers
  exactly as they came, one trailing newline;
- failure: the error envelope on stderr, encoded with HTML escaping off:

      {"ok": false, "identity": "user", "error": {"type", "code", "message", "hint",
       "console_url", "detail"}}

  in that key order, empty members left out (`code` is Lark's integer code and only
  present for API errors; `detail` is the response's own `error` object, where the log
  id is); the exit code is lark-cli's for the error type.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import httpx

from basedb.core.errors import (
    ApiError,
    BasedbError,
    NetworkError,
    UsageError,
)
from basedb.core.frozen import frozen_dataclass
from basedb.protocol import lark_errors
from basedb.protocol.envelope import cli_error, cli_error_envelope

RAW_JSON_HINT = ("The endpoint may have returned an empty or non-standard JSON body. If it "
                 "returns a file, rerun with --output.")


class NumberLiteral(str):
    """A JSON number kept as the text it was written as (Go's `json.Number`)."""


def loads(raw: bytes | str) -> Any:
    """JSON with every non-integer number kept as its literal (integers are exact)."""
    return json.loads(raw, parse_float=NumberLiteral)


# ------------------------------------------------------------------------ encoding

_GO_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\b": "\\b", "\f": "\\f"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\u2028\u2029<>&]')


def _go_string(text: str, *, escape_html: bool) -> str:
    def escape(match: re.Match[str]) -> str:
        char = match.group(0)
        if char in _GO_ESCAPES:
            return _GO_ESCAPES[char]
        if char in "<>&" and not escape_html:
            return char
        return f"\\u{ord(char):04x}"

    return '"' + _NEEDS_ESCAPE.sub(escape, text) + '"'


def go_json(value: Any, *, escape_html: bool = True, indent: str = "  ",
            sort_keys: bool = True, _level: int = 0) -> str:
    """`value` as Go's encoding/json with an indent writes it."""
    pad, inner = indent * _level, indent * (_level + 1)
    if isinstance(value, NumberLiteral):
        return str(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)
    if isinstance(value, str):
        return _go_string(value, escape_html=escape_html)
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        keys = sorted(value) if sort_keys else list(value)
        items = [f"{inner}{_go_string(str(key), escape_html=escape_html)}: "
                 + go_json(value[key], escape_html=escape_html, indent=indent,
                           sort_keys=sort_keys, _level=_level + 1) for key in keys]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        items = [inner + go_json(item, escape_html=escape_html, indent=indent,
                                 sort_keys=sort_keys, _level=_level + 1) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return _go_string(str(value), escape_html=escape_html)


def success_text(body: Any) -> str:
    """stdout of a successful call (lark-cli `output.PrintJson`)."""
    return go_json(body) + "\n"


# ------------------------------------------------------------------------- errors


@frozen_dataclass
class CliError:
    """One lark-cli `ExitError`: the envelope's `error` member and the exit code."""

    type: str
    message: str
    exit_code: int
    code: int | None = None
    hint: str | None = None
    console_url: str | None = None
    detail: Any = None

    def envelope_text(self, identity: str | None) -> str:
        """stderr (lark-cli `output.WriteErrorEnvelope`): struct order, no HTML escaping."""
        error = cli_error(self.type, self.message, code=self.code, hint=self.hint,
                          console_url=self.console_url, detail=self.detail)
        return _struct(cli_error_envelope(error, identity), 0) + "\n"


def _struct(fields: dict[str, Any], level: int) -> str:
    """A Go struct: its fields in declared order (the envelope and its `error`), while
    a map inside (`detail`) is encoded with sorted keys."""
    inner, pad = "  " * (level + 1), "  " * level
    items = []
    for key, value in fields.items():
        encoded = (_struct(value, level + 1) if level == 0 and key == "error"
                   else go_json(value, escape_html=False, _level=level + 1))
        items.append(f'{inner}"{key}": {encoded}')
    return "{\n" + ",\n".join(items) + "\n" + pad + "}"


def api_error(code: int, msg: str, error: Any, *, hint: str | None) -> CliError:
    """lark-cli `ErrAPI`: a non-zero Lark code in a JSON answer."""
    kind = lark_errors.classify(code)
    message = (f"Permission denied [{code}]" if kind.type == "permission"
               else f"API error: [{code}] {msg}")
    return CliError(kind.type, message, kind.exit_code, code=code, hint=hint, detail=error)


def from_response(response: httpx.Response, body: Any, parse_error: Exception | None, *,
                  hint_for: Any) -> CliError | None:
    """The error lark-cli reports for `response`, or None for a success to print.

    `hint_for(code)` gives the hint of a Lark code (basedb's command to run).
    """
    ctype = response.headers.get("Content-Type", "")
    is_json = "application/json" in ctype or "text/json" in ctype
    status = response.status_code
    if status >= 400 and not is_json and ctype:
        text = response.content.decode("utf-8", errors="replace").strip()
        if len(text) > 500:
            text = text[:500] + "..."
        return CliError("http_error", f"HTTP {status}: {text}", 4 if status >= 500 else 1)
    if not (is_json or not ctype):
        return None  # a binary body: saved, not parsed
    if parse_error is not None:
        if not response.content.strip():
            return CliError("api_error", "API returned an empty JSON response body", 1,
                            hint=RAW_JSON_HINT)
        return CliError("api_error", f"API returned an invalid JSON response: {parse_error}",
                        1, hint=RAW_JSON_HINT)
    if isinstance(body, dict):
        code = body.get("code")
        number = code if isinstance(code, int) and not isinstance(code, bool) else 0
        if number:
            msg = body.get("msg")
            return api_error(number, msg if isinstance(msg, str) else "", body.get("error"),
                             hint=hint_for(number))
    return None


def from_exception(error: BasedbError) -> CliError:
    """A basedb error raised before any answer (bad input, no token, no connection)."""
    if isinstance(error, UsageError):
        return CliError("validation", error.message, 2, hint=error.hint)
    if isinstance(error, ApiError):
        msg = error.message
        return CliError(error.type, msg if error.type not in ("api_error",) else
                        f"API error: [{error.code}] {msg}", error.exit_code,
                        code=error.code if isinstance(error.code, int) else None,
                        hint=error.hint, console_url=error.console_url, detail=error.error)
    if isinstance(error, NetworkError):
        return CliError("network", f"API call failed: {error.message}", 4, hint=error.hint)
    return CliError(error.type, error.message, error.exit_code, hint=error.hint)
