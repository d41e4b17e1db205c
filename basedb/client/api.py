"""The core of `basedb api METHOD PATH`: turn its options into a request, describe it for
--dry-run, or send it and say what lark-cli would print (`basedb.client.api_output`).
Every problem with the user's input is an InputError/UsageError (exit 2) that names the
option and, for JSON, the position of the syntax error.
"""

from __future__ import annotations

import json as jsonlib
import mimetypes
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from basedb.client import api_output
from basedb.client.api_output import CliError
from basedb.client.client import EMBEDDED_BASE_URL, Client
from basedb.client.pagination import MAX_PAGES
from basedb.client.responses import envelope_or_raise
from basedb.core.atomic import write_file_atomically
from basedb.core.errors import BasedbError, InputError, UsageError
from basedb.core.frozen import frozen_dataclass
from basedb.core.redact import REDACTED
from basedb.workspace import files
from basedb.workspace.declarations import json_type

if TYPE_CHECKING:
    from basedb.client.client import Client
    from basedb.client.profiles import Profile

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
LIMIT_DATA = 10 * files.MIB
"""The largest request body read from @file or stdin."""

DEFAULT_PAGE_LIMIT = 10
"""Pages fetched by --page-all unless --page-limit says otherwise (as lark-cli)."""


@dataclass(frozen=True)
class ApiCall:
    """One validated `basedb api` invocation."""

    method: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    body: Any = None
    page_all: bool = False
    page_limit: int = DEFAULT_PAGE_LIMIT
    upload: Upload | None = None  # --file: sent as multipart, `body` its text fields
    page_delay: float = 0.0  # seconds between pages (--page-delay)


@dataclass(frozen=True)
class Upload:
    """`--file [field=]path`: one file sent as a multipart form field."""

    field: str
    name: str
    content: bytes

    def __repr__(self) -> str:
        return f"Upload(field={self.field!r}, name={self.name!r}, {len(self.content)} bytes)"


def read_upload(value: str, *, stdin: BinaryIO) -> Upload:
    """--file: `[field=]path` (field `file` by default), `-` for stdin, at most 10 MB."""
    split = value.find("=")
    field_name, name = (value[:split], value[split + 1:]) if split > 0 else ("file", value)
    if not name:
        raise UsageError("--file: empty file path", code="FILE_INVALID",
                         hint="Write --file field=path, e.g. --file artifact=site.zip.")
    if name == "-":
        content = stdin.read(LIMIT_DATA + 1)
        if not content:
            raise UsageError("--file: stdin is empty", code="FILE_INVALID",
                             hint="Pipe the file into the command.")
    else:
        try:
            with Path(name).expanduser().open("rb") as handle:
                content = handle.read(LIMIT_DATA + 1)
        except OSError as exc:
            raise InputError(f"cannot open file: {name} ({exc.strerror or exc})",
                             code="FILE_INVALID",
                             hint="Check the path; it is relative to the current "
                                  "directory.") from None
    if len(content) > LIMIT_DATA:
        raise InputError(f"--file {name} is larger than 10 MB.", code="FILE_TOO_LARGE",
                         hint="Send a smaller file.")
    return Upload(field_name, "file" if name == "-" else Path(name).name, content)


def parse_method(value: str) -> str:
    method = value.strip().upper()
    if method not in METHODS:
        raise UsageError(f"METHOD {value!r} is not an HTTP method basedb api sends.",
                         code="METHOD_INVALID", hint=f"Use one of {', '.join(METHODS)}.")
    return method


def parse_path(value: str) -> str:
    path = value.strip()
    if not path or path == "/":
        raise UsageError("PATH is empty.", code="PATH_INVALID",
                         hint="Pass an API path such as /sites/APP_TOKEN/functions.")
    if any(ch.isspace() for ch in path):
        raise UsageError(f"PATH {value!r} contains whitespace.", code="PATH_INVALID",
                         hint="Percent-encode spaces in the path (%20).")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in path):
        raise UsageError(f"PATH {value!r} contains control characters.", code="PATH_INVALID",
                         hint="Percent-encode them, e.g. %01.")
    segments = path.split("?", 1)[0].split("/")
    if "." in segments or ".." in segments:
        # The URL would be normalised into another path, possibly outside the Open API.
        raise UsageError(f"PATH {value!r} has a '.' or '..' segment.", code="PATH_INVALID",
                         hint="Write the path without dot segments, e.g. "
                              "/sites/APP_TOKEN/functions.")
    return path


def parse_json_text(text: str, *, label: str) -> Any:
    """Strict JSON; the error names `label` and the line/column of the problem."""
    try:
        return files.parse_json(text, label=label)
    except files.FileProblem as problem:
        hint = f"Fix the JSON given to {label}"
        if problem.line is not None:  # a syntax error, often a shell quoting mistake
            hint += ("; in a shell, wrap inline JSON in single quotes, e.g. "
                     "'{\"env\":\"prod\"}'")
        raise InputError(problem.message, code="JSON_INVALID", hint=hint + ".") from None


def parse_params(text: str | None) -> dict[str, Any]:
    """--params: a JSON object of query parameters with flat values."""
    if text is None:
        return {}

    doc = parse_json_text(text, label="--params")
    if not isinstance(doc, dict):
        raise InputError(f"--params must be a JSON object, not {json_type(doc)}.",
                         code="PARAMS_INVALID",
                         hint="Pass query parameters as an object: --params '{\"env\":\"prod\"}'.")
    for key, value in doc.items():
        items = value if isinstance(value, list) else [value]
        if not all(item is None or isinstance(item, (str, int, float, bool)) for item in items):
            raise InputError(
                f"--params /{key} must be a string, number, boolean, null or an array of "
                "them; query parameters cannot nest.",
                code="PARAMS_INVALID",
                hint="Put nested objects in the request body with --data.")
    return doc


def read_data(value: str | None, *, stdin: BinaryIO) -> Any:
    """--data: inline JSON, `@file` (UTF-8, at most 10 MB) or `-` (stdin)."""
    if value is None:
        return None
    if value == "-":
        raw = stdin.read(LIMIT_DATA + 1)
        if len(raw) > LIMIT_DATA:
            raise InputError("--data - (stdin) is larger than 10 MB.", code="DATA_TOO_LARGE",
                             hint="Send a smaller body.")
        try:
            text = files.decode_text(raw, label="--data - (stdin)")
        except files.FileProblem as problem:
            raise InputError(problem.message, code="DATA_INVALID", hint=problem.fix) from None
        if not text.strip():
            raise InputError("--data - read nothing from stdin.", code="DATA_INVALID",
                             hint="Pipe a JSON body into the command, e.g. "
                                  "`echo '{}' | basedb api POST PATH --data -`.")
        return parse_json_text(text, label="--data - (stdin)")
    if value.startswith("@"):
        name = value[1:]
        if not name:
            raise InputError("--data @ names no file.", code="DATA_INVALID",
                             hint="Write --data @body.json to send a file's JSON.")
        label = f"--data @{name}"
        path = Path(name).expanduser()
        try:
            text = files.read_text(path, label=label, limit=LIMIT_DATA)
        except files.FileProblem as problem:
            missing = not path.exists() and not path.is_symlink()
            hint = (f"Check the file name: there is no {path.absolute()}; --data @FILE reads "
                    "a JSON file, relative to the current directory." if missing
                    else problem.fix)
            raise InputError(problem.message, code="DATA_INVALID", hint=hint) from None
        return parse_json_text(text, label=label)
    return parse_json_text(value, label="--data")


def build_call(method: str, path: str, *, params: str | None, data: str | None,
               stdin: BinaryIO, page_all: bool = False,
               page_limit: int = DEFAULT_PAGE_LIMIT, page_size: int = 0,
               page_delay_ms: int = 0, file: str | None = None,
               output: bool = False) -> ApiCall:
    """Validate every option before anything is sent (lark-cli's rules for --file and
    stdin: `cmd/api/api.go`, `internal/cmdutil/fileupload.go`)."""
    verb = parse_method(method)
    api_path = parse_path(path)
    if params == "-" and data == "-":
        raise UsageError("--params and --data cannot both read from stdin (-)",
                         code="STDIN_TWICE", hint="Read one of them from stdin, not both.")
    upload = None
    if file is not None:
        if output:
            raise UsageError("--file and --output are mutually exclusive", code="FILE_INVALID",
                             hint="Upload with --file, or save an answer with --output.")
        if page_all:
            raise UsageError("--file and --page-all are mutually exclusive",
                             code="FILE_INVALID", hint="Leave --page-all out of an upload.")
        if verb not in ("POST", "PUT", "PATCH", "DELETE"):
            raise UsageError("--file requires POST, PUT, PATCH, or DELETE method",
                             code="FILE_INVALID", hint="Upload with POST.")
        if (file.partition("=")[2] == "-" or file == "-") and "-" in (params, data):
            raise UsageError("--file and --params/--data cannot both read from stdin",
                             code="STDIN_TWICE", hint="Read one of them from stdin.")
        upload = read_upload(file, stdin=stdin)
    query = parse_params(_stdin_text(stdin, "--params") if params == "-" else params)
    if page_size > 0:
        query["page_size"] = page_size
    body = read_data(data, stdin=stdin)
    if upload is not None:
        if body is not None and not isinstance(body, dict):
            raise UsageError("--data must be a JSON object when used with --file",
                             code="DATA_INVALID", hint="Pass the form fields as an object.")
        return ApiCall(verb, api_path, query, body, page_all, page_limit, upload)
    if body is not None and verb == "GET":
        raise UsageError("GET requests carry no body, but --data was given.",
                         code="DATA_UNEXPECTED",
                         hint="Pass query parameters with --params, or use POST.")
    if page_limit < 0:
        raise UsageError("--page-limit must be 0 (no limit but the hard cap) or more.",
                         code="PAGE_LIMIT_INVALID", hint="Pass --page-limit 10, for example.")
    return ApiCall(verb, api_path, query, body, page_all, page_limit,
                   page_delay=max(page_delay_ms, 0) / 1000)


def _stdin_text(stdin: BinaryIO, label: str) -> str:
    raw = stdin.read(LIMIT_DATA + 1)
    if len(raw) > LIMIT_DATA:
        raise InputError(f"{label} - (stdin) is larger than 10 MB.", code="PARAMS_INVALID",
                         hint="Send less.")
    try:
        return files.decode_text(raw, label=f"{label} - (stdin)")
    except files.FileProblem as problem:
        raise InputError(problem.message, code="PARAMS_INVALID", hint=problem.fix) from None


def describe_call(call: ApiCall, profile: Profile) -> dict[str, Any]:
    """What --dry-run prints: the request that would be sent, Authorization redacted."""
    base_url = EMBEDDED_BASE_URL if profile.embedded else profile.endpoint
    # Built without the token: the dry run never holds it, so it cannot leak it.
    with Client(base_url=base_url, token=None) as client:
        request = client.build_request(call.method, call.path, params=call.params,
                                       json=call.body)
    headers = {name.title(): value for name, value in request.headers.items()
               if name.lower() not in ("content-length", "accept-encoding", "connection")}
    if profile.embedded or profile.token:
        headers["Authorization"] = f"Bearer {REDACTED}"
    query: dict[str, Any] = {}
    for key, value in request.url.params.multi_items():
        if key in query:
            query[key] = [*query[key], value] if isinstance(query[key], list) else [
                query[key], value]
        else:
            query[key] = value
    described: dict[str, Any] = {
        "dryRun": True,
        "profile": profile.name,
        "endpoint": profile.endpoint,
        "request": {
            "method": request.method,
            "url": str(request.url),
            "path": request.url.path,
            "query": query,
            "headers": dict(sorted(headers.items())),
            "body": call.body,
        },
    }
    if call.page_all:
        described["pageAll"] = {"maxPages": call.page_limit or MAX_PAGES}
    return described


@frozen_dataclass
class ApiOutcome:
    """What `basedb api` prints: `stdout` (may be empty), the `error` for stderr, and
    notices for stderr."""

    stdout: str = ""
    error: CliError | None = None
    notices: tuple[str, ...] = ()
    answer: Any = None  # the JSON answer printed, for --format and --jq


def execute_call(call: ApiCall, client: Client, *, output: Path | None = None) -> ApiOutcome:
    """Send the call (following pages with --page-all) as lark-cli's `api` would, and say
    what it prints. A binary answer is saved to `output` (default: a name taken from the
    response, in the current directory) and described instead."""
    if call.page_all:
        try:
            envelope = client.paginate(call.method, call.path, params=call.params,
                                       json=call.body, max_pages=call.page_limit,
                                       loads=api_output.loads, page_delay=call.page_delay)
        except BasedbError as error:
            return ApiOutcome(error=api_output.from_exception(error))
        notices = (("Notice: more pages remain after the page limit; the merged result is "
                    "partial. Raise --page-limit (0 fetches up to 1000 pages)."),
                   ) if _more_pages_remain(envelope) else ()
        return ApiOutcome(stdout=api_output.success_text(envelope), notices=notices,
                          answer=envelope)
    if call.upload is not None:
        fields = {key: value if isinstance(value, str) else jsonlib.dumps(value)
                  for key, value in (call.body or {}).items()}
        request, response = client.exchange(
            call.method, call.path, params=call.params, data=fields,
            files={call.upload.field: (call.upload.name, call.upload.content,
                                       "application/octet-stream")})
    else:
        request, response = client.exchange(call.method, call.path, params=call.params,
                                            json=call.body)
    parse_error: Exception | None = None
    body: Any = None
    try:
        body = api_output.loads(response.content)
    except ValueError as exc:
        parse_error = exc

    def hint_for(_code: int) -> str | None:
        try:
            envelope_or_raise(request, response, client.error_context)
        except BasedbError as error:
            return error.hint
        return None

    failure = api_output.from_response(response, body, parse_error, hint_for=hint_for)
    if failure is not None:
        return ApiOutcome(error=failure)
    ctype = response.headers.get("Content-Type", "")
    if ctype and "json" not in ctype:
        return _saved(response, output)
    if output is not None:
        return _saved(response, output)
    return ApiOutcome(stdout=api_output.success_text(body), answer=body)


def _saved(response: Any, output: Path | None) -> ApiOutcome:
    """A response body written to a file, described as lark-cli describes it."""
    target = output if output is not None else Path(_filename(response))
    try:
        write_file_atomically(target, response.content)
    except OSError as exc:
        return ApiOutcome(error=CliError("file_error", f"cannot write file: {exc}", 5))
    meta = {"saved_path": str(target.resolve()), "size_bytes": len(response.content),
            "content_type": response.headers.get("Content-Type", "")}
    notice = () if output is not None else (
        f"binary response detected (Content-Type: {meta['content_type']}), saved to file",)
    return ApiOutcome(stdout=api_output.success_text(meta), notices=notice)


_DISPOSITION_NAME = re.compile(r'filename="?([^";]+)"?')


def _filename(response: Any) -> str:
    """Content-Disposition's file name (its last path part), else download + extension."""
    found = _DISPOSITION_NAME.search(response.headers.get("Content-Disposition", ""))
    if found:
        name = Path(found.group(1).strip()).name
        if name and name not in (".", ".."):
            return name
    ctype = response.headers.get("Content-Type", "").split(";")[0].strip()
    return "download" + (mimetypes.guess_extension(ctype) or ".bin")


def _more_pages_remain(envelope: dict[str, Any]) -> bool:
    data = envelope.get("data")
    return isinstance(data, dict) and bool(data.get("hasMore") or data.get("has_more"))
