"""A stand-in for the `lark-cli` executable, written into a test's PATH.

The real lark-cli is a Go binary its npm package downloads at install time, which this
machine cannot fetch, so tests run this instead. It keeps lark-cli's command-line
contract as its source states it, so that a test fails where the real one would:

- `lark-cli [--profile P] api METHOD PATH [flags]` with `--params`, `--data` (JSON, or
  `-` for stdin; not both from stdin), `--as user|bot|auto`, one `--file [field=]path`
  (a repeated string flag keeps its last value), `--output`/`-o`, `--format`, `--jq`/`-q`,
  `--page-all`, `--page-size`, `--page-limit`, `--page-delay`, `--dry-run`
  (`cmd/api/api.go`);
- `--file` and `--output` paths are relative and stay inside the working directory
  (`internal/vfs/localfileio/path.go`): an unusable `--file` is "cannot open file"
  (validation, exit 2), an unusable `--output` is "unsafe output path" (exit 5); `--file`
  excludes `--output` and `--page-all` and needs POST, PUT, PATCH or DELETE;
- a flag or argument the command does not take is cobra's `Error: …` line with exit 1;
- the profile: FAKE_LARK_PROFILES lists the configured ones (comma-separated, default
  `default`); an unknown `--profile` is `profile "X" not found` (config, exit 2) with the
  available profiles as its hint, none at all (or FAKE_LARK_STATE=not_configured) is
  "not configured" (exit 2);
- every failure to make the call is typed `network` (exit 4), as `WrapDoAPIError` does
  (`internal/client/api_errors.go`): "API call failed: no access token available for
  user" when FAKE_LARK_USER_TOKEN is unset, "API call failed: TAT API error: [code] msg"
  when the tenant token is refused;
- the path is sent as given (percent-encoding kept), `/open-apis/` put in front when
  missing; a JSON answer with code 0 prints on stdout; a non-zero code is the error
  envelope on stderr with the classification's exit code; a binary answer without
  `--output` is saved in the working directory (as `download.bin`).

Its sign-in: FAKE_LARK_APP_ID / FAKE_LARK_APP_SECRET (a bot, via the tenant token
endpoint) and FAKE_LARK_USER_TOKEN (a user); FAKE_LARK_STATE=no_user makes `auth status`
report no user. Every argv is appended to FAKE_LARK_LOG with the working directory, so
tests see exactly how basedb called it.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, NoReturn

AUTH = {99991661, 99991671, 99991668, 99991663, 99991677}
PERMISSION = {99991672, 99991676, 99991679, 230027}

API_STRINGS = {"--params": "params", "--data": "data", "--as": "as", "--output": "output",
               "-o": "output", "--format": "format", "--jq": "jq", "-q": "jq",
               "--file": "file", "--page-size": "page-size", "--page-limit": "page-limit",
               "--page-delay": "page-delay"}
API_BOOLS = {"--page-all": "page-all", "--dry-run": "dry-run"}
INTEGERS = {"page-size", "page-limit", "page-delay"}


def usage(message: str) -> NoReturn:
    """A command-line error cobra reports itself: one line, exit 1."""
    sys.stderr.write(f"Error: {message}\n")
    sys.exit(1)


def fail(kind: str, message: str, code: int | None = None, detail: Any = None,
         hint: str | None = None, identity: str | None = None, exit_code: int = 1) -> NoReturn:
    error: dict[str, Any] = {"type": kind}
    if code:
        error["code"] = code
    error["message"] = message
    if hint:
        error["hint"] = hint
    if detail:
        error["detail"] = detail
    envelope: dict[str, Any] = {"ok": False}
    if identity:
        envelope["identity"] = identity
    envelope["error"] = error
    sys.stderr.write(json.dumps(envelope, indent=2, ensure_ascii=False) + "\n")
    sys.exit(exit_code)


def validation(message: str) -> NoReturn:
    fail("validation", message, exit_code=2)


def network(message: str, identity: str) -> NoReturn:
    fail("network", f"API call failed: {message}", identity=identity, exit_code=4)


def split_profile(argv: list[str]) -> tuple[str | None, list[str]]:
    """The global --profile wherever it stands, and the other arguments."""
    profile, rest = None, []
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--profile":
            if index + 1 >= len(argv):
                usage("flag needs an argument: --profile")
            profile = argv[index + 1]
            index += 2
            continue
        if arg.startswith("--profile="):
            profile = arg.partition("=")[2]
        else:
            rest.append(arg)
        index += 1
    return profile, rest


def resolve_profile(profile: str | None) -> str:
    names = [n for n in os.environ.get("FAKE_LARK_PROFILES", "default").split(",") if n]
    if os.environ.get("FAKE_LARK_STATE") == "not_configured" or not names:
        fail("config", "not configured", hint="run `lark-cli config init --new`",
             exit_code=2)
    if profile is None:
        return names[0]
    if profile not in names:
        fail("config", f'profile "{profile}" not found',
             hint=f"available profiles: {', '.join(names)}", exit_code=2)
    return profile


def parse_api(args: list[str]) -> tuple[list[str], dict[str, Any]]:
    positional: list[str] = []
    options: dict[str, Any] = {"as": "auto", "format": "json", "page-delay": 200,
                               "page-limit": 10, "page-size": 0}
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        name, has_value, value = arg.partition("=")
        if name in API_BOOLS:
            options[API_BOOLS[name]] = value.lower() not in ("false", "0") if has_value \
                else True
            continue
        if name not in API_STRINGS:
            if name.startswith("--"):
                usage(f"unknown flag: {name}")
            usage(f"unknown shorthand flag: {name[1:2]!r} in {arg}")
        if not has_value:
            if index >= len(args):
                usage(f"flag needs an argument: {name}")
            value = args[index]
            index += 1
        key = API_STRINGS[name]
        if key in INTEGERS:
            try:
                options[key] = int(value)
            except ValueError:
                usage(f'invalid argument "{value}" for "{name}" flag: strconv.ParseInt: '
                      f'parsing "{value}": invalid syntax')
        else:
            options[key] = value  # a repeated flag keeps its last value, as pflag does
    if len(positional) != 2:
        usage(f"accepts 2 arg(s), received {len(positional)}")
    return positional, options


def inside_cwd(raw: str, flag: str) -> Path:
    """`raw` as lark-cli's safe path check accepts it, or ValueError saying why not."""
    if any(ord(c) < 0x20 for c in raw):
        raise ValueError(f"{flag} contains control characters")
    if os.path.isabs(raw):
        raise ValueError(f"{flag} must be a relative path within the current directory, "
                         f"got {raw!r}")
    cwd = Path.cwd().resolve()
    resolved = (cwd / raw).resolve()
    if resolved != cwd and cwd not in resolved.parents:
        raise ValueError(f"{flag} {raw!r} resolves outside the current working directory")
    return resolved


def read_stdin_once(options: dict[str, Any]) -> None:
    if options.get("params") == "-" and options.get("data") == "-":
        validation("--params and --data cannot both read from stdin (-)")
    for key in ("params", "data"):
        if options.get(key) == "-":
            options[key] = sys.stdin.read()


def json_option(options: dict[str, Any], key: str) -> Any:
    text = options.get(key)
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError as error:
        validation(f"--{key} invalid JSON format: {error}")


def http(method: str, url: str, body: bytes | None, headers: dict[str, str],
         identity: str) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read(), {k.lower(): v for k, v in answer.headers.items()}
    except urllib.error.HTTPError as error:
        return error.code, error.read(), {k.lower(): v for k, v in error.headers.items()}
    except OSError as error:
        network(str(error), identity)


def token(identity: str) -> str:
    if identity == "user":
        found = os.environ.get("FAKE_LARK_USER_TOKEN")
        if not found:
            network("no access token available for user", identity)
        return found
    body = json.dumps({"app_id": os.environ.get("FAKE_LARK_APP_ID", ""),
                       "app_secret": os.environ.get("FAKE_LARK_APP_SECRET", "")}).encode()
    status, raw, _ = http("POST", os.environ["FAKE_LARK_URL"] +
                          "/open-apis/auth/v3/tenant_access_token/internal", body,
                          {"Content-Type": "application/json"}, identity)
    if status != 200:
        network(f"TAT API returned HTTP {status}", identity)
    answer = json.loads(raw)
    if answer.get("code"):
        network(f"TAT API error: [{answer['code']}] {answer.get('msg', '')}", identity)
    return str(answer["tenant_access_token"])


def multipart(field: str, name: str, content: bytes, fields: dict[str, Any]) -> tuple[
        bytes, str]:
    boundary = "fakelarkcliboundary"
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n'
             f'{v if isinstance(v, str) else json.dumps(v)}\r\n'.encode()
             for k, v in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; '
                 f'filename="{name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
                 .encode() + content + b"\r\n")
    return (b"".join(parts) + f"--{boundary}--\r\n".encode(),
            f"multipart/form-data; boundary={boundary}")


def api(args: list[str]) -> None:
    (verb, path), options = parse_api(args)
    method = verb.upper()
    if options.get("page-all") and options.get("output"):
        validation("--output and --page-all are mutually exclusive")
    upload = options.get("file")
    if upload is not None:
        split = upload.find("=")
        field, file_path = (upload[:split], upload[split + 1:]) if split > 0 \
            else ("file", upload)
        if not file_path:
            validation("--file: empty file path")
        if options.get("output"):
            validation("--file and --output are mutually exclusive")
        if options.get("page-all"):
            validation("--file and --page-all are mutually exclusive")
        if method not in ("POST", "PUT", "PATCH", "DELETE"):
            validation("--file requires POST, PUT, PATCH, or DELETE method")
    read_stdin_once(options)
    params = json_option(options, "params") or {}
    if not isinstance(params, dict):
        validation("--params must be a JSON object")
    if options["page-size"] > 0:
        params["page_size"] = options["page-size"]
    data = json_option(options, "data")
    identity = options["as"] if options["as"] in ("user", "bot") else "user"
    if not path.startswith("/open-apis/"):
        path = "/open-apis/" + path.lstrip("/")
    path = path.split("?", 1)[0].split("#", 1)[0]
    query = "&".join(f"{urllib.request.quote(str(k))}={urllib.request.quote(str(v))}"
                     for k, values in params.items()
                     for v in (values if isinstance(values, list) else [values]))
    url = os.environ["FAKE_LARK_URL"] + path + (f"?{query}" if query else "")
    body: bytes | None = None
    content_type = None
    if upload is not None:
        try:
            source = inside_cwd(file_path, "--file")
            content = source.read_bytes()
        except (ValueError, OSError):
            validation(f"cannot open file: {file_path}")
        if data is not None and not isinstance(data, dict):
            validation("--data must be a JSON object when used with --file")
        body, content_type = multipart(field, source.name, content, data or {})
    elif data is not None:
        body, content_type = json.dumps(data).encode(), "application/json"
    headers = {"Authorization": f"Bearer {token(identity)}"}
    if content_type:
        headers["Content-Type"] = content_type
    status, raw, answer_headers = http(method, url, body, headers, identity)
    ctype = answer_headers.get("content-type", "")
    if status >= 400 and ctype and "json" not in ctype:
        fail("http_error", f"HTTP {status}: {raw.decode(errors='replace')[:500]}",
             exit_code=4 if status >= 500 else 1, identity=identity)
    if "json" in ctype or not ctype:
        answer(raw, identity, options)
        return
    save(raw, ctype, options.get("output") or "download.bin")


def answer(raw: bytes, identity: str, options: dict[str, Any]) -> None:
    try:
        result = json.loads(raw)
    except ValueError:
        fail("api_error", "API returned an invalid JSON response", identity=identity)
    code = result.get("code", 0) if isinstance(result, dict) else 0
    if code:
        permission = code in PERMISSION
        fail("auth" if code in AUTH else "permission" if permission else
             "rate_limit" if code == 99991400 else "api_error",
             f"Permission denied [{code}]" if permission else
             f"API error: [{code}] {result.get('msg', '')}", code=code,
             detail=result.get("error"), identity=identity,
             exit_code=3 if code in AUTH else 1)
    if options.get("output"):
        save(raw, "application/json", options["output"])
        return
    print(json.dumps(result, indent=2, ensure_ascii=False))


def save(raw: bytes, ctype: str, target: str) -> None:
    try:
        path = inside_cwd(target, "--output")
    except ValueError as error:
        fail("file_error", f"unsafe output path: {error}", exit_code=5)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    print(json.dumps({"saved_path": str(path), "size_bytes": len(raw),
                      "content_type": ctype}, indent=2))


def auth_status() -> None:
    report: dict[str, Any] = {"appId": os.environ.get("FAKE_LARK_APP_ID"), "brand": "feishu",
                              "defaultAs": "auto"}
    if os.environ.get("FAKE_LARK_STATE") == "no_user" or \
            not os.environ.get("FAKE_LARK_USER_TOKEN"):
        report.update(identity="bot", note="No user logged in.")
    else:
        report.update(identity="user", userName="Fake User", userOpenId="ou_fake",
                      tokenStatus="valid")
    print(json.dumps(report, indent=2))


def main() -> None:
    argv = sys.argv[1:]
    log = os.environ.get("FAKE_LARK_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"argv": argv, "cwd": os.getcwd()}) + "\n")
    profile, rest = split_profile(argv)
    if rest[:1] == ["api"]:
        resolve_profile(profile)
        api(rest[1:])
    elif rest[:2] == ["auth", "status"]:
        resolve_profile(profile)
        auth_status()
    else:
        print("fake lark-cli: " + " ".join(argv))


if __name__ == "__main__":
    main()
